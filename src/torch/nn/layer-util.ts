// What the layers with parameters share: their argument checks and PyTorch's default initialisation of
// Linear and the convolutions. Not part of the public surface (nn/index.ts does not re-export it).
import { Tensor } from '../tensor.js';
import { fanInAndOut, kaimingUniform_, uniform_ } from './init.js';
import { ArgumentError, describeValue, type ArgumentChecks } from '../../util/arguments.js';

/** Sizes of layers: positive integers (a JavaScript caller's 2.5 or '2' fails here, named). */
export const MAX_SIZE = 2 ** 31 - 1;
export const size = (c: ArgumentChecks, v: unknown, name: string) =>
  c.integer(v, name, { min: 1, max: MAX_SIZE });

/** The options object of a layer and, for each numeric option given, its range. */
export function checkOptions(
  c: ArgumentChecks,
  o: unknown,
  ranges: Record<string, { min?: number; above?: number; integer?: boolean }>,
) {
  const record = c.object(o, 'options');
  for (const [key, r] of Object.entries(ranges)) {
    if (record[key] === undefined) continue;
    if (r.integer) c.integer(record[key], `options.${key}`, { min: r.min ?? 0 });
    else c.number(record[key], `options.${key}`, r);
  }
  for (const key of ['bias', 'affine', 'trackRunningStats', 'elementwiseAffine'])
    if (record[key] !== undefined && typeof record[key] !== 'boolean')
      c.fail(`options.${key}`, 'true or false', record[key]);
}

/** PyTorch's default for Linear and Conv: kaiming_uniform(a=sqrt 5) weights, U(+-1/sqrt(fan_in)) bias. */
export function resetLinearLike(weight: Tensor, bias: Tensor | null): void {
  kaimingUniform_(weight, { a: Math.sqrt(5) });
  if (bias) {
    const { fanIn } = fanInAndOut(weight.shape);
    const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
    uniform_(bias, -bound, bound);
  }
}

/** `value` per spatial axis: a number repeated, or an array of exactly `dims` integers, each >= min. */
export function perAxis(
  c: ArgumentChecks,
  value: unknown,
  name: string,
  dims: number,
  min: number,
): number[] {
  if (typeof value === 'number') return new Array<number>(dims).fill(c.integer(value, name, { min }));
  if (!Array.isArray(value) || value.length !== dims)
    c.fail(name, `an integer >= ${min} or an array of ${dims} of them (one per spatial axis)`, value);
  return (value as unknown[]).map((v, i) => c.integer(v, `${name}[${i}]`, { min }));
}

/** A size option as the caller gave it (a number, or a copy of the array), for the layer's fields. */
export function asGiven<V>(value: V | number[]): V | number[] {
  return Array.isArray(value) ? [...value] : value;
}

/** A pooling layer's kernel size, stride (default: the kernel size) and padding, checked, per axis. */
export function poolSizes(
  c: ArgumentChecks,
  dims: number,
  kernelSize: unknown,
  stride: unknown,
  padding: unknown,
): { kernelSize: number[]; stride: number[]; padding: number[] } {
  const kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
  return {
    kernelSize: kernel,
    stride: stride == null ? kernel : perAxis(c, stride, 'stride', dims, 1),
    padding: perAxis(c, padding, 'padding', dims, 0),
  };
}

/**
 * The input of a layer that takes a batched input of `batched` dimensions or, where `unbatched`,
 * one without the batch dimension: an ArgumentError naming the layer, the layouts and the shape.
 */
export function checkRank(fn: string, x: Tensor, batched: number, layout: string, unbatched = true): void {
  checkTensor(fn, x);
  if (x.ndim === batched || (unbatched && x.ndim === batched - 1)) return;
  const ranks = unbatched ? `${batched - 1}-d or ${batched}-d` : `${batched}-d`;
  throw new ArgumentError(
    `${fn}: the input must be ${ranks} (${layout}${unbatched ? ', or without the batch dimension' : ''}), got shape [${x.shape.join(', ')}]`,
  );
}

/** Throws an ArgumentError naming `fn` and the argument unless `value` is a Tensor. */
export function checkTensor(fn: string, value: unknown, name = 'input'): asserts value is Tensor {
  if (!(value instanceof Tensor))
    throw new ArgumentError(`${fn}: ${name} must be a Tensor, got ${describeValue(value)}`);
}
