// Constructors that take their defaults from a tensor (Tensor.new_zeros, new_ones, new_full,
// new_empty, new_tensor; torch.empty_like, full_like, rand_like, randn_like, randint_like) and
// PyTorch's in-place random fills (uniform_, normal_, bernoulli_, exponential_, geometric_,
// cauchy_, log_normal_, random_) on libtorch's global generator, so that after the same
// manualSeed they draw what PyTorch's draw after torch.manual_seed.
import { Tensor, type Scalar } from './tensor.js';
import type { DType } from './dtype.js';
import * as aten from './generated/aten.js';
import { checkDevice, type DeviceLike } from './device.js';
import { tensor, type NestedNumbers } from './creation.js';
import { checksOf, type ArgumentChecks } from '../util/arguments.js';
import { isScalar, tensorArg } from './tensor-args.js';

/** The dtype and device of a new tensor; each defaults to the source tensor's. */
export interface LikeOptions {
  /** The element type (default: the tensor's). */
  dtype?: DType;
  /** The device (default: the tensor's). */
  device?: DeviceLike;
}

function likeArgs(c: ArgumentChecks, options: unknown): { dtype: DType | null; device: string | null } {
  const o = c.object(options, 'options');
  if (o.dtype !== undefined && typeof o.dtype !== 'string') c.fail('options.dtype', 'a dtype name', o.dtype);
  return {
    dtype: (o.dtype as DType | undefined) ?? null,
    device: o.device === undefined ? null : checkDevice(o.device as DeviceLike).name,
  };
}

function shapeArg(c: ArgumentChecks, value: unknown): number[] {
  return c.array(value, 'size').map((s, k) => c.integer(s, `size[${k}]`, { min: 0 }));
}

/** Zeros of the given size, in this tensor's dtype and device unless told (Tensor.new_zeros). */
export function newZeros(input: Tensor, size: number[], options: LikeOptions = {}): Tensor {
  const c = checksOf('newZeros');
  const x = tensorArg(c, input, 'input');
  const o = likeArgs(c, options);
  return aten.new_zeros(x, shapeArg(c, size), o.dtype, null, o.device);
}
/** Ones of the given size, in this tensor's dtype and device unless told (Tensor.new_ones). */
export function newOnes(input: Tensor, size: number[], options: LikeOptions = {}): Tensor {
  const c = checksOf('newOnes');
  const x = tensorArg(c, input, 'input');
  const o = likeArgs(c, options);
  return aten.new_ones(x, shapeArg(c, size), o.dtype, null, o.device);
}
/** `fillValue` in the given size, in this tensor's dtype and device unless told (Tensor.new_full). */
export function newFull(input: Tensor, size: number[], fillValue: Scalar, options: LikeOptions = {}): Tensor {
  const c = checksOf('newFull');
  const x = tensorArg(c, input, 'input');
  if (!isScalar(fillValue)) c.fail('fillValue', 'a number or a boolean', fillValue);
  const o = likeArgs(c, options);
  return aten.new_full(x, shapeArg(c, size), fillValue, o.dtype, null, o.device);
}
/** An uninitialised tensor of the given size, in this tensor's dtype and device unless told (Tensor.new_empty). */
export function newEmpty(input: Tensor, size: number[], options: LikeOptions = {}): Tensor {
  const c = checksOf('newEmpty');
  const x = tensorArg(c, input, 'input');
  const o = likeArgs(c, options);
  return aten.new_empty(x, shapeArg(c, size), o.dtype, null, o.device);
}
/** A tensor of the given data, in this tensor's dtype and device unless told (Tensor.new_tensor). */
export function newTensor(input: Tensor, data: NestedNumbers, options: LikeOptions = {}): Tensor {
  const c = checksOf('newTensor');
  const x = tensorArg(c, input, 'input');
  const o = c.object(options, 'options') as LikeOptions;
  return tensor(data, { dtype: o.dtype ?? x.dtype, device: o.device ?? x.device });
}

/** An uninitialised tensor of the shape of `input`, its dtype and device unless told (torch.empty_like). */
export function emptyLike(input: Tensor, options: LikeOptions = {}): Tensor {
  const c = checksOf('emptyLike');
  const o = likeArgs(c, options);
  return aten.empty_like(tensorArg(c, input, 'input'), o.dtype, null, o.device);
}
/** `fillValue` in the shape of `input`, its dtype and device unless told (torch.full_like). */
export function fullLike(input: Tensor, fillValue: Scalar, options: LikeOptions = {}): Tensor {
  const c = checksOf('fullLike');
  const x = tensorArg(c, input, 'input');
  if (!isScalar(fillValue)) c.fail('fillValue', 'a number or a boolean', fillValue);
  const o = likeArgs(c, options);
  return aten.full_like(x, fillValue, o.dtype, null, o.device);
}

