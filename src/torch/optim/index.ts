// Optimizers and learning-rate schedules.
export {
  Optimizer,
  type Hyperparameters,
  type HyperValue,
  type OptimizerStateDict,
  type ParamGroup,
  type ParamGroupInput,
  type ParamState,
} from './optimizer.js';
export { SGD, type SGDOptions } from './sgd.js';
export { Adam, AdamW, type AdamOptions, type AdamWOptions } from './adam.js';
export { RMSprop, type RMSpropOptions } from './rmsprop.js';
export * from './lr-scheduler.js';
export * from './lr-scheduler-more.js';
