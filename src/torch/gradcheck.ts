// Finite-difference gradient checks in float64 (as torch.autograd.gradcheck): compares the
// gradient autograd computes for a random projection of f's output with central differences.
import { Tensor } from './tensor.js';
import { tensor, randn } from './creation.js';
import { tidy } from './scope.js';
import { noGrad, grad } from './autograd.js';
import { checksOf } from '../util/arguments.js';

/** Options of gradcheck: the finite-difference step and the absolute and relative tolerances. */
export interface GradcheckOptions {
  eps?: number;
  atol?: number;
  rtol?: number;
}

/**
 * Checks d/dx_i <w, f(x)> for every input element against (g(x + eps) - g(x - eps)) / 2eps.
 * Inputs must be float64. Returns the worst absolute error; throws with the offending element.
 */
export function gradcheck(
  f: (...inputs: Tensor[]) => Tensor,
  inputs: Tensor[],
  options: GradcheckOptions = {},
): number {
  const c = checksOf('gradcheck');
  if (typeof f !== 'function') c.fail('f', 'a function of the inputs', f);
  if (!Array.isArray(inputs)) c.fail('inputs', 'an array of float64 Tensors', inputs);
  inputs.forEach((x, i) => x instanceof Tensor || c.fail(`inputs[${i}]`, 'a float64 Tensor', x));
  if (options === null || typeof options !== 'object') c.fail('options', 'an object', options);
  const eps = options.eps ?? 1e-6;
  const atol = options.atol ?? 1e-5;
  const rtol = options.rtol ?? 1e-3;
  return tidy(() => {
    for (const x of inputs) if (x.dtype !== 'float64') c.fail('inputs', 'float64 Tensors', x.dtype);
    const leaves = inputs.map((x) => x.detach().clone().requiresGrad_());
    const out = f(...leaves);
    const w = randn(out.shape, 'float64');
    const analytic = grad([out.mul(w).sum()], leaves, { allowUnused: true }).map((g, i) =>
      g ? g.toFloat64Array() : new Float64Array(leaves[i]!.numel),
    );
    const scalar = (values: Float64Array[]) =>
      noGrad(() =>
        tidy(() =>
          f(...values.map((v, i) => tensor(v, { shape: inputs[i]!.shape })))
            .mul(w)
            .sum()
            .item(),
        ),
      );
    const base = inputs.map((x) => x.toFloat64Array());
    let worst = 0;
    base.forEach((values, which) => {
      for (let k = 0; k < values.length; k++) {
        const plus = base.map((b) => b.slice());
        const minus = base.map((b) => b.slice());
        plus[which]![k] += eps;
        minus[which]![k] -= eps;
        const numeric = (scalar(plus) - scalar(minus)) / (2 * eps);
        const a = analytic[which]![k]!;
        const err = Math.abs(a - numeric);
        worst = Math.max(worst, err);
        if (err > atol + rtol * Math.abs(numeric)) {
          throw new Error(
            `gradcheck: input ${which}, element ${k}: autograd ${a}, finite differences ${numeric}`,
          );
        }
      }
    });
    return worst;
  });
}
