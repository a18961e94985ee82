// Reading and printing complex tensors' values, for tensor.ts (toArray, toString): kept apart from
// complex.ts, which attaches Tensor members when it loads and so cannot be imported by tensor.ts.
import type { Tensor } from './tensor.js';
import type { DType } from './dtype.js';
import * as aten from './generated/aten.js';
import { tidy } from './scope.js';

/** Whether `dtype` is a complex dtype (complex64 or complex128). */
export function isComplexDtype(dtype: DType): boolean {
  return dtype === 'complex64' || dtype === 'complex128';
}

/**
 * The values of a complex tensor as interleaved (real, imaginary) pairs, in a Float32Array
 * (complex64) or Float64Array (complex128). A lazily conjugated tensor is materialized first.
 */
export function complexToArray(t: Tensor): Float32Array | Float64Array {
  return tidy(() => aten.view_as_real(aten.resolve_conj(t)).toArray() as Float32Array | Float64Array);
}

/** One complex value as PyTorch prints it: 1+2j, 0.5-1j. */
export function formatComplex(re: number, im: number): string {
  const r = +re.toPrecision(6);
  const i = +im.toPrecision(6);
  return `${r}${i < 0 || Object.is(i, -0) ? '-' : '+'}${Math.abs(i)}j`;
}
