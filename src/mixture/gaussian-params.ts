// The parameter computations of a Gaussian mixture for the four covariance types, following
// scikit-learn 1.2 (`_estimate_gaussian_parameters`, `_compute_precision_cholesky`,
// `_estimate_log_gaussian_prob`) with the corrections of reference/mixture.md: covariances are
// centred on their component mean, and densities use the precision Cholesky factor A = L^{-T}
// (A A^T = Sigma^{-1}, upper triangular) so that log|Sigma^{-1}|/2 = sum log diag(A) and the
// Mahalanobis term is ||(x - mu) A||^2: no matrix inverse, no determinant.
//
// Storage (row-major Float64Array), as scikit-learn's shapes:
//   full: K x d x d   tied: d x d   diag: K x d   spherical: K
import { UserError } from '../util/errors.js';
import type { DenseMatrix } from './linalg.js';
import {
  diagMahalanobisKernel,
  diagScatterKernel,
  mahalanobisKernel,
  scatterKernel,
  weightedSumKernel,
} from './gaussian-kernels.js';

/**
 * The component covariances: 'full' (one d x d matrix each), 'tied' (one matrix shared by all),
 * 'diag' (a diagonal each), 'spherical' (one variance each).
 */
export type CovarianceType = 'full' | 'tied' | 'diag' | 'spherical';
/** Every {@link CovarianceType}. */
export const COVARIANCE_TYPES: readonly CovarianceType[] = ['full', 'tied', 'diag', 'spherical'];

/** Added to every N_k, as scikit-learn does (10 * float64 machine epsilon), so that empty components divide safely. */
export const NK_EPSILON = 10 * 2.220446049250313e-16;

/** Number of stored covariance values for a type. */
export function covarianceSize(type: CovarianceType, k: number, d: number): number {
  switch (type) {
    case 'full':
      return k * d * d;
    case 'tied':
      return d * d;
    case 'diag':
      return k * d;
    case 'spherical':
      return k;
  }
}

/** Free parameters: K - 1 weights, K d means, and the covariance parameters. */
export function gaussianParameterCount(type: CovarianceType, k: number, d: number): number {
  const cov =
    type === 'full'
      ? (k * d * (d + 1)) / 2
      : type === 'tied'
        ? (d * (d + 1)) / 2
        : type === 'diag'
          ? k * d
          : k;
  return cov + k * d + k - 1;
}

/**
 * Compiles and warms up the generated kernels that a fit with this covariance type and d
 * features uses, so that V8 optimises them in the background while the fit starts rather than
 * in the middle of its first passes over the data (see gaussian-kernels.ts).
 */
export function prepareKernels(type: CovarianceType, d: number): void {
  weightedSumKernel(d);
  if (type === 'full' || type === 'tied') {
    scatterKernel(d);
    mahalanobisKernel(d);
  } else {
    diagScatterKernel(d);
    diagMahalanobisKernel(d, type === 'spherical');
  }
}

/** A covariance that is not positive definite: names the component and the remedy. */
export class SingularCovarianceError extends UserError {
  constructor(
    readonly covarianceType: CovarianceType,
    /** 0-based component index, or -1 for the shared (tied) covariance. */
    readonly component: number,
    readonly nComponents: number,
    readonly regCovar: number,
    readonly effectiveSamples?: number,
  ) {
    const which =
      component < 0
        ? 'the shared (tied) covariance'
        : `component ${component} of ${nComponents} (0-based, ${covarianceType} covariance)`;
    const size =
      effectiveSamples === undefined
        ? ''
        : effectiveSamples < 0.5
          ? ' It is empty (no sample is assigned to it).'
          : ` It holds about ${effectiveSamples.toPrecision(3)} samples.`;
    super(
      `ill-defined empirical covariance for ${which}: it is not positive definite (singular or collapsed onto too ` +
        `few points).${size} Remedy: increase the regularisation added to the covariance diagonal, reg_covar ` +
        `(--reg-covar on the command line, now ${regCovar}; try ${suggestReg(regCovar)}), use fewer components, ` +
        `or remove constant or duplicated columns and rescale the data.`,
    );
  }
}

function suggestReg(reg: number): string {
  return reg > 0 ? (reg * 100).toExponential(0) : '1e-6';
}

export interface GaussianEstimate {
  /** Sum of responsibilities per component, plus NK_EPSILON. */
  nk: Float64Array;
  means: Float64Array;
  covariances: Float64Array;
}

/**
 * Total scatter of the data about its column means, computed once per fit for the tied M step:
 * with responsibilities summing to one per sample, sum_ik r_ik (x_i - mu_k)(x_i - mu_k)^T equals
 * this minus sum_k N_k (mu_k - c)(mu_k - c)^T (c = the column means; the shift keeps cancellation
 * small, unlike scikit-learn's uncentred X^T X).
 */
export interface TiedScatter {
  center: Float64Array;
  scatter: Float64Array;
}

export function computeTiedScatter(x: DenseMatrix): TiedScatter {
  const { rows: n, cols: d, data } = x;
  const center = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) center[j]! += data[i * d + j]!;
  for (let j = 0; j < d; j++) center[j]! /= n;
  const scatter = new Float64Array(d * d);
  const diff = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) diff[j] = data[i * d + j]! - center[j]!;
    for (let a = 0; a < d; a++) {
      const da = diff[a]!;
      for (let b = 0; b <= a; b++) scatter[a * d + b]! += da * diff[b]!;
    }
  }
  symmetrizeLower(scatter, 0, d);
  return { center, scatter };
}

/**
 * Weights (unnormalised: N_k), means and covariances from responsibilities (n x K). `tied`, when
 * given, is the precomputed scatter and the responsibilities must sum to one per sample (true
 * after an E step); without it the tied covariance is summed directly.
 */
