// The run-time checks of the generated operator wrappers (generated/aten.ts): what a JavaScript
// caller passes where a schema wants a Tensor, a list of Tensors, a Scalar or a number. Without
// them a string or undefined fails inside the wrapper with "Cannot read properties of undefined"
// or reaches the addon's "A number was expected", neither of which names the operator.
import { Tensor } from './tensor.js';
import { ArgumentError, describeValue } from '../util/arguments.js';

function fail(op: string, arg: string, expected: string, value: unknown): never {
  throw new ArgumentError(`aten::${op}: argument '${arg}' must be ${expected}, got ${describeValue(value)}`);
}

/** The engine handle of a Tensor argument, or an error naming the operator and the argument. */
export function tensorArg(value: unknown, op: string, arg: string): number {
  if (!(value instanceof Tensor)) fail(op, arg, 'a Tensor', value);
  return (value as Tensor).handle;
}

/** The handles of a Tensor[] argument (null items allowed where the schema says Tensor?[]). */
export function tensorListArg(value: unknown, op: string, arg: string, nullable = false): (number | null)[] {
  if (!Array.isArray(value)) fail(op, arg, 'an array of Tensors', value);
  return (value as unknown[]).map((t, i) =>
    nullable && t === null ? null : tensorArg(t, op, `${arg}[${i}]`),
  );
}

/** A Scalar argument: a number, a bigint, a boolean or {float: x}. */
export function scalarArgOf(value: unknown, op: string, arg: string): unknown {
  const ok =
    typeof value === 'number' ||
    typeof value === 'boolean' ||
    typeof value === 'bigint' ||
    (value !== null && typeof value === 'object' && typeof (value as { float?: unknown }).float === 'number');
  if (!ok) fail(op, arg, 'a number or a boolean', value);
  return value;
}

/** An int or float argument: a number (the addon checks that ints are whole). */
export function numberArgOf(value: unknown, op: string, arg: string): number {
  if (typeof value !== 'number') fail(op, arg, 'a number', value);
  return value as number;
}

/**
 * max_unpool2d / max_unpool3d: libtorch 1.13 reads the input's spatial sizes and output_size's
 * entries without checking how many there are, so a wrong count crashes the process. Checked
 * here: an input of N + 1 or N + 2 dims (N = 2 or 3), int64 indices of the input's shape, and
 * N entries in output_size (and, for 3-d, in stride and padding).
 */
export function maxUnpoolGuard(
  op: string,
  self: unknown,
  indices: unknown,
  outputSize: unknown,
  ...rest: unknown[]
): void {
  const n = op === 'max_unpool3d' ? 3 : 2;
  tensorArg(self, op, 'self');
  tensorArg(indices, op, 'indices');
  const x = self as Tensor;
  const i = indices as Tensor;
  if (x.ndim !== n + 1 && x.ndim !== n + 2)
    throw new ArgumentError(
      `aten::${op}: argument 'self' must be a ${n + 1}-d or ${n + 2}-d Tensor, got a ${x.ndim}-d one`,
    );
  if (i.dtype !== 'int64' || i.shape.join() !== x.shape.join())
    throw new ArgumentError(
      `aten::${op}: argument 'indices' must be an int64 Tensor of self's shape [${x.shape.join(', ')}], ` +
        `got ${i.dtype} [${i.shape.join(', ')}]`,
    );
  const names = ['output_size', 'stride', 'padding'];
  for (const [k, list] of [outputSize, ...rest].entries()) {
    if (k > 0 && n === 2) break;
    if (!Array.isArray(list) || list.length !== n || !list.every((v) => Number.isInteger(v)))
      fail(op, names[k]!, `${n} integers`, list);
  }
}
