export { Module } from './module.js';
export {
  RemovableHandle,
  type ForwardHook,
  type ForwardHookOptions,
  type ForwardPreHook,
  type ModuleHookOptions,
} from './module-hooks.js';
export type { FullBackwardHook, FullBackwardPreHook } from './module-backward-hooks.js';
export {
  registerModuleForwardPreHook,
  registerModuleForwardHook,
  registerModuleFullBackwardHook,
  registerModuleFullBackwardPreHook,
} from './module-global-hooks.js';
export type {
  StateDictPreHook,
  StateDictPostHook,
  LoadStateDictPreHook,
  LoadStateDictPostHook,
} from './module-state-hooks.js';
export * from './layers.js';
export * from './embedding.js';
export * from './adaptive.js';
export * from './conv.js';
export * from './activation.js';
export * from './activation-more.js';
export * from './instance-norm.js';
export * from './shuffle.js';
export * from './padding.js';
export * from './pooling.js';
export * from './pooling-more.js';
export * from './unpooling.js';
export { Unfold, Fold, type UnfoldOptions, type FoldOptions } from './fold.js';
export {
  Upsample,
  UpsamplingNearest2d,
  UpsamplingBilinear2d,
  type UpsampleOptions,
  type Upsampling2dOptions,
} from './interpolate.js';
export * from './recurrent.js';
export * from './rnn-cells.js';
export * from './activation-shrink.js';
export * from './layers-more.js';
export {
  MultiheadAttention,
  type MultiheadAttentionOptions,
  type MultiheadAttentionForwardOptions,
} from './attention.js';
export * from './transformer.js';
/** Weight initialisations, in place (torch.nn.init). */
export * as init from './init.js';
/** Losses and stateless operations (torch.nn.functional). */
export * as functional from './functional.js';
/** Gradient clipping, parameter vectors, packed sequences (`utils.rnn`), weight and spectral norms (torch.nn.utils). */
export * as utils from './utils.js';
export * from './transformer-model.js';
export * from './loss.js';
export * from './loss-more.js';
