// The Tensor methods of PyTorch's everyday functions (x.unique(), x.cumprod(0), x.scatterAdd(...)):
// each is the torch.* function of tensor-search.ts, tensor-index.ts or tensor-shape.ts applied to
// the tensor, declared on Tensor by module augmentation and attached to its prototype when the
// package's index loads, so that tensor.ts keeps only the core methods.
import { attachTensorFunctions } from './tensor-attach.js';
import { Tensor, type Scalar } from './tensor.js';
import type { DType } from './dtype.js';
import * as search from './tensor-search.js';
import * as indexing from './tensor-index.js';
import * as shape from './tensor-shape.js';
import * as products from './tensor-products.js';
import type { QuantileInterpolation, UniqueOptions, UniqueResult } from './tensor-search.js';
import type { ScatterReduction } from './tensor-index.js';
import type { ProductScaleOptions } from './tensor-products.js';

declare module './tensor.js' {
  interface Tensor {
    /** The unique elements or slices, as torch.unique(this, options). */
    unique<O extends UniqueOptions>(options?: O): UniqueResult<O>;
    /** Runs of equal consecutive elements collapsed, as torch.unique_consecutive(this, options). */
    uniqueConsecutive<O extends Omit<UniqueOptions, 'sorted'>>(options?: O): UniqueResult<O>;
    /** Sorted along `dim` with the indices, as torch.sort(this, ...). */
    sort(
      dim?: number,
      descending?: boolean,
      options?: { stable?: boolean },
    ): [values: Tensor, indices: Tensor];
    /** The indices that sort along `dim`, as torch.argsort(this, ...). */
    argsort(dim?: number, descending?: boolean, options?: { stable?: boolean }): Tensor;
    /** The `k` largest (or smallest) along `dim` with indices, as torch.topk(this, ...). */
    topk(k: number, dim?: number, largest?: boolean, sorted?: boolean): [values: Tensor, indices: Tensor];
    /** The `k`-th smallest along `dim` with its index, as torch.kthvalue(this, ...). */
    kthvalue(k: number, dim?: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
    /** The median of all elements, as torch.median(this). */
    median(): Tensor;
    /** The medians along `dim` with their indices, as torch.median(this, dim, keepdim). */
    median(dim: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
    /** The median ignoring NaNs, as torch.nanmedian(this). */
    nanmedian(): Tensor;
    /** The medians along `dim` ignoring NaNs, with their indices, as torch.nanmedian(this, dim, keepdim). */
    nanmedian(dim: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
    /** The most frequent value along `dim` with an index of it, as torch.mode(this, ...). */
    mode(dim?: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
    /** The `q`-quantiles, as torch.quantile(this, ...). */
    quantile(
      q: number | Tensor,
      dim?: number | null,
      keepdim?: boolean,
      options?: { interpolation?: QuantileInterpolation },
    ): Tensor;
    /** A histogram of `bins` bins over [min, max], as torch.histc(this, ...). */
    histc(bins?: number, min?: number, max?: number): Tensor;
    /** The counts (or summed weights) of each value 0..max, as torch.bincount(this, ...). */
    bincount(weights?: Tensor | null, minlength?: number): Tensor;
    /** Cumulative products along `dim`, as torch.cumprod(this, ...). */
    cumprod(dim: number, options?: { dtype?: DType }): Tensor;
    /** The running maximum along `dim` with indices, as torch.cummax(this, dim). */
    cummax(dim: number): [values: Tensor, indices: Tensor];
    /** The running minimum along `dim` with indices, as torch.cummin(this, dim). */
    cummin(dim: number): [values: Tensor, indices: Tensor];
    /** log(cumsum(exp(x))) along `dim`, as torch.logcumsumexp(this, dim). */
    logcumsumexp(dim: number): Tensor;
    /** The mean ignoring NaNs, as torch.nanmean(this, ...). */
    nanmean(dim?: number | number[] | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
    /** The sum treating NaNs as 0, as torch.nansum(this, ...). */
    nansum(dim?: number | number[] | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
    /** `src` written along `dim` at `index`, as torch.scatter(this, ...). */
    scatter(dim: number, index: Tensor, src: Tensor | Scalar): Tensor;
    /** `src` added along `dim` at `index`, as torch.scatter_add(this, ...). */
    scatterAdd(dim: number, index: Tensor, src: Tensor): Tensor;
    /** `src` combined by `reduce` along `dim` at `index`, as torch.scatter_reduce(this, ...). */
    scatterReduce(
      dim: number,
      index: Tensor,
      src: Tensor,
      reduce: ScatterReduction,
      options?: { includeSelf?: boolean },
    ): Tensor;
    /** `alpha * source` added at positions `index` along `dim`, as torch.index_add(this, ...). */
    indexAdd(dim: number, index: Tensor, source: Tensor, options?: { alpha?: Scalar }): Tensor;
    /** The slices at `index` along `dim` replaced by `source`'s, as torch.index_copy(this, ...). */
    indexCopy(dim: number, index: Tensor, source: Tensor): Tensor;
    /** The slices at `index` along `dim` filled with `value`, as torch.index_fill(this, ...). */
    indexFill(dim: number, index: Tensor, value: Scalar | Tensor): Tensor;
    /** The elements where `mask` is true, as torch.masked_select(this, mask). */
    maskedSelect(mask: Tensor): Tensor;
    /** The elements where `mask` is true taken in order from `source`, as torch.Tensor.masked_scatter. */
    maskedScatter(mask: Tensor, source: Tensor): Tensor;
    /** The indices of the non-zero elements, one row each, as torch.nonzero(this). */
    nonzero(options?: { asTuple?: false }): Tensor;
    /** The indices of the non-zero elements, one tensor per dimension, as torch.nonzero(this, as_tuple=True). */
    nonzero(options: { asTuple: true }): Tensor[];
    /** The values at `indices` along `dim`, as torch.take_along_dim(this, ...). */
    takeAlongDim(indices: Tensor, dim?: number | null): Tensor;
    /** this + weight * (end - this), as torch.lerp(this, ...). */
    lerp(end: Tensor, weight: Tensor | Scalar): Tensor;
    /** sqrt(this² + other²), as torch.hypot(this, other). */
    hypot(other: Tensor): Tensor;
    /** The angle of (other, this), as torch.atan2(this, other). */
    atan2(other: Tensor): Tensor;
    /** The Kronecker product, as torch.kron(this, other). */
    kron(other: Tensor): Tensor;
    /** The `n`-th forward difference along `dim`, as torch.diff(this, ...). */
    diff(n?: number, dim?: number, prepend?: Tensor | null, append?: Tensor | null): Tensor;
    /** The lower triangle, as torch.tril(this, diagonal). */
    tril(diagonal?: number): Tensor;
    /** The upper triangle, as torch.triu(this, diagonal). */
    triu(diagonal?: number): Tensor;
    /** Shifted with wrap-around, as torch.roll(this, ...). */
    roll(shifts: number | number[], dims?: number | number[]): Tensor;
    /** Rotated by 90° `k` times in the plane of `dims`, as torch.rot90(this, ...). */
    rot90(k?: number, dims?: [number, number]): Tensor;
    /** A diagonal matrix or a matrix's diagonal, as torch.diag(this, diagonal). */
    diag(diagonal?: number): Tensor;
    /** The diagonal `offset` of the planes (dim1, dim2), as torch.diagonal(this, ...). */
    diagonal(offset?: number, dim1?: number, dim2?: number): Tensor;
    /** Matrices with this tensor's last dimension on a diagonal, as torch.diag_embed(this, ...). */
    diagEmbed(offset?: number, dim1?: number, dim2?: number): Tensor;
    /** The sum of the main diagonal, as torch.trace(this). */
    trace(): Tensor;
    /** The outer product, as torch.outer(this, vec2). */
    outer(vec2: Tensor): Tensor;
    /** The product of two matrices, as torch.mm(this, mat2). */
    mm(mat2: Tensor): Tensor;
    /** Batches of matrix products, as torch.bmm(this, mat2). */
    bmm(mat2: Tensor): Tensor;
    /** The dot product of two 1-d tensors, as torch.dot(this, other). */
    dot(other: Tensor): Tensor;
    /** The dot product with this tensor conjugated, as torch.vdot(this, other). */
    vdot(other: Tensor): Tensor;
    /** The product of this matrix and a vector, as torch.mv(this, vec). */
    mv(vec: Tensor): Tensor;
    /** Sums of products over the last dimensions, as torch.inner(this, other). */
    inner(other: Tensor): Tensor;
    /** `beta * this + alpha * (mat1 @ mat2)`, as torch.addmm(this, ...). */
    addmm(mat1: Tensor, mat2: Tensor, options?: ProductScaleOptions): Tensor;
    /** `beta * this + alpha * (mat @ vec)`, as torch.addmv(this, ...). */
    addmv(mat: Tensor, vec: Tensor, options?: ProductScaleOptions): Tensor;
    /** `beta * this + alpha * outer(vec1, vec2)`, as torch.addr(this, ...). */
    addr(vec1: Tensor, vec2: Tensor, options?: ProductScaleOptions): Tensor;
    /** `beta * this + alpha * bmm(batch1, batch2)`, as torch.baddbmm(this, ...). */
    baddbmm(batch1: Tensor, batch2: Tensor, options?: ProductScaleOptions): Tensor;
    /** `beta * this + alpha * (the sum of batch1[i] @ batch2[i])`, as torch.addbmm(this, ...). */
    addbmm(batch1: Tensor, batch2: Tensor, options?: ProductScaleOptions): Tensor;
    /** The cross product of 3-vectors along `dim`, as torch.cross(this, ...). */
    cross(other: Tensor, dim?: number | null): Tensor;
    /** Split into sections or at indices along `dim`, as torch.tensor_split(this, ...). */
    tensorSplit(indicesOrSections: number | number[] | Tensor, dim?: number): Tensor[];
    /** Repeated along each dimension, as torch.tile(this, dims). */
    tile(dims: number[]): Tensor;
    /** Each element (or slice along `dim`) repeated, as torch.repeat_interleave(this, ...). */
    repeatInterleave(
      repeats?: number | Tensor,
      dim?: number | null,
      options?: { outputSize?: number },
    ): Tensor;
  }
}

// The functions whose first argument is the tensor, by method name.
const methods: Record<string, (input: Tensor, ...rest: never[]) => unknown> = {
  unique: search.unique,
  uniqueConsecutive: search.uniqueConsecutive,
  sort: search.sort,
  argsort: search.argsort,
  topk: search.topk,
  kthvalue: search.kthvalue,
  median: search.median,
  nanmedian: search.nanmedian,
  mode: search.mode,
  quantile: search.quantile,
  histc: search.histc,
  bincount: search.bincount,
  cumprod: search.cumprod,
  cummax: search.cummax,
  cummin: search.cummin,
  logcumsumexp: search.logcumsumexp,
  nanmean: search.nanmean,
  nansum: search.nansum,
  scatter: indexing.scatter,
  scatterAdd: indexing.scatterAdd,
  scatterReduce: indexing.scatterReduce,
  indexAdd: indexing.indexAdd,
  indexCopy: indexing.indexCopy,
  indexFill: indexing.indexFill,
  maskedSelect: indexing.maskedSelect,
  maskedScatter: indexing.maskedScatter,
  nonzero: indexing.nonzero,
  takeAlongDim: indexing.takeAlongDim,
  lerp: indexing.lerp,
  hypot: indexing.hypot,
  atan2: indexing.atan2,
  kron: shape.kron,
  diff: shape.diff,
  tril: shape.tril,
  triu: shape.triu,
  roll: shape.roll,
  rot90: shape.rot90,
  diag: shape.diag,
  diagonal: shape.diagonal,
  diagEmbed: shape.diagEmbed,
  trace: shape.trace,
  outer: shape.outer,
  mm: products.mm,
  bmm: products.bmm,
  dot: products.dot,
  vdot: products.vdot,
  mv: products.mv,
  inner: products.inner,
  addmm: products.addmm,
  addmv: products.addmv,
  addr: products.addr,
  baddbmm: products.baddbmm,
  addbmm: products.addbmm,
  cross: shape.cross,
  tensorSplit: shape.tensorSplit,
  tile: shape.tile,
  repeatInterleave: shape.repeatInterleave,
};

// Non-enumerable like the class's own methods; a name already defined is refused at load.
attachTensorFunctions('tensor-methods.ts', methods);

/** The names of the methods this module attaches to Tensor (for the tests that check them all). */
export const TENSOR_FUNCTION_METHODS: readonly string[] = Object.keys(methods);
