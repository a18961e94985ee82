// Argument checks shared by the torch.* tensor functions (tensor-search.ts, tensor-index.ts,
// tensor-shape.ts): a wrong JavaScript value fails with an ArgumentError that names the
// function and the argument, before libtorch sees it and answers with a C++ message.
import { Tensor, type Scalar } from './tensor.js';
import type { ArgumentChecks } from '../util/arguments.js';

/** `value` as a Tensor, or an error naming the function and the argument. */
export function tensorArg(c: ArgumentChecks, value: unknown, name: string): Tensor {
  if (!(value instanceof Tensor)) c.fail(name, 'a Tensor', value);
  return value as Tensor;
}

/** An array of Tensors (at least `minLength`). */
export function tensorsArg(c: ArgumentChecks, value: unknown, name: string, minLength = 0): Tensor[] {
  const items = c.array(value, name, { minLength });
  items.forEach((t, k) => tensorArg(c, t, `${name}[${k}]`));
  return items as Tensor[];
}

/** A dimension index of `input` (negative counts from the end). */
export function dimArg(c: ArgumentChecks, value: unknown, name: string, input: Tensor): number {
  const ndim = Math.max(input.ndim, 1);
  return c.integer(value, name, { min: -ndim, max: ndim - 1 });
}

/** A Scalar: a finite or infinite number, a boolean, or {float: x}. */
export function isScalar(value: unknown): value is Scalar {
  return (
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    (typeof value === 'object' && value !== null && typeof (value as { float?: unknown }).float === 'number')
  );
}

/** A Tensor or a Scalar, or an error naming the argument. */
export function tensorOrScalarArg(c: ArgumentChecks, value: unknown, name: string): Tensor | Scalar {
  if (value instanceof Tensor || isScalar(value)) return value;
  return c.fail(name, 'a Tensor or a number', value);
}

/** An integral int64 (or other integer dtype) index tensor. */
export function indexArg(c: ArgumentChecks, value: unknown, name: string): Tensor {
  const t = tensorArg(c, value, name);
  if (!['int64', 'int32', 'int16', 'int8', 'uint8'].includes(t.dtype))
    c.fail(name, 'an integer tensor of indices (int64)', `a ${t.dtype} tensor`);
  return t;
}
