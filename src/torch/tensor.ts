// The Tensor class: a handle to a libtorch tensor with typed methods. Arithmetic, broadcasting
// and dtype promotion are libtorch's own, so they follow PyTorch's rules exactly. The members of
// autograd, of shape and views, and of dtype and device conversion live in tensor-autograd.ts,
// tensor-views.ts and tensor-convert.ts (attached when the package's index loads).
import { native } from './native.js';
import { ArgumentError, describeValue } from '../util/arguments.js';
import { dtypeCode, dtypeName, type DType, type NumericArray } from './dtype.js';
import { track, untrack, inSafetyNet, scopeOwner, type ScopeOwner } from './scope.js';
import * as aten from './generated/aten.js';
import { clamp as clampWithTensors } from './tensor-index.js';
import { cumsum as cumsumChecked } from './tensor-search.js';
import { div as divChecked } from './tensor-arithmetic.js';
import type { RoundingMode } from './elementwise-args.js';
import { isChannelsLastContiguous, memoryFormatCode, type MemoryFormat } from './memory-format.js';
import { isSparseHandle, sparseItem, sparseRefused, sparseToArray } from './sparse-layout.js';
import { complexToArray, formatComplex, isComplexDtype } from './complex-values.js';

/** A number (integral values are int Scalars), a boolean, or {float: x} to force a float Scalar. */
export type Scalar = number | boolean | { float: number };

export function scalarArg(s: Scalar | null): unknown {
  return s;
}

/**
 * A libtorch tensor: an n-dimensional array on a device (CPU or CUDA) with a dtype, and autograd.
 * Its memory lives in libtorch, not the JavaScript heap: free it with `dispose()`, or create it in
 * a scope (`tidy`, `withScope`) that frees what it does not return. Methods follow PyTorch's
 * names in camelCase (`x.matmul(y)`, `x.softmax(1)`, `x.requiresGrad_()`).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const y = torch.tidy(() => torch.randn([4, 3]).matmul(torch.ones([3, 1])));
 * console.log(y.shape); // [4, 1]
 * y.dispose();
 * ```
 */
export class Tensor {
  #handle: number;
  /** Tracking state owned by scope.ts (declared here so every Tensor has the same shape). */
  [inSafetyNet] = false;
  [scopeOwner]: ScopeOwner | undefined = undefined;

  constructor(handle: number) {
    this.#handle = handle;
    track(this);
  }

  /** The engine handle; throws if the tensor was disposed. */
  get handle(): number {
    if (this.#handle < 0) {
      throw new Error('this tensor was already disposed (use it inside its tidy() scope, or keep() it)');
    }
    return this.#handle;
  }

  get isDisposed(): boolean {
    return this.#handle < 0;
  }

