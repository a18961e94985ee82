// The Tensor methods of PyTorch's everyday reductions, shape functions, constructors and in-place
// random fills (x.prod(1), x.movedim(0, -1), x.newZeros([2]), x.uniform_(-1, 1)): each is the
// function of tensor-reductions.ts, tensor-shape-more.ts or tensor-random.ts applied to the tensor,
// declared on Tensor by module augmentation and attached to its prototype when the package's index
// loads, as tensor-methods.ts does for its own table.
import { attachTensorFunctions } from './tensor-attach.js';
import { Tensor, type Scalar } from './tensor.js';
import type { DType } from './dtype.js';
import type { NestedNumbers } from './creation.js';
import * as reductions from './tensor-reductions.js';
import * as shapes from './tensor-shape-more.js';
import * as random from './tensor-random.js';
import type { CovOptions, HistogramOptions } from './tensor-reductions.js';
import type { LikeOptions } from './tensor-random.js';

declare module './tensor.js' {
  interface Tensor {
    /** The product of all elements, or along `dim`, as torch.prod(this, ...). */
    prod(dim?: number | null, keepdim?: boolean, options?: { dtype?: DType }): Tensor;
    /** The indices of the minima, as torch.argmin(this, ...). */
    argmin(dim?: number | null, keepdim?: boolean): Tensor;
    /** The minimum along `dim` (all when empty), values only, as torch.amin(this, ...). */
    amin(dim?: number | number[], keepdim?: boolean): Tensor;
    /** The minimum and the maximum at once, as torch.aminmax(this, options). */
    aminmax(options?: { dim?: number | null; keepdim?: boolean }): [min: Tensor, max: Tensor];
    /** Whether any element is non-zero, overall or along `dim`, as torch.any(this, ...). */
    any(dim?: number | null, keepdim?: boolean): Tensor;
    /** Whether every element is non-zero, overall or along `dim`, as torch.all(this, ...). */
    all(dim?: number | null, keepdim?: boolean): Tensor;
    /** The number of non-zero elements, as torch.count_nonzero(this, dim). */
    countNonzero(dim?: number | number[] | null): Tensor;
    /** Whether every element is close to `other`'s, as torch.allclose(this, ...). */
    allclose(other: Tensor, rtol?: number, atol?: number, equalNan?: boolean): boolean;
    /** Elementwise closeness to `other`, as torch.isclose(this, ...). */
    isclose(other: Tensor, rtol?: number, atol?: number, equalNan?: boolean): Tensor;
    /** Whether `other` has the same shape and elements, as torch.equal(this, other). */
    equal(other: Tensor): boolean;
    /** The log-determinant, as torch.logdet(this). */
    logdet(): Tensor;
    /** The covariance matrix of the rows' variables, as torch.cov(this, options). */
    cov(options?: CovOptions): Tensor;
    /** The correlation coefficients of the rows' variables, as torch.corrcoef(this). */
    corrcoef(): Tensor;
    /** The histogram and its bin edges, as torch.histogram(this, ...). */
    histogram(bins?: number | Tensor, options?: HistogramOptions): [hist: Tensor, binEdges: Tensor];
    /** Dimension `dim` split into `sizes`, as torch.unflatten(this, ...). */
    unflatten(dim: number, sizes: number[]): Tensor;
    /** Dimensions moved to new positions, as torch.movedim(this, ...). */
    movedim(source: number | number[], destination: number | number[]): Tensor;
    /** Dimensions moved to new positions, as torch.moveaxis(this, ...). */
    moveaxis(source: number | number[], destination: number | number[]): Tensor;
    /** Two dimensions exchanged, as torch.swapaxes(this, ...). */
    swapaxes(axis0: number, axis1: number): Tensor;
    /** Two dimensions exchanged, as torch.swapdims(this, ...). */
    swapdims(dim0: number, dim1: number): Tensor;
    /** The elements as a 1-d tensor, as torch.ravel(this). */
    ravel(): Tensor;
    /** Split along dimension 0, as torch.vsplit(this, ...). */
    vsplit(indicesOrSections: number | number[]): Tensor[];
    /** Split along dimension 1 (0 when 1-d), as torch.hsplit(this, ...). */
    hsplit(indicesOrSections: number | number[]): Tensor[];
    /** Split along dimension 2, as torch.dsplit(this, ...). */
    dsplit(indicesOrSections: number | number[]): Tensor[];
    /** Flipped left-right, as torch.fliplr(this). */
    fliplr(): Tensor;
    /** Flipped up-down, as torch.flipud(this). */
    flipud(): Tensor;
    /** A matrix with the flattened tensor on a diagonal, as torch.diagflat(this, offset). */
    diagflat(offset?: number): Tensor;
    /** The elements at flat indices, as torch.take(this, index). */
    take(index: Tensor): Tensor;
    /** A copy with `source` written (or added) at flat indices, as torch.put(this, ...). */
    put(index: Tensor, source: Tensor, accumulate?: boolean): Tensor;
    /** In place: `source` written (or added) at flat indices, as Tensor.put_. */
    put_(index: Tensor, source: Tensor, accumulate?: boolean): Tensor;
    /** A copy with `values` at the indexed positions, as torch.index_put(this, ...). */
    indexPut(indices: (Tensor | null)[], values: Tensor, accumulate?: boolean): Tensor;
    /** In place: `values` written (or added) at the indexed positions, as Tensor.index_put_. */
    indexPut_(indices: (Tensor | null)[], values: Tensor, accumulate?: boolean): Tensor;
    /** Sorted along dimension 0, as torch.msort(this). */
    msort(): Tensor;
    /** Viewed with `other`'s shape, as Tensor.view_as. */
    viewAs(other: Tensor): Tensor;
    /** Reshaped to `other`'s shape, as Tensor.reshape_as. */
    reshapeAs(other: Tensor): Tensor;
    /** Converted to `other`'s dtype, as Tensor.type_as. */
    typeAs(other: Tensor): Tensor;
    /** Zeros in this tensor's dtype and device unless told, as Tensor.new_zeros. */
    newZeros(size: number[], options?: LikeOptions): Tensor;
    /** Ones in this tensor's dtype and device unless told, as Tensor.new_ones. */
    newOnes(size: number[], options?: LikeOptions): Tensor;
    /** `fillValue` in this tensor's dtype and device unless told, as Tensor.new_full. */
    newFull(size: number[], fillValue: Scalar, options?: LikeOptions): Tensor;
    /** Uninitialised, in this tensor's dtype and device unless told, as Tensor.new_empty. */
    newEmpty(size: number[], options?: LikeOptions): Tensor;
    /** The given data in this tensor's dtype and device unless told, as Tensor.new_tensor. */
    newTensor(data: NestedNumbers, options?: LikeOptions): Tensor;
    /** In place: uniform values in [from, to), as Tensor.uniform_. */
    uniform_(from?: number, to?: number): Tensor;
    /** In place: normal values, as Tensor.normal_. */
    normal_(mean?: number, std?: number): Tensor;
    /** In place: Bernoulli(p) draws, as Tensor.bernoulli_. */
    bernoulli_(p?: number | Tensor): Tensor;
    /** In place: exponential values of rate `lambd`, as Tensor.exponential_. */
    exponential_(lambd?: number): Tensor;
    /** In place: geometric draws (trials to the first success), as Tensor.geometric_. */
    geometric_(p: number): Tensor;
    /** In place: Cauchy values, as Tensor.cauchy_. */
    cauchy_(median?: number, sigma?: number): Tensor;
    /** In place: log-normal values, as Tensor.log_normal_. */
    logNormal_(mean?: number, std?: number): Tensor;
    /** In place: random integers in [0, to) or [from, to), as Tensor.random_. */
    random_(from?: number, to?: number): Tensor;
  }
}

