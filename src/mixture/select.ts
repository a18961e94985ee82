// Model selection for Gaussian mixtures: fit every (K, covariance type) pair and tabulate BIC
// (scikit-learn's sign: -2 log L + p log n, lower is better; mclust reports the negative).
import { GaussianMixture } from './gaussian.js';
import type { GaussianInit } from './gaussian-options.js';
import { SingularCovarianceError, type CovarianceType } from './gaussian-params.js';
import type { DenseMatrix } from './linalg.js';
import { MixtureArgumentError, requireArray, requireDenseMatrix, requireObject } from './errors.js';

/** What {@link selectByBic} fits: every K with every covariance type, with these EM options. */
export interface SelectionOptions {
  /** Numbers of components to try. */
  ks: readonly number[];
  /** Covariance types to try. */
  covarianceTypes: readonly CovarianceType[];
  nInit?: number;
  seed?: number;
  tol?: number;
  maxIter?: number;
  regCovar?: number;
  initParams?: GaussianInit;
  /** Called after each fit (progress reports). */
  onFit?: (row: SelectionRow) => void;
}

/** One fit of a model selection. */
export interface SelectionRow {
  k: number;
  covarianceType: CovarianceType;
  bic: number;
  aic: number;
  /** Total log-likelihood at the fitted parameters. */
  logLik: number;
  nParameters: number;
  nIter: number;
  converged: boolean;
  /** Why the fit failed (singular covariance, too few samples); bic is NaN then. */
  error?: string;
}

/** Every fit of a model selection and the one with the lowest BIC. */
export interface SelectionResult {
  rows: SelectionRow[];
  /** Undefined when no fit succeeded. */
  best: SelectionRow | undefined;
}

/**
 * Fits a Gaussian mixture for every K in `ks` and every covariance type and tabulates BIC
 * (scikit-learn's sign: -2 log L + p log n, lower is better). A fit that fails (a singular
 * covariance, fewer samples than K) is a row with NaN BIC and its `error`, not an exception.
 *
 * @example
 * ```ts
 * import { fromRows, selectByBic } from 'tailor/mixture';
 * const x = fromRows([[0, 0], [0.2, 0.1], [0.1, 0.3], [5, 5], [5.1, 4.9], [4.8, 5.2]]);
 * const { best } = selectByBic(x, { ks: [1, 2], covarianceTypes: ['full', 'diag'] });
 * ```
 */
export function selectByBic(x: DenseMatrix, options: SelectionOptions): SelectionResult {
  requireDenseMatrix(x);
  requireObject(options, 'options');
  requireArray(options.ks, 'options.ks');
  requireArray(options.covarianceTypes, 'options.covarianceTypes');
  const rows: SelectionRow[] = [];
  for (const covarianceType of options.covarianceTypes) {
    for (const k of options.ks) {
      const row = fitOne(x, k, covarianceType, options);
      rows.push(row);
      options.onFit?.(row);
    }
  }
  let best: SelectionRow | undefined;
  for (const row of rows)
    if (Number.isFinite(row.bic) && (best === undefined || row.bic < best.bic)) best = row;
  return { rows, best };
}

function fitOne(
  x: DenseMatrix,
  k: number,
  covarianceType: CovarianceType,
  o: SelectionOptions,
): SelectionRow {
  const warnings: string[] = [];
  const gm = new GaussianMixture({
    nComponents: k,
    covarianceType,
    nInit: o.nInit ?? 1,
    seed: o.seed ?? 0,
    tol: o.tol,
    maxIter: o.maxIter,
    regCovar: o.regCovar,
    initParams: o.initParams,
    onWarning: (m) => warnings.push(m),
  });
  try {
    gm.fit(x);
  } catch (error) {
    if (!(error instanceof SingularCovarianceError || error instanceof MixtureArgumentError)) throw error;
    return {
      k,
      covarianceType,
      bic: NaN,
      aic: NaN,
      logLik: NaN,
      nParameters: NaN,
      nIter: 0,
      converged: false,
      error: error.message,
    };
  }
  const fit = gm.criteria(x);
  return {
    k,
    covarianceType,
    bic: fit.bic,
    aic: fit.aic,
    logLik: fit.logLik,
    nParameters: fit.nParameters,
    nIter: gm.nIter,
    converged: gm.converged,
  };
}

/** A K-by-type table of BIC values; the best cell is starred, failed fits show 'failed'. */
export function formatBicTable(result: SelectionResult): string {
  const types = [...new Set(result.rows.map((r) => r.covarianceType))];
  const ks = [...new Set(result.rows.map((r) => r.k))].sort((a, b) => a - b);
  const width = 14;
  const lines = ['K'.padStart(3) + types.map((t) => t.padStart(width)).join('')];
  for (const k of ks) {
    let line = String(k).padStart(3);
    for (const t of types) {
      const row = result.rows.find((r) => r.k === k && r.covarianceType === t);
      let cell = !row ? '' : Number.isFinite(row.bic) ? row.bic.toFixed(3) : 'failed';
      if (row && row === result.best) cell += '*';
      else if (row && Number.isFinite(row.bic) && !row.converged) cell += '!';
      line += cell.padStart(width);
    }
    lines.push(line);
  }
  if (result.best) {
    lines.push(
      '',
      `best (lowest BIC): K = ${result.best.k}, covariance ${result.best.covarianceType}, BIC ${result.best.bic.toFixed(3)}` +
        ` (log-likelihood ${result.best.logLik.toFixed(3)}, ${result.best.nParameters} parameters)`,
    );
  }
  if (result.rows.some((r) => Number.isFinite(r.bic) && !r.converged && r !== result.best)) {
    lines.push("'!': that fit did not converge within max-iter");
  }
  for (const r of result.rows.filter((row) => row.error))
    lines.push(`K = ${r.k} ${r.covarianceType}: ${r.error}`);
  return lines.join('\n');
}
