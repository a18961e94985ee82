// Argument checks of the elementwise functions and their Tensor methods (tensor-elementwise.ts,
// tensor-arithmetic.ts, tensor-logical.ts, tensor-methods-inplace.ts): a wrong value fails with an
// ArgumentError naming the function and the argument before libtorch sees it. Where PyTorch takes
// a number for the second argument (the operator has a Scalar overload) so do the functions; where
// it takes only tensors, a number is an error that says to wrap it in torch.tensor.
import { Tensor, type Scalar } from './tensor.js';
import { checksOf } from '../util/arguments.js';
import { isScalar, tensorArg, tensorOrScalarArg } from './tensor-args.js';

/** How div rounds its quotient: toward zero ('trunc'), down ('floor'), or not at all (null). */
export type RoundingMode = 'trunc' | 'floor' | null;

/** `input` as a Tensor, or an ArgumentError naming `fn` and the argument. */
export function inputArg(fn: string, input: unknown): Tensor {
  return tensorArg(checksOf(fn), input, 'input');
}

/** `other` as a Tensor (a number named as needing torch.tensor), after checking `input`. */
export function tensorPairArg(fn: string, input: unknown, other: unknown, name = 'other'): Tensor {
  const c = checksOf(fn);
  tensorArg(c, input, 'input');
  if (!(other instanceof Tensor))
    c.fail(name, isScalar(other) ? 'a Tensor (wrap a number in torch.tensor)' : 'a Tensor', other);
  return other as Tensor;
}

/** `input` op `other`, `other` a Tensor or a Scalar: the overload of each. */
export function tensorOrScalarPair(
  fn: string,
  input: unknown,
  other: unknown,
  withTensor: (a: Tensor, b: Tensor) => Tensor,
  withScalar: (a: Tensor, b: Scalar) => Tensor,
  name = 'other',
): Tensor {
  const c = checksOf(fn);
  const a = tensorArg(c, input, 'input');
  const b = tensorOrScalarArg(c, other, name);
  return b instanceof Tensor ? withTensor(a, b) : withScalar(a, b);
}

/** `input` op `other` where either may be a number (not both: one must give the result's shape). */
export function eitherScalarPair(
  fn: string,
  input: unknown,
  other: unknown,
  ops: {
    both: (a: Tensor, b: Tensor) => Tensor;
    firstScalar: (a: Scalar, b: Tensor) => Tensor;
    secondScalar: (a: Tensor, b: Scalar) => Tensor;
  },
  name = 'other',
): Tensor {
  const c = checksOf(fn);
  if (input instanceof Tensor) return tensorOrScalarPair(fn, input, other, ops.both, ops.secondScalar, name);
  if (!isScalar(input)) c.fail('input', 'a Tensor or a number', input);
  if (!(other instanceof Tensor))
    c.fail(name, 'a Tensor when input is a number (wrap one of them in torch.tensor)', other);
  return ops.firstScalar(input as Scalar, other as Tensor);
}

/** The rounding mode of div: 'trunc', 'floor', or null/undefined for true division. */
export function roundingModeArg(fn: string, value: unknown): RoundingMode {
  if (value === undefined || value === null) return null;
  if (value !== 'trunc' && value !== 'floor')
    checksOf(fn).fail('roundingMode', "'trunc', 'floor' or null", value);
  return value as RoundingMode;
}

/** `eps` of logit: null, or a number in [0, 0.5] (past 0.5 the clamp [eps, 1 - eps] is empty). */
export function logitEpsArg(fn: string, eps: unknown): number | null {
  if (eps === null || eps === undefined) return null;
  return checksOf(fn).number(eps, 'eps', { min: 0, max: 0.5 });
}

/** A replacement value of nanToNum: null (the default) or a number, infinite included. */
export function replacementArg(fn: string, value: unknown, name: string): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || Number.isNaN(value)) checksOf(fn).fail(name, 'a number or null', value);
  return value as number;
}