// The functions whose first argument is the tensor, by method name.
const methods: Record<string, (input: Tensor, ...rest: never[]) => unknown> = {
  prod: reductions.prod,
  argmin: reductions.argmin,
  amin: reductions.amin,
  aminmax: reductions.aminmax,
  any: reductions.any,
  all: reductions.all,
  countNonzero: reductions.countNonzero,
  allclose: reductions.allclose,
  isclose: reductions.isclose,
  equal: reductions.equal,
  logdet: reductions.logdet,
  cov: reductions.cov,
  corrcoef: reductions.corrcoef,
  histogram: reductions.histogram,
  unflatten: shapes.unflatten,
  movedim: shapes.movedim,
  moveaxis: shapes.moveaxis,
  swapaxes: shapes.swapaxes,
  swapdims: shapes.swapdims,
  ravel: shapes.ravel,
  vsplit: shapes.vsplit,
  hsplit: shapes.hsplit,
  dsplit: shapes.dsplit,
  fliplr: shapes.fliplr,
  flipud: shapes.flipud,
  diagflat: shapes.diagflat,
  take: shapes.take,
  put: shapes.put,
  put_: shapes.put_,
  indexPut: shapes.indexPut,
  indexPut_: shapes.indexPut_,
  msort: shapes.msort,
  viewAs: shapes.viewAs,
  reshapeAs: shapes.reshapeAs,
  typeAs: shapes.typeAs,
  newZeros: random.newZeros,
  newOnes: random.newOnes,
  newFull: random.newFull,
  newEmpty: random.newEmpty,
  newTensor: random.newTensor,
  uniform_: random.uniform_,
  normal_: random.normal_,
  bernoulli_: random.bernoulli_,
  exponential_: random.exponential_,
  geometric_: random.geometric_,
  cauchy_: random.cauchy_,
  logNormal_: random.logNormal_,
  random_: random.random_,
};

// Non-enumerable like the class's own methods; a name already defined is refused at load.
attachTensorFunctions('tensor-methods-more.ts', methods);

/** The names of the methods this module attaches to Tensor (for the tests that check them all). */
export const TENSOR_MORE_METHODS: readonly string[] = Object.keys(methods);
