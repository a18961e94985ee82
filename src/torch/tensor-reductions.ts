// PyTorch's everyday reductions under their names (torch.prod, argmin, amin, aminmax, any, all,
// count_nonzero, allclose, isclose, equal, logdet, cov, corrcoef, trapezoid, cumulative_trapezoid,
// histogram), the top-level forms of the core Tensor reductions (torch.sum(x) is x.sum()), and the
// distances torch.cdist and torch.pdist, over libtorch's kernels so that results and gradients
// are PyTorch's. Arguments are checked first, so that a wrong value is an ArgumentError naming
// the function and the argument rather than a C++ message.
import { Tensor } from './tensor.js';
import type { DType } from './dtype.js';
import * as aten from './generated/aten.js';
import { checksOf, type ArgumentChecks } from '../util/arguments.js';
import { dimArg, tensorArg } from './tensor-args.js';

/** A dimension, a list of dimensions, or null (every dimension). */
function dimsArg(c: ArgumentChecks, value: unknown, name: string, input: Tensor): number[] | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'number') return [dimArg(c, value, name, input)];
  return c.array(value, name).map((d, k) => dimArg(c, d, `${name}[${k}]`, input));
}

function flag(c: ArgumentChecks, value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') c.fail(name, 'a boolean', value);
  return value as boolean;
}

/**
 * The product of all elements, or along `dim` (torch.prod), computed in `options.dtype` if given
 * (integer and bool inputs give int64, as PyTorch).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * torch.prod(torch.tensor([[1, 2], [3, 4]]), 1).toNumbers(); // [2, 12]
 * ```
 */
export function prod(
  input: Tensor,
  dim: number | null = null,
  keepdim = false,
  options: { dtype?: DType } = {},
): Tensor {
  const c = checksOf('prod');
  const x = tensorArg(c, input, 'input');
  const dtype = c.object(options, 'options').dtype as DType | undefined;
  if (dim === null || dim === undefined) return aten.prod(x, dtype ?? null);
  return aten.prod_dim_int(x, dimArg(c, dim, 'dim', x), flag(c, keepdim, 'keepdim'), dtype ?? null);
}

/** The indices of the minima along `dim`, or of the flattened tensor (torch.argmin), int64. */
export function argmin(input: Tensor, dim: number | null = null, keepdim = false): Tensor {
  const c = checksOf('argmin');
  const x = tensorArg(c, input, 'input');
  const d = dim === null || dim === undefined ? null : dimArg(c, dim, 'dim', x);
  return aten.argmin(x, d, flag(c, keepdim, 'keepdim'));
}

/** The minimum along `dim` (all dimensions when empty), values only (torch.amin). */
export function amin(input: Tensor, dim: number | number[] = [], keepdim = false): Tensor {
  const c = checksOf('amin');
  const x = tensorArg(c, input, 'input');
  return aten.amin(x, dimsArg(c, dim, 'dim', x) ?? [], flag(c, keepdim, 'keepdim'));
}

/** The minimum and the maximum at once, of all elements or along `options.dim` (torch.aminmax). */
export function aminmax(
  input: Tensor,
  options: { dim?: number | null; keepdim?: boolean } = {},
): [min: Tensor, max: Tensor] {
  const c = checksOf('aminmax');
  const x = tensorArg(c, input, 'input');
  const o = c.object(options, 'options');
  const dim = o.dim === undefined || o.dim === null ? null : dimArg(c, o.dim, 'options.dim', x);
  return aten.aminmax(x, dim, o.keepdim === undefined ? false : flag(c, o.keepdim, 'options.keepdim'));
}

/** Whether any element is non-zero, overall or along `dim` (torch.any): a bool tensor. */
export function any(input: Tensor, dim: number | null = null, keepdim = false): Tensor {
  const c = checksOf('any');
  const x = tensorArg(c, input, 'input');
  if (dim === null || dim === undefined) return aten.any(x);
  return aten.any_dim(x, dimArg(c, dim, 'dim', x), flag(c, keepdim, 'keepdim'));
}