function floatLike(
  c: ArgumentChecks,
  input: unknown,
  options: unknown,
): [Tensor, DType | null, null, string | null] {
  const x = tensorArg(c, input, 'input');
  const o = likeArgs(c, options);
  const dtype = o.dtype ?? x.dtype;
  if (!dtype.startsWith('float') && dtype !== 'bfloat16')
    c.fail('options.dtype', 'a floating-point dtype (the input is not one: pass options.dtype)', dtype);
  return [x, o.dtype, null, o.device];
}
/** Uniform random values in [0, 1) in the shape of `input` (torch.rand_like), on the global generator. */
export function randLike(input: Tensor, options: LikeOptions = {}): Tensor {
  return aten.rand_like(...floatLike(checksOf('randLike'), input, options));
}
/** Standard normal random values in the shape of `input` (torch.randn_like), on the global generator. */
export function randnLike(input: Tensor, options: LikeOptions = {}): Tensor {
  return aten.randn_like(...floatLike(checksOf('randnLike'), input, options));
}
/**
 * Random integers in [low, high) in the shape of `input` (torch.randint_like); with one bound it
 * is `high` and low is 0. On the global generator.
 */
export function randintLike(input: Tensor, low: number, high?: number, options: LikeOptions = {}): Tensor {
  const c = checksOf('randintLike');
  const x = tensorArg(c, input, 'input');
  const o = likeArgs(c, options);
  if (high === undefined)
    return aten.randint_like(x, c.integer(low, 'high', { min: 1 }), o.dtype, null, o.device);
  const lo = c.integer(low, 'low');
  return aten.randint_like_low_dtype(
    x,
    lo,
    c.integer(high, 'high', { min: lo + 1 }),
    o.dtype,
    null,
    o.device,
  );
}

function floatTarget(c: ArgumentChecks, input: unknown): Tensor {
  const x = tensorArg(c, input, 'input');
  if (!x.dtype.startsWith('float') && x.dtype !== 'bfloat16')
    c.fail('input', 'a floating-point tensor (this fill draws real numbers)', `a ${x.dtype} tensor`);
  return x;
}

/** In place: uniform random values in [from, to) (Tensor.uniform_). */
export function uniform_(input: Tensor, from = 0, to = 1): Tensor {
  const c = checksOf('uniform_');
  const x = floatTarget(c, input);
  const lo = c.number(from, 'from');
  return aten.uniform_(x, lo, c.number(to, 'to', { min: lo }));
}
/** In place: normal random values of mean `mean` and standard deviation `std` (Tensor.normal_). */
export function normal_(input: Tensor, mean = 0, std = 1): Tensor {
  const c = checksOf('normal_');
  const x = floatTarget(c, input);
  return aten.normal_(x, c.number(mean, 'mean'), c.number(std, 'std', { min: 0 }));
}
/** In place: 1 with probability `p` (a number, or a tensor of probabilities that broadcasts), else 0 (Tensor.bernoulli_). */
export function bernoulli_(input: Tensor, p: number | Tensor = 0.5): Tensor {
  const c = checksOf('bernoulli_');
  const x = tensorArg(c, input, 'input');
  if (p instanceof Tensor) return aten.bernoulli__Tensor(x, p);
  return aten.bernoulli__float(x, c.number(p, 'p', { min: 0, max: 1 }));
}
/** In place: exponential random values of rate `lambd` (Tensor.exponential_). */
export function exponential_(input: Tensor, lambd = 1): Tensor {
  const c = checksOf('exponential_');
  const x = floatTarget(c, input);
  return aten.exponential_(x, c.number(lambd, 'lambd', { above: 0 }));
}
/** In place: the number of Bernoulli(p) trials up to the first success, 1, 2, ... (Tensor.geometric_). */
export function geometric_(input: Tensor, p: number): Tensor {
  const c = checksOf('geometric_');
  const x = tensorArg(c, input, 'input');
  return aten.geometric_(x, c.number(p, 'p', { above: 0, max: 1 }));
}
/** In place: Cauchy random values of location `median` and scale `sigma` (Tensor.cauchy_). */
export function cauchy_(input: Tensor, median = 0, sigma = 1): Tensor {
  const c = checksOf('cauchy_');
  const x = floatTarget(c, input);
  return aten.cauchy_(x, c.number(median, 'median'), c.number(sigma, 'sigma', { above: 0 }));
}
/** In place: exp of normal random values of mean `mean` and standard deviation `std` (Tensor.log_normal_). */
export function logNormal_(input: Tensor, mean = 1, std = 2): Tensor {
  const c = checksOf('logNormal_');
  const x = floatTarget(c, input);
  return aten.log_normal_(x, c.number(mean, 'mean'), c.number(std, 'std', { above: 0 }));
}
/**
 * In place: random integers (Tensor.random_): in [0, to) with one bound, in [from, to) with two,
 * and over the dtype's whole integral range (up to 2^mantissa for floats) with none.
 */
export function random_(input: Tensor, from?: number, to?: number): Tensor {
  const c = checksOf('random_');
  const x = tensorArg(c, input, 'input');
  if (from === undefined) return aten.random_(x);
  if (to === undefined) return aten.random__to(x, c.integer(from, 'to', { min: 1 }));
  const lo = c.integer(from, 'from');
  return aten.random__from(x, lo, c.integer(to, 'to', { min: lo + 1 }));
}
