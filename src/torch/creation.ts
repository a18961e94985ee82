// Creating tensors: from JS data, constant fills, ranges and random draws (libtorch's generator).
import { native } from './native.js';
import { dtypeCode, type DType, type NumericArray } from './dtype.js';
import { Tensor, wrap, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';

type NestedNumbers = number | boolean | NestedNumbers[];

function inferShape(data: NestedNumbers): number[] {
  const shape: number[] = [];
  let level: NestedNumbers = data;
  while (Array.isArray(level)) {
    shape.push(level.length);
    level = level[0] as NestedNumbers;
  }
  return shape;
}

/**
 * A tensor from JS data (copied). Typed arrays keep their dtype unless `dtype` is given; nested
 * arrays default to float32 (PyTorch's default dtype), booleans to bool.
 */
export function tensor(
  data: NestedNumbers | NumericArray,
  options: { shape?: number[]; dtype?: DType; requiresGrad?: boolean } = {},
): Tensor {
  let array: NumericArray;
  let shape: number[];
  let sourceDtype: DType;
  if (ArrayBuffer.isView(data)) {
    array = data;
    shape = options.shape ?? [data.length];
    sourceDtype =
      data instanceof Float32Array
        ? 'float32'
        : data instanceof Float64Array
          ? 'float64'
          : data instanceof Int32Array
            ? 'int32'
            : data instanceof BigInt64Array
              ? 'int64'
              : data instanceof Uint8Array
                ? 'uint8'
                : data instanceof Int8Array
                  ? 'int8'
                  : 'int16';
  } else {
    const inferred = inferShape(data);
    const flat = (Array.isArray(data) ? (data as unknown[]).flat(Infinity) : [data]) as (number | boolean)[];
    const expected = inferred.reduce((a, b) => a * b, 1);
    if (flat.length !== expected)
      throw new RangeError(`tensor(): ragged nested array (expected ${expected} values, got ${flat.length})`);
    shape = options.shape ?? inferred;
    if (typeof flat[0] === 'boolean') {
      array = Uint8Array.from(flat, (v) => (v ? 1 : 0));
      sourceDtype = 'bool';
    } else {
      array = Float32Array.from(flat as number[]);
      sourceDtype = 'float32';
    }
    if (options.dtype === 'float64') {
      array = Float64Array.from(flat as number[]);
      sourceDtype = 'float64';
    }
  }
  let t = wrap(native.fromArray(array, shape, dtypeCode(sourceDtype)));
  if (options.dtype && options.dtype !== sourceDtype) {
    const converted = t.to(options.dtype);
    t.dispose();
    t = converted;
  }
  if (options.requiresGrad) t.requiresGrad_(true);
  return t;
}

export function scalarTensor(value: number, dtype: DType = 'float32'): Tensor {
  return full([], value, dtype);
}

export function zeros(shape: number[], dtype: DType = 'float32'): Tensor {
  return aten.zeros(shape, dtype);
}
export function ones(shape: number[], dtype: DType = 'float32'): Tensor {
  return aten.ones(shape, dtype);
}
export function full(shape: number[], value: Scalar, dtype: DType = 'float32'): Tensor {
  return aten.full(shape, value, dtype);
}
export function zerosLike(t: Tensor): Tensor {
  return aten.zeros_like(t);
}
export function onesLike(t: Tensor): Tensor {
  return aten.ones_like(t);
}
export function empty(shape: number[], dtype: DType = 'float32'): Tensor {
  return aten.empty_memory_format(shape, dtype);
}
/** Values start, start+step, ... below end. Integer arguments give int64, as torch.arange. */
export function arange(start: number, end?: number, step = 1, dtype?: DType): Tensor {
  if (end === undefined) return aten.arange(start, dtype ?? null);
  return aten.arange_start_step(start, end, step, dtype ?? null);
}
export function linspace(start: number, end: number, steps: number, dtype: DType = 'float32'): Tensor {
  return aten.linspace({ float: start }, { float: end }, steps, dtype);
}
export function eye(n: number, dtype: DType = 'float32'): Tensor {
  return aten.eye(n, dtype);
}
export function rand(shape: number[], dtype: DType = 'float32'): Tensor {
  return aten.rand(shape, dtype);
}
export function randn(shape: number[], dtype: DType = 'float32'): Tensor {
  return aten.randn(shape, dtype);
}
export function randint(low: number, high: number, shape: number[], dtype: DType = 'int64'): Tensor {
  return aten.randint_low(low, high, shape, dtype);
}
export function randperm(n: number, dtype: DType = 'int64'): Tensor {
  return aten.randperm(n, dtype);
}
export function cat(tensors: Tensor[], dim = 0): Tensor {
  return aten.cat(tensors, dim);
}
export function stack(tensors: Tensor[], dim = 0): Tensor {
  return aten.stack(tensors, dim);
}
export function where(condition: Tensor, a: Tensor, b: Tensor): Tensor {
  return aten.where_self(condition, a, b);
}
export function oneHot(labels: Tensor, numClasses: number): Tensor {
  return aten.one_hot(labels, numClasses);
}

/** Seeds libtorch's default generator (rand, randn, dropout, init). */
export function manualSeed(seed: number): void {
  native.manualSeed(seed);
}
export function getRngState(): Uint8Array {
  return native.getRngState();
}
export function setRngState(state: Uint8Array): void {
  native.setRngState(state);
}
export function setNumThreads(n: number): void {
  native.setNumThreads(n);
}
export function getNumThreads(): number {
  return native.getNumThreads();
}