export function estimateGaussianParameters(
  x: DenseMatrix,
  resp: Float64Array,
  k: number,
  regCovar: number,
  type: CovarianceType,
  tied?: TiedScatter,
): GaussianEstimate {
  const { rows: n, cols: d, data } = x;
  const nk = new Float64Array(k);
  const means = new Float64Array(k * d);
  const sumKernel = weightedSumKernel(d);
  if (sumKernel) sumKernel(data, n, resp, k, nk, means);
  else {
    forEachResponsibility(x, resp, k, (xo, c, r) => {
      nk[c]! += r;
      const mo = c * d;
      for (let j = 0; j < d; j++) means[mo + j]! += r * data[xo + j]!;
    });
  }
  for (let c = 0; c < k; c++) {
    nk[c]! += NK_EPSILON;
    for (let j = 0; j < d; j++) means[c * d + j]! /= nk[c]!;
  }
  const moments: Moments = { x, resp, k, nk, means };
  let covariances: Float64Array;
  if (type === 'full') covariances = fullCovariances(moments, regCovar);
  else if (type === 'tied') covariances = tiedCovariance(moments, regCovar, tied);
  else covariances = diagCovariances(moments, regCovar, type === 'spherical');
  return { nk, means, covariances };
}

/** What the covariances of an M step are computed from. */
interface Moments {
  x: DenseMatrix;
  /** Responsibilities, n x k. */
  resp: Float64Array;
  k: number;
  /** N_k (plus NK_EPSILON). */
  nk: Float64Array;
  means: Float64Array;
}

/**
 * Calls visit(xo, c, r) for every sample (xo = i * d, in sample order) and every component c
 * whose responsibility r is not 0: the loop of the M-step sums when d is above the unrolled
 * kernels' limit.
 */
function forEachResponsibility(
  x: DenseMatrix,
  resp: Float64Array,
  k: number,
  visit: (xo: number, c: number, r: number) => void,
): void {
  const { rows: n, cols: d } = x;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < k; c++) {
      const r = resp[i * k + c]!;
      if (r !== 0) visit(i * d, c, r);
    }
  }
}

function fullCovariances({ x, resp, k, nk, means }: Moments, reg: number): Float64Array {
  const { rows: n, cols: d, data } = x;
  const dd = d * d;
  const cov = new Float64Array(k * dd);
  const kernel = scatterKernel(d);
  if (kernel) kernel(data, n, resp, k, means, cov);
  else {
    const diff = new Float64Array(d);
    forEachResponsibility(x, resp, k, (xo, c, r) => {
      const mo = c * d;
      for (let j = 0; j < d; j++) diff[j] = data[xo + j]! - means[mo + j]!;
      const co = c * dd;
      for (let a = 0; a < d; a++) {
        const ra = r * diff[a]!;
        const row = co + a * d;
        for (let b = 0; b <= a; b++) cov[row + b]! += ra * diff[b]!;
      }
    });
  }
  for (let c = 0; c < k; c++) {
    const co = c * dd;
    symmetrizeLower(cov, co, d);
    for (let e = 0; e < dd; e++) cov[co + e]! /= nk[c]!;
    for (let j = 0; j < d; j++) cov[co + j * d + j]! += reg;
  }
  return cov;
}

function tiedCovariance(moments: Moments, reg: number, tied: TiedScatter | undefined): Float64Array {
  const { x, k, nk, means } = moments;
  const d = x.cols;
  let cov: Float64Array;
  if (tied) {
    cov = Float64Array.from(tied.scatter);
    const shifted = new Float64Array(d);
    for (let c = 0; c < k; c++) {
      for (let j = 0; j < d; j++) shifted[j] = means[c * d + j]! - tied.center[j]!;
      for (let a = 0; a < d; a++)
        for (let b = 0; b < d; b++) cov[a * d + b]! -= nk[c]! * shifted[a]! * shifted[b]!;
    }
  } else {
    // Direct sum: the full-covariance scatter of every component, pooled.
    const ones = Float64Array.from({ length: k }, () => 1);
    const perComponent = fullCovariances({ ...moments, nk: ones }, 0);
    cov = new Float64Array(d * d);
    for (let c = 0; c < k; c++) for (let e = 0; e < d * d; e++) cov[e]! += perComponent[c * d * d + e]!;
  }
  let total = 0;
  for (let c = 0; c < k; c++) total += nk[c]!;
  for (let e = 0; e < d * d; e++) cov[e]! /= total;
  for (let j = 0; j < d; j++) cov[j * d + j]! += reg;
  return cov;
}

function diagCovariances({ x, resp, k, nk, means }: Moments, reg: number, spherical: boolean): Float64Array {
  const { rows: n, cols: d, data } = x;
  const vars = new Float64Array(k * d);
  const kernel = diagScatterKernel(d);
  if (kernel) kernel(data, n, resp, k, means, vars);
  else {
    forEachResponsibility(x, resp, k, (xo, c, r) => {
      const mo = c * d;
      for (let j = 0; j < d; j++) {
        const t = data[xo + j]! - means[mo + j]!;
        vars[mo + j]! += r * t * t;
      }
    });
  }
  for (let c = 0; c < k; c++) for (let j = 0; j < d; j++) vars[c * d + j] = vars[c * d + j]! / nk[c]! + reg;
  if (!spherical) return vars;
  const out = new Float64Array(k);
  for (let c = 0; c < k; c++) {
    let s = 0;
    for (let j = 0; j < d; j++) s += vars[c * d + j]!;
    out[c] = s / d;
  }
  return out;
}

function symmetrizeLower(m: Float64Array, off: number, d: number): void {
  for (let a = 0; a < d; a++) for (let b = 0; b < a; b++) m[off + b * d + a] = m[off + a * d + b]!;
}
