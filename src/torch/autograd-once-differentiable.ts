// torch.autograd.function.once_differentiable: a custom Function's backward run without recording
// a graph, whose results refuse a second differentiation by name (PyTorch's DelayedError node)
// instead of silently giving wrong second derivatives.
import { Tensor } from './tensor.js';
import { isGradEnabled, noGrad } from './autograd.js';
import { Function, type FunctionCtx, type Gradients } from './autograd-function.js';
import { ArgumentError } from '../util/arguments.js';

/** The node whose backward is the error: its outputs alias the gradients backward returned. */
class OnceDifferentiable extends Function {
  static forward(_ctx: FunctionCtx, ...gradients: Tensor[]): Tensor[] {
    return gradients;
  }

  static backward(): never {
    throw new ArgumentError(
      'autograd: trying to differentiate twice a function that was marked with onceDifferentiable (its backward is not differentiable: write it in differentiable operations, or do not ask for second derivatives)',
    );
  }
}

/**
 * Wraps a custom Function's `backward` as PyTorch's `@once_differentiable`: it runs with grad
 * mode off (no graph is recorded, so it may use any operation), and where a second derivative is
 * being built (`createGraph`), its gradients carry a node that throws a named error when
 * differentiated.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * import { autograd, type Tensor } from 'tailor/torch';
 * class Clip extends autograd.Function {
 *   static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
 *     ctx.saveForBackward(x);
 *     return x.clamp(-1, 1);
 *   }
 *   static backward = autograd.onceDifferentiable((ctx: autograd.FunctionCtx, g: Tensor | null) => {
 *     const [x] = ctx.savedTensors;
 *     return g!.mul(x!.abs().le(1));
 *   });
 * }
 * const x = torch.tensor([0.5, 2], { requiresGrad: true });
 * torch.tidy(() => Clip.apply(x).sum().backward()); // x.grad: [1, 0]
 * ```
 */
export function onceDifferentiable<C extends FunctionCtx>(
  backward: (ctx: C, ...gradOutputs: (Tensor | null)[]) => Gradients,
): (ctx: C, ...gradOutputs: (Tensor | null)[]) => Gradients {
  if (typeof backward !== 'function')
    throw new ArgumentError('autograd.onceDifferentiable: backward must be a function');
  return function (this: unknown, ctx: C, ...gradOutputs: (Tensor | null)[]): Gradients {
    const outputs = noGrad(() => backward.call(this, ctx, ...gradOutputs));
    if (!isGradEnabled() || !gradOutputs.some((g) => g instanceof Tensor && g.requiresGrad)) return outputs;
    const list: unknown[] = Array.isArray(outputs) ? [...outputs] : [outputs];
    const at = list.flatMap((v, i) => (v instanceof Tensor ? [i] : []));
    if (at.length === 0) return outputs;
    const aliased = OnceDifferentiable.apply(
      ...at.map((i) => (list[i] as Tensor).detach().requiresGrad_(true)),
    ) as Tensor[];
    at.forEach((i, k) => (list[i] = aliased[k]));
    return (Array.isArray(outputs) ? list : list[0]) as Gradients;
  };
}
