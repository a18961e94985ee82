// Creating tensors: from JS data, constant fills, ranges and random draws (libtorch's generator).
import { native } from './native.js';
import { TYPED_ARRAYS, dtypeCode, type DType, type NumericArray } from './dtype.js';
import { Tensor, wrap, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { creationDevice, type DeviceLike } from './device.js';
import { ArgumentError, checksOf } from '../util/arguments.js';

/** A number, a boolean, or a (nested) array of them: the data `tensor()` takes. */
export type NestedNumbers = number | boolean | NestedNumbers[];

function inferShape(data: NestedNumbers): number[] {
  const shape: number[] = [];
  let level: NestedNumbers = data;
  while (Array.isArray(level)) {
    // deeper than any tensor libtorch makes (64 dimensions); a cycle through element 0 never ends
    if (shape.length === 64)
      throw new ArgumentError(
        'tensor: data is nested deeper than 64 levels (a tensor has at most 64 dimensions)',
      );
    shape.push(level.length);
    level = level[0] as NestedNumbers;
  }
  return shape;
}

/** tensor()'s arguments from a JavaScript caller: numbers, a supported typed array, a shape that fits. */
function checkTensorArguments(data: unknown, options: unknown): void {
  const c = checksOf('tensor');
  const o = c.object(options, 'options');
  if (o.shape !== undefined)
    c.array(o.shape, 'options.shape').forEach((v, i) => c.integer(v, `options.shape[${i}]`, { min: 0 }));
  if (ArrayBuffer.isView(data)) {
    if (!TYPED_ARRAYS.some((T) => data instanceof T))
      c.fail(
        'data',
        'a Float32Array, Float64Array, Int32Array, BigInt64Array, Uint8Array, Int8Array or Int16Array',
        data,
      );
    const length = (data as unknown as ArrayLike<unknown>).length;
    const shape = o.shape as number[] | undefined;
    if (shape && shape.reduce((a, b) => a * b, 1) !== length)
      throw new ArgumentError(
        `tensor: options.shape [${shape}] holds ${shape.reduce((a, b) => a * b, 1)} elements but the data has ${length}`,
      );
  } else if (!Array.isArray(data) && typeof data !== 'number' && typeof data !== 'boolean')
    c.fail('data', 'a number, a (nested) array of numbers or a typed array', data);
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
  checkTensorArguments(data, options);
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
    const flat = (
      Array.isArray(data) ? (data as unknown[]).flat(Math.max(0, inferred.length - 1)) : [data]
    ) as (number | boolean)[];
    const expected = inferred.reduce((a, b) => a * b, 1);
    if (flat.length !== expected)
      throw new ArgumentError(
        `tensor: data is a ragged nested array (expected ${expected} values, got ${flat.length})`,
      );
    const odd = flat.findIndex((v) => typeof v !== 'number' && typeof v !== 'boolean');
    if (odd >= 0) checksOf('tensor').fail(`data (flattened)[${odd}]`, 'a number or a boolean', flat[odd]);
    if (options.shape && options.shape.reduce((a, b) => a * b, 1) !== flat.length)
      throw new ArgumentError(
        `tensor: options.shape [${options.shape}] holds a different count than the ${flat.length} values`,
      );
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
  const device = creationDevice(options.device);
  const converts = options.dtype !== undefined && options.dtype !== sourceDtype;
  // Host data reach a GPU through page-locked memory with a non-blocking copy (as a pin_memory
  // DataLoader does), so the copy overlaps the work already queued. Data that need no dtype
  // conversion are copied into page-locked memory at once: one host copy of the batch, not two.
  const pinAtOnce = device !== undefined && options.pinned !== false && !converts;
  let t = wrap(native.fromArray(array, shape, dtypeCode(sourceDtype), pinAtOnce));
  if (converts) {
    const converted = t.to(options.dtype!);
    t.dispose();
    t = converted;
  }
  if (device !== undefined) {
    const pinned = options.pinned === false || pinAtOnce ? t : t.pinMemory();
    const moved = pinned.toDevice(device, { nonBlocking: options.pinned !== false });
    if (pinned !== t) pinned.dispose();
    t.dispose();
    t = moved;
  }
  if (options.requiresGrad) t.requiresGrad_(true);
  return t;
}

// Creation functions take an optional device; without one they use the default device
// (setDefaultDevice), which starts as the CPU.
/** A 0-dimensional tensor holding `value` (`dtype` default float32; `device` default the default device, see setDefaultDevice). */
export function scalarTensor(value: number, dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return full([], value, dtype, device);
}

/**
 * A tensor of zeros of the given shape (torch.zeros) (`dtype` default float32; `device` default the default device, see setDefaultDevice).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const x = torch.zeros([2, 3]); // float32, shape [2, 3]
 * x.dispose();
 * ```
 */
export function zeros(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.zeros(shape, dtype, null, creationDevice(device));
}
/** A tensor of ones of the given shape (torch.ones) (`dtype` default float32; `device` default the default device, see setDefaultDevice). */
export function ones(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.ones(shape, dtype, null, creationDevice(device));
}
/** A tensor of the given shape filled with `value` (torch.full) (`dtype` default float32; `device` default the default device, see setDefaultDevice). */
export function full(shape: number[], value: Scalar, dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.full(shape, value, dtype, null, creationDevice(device));
}
/** Zeros of the shape, dtype and device of `t`. */
export function zerosLike(t: Tensor): Tensor {
  return aten.zeros_like(t);
}
/** Ones of the shape, dtype and device of `t`. */
export function onesLike(t: Tensor): Tensor {
  return aten.ones_like(t);
}
/** An uninitialised tensor of the given shape (torch.empty): its values are arbitrary until written. */
export function empty(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.empty_memory_format(shape, dtype, null, creationDevice(device));
}
/** Values start, start+step, ... below end. Integer arguments give int64, as torch.arange. */
export function arange(start: number, end?: number, step = 1, dtype?: DType, device?: DeviceLike): Tensor {
  if (end === undefined) return aten.arange(start, dtype ?? null, null, creationDevice(device));
  return aten.arange_start_step(start, end, step, dtype ?? null, null, creationDevice(device));
}
/** `steps` values evenly spaced from `start` to `end`, both included (torch.linspace). */
export function linspace(
  start: number,
  end: number,
  steps: number,
  dtype: DType = 'float32',
  device?: DeviceLike,
): Tensor {
  return aten.linspace({ float: start }, { float: end }, steps, dtype, null, creationDevice(device));
}
/** The n x n identity matrix. */
export function eye(n: number, dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.eye(n, dtype, null, creationDevice(device));
}
/** Uniform random values in [0, 1) of the given shape, from libtorch's generator (seed it with manualSeed). */
export function rand(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.rand(shape, dtype, null, creationDevice(device));
}
/** Standard normal random values of the given shape, from libtorch's generator (seed it with manualSeed). */
export function randn(shape: number[], dtype: DType = 'float32', device?: DeviceLike): Tensor {
  return aten.randn(shape, dtype, null, creationDevice(device));
}
/** Random integers in [low, high) of the given shape (default int64). */
export function randint(
  low: number,
  high: number,
  shape: number[],
  dtype: DType = 'int64',
  device?: DeviceLike,
): Tensor {
  return aten.randint_low(low, high, shape, dtype, null, creationDevice(device));
}
/** A random permutation of 0..n-1 (default int64). */
export function randperm(n: number, dtype: DType = 'int64', device?: DeviceLike): Tensor {
  return aten.randperm(n, dtype, null, creationDevice(device));
}
/** Concatenates tensors of the same shape except in `dim` along `dim` (torch.cat). */
export function cat(tensors: Tensor[], dim = 0): Tensor {
  return aten.cat(tensors, dim);
}
/** Stacks tensors of the same shape along a new dimension `dim` (torch.stack). */
export function stack(tensors: Tensor[], dim = 0): Tensor {
  return aten.stack(tensors, dim);
}
/**
 * Elementwise `condition ? a : b` with broadcasting (torch.where); either branch may be a number,
 * which takes part in dtype promotion as PyTorch's Python scalars do.
 */
export function where(condition: Tensor, a: Tensor | Scalar, b: Tensor | Scalar): Tensor {
  if (!(condition instanceof Tensor)) checksOf('where').fail('condition', 'a bool Tensor', condition);
  if (a instanceof Tensor)
    return b instanceof Tensor ? aten.where_self(condition, a, b) : aten.where_ScalarOther(condition, a, b);
  return b instanceof Tensor ? aten.where_ScalarSelf(condition, a, b) : aten.where_Scalar(condition, a, b);
}
/** One-hot encodes int64 class labels: shape [...labels.shape, numClasses], int64 (torch.nn.functional.one_hot). */
export function oneHot(labels: Tensor, numClasses: number): Tensor {
  return aten.one_hot(labels, numClasses);
}

/** Seeds libtorch's default generators (rand, randn, dropout, init): the CPU's and every GPU's. */
export function manualSeed(seed: number): void {
  checksOf('manualSeed').integer(seed, 'seed', { min: -(2 ** 53) + 1 });
  native.manualSeedAll(seed);
}
/** The CPU generator's state (to restore later with setRngState, as checkpoints do). */
export function getRngState(): Uint8Array {
  return native.getRngState();
}
/** Restores a CPU generator state from getRngState. */
export function setRngState(state: Uint8Array): void {
  if (!(state instanceof Uint8Array))
    checksOf('setRngState').fail('state', 'a Uint8Array from getRngState()', state);
  native.setRngState(state);
}
/** Sets the number of threads libtorch's CPU kernels use (torch.set_num_threads). */
export function setNumThreads(n: number): void {
  // an absurd count would make libtorch start that many threads (or fail inside the addon)
  checksOf('setNumThreads').integer(n, 'n', { min: 1, max: 1024 });
  native.setNumThreads(n);
}
/** The number of threads libtorch's CPU kernels use. */
export function getNumThreads(): number {
  return native.getNumThreads();
}
