// Sorting, searching, uniques, cumulative and NaN-ignoring reductions under PyTorch's names
// (torch.sort, torch.unique, torch.cumprod, torch.nanmean...), over libtorch's own kernels so
// that values, indices and gradients are PyTorch's. Arguments that PyTorch takes by keyword only
// are an options object; functions that return several tensors return an array in PyTorch's
// order (`const [values, indices] = torch.sort(x)`), each owned by the current scope.
import { Tensor, type Scalar } from './tensor.js';
import type { DType } from './dtype.js';
import * as aten from './generated/aten.js';
import { checksOf } from '../util/arguments.js';
import { dimArg, tensorArg, tensorOrScalarArg } from './tensor-args.js';

/** Options of {@link unique}: as torch.unique's keywords. */
export interface UniqueOptions {
  /** Sort the unique values ascending (default true). */
  sorted?: boolean;
  /** Also return, for each element of the input, the index of its value in the output. */
  returnInverse?: boolean;
  /** Also return how often each unique value occurs. */
  returnCounts?: boolean;
  /** The dimension whose slices are compared as wholes (default: the flattened input). */
  dim?: number | null;
}

/** What {@link unique} and {@link uniqueConsecutive} return for the flags they are given. */
export type UniqueResult<O> = O extends { returnInverse: true; returnCounts: true }
  ? [values: Tensor, inverse: Tensor, counts: Tensor]
  : O extends { returnInverse: true } | { returnCounts: true }
    ? [values: Tensor, inverseOrCounts: Tensor]
    : Tensor;

/** Picks unique's outputs as PyTorch does: the values alone, or with the requested extras. */
function uniqueOutputs(
  [values, inverse, counts]: [Tensor, Tensor, Tensor],
  returnInverse: boolean,
  returnCounts: boolean,
): Tensor | Tensor[] {
  const out = [values];
  if (returnInverse) out.push(inverse);
  else inverse.dispose();
  if (returnCounts) out.push(counts);
  else counts.dispose();
  return out.length === 1 ? values : out;
}

/**
 * The unique elements of `input` (torch.unique), or its unique slices along `dim`; with
 * `returnInverse` also the index of each element's value in them, with `returnCounts` also
 * how often each occurs: `const [values, inverse] = torch.unique(x, { returnInverse: true })`.
 */
export function unique<O extends UniqueOptions>(input: Tensor, options?: O): UniqueResult<O> {
  const c = checksOf('unique');
  tensorArg(c, input, 'input');
  const { sorted = true, returnInverse = false, returnCounts = false, dim = null } = options ?? {};
  const out =
    dim === null
      ? aten._unique2(input, sorted, returnInverse, returnCounts)
      : aten.unique_dim(input, dimArg(c, dim, 'dim', input), sorted, returnInverse, returnCounts);
  return uniqueOutputs(out, returnInverse, returnCounts) as UniqueResult<O>;
}

/**
 * Collapses each run of equal consecutive elements (or slices along `dim`) into one
 * (torch.unique_consecutive), with the inverse indices and run lengths on request.
 */
export function uniqueConsecutive<O extends Omit<UniqueOptions, 'sorted'>>(
  input: Tensor,
  options?: O,
): UniqueResult<O> {
  const c = checksOf('uniqueConsecutive');
  tensorArg(c, input, 'input');
  const { returnInverse = false, returnCounts = false, dim = null } = options ?? {};
  if (dim !== null) dimArg(c, dim, 'dim', input);
  const out = aten.unique_consecutive(input, returnInverse, returnCounts, dim);
  return uniqueOutputs(out, returnInverse, returnCounts) as UniqueResult<O>;
}

/** Options of {@link searchsorted} (torch.searchsorted's keywords). */
export interface SearchsortedOptions {
  /** int32 indices instead of int64. */
  outInt32?: boolean;
  /** The last suitable index instead of the first (as `side: 'right'`). */
  right?: boolean;
  /** 'left' (default) or 'right'; must agree with `right` if both are given. */
  side?: 'left' | 'right';
  /** Indices that sort an unsorted `sortedSequence` (as argsort returns). */
  sorter?: Tensor;
}

