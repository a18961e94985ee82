// In-place conversion of a module's tensors (device, dtype, memory format), as torch's
// Module._apply with `param.data = fn(param)`: each Tensor object stays the same, so fields such
// as `linear.weight` and an optimizer built on the parameters see the converted values.
import type { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import { checkDevice, parseDevice, type DeviceLike } from '../device.js';
import { isDType, isFloatingPoint, type DType } from '../dtype.js';
import type { MemoryFormat } from '../memory-format.js';
import { ArgumentError, describeValue } from '../../util/arguments.js';

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

/** @internal Module.toDtype: the floating-point tensors of `tensors` converted to `dtype` in place. */
export function convertDtype(tensors: readonly Tensor[], dtype: DType): void {
  if (typeof dtype !== 'string' || !isDType(dtype) || !isFloatingPoint(dtype))
    throw new ArgumentError(
      `tailor: Module.toDtype: dtype must be a floating-point dtype ('float16', 'bfloat16', 'float32' or 'float64'), got ${describeValue(dtype)}; integer tensors are never converted`,
    );
  convertInPlace(
    tensors.filter((t) => isFloatingPoint(t.dtype)),
    (t) => t.dtype !== dtype,
    (t) => t.to(dtype),
  );
}

/** @internal Module.to(device): `tensors` moved in place (those on another device). */
export function moveToDevice(tensors: readonly Tensor[], device: DeviceLike): void {
  const target = checkDevice(device);
  const firstGpu = parseDevice('cuda:0');
  const elsewhere = (t: Tensor): boolean => {
    const at = t.device;
    return !(at === target || (target.type === 'cuda' && target.index === null && at === firstGpu));
  };
  convertInPlace(tensors, elsewhere, (t) => t.toDevice(target));
}

/** @internal Module.toMemoryFormat: the 4-D tensors of `tensors` laid out in `format`; returns how many are 4-D. */
export function convertFormat(tensors: readonly Tensor[], format: MemoryFormat): number {
  const fourD = tensors.filter((t) => t.ndim === 4);
  convertInPlace(
    fourD,
    (t) => !t.isContiguousIn(format),
    (t) => t.contiguous(format),
  );
  return fourD.length;
}
