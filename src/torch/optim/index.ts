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
export { SparseAdam, type SparseAdamOptions } from './sparse-adam.js';
export { Adagrad, Adadelta, type AdagradOptions, type AdadeltaOptions } from './adagrad.js';
export { Adamax, NAdam, RAdam, type AdamaxOptions, type NAdamOptions, type RAdamOptions } from './adamax.js';
export { LBFGS, type LBFGSOptions, type LossClosure } from './lbfgs.js';
export { Rprop, ASGD, type RpropOptions, type ASGDOptions } from './rprop.js';
export * from './lr-scheduler-extra.js';
export * from './lr-scheduler-cyclic.js';
/**
 * Stochastic weight averaging and EMA models (torch.optim.swa_utils): AveragedModel, SWALR,
 * updateBn, and getEmaAvgFn (PyTorch 2.x's).
 */
export * as swaUtils from './swa-utils.js';
