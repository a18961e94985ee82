// The argument checks that the torch.linalg files share (linalg.ts, linalg-more.ts,
// linalg-factor.ts): libtorch's own errors name its kernel, not the tailor function that was
// called, so shapes and options are checked here first.
import { Tensor } from './tensor.js';
import { ArgumentError, type ArgumentChecks } from '../util/arguments.js';
import { scalarTensor } from './creation.js';

/** `value` as a Tensor, or an error naming the function and the argument. */
export function tensorArg(c: ArgumentChecks, value: unknown, name: string): Tensor {
  if (!(value instanceof Tensor)) c.fail(name, 'a Tensor', value);
  return value as Tensor;
}

/** A matrix or a batch of matrices ([..., m, n]); square ones when `square`. */
export function matrixArg(c: ArgumentChecks, value: unknown, name: string, square = false): Tensor {
  const A = tensorArg(c, value, name);
  const shape = A.shape;
  const [m, n] = shape.slice(-2);
  if (shape.length < 2 || (square && m !== n)) {
    const expected = square
      ? 'a square matrix or a batch of them (shape [..., n, n])'
      : 'a matrix or a batch of them (shape [..., m, n])';
    throw new ArgumentError(`${c.fn}: ${name} must be ${expected}, got shape [${shape.join(', ')}]`);
  }
  return A;
}

/**
 * The options object of a function whose keyword-only arguments are all true/false flags: each
 * of `names` must be a boolean or absent (a string 'false' would otherwise read as true).
 */
export function flagOptions<K extends string>(
  c: ArgumentChecks,
  options: unknown,
  names: readonly K[],
): Partial<Record<K, boolean>> {
  const o = c.object(options, 'options');
  for (const name of names)
    if (o[name] !== undefined && typeof o[name] !== 'boolean')
      c.fail(`options.${name}`, 'true or false', o[name]);
  return o as Partial<Record<K, boolean>>;
}

/** The pivots of an LU or LDL factorisation: an integer tensor [..., n] beside `factor` [..., n, n]. */
export function pivotsArg(c: ArgumentChecks, value: unknown, factor: Tensor): Tensor {
  const pivots = tensorArg(c, value, 'pivots');
  const n = factor.shape[factor.shape.length - 1];
  if (pivots.dtype !== 'int32' || pivots.shape.length < 1 || pivots.shape[pivots.shape.length - 1] !== n)
    throw new ArgumentError(
      `${c.fn}: pivots must be the int32 pivots [..., ${n}] returned with the factorisation, got a ${pivots.dtype} tensor of shape [${pivots.shape.join(', ')}]`,
    );
  return pivots;
}

/** matrixRank's and pinv's tolerances: numbers (or null), or tensors broadcast over the batch. */
export type Tolerance = number | Tensor | null | undefined;

/**
 * The tolerances `atol` and `rtol` for the float overload (both numbers or absent) or the tensor
 * one (at least one a tensor: a number beside it becomes a 0-d tensor of A's dtype, as PyTorch's
 * own conversion). Numbers must be finite and >= 0; tensors of a floating dtype.
 */
export function tolerances(
  c: ArgumentChecks,
  A: Tensor,
  atol: unknown,
  rtol: unknown,
):
  | { tensors: false; atol: number | null; rtol: number | null }
  | { tensors: true; atol: Tensor | null; rtol: Tensor | null } {
  const check = (value: unknown, name: string): number | Tensor | null => {
    if (value === undefined || value === null) return null;
    if (value instanceof Tensor) {
      if (!value.dtype.startsWith('float') && value.dtype !== 'bfloat16')
        throw new ArgumentError(`${c.fn}: ${name} must be a floating point tensor, got ${value.dtype}`);
      return value;
    }
    return c.number(value, name, { min: 0 });
  };
  const a = check(atol, 'options.atol');
  const r = check(rtol, 'options.rtol');
  if (!(a instanceof Tensor) && !(r instanceof Tensor)) return { tensors: false, atol: a, rtol: r };
  const asTensor = (v: number | Tensor | null) =>
    v === null || v instanceof Tensor
      ? v
      : scalarTensor(v, A.dtype === 'float64' ? 'float64' : 'float32', A.device);
  return { tensors: true, atol: asTensor(a), rtol: asTensor(r) };
}
