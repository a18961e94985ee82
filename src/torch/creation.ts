// Creating tensors: from JS data, constant fills, ranges and random draws (libtorch's generator).
import { native } from './native.js';
import { dtypeCode, type DType, type NumericArray } from './dtype.js';
import { Tensor, wrap, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { creationDevice, type DeviceLike } from './device.js';

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
  options: {
    shape?: number[];
    dtype?: DType;
    requiresGrad?: boolean;
    device?: DeviceLike;
    pinned?: boolean;
  } = {},
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
  const device = creationDevice(options.device);
  if (device !== undefined) {
    // Host data reach a GPU through page-locked memory with a non-blocking copy (as a
    // pin_memory DataLoader does), so the copy overlaps the work already queued.
    const pinned = options.pinned === false ? t : t.pinMemory();
    const moved = pinned.toDevice(device, { nonBlocking: pinned !== t });
    if (pinned !== t) pinned.dispose();
    t.dispose();
    t = moved;
  }
  if (options.requiresGrad) t.requiresGrad_(true);
  return t;
}

// Creation functions take an optional device; without one they use the default device
// (setDefaultDevice), which starts as the CPU.
export function scalarTensor(value: number, dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return full([], value, dtype, device);
}

export function zeros(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.zeros(shape, dtype, null, creationDevice(device));
}
export function ones(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.ones(shape, dtype, null, creationDevice(device));
}
export function full(shape: number[], value: Scalar, dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.full(shape, value, dtype, null, creationDevice(device));
}
export function zerosLike(t: Tensor): Tensor {
  return aten.zeros_like(t);
}
export function onesLike(t: Tensor): Tensor {
  return aten.ones_like(t);
}
export function empty(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.empty_memory_format(shape, dtype, null, creationDevice(device));
}
/** Values start, start+step, ... below end. Integer arguments give int64, as torch.arange. */
export function arange(start: number, end?: number, step = 1, dtype?: DType, device?: DeviceLike): Tensor {
  if (end === undefined) return aten.arange(start, dtype ?? null, null, creationDevice(device));
  return aten.arange_start_step(start, end, step, dtype ?? null, null, creationDevice(device));
}
export function linspace(
  start: number,
  end: number,
  steps: number,
  dtype: DType = 'float32',
  device?: DeviceLike,
): Tensor {
  return aten.linspace({ float: start }, { float: end }, steps, dtype, null, creationDevice(device));
}
export function eye(n: number, dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.eye(n, dtype, null, creationDevice(device));
}
export function rand(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.rand(shape, dtype, null, creationDevice(device));
}
export function randn(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.randn(shape, dtype, null, creationDevice(device));
}
export function randint(
  low: number,
  high: number,
  shape: number[],
  dtype: DType = 'int64',
  device?: DeviceLike,
): Tensor {
  return aten.randint_low(low, high, shape, dtype, null, creationDevice(device));
}
export function randperm(n: number, dtype: DType = 'int64', device?: DeviceLike): Tensor {
  return aten.randperm(n, dtype, null, creationDevice(device));
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

/** Seeds libtorch's default generators (rand, randn, dropout, init): the CPU's and every GPU's. */
export function manualSeed(seed: number): void {
  native.manualSeedAll(seed);
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
