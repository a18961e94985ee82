// Complex tensors (complex64, complex128), as PyTorch has them: made from real and imaginary
// parts (torch.complex, torch.polar, torch.viewAsComplex), read as parts (torch.real, torch.imag,
// torch.viewAsReal, torch.angle, abs) or as interleaved [re, im, re, im, ...] arrays (toArray),
// conjugated lazily as PyTorch does (conj sets a flag that resolveConj materializes). The fft,
// stft and linalg.eig results are complex tensors. The Tensor members (x.real, x.imag, x.conj()...)
// are attached on import.
export { isComplexDtype } from './complex-values.js';
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { attachTensorFunctions, attachTensorMembers } from './tensor-attach.js';
import { isComplexDtype } from './complex-values.js';
import { ArgumentError, checksOf } from '../util/arguments.js';
import { tensorArg } from './tensor-args.js';

function complexArg(fn: string, value: unknown): Tensor {
  const t = tensorArg(checksOf(fn), value, 'input');
  if (!isComplexDtype(t.dtype))
    throw new ArgumentError(
      `${fn}: input must be a complex tensor (complex64 or complex128), got ${t.dtype}; make one with torch.complex(real, imag) or torch.viewAsComplex`,
    );
  return t;
}

/**
 * The real part (torch.real): a view of a complex tensor's real parts (float32 for complex64,
 * float64 for complex128); a real tensor itself.
 */
export function real(input: Tensor): Tensor {
  return aten.real(tensorArg(checksOf('real'), input, 'input'));
}

/** The imaginary part of a complex tensor, a view (torch.imag). */
export function imag(input: Tensor): Tensor {
  return aten.imag(complexArg('imag', input));
}

/** A complex tensor [...] as a real view [..., 2] of its (real, imaginary) pairs (torch.view_as_real). */
export function viewAsReal(input: Tensor): Tensor {
  // A lazily conjugated tensor has no real view of its own: materialize the conjugate first.
  return aten.view_as_real(aten.resolve_conj(complexArg('viewAsReal', input)));
}

/** A float tensor [..., 2] of (real, imaginary) pairs as a complex view [...] (torch.view_as_complex). */
export function viewAsComplex(input: Tensor): Tensor {
  const t = tensorArg(checksOf('viewAsComplex'), input, 'input');
  if (t.dtype !== 'float32' && t.dtype !== 'float64')
    throw new ArgumentError(
      `viewAsComplex: input must be float32 or float64 (pairs of parts), got ${t.dtype}`,
    );
  if (t.ndim === 0 || t.shape[t.ndim - 1] !== 2)
    throw new ArgumentError(
      `viewAsComplex: the last dimension must hold the 2 parts, got shape [${t.shape.join(', ')}]`,
    );
  return aten.view_as_complex(t);
}

/**
 * The complex tensor real + i imag (torch.complex); `real` and `imag` broadcast and share a float
 * dtype (float32 gives complex64, float64 complex128).
 *
 * @example
 * ```ts
 * import { complex, tensor } from 'tailor/torch';
 *
 * const z = complex(tensor([1, 2]), tensor([3, 4]));
 * console.log(z.dtype, z.toArray()); // complex64 Float32Array [1, 3, 2, 4]
 * ```
 */
export function complex(realPart: Tensor, imagPart: Tensor): Tensor {
  tensorArg(checksOf('complex'), realPart, 'real');
  tensorArg(checksOf('complex'), imagPart, 'imag');
  return aten.complex(realPart, imagPart);
}

/** The complex tensor abs * (cos(angle) + i sin(angle)) (torch.polar). */
export function polar(abs: Tensor, angle: Tensor): Tensor {
  tensorArg(checksOf('polar'), abs, 'abs');
  tensorArg(checksOf('polar'), angle, 'angle');
  return aten.polar(abs, angle);
}

/** The argument (phase) of each element in radians; 0 or pi for real numbers (torch.angle). */
export function angle(input: Tensor): Tensor {
  return aten.angle(tensorArg(checksOf('angle'), input, 'input'));
}

/** The complex conjugate, as a lazily conjugated view (torch.conj); a real tensor itself. */
export function conj(input: Tensor): Tensor {
  return aten.conj(tensorArg(checksOf('conj'), input, 'input'));
}

/** The complex conjugate computed into new memory (torch.conj_physical). */
export function conjPhysical(input: Tensor): Tensor {
  return aten.conj_physical(tensorArg(checksOf('conjPhysical'), input, 'input'));
}

/** A lazily conjugated tensor materialized (torch.resolve_conj); any other tensor itself. */
export function resolveConj(input: Tensor): Tensor {
  return aten.resolve_conj(tensorArg(checksOf('resolveConj'), input, 'input'));
}

/** Whether the tensor's dtype is complex (torch.is_complex). */
export function isComplex(input: Tensor): boolean {
  return isComplexDtype(tensorArg(checksOf('isComplex'), input, 'input').dtype);
}

declare module './tensor.js' {
  interface Tensor {
    /** The real part, as torch.real(this) (PyTorch's `x.real`): a view for a complex tensor. */
    readonly real: Tensor;
    /** The imaginary part of a complex tensor, as torch.imag(this) (PyTorch's `x.imag`). */
    readonly imag: Tensor;
    /** The complex conjugate (a lazy view), as torch.conj(this). */
    conj(): Tensor;
    /** The complex conjugate in new memory, as torch.conj_physical(this). */
    conjPhysical(): Tensor;
    /** The lazy conjugation materialized, as torch.resolve_conj(this). */
    resolveConj(): Tensor;
    /** The argument (phase) in radians, as torch.angle(this). */
    angle(): Tensor;
    /** Whether the dtype is complex, as torch.is_complex(this). */
    isComplex(): boolean;
  }
}

attachTensorMembers('complex.ts', {
  get real(): Tensor {
    return real(this as unknown as Tensor);
  },
  get imag(): Tensor {
    return imag(this as unknown as Tensor);
  },
});
attachTensorFunctions('complex.ts', { conj, conjPhysical, resolveConj, angle, isComplex });