  /** Frees the tensor's memory now (libtorch's, not the JavaScript heap's); calling it again does nothing. */
  dispose(): void {
    if (this.#handle < 0) return;
    untrack(this);
    native.dispose(this.#handle);
    this.#handle = -1;
  }

  get shape(): number[] {
    return native.shape(this.handle);
  }
  get dtype(): DType {
    return dtypeName(native.dtype(this.handle));
  }
  get ndim(): number {
    return native.dim(this.handle);
  }
  get numel(): number {
    return native.numel(this.handle);
  }
  get strides(): number[] {
    const handle = this.handle;
    if (isSparseHandle(handle)) throw sparseRefused('strides', 'there are no strides');
    return native.strides(handle);
  }
  get isContiguous(): boolean {
    return native.isContiguous(this.handle);
  }
  /**
   * Whether the elements lie densely in `memoryFormat`'s order (torch's
   * `x.is_contiguous(memory_format=...)`): 'contiguous' is {@link isContiguous}; 'channelsLast'
   * holds only for 4-D tensors stored NHWC.
   */
  isContiguousIn(memoryFormat: MemoryFormat): boolean {
    memoryFormatCode(memoryFormat);
    return memoryFormat === 'contiguous'
      ? this.isContiguous
      : isChannelsLastContiguous(this.shape, this.strides);
  }
  /** The length of dimension `dim` (negative counts from the end). */
  size(dim: number): number {
    if (!Number.isInteger(dim))
      throw new RangeError(`Tensor.size: dim must be an integer, got ${describeValue(dim)}`);
    const shape = this.shape;
    const d = dim < 0 ? dim + shape.length : dim;
    if (d < 0 || d >= shape.length)
      throw new RangeError(`Tensor.size: dimension ${describeValue(dim)} out of range for shape [${shape}]`);
    return shape[d]!;
  }

  // ---- data ----
  /** A copy of the data in a typed array of the tensor's dtype (row-major; a sparse tensor's as dense). */
  toArray(): NumericArray {
    const handle = this.handle;
    try {
      return native.toArray(handle);
    } catch (error) {
      // asked only after a failure, so that reading a dense tensor costs no layout query
      if (isSparseHandle(handle)) return sparseToArray(this);
      if (isComplexDtype(this.dtype)) return complexToArray(this);
      throw error;
    }
  }
  /** The data as float64 numbers (converting integer and bool tensors). */
  toFloat64Array(): Float64Array {
    const a = this.toArray();
    return a instanceof Float64Array ? a : Float64Array.from(a as ArrayLike<number>, Number);
  }
  /** The values as a float32 copy in row-major order (copied to the CPU if needed). */
  toFloat32Array(): Float32Array {
    const a = this.toArray();
    return a instanceof Float32Array ? a : Float32Array.from(a as ArrayLike<number>, Number);
  }
  /** The data as plain numbers. */
  toNumbers(): number[] {
    return Array.from(this.toArray() as ArrayLike<number | bigint>, Number);
  }
  /** The value of a one-element tensor as a number. */
  item(): number {
    const handle = this.handle;
    try {
      return Number(native.item(handle));
    } catch (error) {
      if (this.numel === 1 && isSparseHandle(handle)) return Number(sparseItem(this));
      if (isComplexDtype(this.dtype))
        throw new ArgumentError(
          'item: the tensor is complex and a JavaScript number is real; read [re, im] with toArray(), or x.real.item() and x.imag.item()',
        );
      throw error;
    }
  }
  /** A readable description: shape, dtype, device, and the values of small tensors. */
  toString(): string {
    if (this.isDisposed) return 'Tensor(disposed)';
    const values = this.numel > 20 ? '[...]' : `[${this.formatValues().join(', ')}]`;
    const layout = isSparseHandle(this.handle) ? ', layout=sparse_coo' : '';
    return `Tensor(shape=[${this.shape}], dtype=${this.dtype}${layout}, ${values})`;
  }

  /** The values as toString shows them (complex ones as 1+2j). */
  private formatValues(): string[] {
    if (!isComplexDtype(this.dtype)) return this.toNumbers().map((v) => String(+v.toPrecision(6)));
    const pairs = complexToArray(this);
    return Array.from({ length: pairs.length / 2 }, (_, i) =>
      formatComplex(pairs[2 * i]!, pairs[2 * i + 1]!),
    );
  }

  // ---- arithmetic (broadcasting) ----
  /** this + alpha * other, with broadcasting. */
  add(other: Tensor | Scalar, alpha?: Scalar): Tensor {
    return other instanceof Tensor
      ? aten.add_Tensor(this, other, alpha)
      : aten.add_Scalar(this, other, alpha);
  }
  /** this - alpha * other, with broadcasting. */
  sub(other: Tensor | Scalar, alpha?: Scalar): Tensor {
    return other instanceof Tensor
      ? aten.sub_Tensor(this, other, alpha)
      : aten.sub_Scalar(this, other, alpha);
  }
  /** Elementwise product, with broadcasting. */
  mul(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.mul_Tensor(this, other) : aten.mul_Scalar(this, other);
  }
  /**
   * Elementwise division, with broadcasting: true division, or with `roundingMode` the quotient
   * rounded toward zero ('trunc') or down ('floor'), as torch.div(this, other, rounding_mode=...).
   */
  div(other: Tensor | Scalar, options?: { roundingMode?: RoundingMode }): Tensor {
    if (options !== undefined) return divChecked(this, other, options);
    return other instanceof Tensor ? aten.div_Tensor(this, other) : aten.div_Scalar(this, other);
  }
  /** Elementwise power. */
  pow(exponent: Tensor | Scalar): Tensor {
    return exponent instanceof Tensor
      ? aten.pow_Tensor_Tensor(this, exponent)
      : aten.pow_Tensor_Scalar(this, exponent);
  }
  /** Elementwise negation. */
  neg(): Tensor {
    return aten.neg(this);
  }
  /** Elementwise exponential. */
  exp(): Tensor {
    return aten.exp(this);
  }
  /** Elementwise natural logarithm. */
  log(): Tensor {
    return aten.log(this);
  }
  /** Elementwise log(1 + x), accurate near 0. */
  log1p(): Tensor {
    return aten.log1p(this);
  }
  /** Elementwise square root. */
  sqrt(): Tensor {
    return aten.sqrt(this);
  }
  /** Elementwise 1 / sqrt(x). */
  rsqrt(): Tensor {
    return aten.rsqrt(this);
  }
  /** Elementwise absolute value. */
  abs(): Tensor {
    return aten.abs(this);
  }
  /** Elementwise square. */
  square(): Tensor {
    return aten.mul_Tensor(this, this);
  }
  /** Elementwise sign (-1, 0, 1). */
  sign(): Tensor {
    return aten.sign(this);
  }
  /** Elementwise 1 / x. */
  reciprocal(): Tensor {
    return aten.reciprocal(this);
  }
  /** Elementwise sine. */
  sin(): Tensor {
    return aten.sin(this);
  }
  /** Elementwise cosine. */
  cos(): Tensor {
    return aten.cos(this);
  }
  /** Elementwise floor. */
  floor(): Tensor {
    return aten.floor(this);
  }
  /** Elementwise rounding (half to even, as torch.round). */
  round(): Tensor {
    return aten.round(this);
  }
  /** Elementwise max(x, 0). */
  relu(): Tensor {
    return aten.relu(this);
  }
  /** Elementwise logistic sigmoid. */
  sigmoid(): Tensor {
    return aten.sigmoid(this);
  }
  /** Elementwise hyperbolic tangent. */
  tanh(): Tensor {
    return aten.tanh(this);
  }
  /** Clamps to [min, max]: each bound a number, a tensor that broadcasts, or null or omitted. */
  clamp(min?: Tensor | Scalar | null, max?: Tensor | Scalar | null): Tensor {
    return min instanceof Tensor || max instanceof Tensor
      ? clampWithTensors(this, min ?? null, max ?? null)
      : aten.clamp(this, min ?? null, max ?? null);
  }
  /** Elementwise maximum of two tensors. */
  maximum(other: Tensor): Tensor {
    return aten.maximum(this, other);
  }
  /** Elementwise minimum of two tensors. */
  minimum(other: Tensor): Tensor {
    return aten.minimum(this, other);
  }
  /** Matrix product with batching and broadcasting (torch.matmul). */
  matmul(other: Tensor): Tensor {
    return aten.matmul(this, other);
  }
  /** In-place ops (used by optimizers under noGrad). */
  add_(other: Tensor | Scalar, alpha?: Scalar): this {
    if (other instanceof Tensor) aten.add__Tensor(this, other, alpha);
    else aten.add__Scalar(this, other, alpha);
    return this;
  }
  /** Multiplies in place; returns this. */
  mul_(other: Tensor | Scalar): this {
    if (other instanceof Tensor) aten.mul__Tensor(this, other);
    else aten.mul__Scalar(this, other);
    return this;
  }
  /** Copies `src` into this tensor in place (broadcasting, converting dtype and device); returns this. */
  copy_(source: Tensor): this {
    aten.copy_(this, source);
    return this;
  }
  /** Fills with zeros in place; returns this. */
  zero_(): this {
    aten.zero_(this);
    return this;
  }
  /** Fills with `value` in place; returns this. */
  fill_(value: Scalar): this {
    aten.fill__Scalar(this, value);
    return this;
  }

  // ---- comparison ----
  /** Elementwise ==, as a bool tensor. */
  eq(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.eq_Tensor(this, other) : aten.eq_Scalar(this, other);
  }
  /** Elementwise !=, as a bool tensor. */
  ne(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.ne_Tensor(this, other) : aten.ne_Scalar(this, other);
  }
  /** Elementwise <, as a bool tensor. */
  lt(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.lt_Tensor(this, other) : aten.lt_Scalar(this, other);
  }
  /** Elementwise <=, as a bool tensor. */
  le(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.le_Tensor(this, other) : aten.le_Scalar(this, other);
  }
  /** Elementwise >, as a bool tensor. */
  gt(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.gt_Tensor(this, other) : aten.gt_Scalar(this, other);
  }
  /** Elementwise >=, as a bool tensor. */
  ge(other: Tensor | Scalar): Tensor {
    return other instanceof Tensor ? aten.ge_Tensor(this, other) : aten.ge_Scalar(this, other);
  }

  // ---- reductions ----
  /** Sum over all elements, or over `dim`. */
  sum(dim?: number | number[], keepdim = false): Tensor {
    return dim === undefined ? aten.sum(this) : aten.sum_dim_IntList(this, dim, keepdim);
  }
  /** Mean over all elements, or over `dim`. */
  mean(dim?: number | number[], keepdim = false): Tensor {
    return dim === undefined ? aten.mean(this) : aten.mean_dim(this, dim, keepdim);
  }
  /** Maximum over all elements, or [values, indices] along dim. */
  max(): Tensor;
  max(dim: number, keepdim?: boolean): [Tensor, Tensor];
  max(dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
    return dim === undefined ? aten.max(this) : aten.max_dim(this, dim, keepdim);
  }
  /** The minimum of all elements, or over `dim` with the indices of the minima ([values, indices]). */
  min(): Tensor;
  /** The minimum of all elements, or over `dim` with the indices of the minima ([values, indices]). */
  min(dim: number, keepdim?: boolean): [Tensor, Tensor];
  /** The minimum of all elements, or over `dim` with the indices of the minima ([values, indices]). */
  min(dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
    return dim === undefined ? aten.min(this) : aten.min_dim(this, dim, keepdim);
  }
  /** Maximum over `dim` (values only). */
  amax(dim: number | number[], keepdim = false): Tensor {
    return aten.amax(this, dim, keepdim);
  }
  /** Indices of the maxima over `dim` (of the flattened tensor without `dim`), int64. */
  argmax(dim?: number, keepdim = false): Tensor {
    return aten.argmax(this, dim ?? null, keepdim);
  }
  /** log(sum(exp(x))) over `dim`, computed stably. */
  logsumexp(dim: number | number[], keepdim = false): Tensor {
    return aten.logsumexp(this, dim, keepdim);
  }
  /** Variance with Bessel's correction by default (correction = 1), as torch.var. */
  var(dim?: number | number[] | null, correction = 1, keepdim = false): Tensor {
    return aten.var_correction(this, dim ?? null, correction, keepdim);
  }
  /** Standard deviation (default correction 1: the sample standard deviation). */
  std(dim?: number | number[] | null, correction = 1, keepdim = false): Tensor {
    return aten.std_correction(this, dim ?? null, correction, keepdim);
  }
  /** Cumulative sum along `dim`, computed in `options.dtype` if given, as torch.cumsum(this, ...). */
  cumsum(dim: number, options: { dtype?: DType } = {}): Tensor {
    return cumsumChecked(this, dim, options);
  }
  /** Softmax along `dim`. */
  softmax(dim: number): Tensor {
    return aten.softmax_int(this, dim);
  }
  /** Log-softmax along `dim` (stabler than log(softmax)). */
  logSoftmax(dim: number): Tensor {
    return aten.log_softmax_int(this, dim);
  }
  /** The p-norm (default 2) of all elements or over `dim`. */
  norm(p = 2, dim?: number | number[] | null, keepdim = false): Tensor {
    return aten.linalg_vector_norm(this, p, dim ?? null, keepdim);
  }
}

/** Wraps an engine handle in a Tensor registered with the current scope. */
export function wrap(handle: number): Tensor {
  return new Tensor(handle);
}

export { dtypeCode };
