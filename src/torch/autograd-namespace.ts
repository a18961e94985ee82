// torch.autograd as a namespace: the functional gradient and grad-mode functions (also exported at
// the top level of tailor/torch) next to torch.autograd.functional, under PyTorch's paths.
export { grad, noGrad, enableGrad, isGradEnabled } from './autograd.js';
export { gradcheck, type GradcheckOptions } from './gradcheck.js';
/** Vector-Jacobian and Jacobian-vector products, Jacobians, Hessians and Hessian-vector products of whole functions (torch.autograd.functional). */
export * as functional from './autograd-functional.js';
export {
  Function,
  FunctionCtx,
  type FunctionOutput,
  type FunctionClass,
  type Gradients,
} from './autograd-function.js';
export { onceDifferentiable } from './autograd-once-differentiable.js';
/** Forward-mode automatic differentiation (torch.autograd.forward_ad): dualLevel, makeDual, unpackDual. */
export * as forwardAd from './forward-ad.js';