/**
 * The indices at which `values` would be inserted into the innermost dimension of
 * `sortedSequence` to keep it sorted (torch.searchsorted).
 */
export function searchsorted(
  sortedSequence: Tensor,
  values: Tensor | Scalar,
  options: SearchsortedOptions = {},
): Tensor {
  const c = checksOf('searchsorted');
  tensorArg(c, sortedSequence, 'sortedSequence');
  const v = tensorOrScalarArg(c, values, 'values');
  const {
    outInt32 = false,
    right = false,
    side = null,
    sorter = null,
  } = c.object(options, 'options') as SearchsortedOptions;
  if (side !== null) c.oneOf(side, 'side', ['left', 'right']);
  if (sorter !== null) tensorArg(c, sorter, 'sorter');
  return v instanceof Tensor
    ? aten.searchsorted_Tensor(sortedSequence, v, outInt32, right, side, sorter)
    : aten.searchsorted_Scalar(sortedSequence, v, outInt32, right, side, sorter);
}

/**
 * The index of the bucket of `boundaries` (1-D, ascending) each element of `input` falls in
 * (torch.bucketize); `right` puts a value equal to a boundary in the bucket to its right.
 */
export function bucketize(
  input: Tensor | Scalar,
  boundaries: Tensor,
  options: { outInt32?: boolean; right?: boolean } = {},
): Tensor {
  const c = checksOf('bucketize');
  const x = tensorOrScalarArg(c, input, 'input');
  if (tensorArg(c, boundaries, 'boundaries').ndim !== 1)
    c.fail('boundaries', 'a 1-D tensor', `shape [${boundaries.shape.join(', ')}]`);
  const { outInt32 = false, right = false } = options;
  return x instanceof Tensor
    ? aten.bucketize_Tensor(x, boundaries, outInt32, right)
    : aten.bucketize_Scalar(x, boundaries, outInt32, right);
}

/**
 * The elements sorted along `dim` and the indices they came from (torch.sort); `stable` keeps
 * equal elements in their order.
 */
export function sort(
  input: Tensor,
  dim = -1,
  descending = false,
  options: { stable?: boolean } = {},
): [values: Tensor, indices: Tensor] {
  const c = checksOf('sort');
  tensorArg(c, input, 'input');
  return aten.sort_stable(input, options.stable ?? false, dimArg(c, dim, 'dim', input), descending);
}

/** The indices that sort `input` along `dim` (torch.argsort). */
export function argsort(
  input: Tensor,
  dim = -1,
  descending = false,
  options: { stable?: boolean } = {},
): Tensor {
  const c = checksOf('argsort');
  tensorArg(c, input, 'input');
  return aten.argsort_stable(input, options.stable ?? false, dimArg(c, dim, 'dim', input), descending);
}

/** The `k` largest (or, with `largest` false, smallest) elements along `dim` and their indices (torch.topk). */
export function topk(
  input: Tensor,
  k: number,
  dim = -1,
  largest = true,
  sorted = true,
): [values: Tensor, indices: Tensor] {
  const c = checksOf('topk');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  c.integer(k, 'k', { min: 0, max: input.ndim === 0 ? 1 : input.size(d) });
  return aten.topk(input, k, d, largest, sorted);
}

/** The `k`-th smallest element (k from 1) along `dim` and its index (torch.kthvalue). */
export function kthvalue(
  input: Tensor,
  k: number,
  dim = -1,
  keepdim = false,
): [values: Tensor, indices: Tensor] {
  const c = checksOf('kthvalue');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  c.integer(k, 'k', { min: 1, max: input.ndim === 0 ? 1 : input.size(d) });
  return aten.kthvalue(input, k, d, keepdim);
}