/** Whether every element is non-zero, overall or along `dim` (torch.all): a bool tensor. */
export function all(input: Tensor, dim: number | null = null, keepdim = false): Tensor {
  const c = checksOf('all');
  const x = tensorArg(c, input, 'input');
  if (dim === null || dim === undefined) return aten.all(x);
  return aten.all_dim(x, dimArg(c, dim, 'dim', x), flag(c, keepdim, 'keepdim'));
}

/** The number of non-zero elements, overall or along `dim` (torch.count_nonzero), int64. */
export function countNonzero(input: Tensor, dim: number | number[] | null = null): Tensor {
  const c = checksOf('countNonzero');
  const x = tensorArg(c, input, 'input');
  const dims = dimsArg(c, dim, 'dim', x);
  return dims === null ? aten.count_nonzero(x, null) : aten.count_nonzero_dim_IntList(x, dims);
}

function tolerances(
  c: ArgumentChecks,
  rtol: unknown,
  atol: unknown,
  equalNan: unknown,
): [number, number, boolean] {
  return [
    c.number(rtol, 'rtol', { min: 0 }),
    c.number(atol, 'atol', { min: 0 }),
    flag(c, equalNan, 'equalNan'),
  ];
}

/**
 * Elementwise |input - other| <= atol + rtol * |other| (torch.isclose), a bool tensor; NaNs are
 * equal only with `equalNan`.
 */
