// The tensor library: what users write models with.
export { Tensor, type Scalar } from './tensor.js';
export type { DType, NumericArray } from './dtype.js';
export { tidy, withScope, TensorScope, keep, dispose, liveTensors } from './scope.js';
export * from './creation.js';
export { noGrad, enableGrad, isGradEnabled, grad } from './autograd.js';
export {
  engineInfo,
  engineAvailable,
  describeLibtorch,
  libtorchSelection,
  EngineUnavailableError,
} from './native.js';
export * from './device.js';
export * from './amp.js';
export * as distributed from './distributed/index.js';
export { checkOpSchemas, assertOpSchemas, OpSchemaMismatchError } from './schema-check.js';
export * as aten from './generated/aten.js';
export * as nn from './nn/index.js';
export * as optim from './optim/index.js';
export * from './checkpoint.js';
export { gradcheck } from './gradcheck.js';