/** The median of all elements (the lower of the two middle ones for an even count; torch.median). */
export function median(input: Tensor): Tensor;
/** The medians along `dim` and their indices. */
export function median(input: Tensor, dim: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
/** The median of all elements, or along `dim` with the indices ([values, indices]). */
export function median(input: Tensor, dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
  const c = checksOf('median');
  tensorArg(c, input, 'input');
  return dim === undefined
    ? aten.median(input)
    : aten.median_dim(input, dimArg(c, dim, 'dim', input), keepdim);
}

/** The median ignoring NaNs (torch.nanmedian). */
export function nanmedian(input: Tensor): Tensor;
/** The medians along `dim` ignoring NaNs, and their indices. */
export function nanmedian(input: Tensor, dim: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
/** The median ignoring NaNs, of all elements or along `dim` with the indices. */
export function nanmedian(input: Tensor, dim?: number, keepdim = false): Tensor | [Tensor, Tensor] {
  const c = checksOf('nanmedian');
  tensorArg(c, input, 'input');
  return dim === undefined
    ? aten.nanmedian(input)
    : aten.nanmedian_dim(input, dimArg(c, dim, 'dim', input), keepdim);
}

/** The most frequent value along `dim` (the smallest of ties) and an index of it (torch.mode). */
export function mode(input: Tensor, dim = -1, keepdim = false): [values: Tensor, indices: Tensor] {
  const c = checksOf('mode');
  tensorArg(c, input, 'input');
  return aten.mode(input, dimArg(c, dim, 'dim', input), keepdim);
}

/** How {@link quantile} picks between the two nearest elements. */
export type QuantileInterpolation = 'linear' | 'lower' | 'higher' | 'midpoint' | 'nearest';

/**
 * The `q`-quantiles (in [0, 1]) of all elements or along `dim` (torch.quantile); a tensor `q`
 * puts its quantiles in a new first dimension.
 */
export function quantile(
  input: Tensor,
  q: number | Tensor,
  dim: number | null = null,
  keepdim = false,
  options: { interpolation?: QuantileInterpolation } = {},
): Tensor {
  const c = checksOf('quantile');
  tensorArg(c, input, 'input');
  const interpolation = c.oneOf(options.interpolation ?? 'linear', 'interpolation', [
    'linear',
    'lower',
    'higher',
    'midpoint',
    'nearest',
  ]);
  const d = dim === null ? null : dimArg(c, dim, 'dim', input);
  if (typeof q === 'number') {
    c.number(q, 'q', { min: 0, max: 1 });
    return aten.quantile_scalar(input, q, d, keepdim, interpolation);
  }
  return aten.quantile(input, tensorArg(c, q, 'q'), d, keepdim, interpolation);
}

/** A histogram of `bins` equal bins over [min, max] (the data's range when both are 0; torch.histc). */
export function histc(input: Tensor, bins = 100, min = 0, max = 0): Tensor {
  const c = checksOf('histc');
  tensorArg(c, input, 'input');
  c.integer(bins, 'bins', { min: 1 });
  c.number(min, 'min');
  c.number(max, 'max');
  if (max < min) c.fail('max', `>= min (${min})`, max);
  return aten.histc(input, bins, min, max);
}

/** How often each value 0..max of a 1-D non-negative integer tensor occurs, or the sums of `weights` (torch.bincount). */
export function bincount(input: Tensor, weights: Tensor | null = null, minlength = 0): Tensor {
  const c = checksOf('bincount');
  if (tensorArg(c, input, 'input').ndim !== 1)
    c.fail('input', 'a 1-D tensor', `shape [${input.shape.join(', ')}]`);
  if (weights !== null) tensorArg(c, weights, 'weights');
  c.integer(minlength, 'minlength', { min: 0 });
  return aten.bincount(input, weights, minlength);
}

/** Cumulative sums along `dim` (torch.cumsum); `dtype` converts first (integers sum to int64 otherwise). */
export function cumsum(input: Tensor, dim: number, options: { dtype?: DType } = {}): Tensor {
  const c = checksOf('cumsum');
  tensorArg(c, input, 'input');
  const dtype = c.object(options, 'options').dtype as DType | undefined;
  return aten.cumsum(input, dimArg(c, dim, 'dim', input), dtype ?? null);
}

/** Cumulative products along `dim` (torch.cumprod). */
export function cumprod(input: Tensor, dim: number, options: { dtype?: DType } = {}): Tensor {
  const c = checksOf('cumprod');
  tensorArg(c, input, 'input');
  const dtype = c.object(options, 'options').dtype as DType | undefined;
  return aten.cumprod(input, dimArg(c, dim, 'dim', input), dtype ?? null);
}

/** The running maximum along `dim` and the index where each was reached (torch.cummax). */
export function cummax(input: Tensor, dim: number): [values: Tensor, indices: Tensor] {
  const c = checksOf('cummax');
  tensorArg(c, input, 'input');
  return aten.cummax(input, dimArg(c, dim, 'dim', input));
}

/** The running minimum along `dim` and the index where each was reached (torch.cummin). */
export function cummin(input: Tensor, dim: number): [values: Tensor, indices: Tensor] {
  const c = checksOf('cummin');
  tensorArg(c, input, 'input');
  return aten.cummin(input, dimArg(c, dim, 'dim', input));
}

/** log(cumsum(exp(x))) along `dim`, computed stably (torch.logcumsumexp). */
export function logcumsumexp(input: Tensor, dim: number): Tensor {
  const c = checksOf('logcumsumexp');
  tensorArg(c, input, 'input');
  return aten.logcumsumexp(input, dimArg(c, dim, 'dim', input));
}

/** The mean ignoring NaNs, of all elements or over `dim` (torch.nanmean). */
export function nanmean(
  input: Tensor,
  dim: number | number[] | null = null,
  keepdim = false,
  options: { dtype?: DType } = {},
): Tensor {
  tensorArg(checksOf('nanmean'), input, 'input');
  return aten.nanmean(input, dim, keepdim, options.dtype ?? null);
}

/** The sum treating NaNs as 0, of all elements or over `dim` (torch.nansum). */
export function nansum(
  input: Tensor,
  dim: number | number[] | null = null,
  keepdim = false,
  options: { dtype?: DType } = {},
): Tensor {
  tensorArg(checksOf('nansum'), input, 'input');
  return aten.nansum(input, dim, keepdim, options.dtype ?? null);
}

/** Options of {@link stdMean} and {@link varMean}. */
export interface SpreadOptions {
  /** The difference of the divisor from the count (default 1: Bessel's correction). */
  correction?: number;
  /** PyTorch's older flag: true is correction 1, false correction 0 (not with `correction`). */
  unbiased?: boolean;
  /** Keep the reduced dimensions as size 1. */
  keepdim?: boolean;
}

function spreadCorrection(fn: string, input: Tensor, options: SpreadOptions): number {
  const c = checksOf(fn);
  tensorArg(c, input, 'input');
  if (options.unbiased !== undefined && options.correction !== undefined)
    c.fail('options', 'either correction or unbiased, not both', options);
  if (options.unbiased !== undefined) return options.unbiased ? 1 : 0;
  return c.integer(options.correction ?? 1, 'correction', { min: 0 });
}

/** The standard deviation and the mean in one pass, of all elements or over `dim` (torch.std_mean). */
export function stdMean(
  input: Tensor,
  dim: number | number[] | null = null,
  options: SpreadOptions = {},
): [std: Tensor, mean: Tensor] {
  const correction = spreadCorrection('stdMean', input, options);
  return aten.std_mean_correction(input, dim, correction, options.keepdim ?? false);
}

/** The variance and the mean in one pass, of all elements or over `dim` (torch.var_mean). */
export function varMean(
  input: Tensor,
  dim: number | number[] | null = null,
  options: SpreadOptions = {},
): [variance: Tensor, mean: Tensor] {
  const correction = spreadCorrection('varMean', input, options);
  return aten.var_mean_correction(input, dim, correction, options.keepdim ?? false);
}