export function isclose(input: Tensor, other: Tensor, rtol = 1e-5, atol = 1e-8, equalNan = false): Tensor {
  const c = checksOf('isclose');
  const [r, a, n] = tolerances(c, rtol, atol, equalNan);
  return aten.isclose(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'), r, a, n);
}

/** Whether {@link isclose} holds for every element (torch.allclose). */
export function allclose(input: Tensor, other: Tensor, rtol = 1e-5, atol = 1e-8, equalNan = false): boolean {
  const c = checksOf('allclose');
  const [r, a, n] = tolerances(c, rtol, atol, equalNan);
  return aten.allclose(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'), r, a, n);
}

/** Whether both have the same shape and the same elements (torch.equal). */
export function equal(input: Tensor, other: Tensor): boolean {
  const c = checksOf('equal');
  return aten.equal(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}

/** The log-determinant of square matrices (batches allowed); NaN for a negative determinant (torch.logdet). */
export function logdet(input: Tensor): Tensor {
  const c = checksOf('logdet');
  const x = tensorArg(c, input, 'input');
  if (x.ndim < 2 || x.shape[x.ndim - 1] !== x.shape[x.ndim - 2])
    c.fail('input', 'a square matrix or a batch of them', `a tensor of shape [${x.shape.join(', ')}]`);
  return aten.logdet(x);
}

/** Options of {@link cov}: PyTorch's keyword arguments. */
export interface CovOptions {
  /** Subtracted from the number of observations (1: the unbiased estimate, 0: the maximum likelihood one). */
  correction?: number;
  /** Integer frequency of each observation (a 1-d tensor, one per column). */
  fweights?: Tensor | null;
  /** Weight of each observation (a 1-d float tensor, one per column). */
  aweights?: Tensor | null;
}

function variables(c: ArgumentChecks, input: unknown): Tensor {
  const x = tensorArg(c, input, 'input');
  if (x.ndim > 2)
    c.fail(
      'input',
      'a 1-d or 2-d tensor (variables in rows, observations in columns)',
      `a ${x.ndim}-d tensor`,
    );
  return x;
}

/** The covariance matrix of the variables in the rows of `input`, observations in columns (torch.cov). */
export function cov(input: Tensor, options: CovOptions = {}): Tensor {
  const c = checksOf('cov');
  const x = variables(c, input);
  const o = c.object(options, 'options');
  const correction =
    o.correction === undefined ? 1 : c.integer(o.correction, 'options.correction', { min: 0 });
  const weights = (name: 'fweights' | 'aweights'): Tensor | null =>
    o[name] === undefined || o[name] === null ? null : tensorArg(c, o[name], `options.${name}`);
  return aten.cov(x, correction, weights('fweights'), weights('aweights'));
}

/** The Pearson correlation coefficients of the variables in the rows of `input` (torch.corrcoef). */
export function corrcoef(input: Tensor): Tensor {
  return aten.corrcoef(variables(checksOf('corrcoef'), input));
}

/** Options of {@link trapezoid} and {@link cumulativeTrapezoid}. */
export interface TrapezoidOptions {
  /** The spacing of the samples when no `x` is given (default 1). */
  dx?: number;
  /** The dimension to integrate along (default -1). */
  dim?: number;
}

function trapezoidArgs(
  c: ArgumentChecks,
  y: unknown,
  x: unknown,
  options: unknown,
): { y: Tensor; x: Tensor | null; dx: number; dim: number } {
  const yy = tensorArg(c, y, 'y');
  const o = c.object(options, 'options');
  const xx = x === undefined || x === null ? null : tensorArg(c, x, 'x');
  if (xx !== null && o.dx !== undefined)
    c.fail('options.dx', 'absent when x is given (x sets the spacing)', o.dx);
  if (yy.ndim === 0) c.fail('y', 'a tensor of at least 1 dimension', 'a 0-d tensor');
  const dx = o.dx === undefined ? 1 : c.number(o.dx, 'options.dx');
  const dim = o.dim === undefined ? -1 : dimArg(c, o.dim, 'options.dim', yy);
  return { y: yy, x: xx, dx, dim };
}

/** The integral of `y` along `dim` by the trapezoid rule, at sample points `x` or spacing `dx` (torch.trapezoid). */
export function trapezoid(y: Tensor, x: Tensor | null = null, options: TrapezoidOptions = {}): Tensor {
  const a = trapezoidArgs(checksOf('trapezoid'), y, x, options);
  return a.x ? aten.trapezoid_x(a.y, a.x, a.dim) : aten.trapezoid_dx(a.y, a.dx, a.dim);
}

/** The running trapezoid-rule integral of `y` along `dim` (torch.cumulative_trapezoid). */
export function cumulativeTrapezoid(
  y: Tensor,
  x: Tensor | null = null,
  options: TrapezoidOptions = {},
): Tensor {
  const a = trapezoidArgs(checksOf('cumulativeTrapezoid'), y, x, options);
  return a.x ? aten.cumulative_trapezoid_x(a.y, a.x, a.dim) : aten.cumulative_trapezoid_dx(a.y, a.dx, a.dim);
}

/** Options of {@link histogram}. */
export interface HistogramOptions {
  /** The [min, max] of the bins when `bins` is a count (default: the input's minimum and maximum). */
  range?: [number, number] | null;
  /** A weight per element of the input (default 1 each). */
  weight?: Tensor | null;
  /** Normalise so that the histogram integrates to 1 over the range. */
  density?: boolean;
}

/**
 * A histogram of a float tensor (torch.histogram): `bins` equal bins, or the bin edges as a
 * 1-d tensor; returns the counts (or summed weights, or densities) and the bin edges.
 */
export function histogram(
  input: Tensor,
  bins: number | Tensor = 100,
  options: HistogramOptions = {},
): [hist: Tensor, binEdges: Tensor] {
  const c = checksOf('histogram');
  const x = tensorArg(c, input, 'input');
  if (x.dtype !== 'float32' && x.dtype !== 'float64')
    c.fail('input', 'a float32 or float64 tensor', `a ${x.dtype} tensor`);
  const o = c.object(options, 'options');
  const weight =
    o.weight === undefined || o.weight === null ? null : tensorArg(c, o.weight, 'options.weight');
  const density = o.density === undefined ? false : flag(c, o.density, 'options.density');
  if (bins instanceof Tensor) {
    if (o.range !== undefined && o.range !== null)
      c.fail('options.range', 'absent when bins are edges', o.range);
    return aten.histogram_bins_tensor(x, bins, weight, density);
  }
  const count = c.integer(bins, 'bins', { min: 1 });
  let range: number[] | null = null;
  if (o.range !== undefined && o.range !== null) {
    range = Array.from(c.numbers(o.range, 'options.range', { length: 2 }));
    if (range[0]! > range[1]!) c.fail('options.range', 'a [min, max] with min <= max', o.range);
  }
  return aten.histogram_bin_ct(x, count, range, weight, density);
}

/** A norm order p in [0, Infinity] (PyTorch allows the infinity norm). */
function normOrder(c: ArgumentChecks, p: unknown): number {
  if (typeof p !== 'number' || !(p >= 0)) c.fail('p', 'a number >= 0 (Infinity included)', p);
  return p as number;
}

/** How {@link cdist} computes Euclidean distances (PyTorch's compute_mode): by a matrix product or directly. */
export type CdistComputeMode =
  'use_mm_for_euclid_dist_if_necessary' | 'use_mm_for_euclid_dist' | 'donot_use_mm_for_euclid_dist';
// In the order of libtorch's compute_mode codes (the first is its default, passed as null).
const COMPUTE_MODES: readonly CdistComputeMode[] = [
  'use_mm_for_euclid_dist_if_necessary',
  'use_mm_for_euclid_dist',
  'donot_use_mm_for_euclid_dist',
];

/**
 * The p-norm distances between each row of `x1` [..., P, M] and each row of `x2` [..., R, M],
 * [..., P, R] (torch.cdist). `computeMode` chooses a matrix product for p = 2 (faster, less exact):
 * by default when P or R exceeds 25.
 */
export function cdist(
  x1: Tensor,
  x2: Tensor,
  p = 2,
  computeMode: CdistComputeMode = 'use_mm_for_euclid_dist_if_necessary',
): Tensor {
  const c = checksOf('cdist');
  const a = tensorArg(c, x1, 'x1');
  const b = tensorArg(c, x2, 'x2');
  for (const [name, t] of [
    ['x1', a],
    ['x2', b],
  ] as const)
    if (t.ndim < 2)
      c.fail(name, 'a tensor of at least 2 dimensions [..., rows, features]', `a ${t.ndim}-d tensor`);
  if (a.shape[a.ndim - 1] !== b.shape[b.ndim - 1])
    c.fail(
      'x2',
      `a tensor with as many features (last dimension) as x1 (${a.shape[a.ndim - 1]})`,
      `shape [${b.shape.join(', ')}]`,
    );
  const mode = COMPUTE_MODES.indexOf(c.oneOf(computeMode, 'computeMode', COMPUTE_MODES));
  return aten.cdist(a, b, normOrder(c, p), mode === 0 ? null : mode);
}

/** The p-norm distances between every pair of rows of a matrix [N, M]: the upper triangle of cdist(input, input), N(N-1)/2 values (torch.pdist). */
export function pdist(input: Tensor, p = 2): Tensor {
  const c = checksOf('pdist');
  const x = tensorArg(c, input, 'input');
  if (x.ndim !== 2) c.fail('input', 'a matrix [rows, features]', `a ${x.ndim}-d tensor`);
  return aten.pdist(x, normOrder(c, p));
}

// The top-level forms of the core Tensor reductions: each is the method on its first argument.

/** The sum of all elements, or over `dim` (torch.sum): `input.sum(dim, keepdim)`. */
export function sum(input: Tensor, dim?: number | number[], keepdim = false): Tensor {
  return tensorArg(checksOf('sum'), input, 'input').sum(dim, keepdim);
}
/** The mean of all elements, or over `dim` (torch.mean): `input.mean(dim, keepdim)`. */
export function mean(input: Tensor, dim?: number | number[], keepdim = false): Tensor {
  return tensorArg(checksOf('mean'), input, 'input').mean(dim, keepdim);
}
/** The maximum of all elements (torch.max). */
export function max(input: Tensor): Tensor;
/** The maxima along `dim` with their indices (torch.max). */
export function max(input: Tensor, dim: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
/** The elementwise maximum of two tensors that broadcast (torch.max(input, other)): `input.maximum(other)`. */
export function max(input: Tensor, other: Tensor): Tensor;
/** The maximum of all elements, the maxima along `dim` with their indices, or the elementwise maximum of two tensors (torch.max). */
export function max(input: Tensor, dim?: number | Tensor, keepdim = false): Tensor | [Tensor, Tensor] {
  const x = tensorArg(checksOf('max'), input, 'input');
  if (dim instanceof Tensor) return x.maximum(dim);
  return dim === undefined ? x.max() : x.max(dim, keepdim);
}
/** The minimum of all elements (torch.min). */
export function min(input: Tensor): Tensor;
/** The minima along `dim` with their indices (torch.min). */
export function min(input: Tensor, dim: number, keepdim?: boolean): [values: Tensor, indices: Tensor];
/** The elementwise minimum of two tensors that broadcast (torch.min(input, other)): `input.minimum(other)`. */
export function min(input: Tensor, other: Tensor): Tensor;
/** The minimum of all elements, the minima along `dim` with their indices, or the elementwise minimum of two tensors (torch.min). */
export function min(input: Tensor, dim?: number | Tensor, keepdim = false): Tensor | [Tensor, Tensor] {
  const x = tensorArg(checksOf('min'), input, 'input');
  if (dim instanceof Tensor) return x.minimum(dim);
  return dim === undefined ? x.min() : x.min(dim, keepdim);
}
/** The maximum along `dim`, values only (torch.amax): `input.amax(dim, keepdim)`. */
export function amax(input: Tensor, dim: number | number[], keepdim = false): Tensor {
  return tensorArg(checksOf('amax'), input, 'input').amax(dim, keepdim);
}
/** The indices of the maxima along `dim`, or of the flattened tensor (torch.argmax), int64. */
export function argmax(input: Tensor, dim?: number, keepdim = false): Tensor {
  return tensorArg(checksOf('argmax'), input, 'input').argmax(dim, keepdim);
}
/** log(sum(exp(input))) over `dim`, computed stably (torch.logsumexp). */
export function logsumexp(input: Tensor, dim: number | number[], keepdim = false): Tensor {
  return tensorArg(checksOf('logsumexp'), input, 'input').logsumexp(dim, keepdim);
}
/** The variance over `dim` (all when null) with `correction` (default 1, Bessel's) (torch.var). */
export function var_(input: Tensor, dim?: number | number[] | null, correction = 1, keepdim = false): Tensor {
  return tensorArg(checksOf('var'), input, 'input').var(dim, correction, keepdim);
}
/** The standard deviation over `dim` (all when null) with `correction` (default 1) (torch.std). */
export function std(input: Tensor, dim?: number | number[] | null, correction = 1, keepdim = false): Tensor {
  return tensorArg(checksOf('std'), input, 'input').std(dim, correction, keepdim);
}
/** The p-norm (default 2) of all elements or over `dim` (torch.norm): `input.norm(p, dim, keepdim)`. */
export function norm(input: Tensor, p = 2, dim?: number | number[] | null, keepdim = false): Tensor {
  return tensorArg(checksOf('norm'), input, 'input').norm(p, dim, keepdim);
}
/** The softmax along `dim` (torch.softmax). */
export function softmax(input: Tensor, dim: number): Tensor {
  return tensorArg(checksOf('softmax'), input, 'input').softmax(dim);
}
/** The log-softmax along `dim` (torch.log_softmax). */
export function logSoftmax(input: Tensor, dim: number): Tensor {
  return tensorArg(checksOf('logSoftmax'), input, 'input').logSoftmax(dim);
}
