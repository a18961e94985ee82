// In-place conversion of a module's tensors (device, dtype, memory format), as torch's
// Module._apply with `param.data = fn(param)`: each Tensor object stays the same, so fields such
// as `linear.weight` and an optimizer built on the parameters see the converted values.
import type { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';

/**
 * Replaces the data of each tensor for which `needs` holds by `convert`'s result, and likewise
 * its gradient; the intermediate tensors are freed here.
 * @internal
 */
export function convertInPlace(
  tensors: readonly Tensor[],
  needs: (t: Tensor) => boolean,
  convert: (t: Tensor) => Tensor,
): void {
  noGrad(() => {
    for (const t of tensors) {
      if (needs(t)) {
        const converted = convert(t);
        t.setData(converted);
        converted.dispose();
      }
      const g = t.grad;
      if (g && needs(g)) {
        const convertedGrad = convert(g);
        t.grad = convertedGrad;
        convertedGrad.dispose();
      }
      g?.dispose();
    }
  });
}
