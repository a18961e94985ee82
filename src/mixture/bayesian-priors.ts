// The priors of the variational Gaussian mixture: checked when given, derived from the data
// otherwise, as scikit-learn 1.2's BayesianGaussianMixture._check_parameters does.
import { choleskyLower, type DenseMatrix } from './linalg.js';
import type { CovarianceType } from './gaussian-params.js';
import { MixtureArgumentError } from './errors.js';

function numbers(value: unknown, name: string): Float64Array {
  const out: number[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new MixtureArgumentError(`${name} holds ${v}, not a finite number`);
      out.push(v);
    } else if (v !== null && typeof v === 'object' && 'length' in v)
      for (const e of Array.from(v as ArrayLike<unknown>)) walk(e);
    else throw new MixtureArgumentError(`${name} must hold numbers, found ${String(v)}`);
  };
  walk(value);
  return Float64Array.from(out);
}

/** The prior mean: `given` (d finite values) or the data's column means. */
export function meansPrior(x: DenseMatrix, given?: ArrayLike<number>): Float64Array {
  const { rows: n, cols: d, data } = x;
  if (given !== undefined) {
    const m = numbers(given, 'meanPrior');
    if (m.length !== d)
      throw new MixtureArgumentError(`meanPrior has ${m.length} values, the data ${d} columns`);
    return m;
  }
  const mean = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) mean[j]! += data[i * d + j]!;
  for (let j = 0; j < d; j++) mean[j]! /= n;
  return mean;
}

/**
 * The default Wishart prior covariance: the data's covariance with ddof 1 (full, tied), its
 * diagonal (diag), or the mean of the diagonal (spherical), as scikit-learn's np.cov / np.var.
 */
export function covariancePriorFromData(x: DenseMatrix, type: CovarianceType): Float64Array {
  const { rows: n, cols: d, data } = x;
  const mean = meansPrior(x);
  const dense = type === 'full' || type === 'tied';
  const out = new Float64Array(dense ? d * d : d);
  for (let i = 0; i < n; i++)
    for (let a = 0; a < d; a++) {
      const da = data[i * d + a]! - mean[a]!;
      if (dense) for (let b = 0; b < d; b++) out[a * d + b]! += da * (data[i * d + b]! - mean[b]!);
      else out[a]! += da * da;
    }
  for (let e = 0; e < out.length; e++) out[e]! /= n - 1;
  if (type !== 'spherical') return out;
  let total = 0;
  for (let j = 0; j < d; j++) total += out[j]!;
  return Float64Array.of(total / d);
}

/** A given prior covariance in the covariance type's shape: symmetric positive definite, or positive. */
export function checkCovariancePrior(value: unknown, type: CovarianceType, d: number): Float64Array {
  const v = numbers(value, 'covariancePrior');
  const size = type === 'full' || type === 'tied' ? d * d : type === 'diag' ? d : 1;
  if (v.length !== size)
    throw new MixtureArgumentError(
      `covariancePrior for '${type}' covariances needs ${type === 'spherical' ? 'one number' : type === 'diag' ? `${d} values` : `${d}x${d} values`}, got ${v.length}`,
    );
  if (type === 'full' || type === 'tied') {
    for (let a = 0; a < d; a++)
      for (let b = 0; b < a; b++)
        if (Math.abs(v[a * d + b]! - v[b * d + a]!) > 1e-10 * Math.max(1, Math.abs(v[a * d + b]!)))
          throw new MixtureArgumentError(
            `covariancePrior is not symmetric (entries ${a},${b} and ${b},${a})`,
          );
    if (choleskyLower(v, 0, d, new Float64Array(d * d), 0) >= 0)
      throw new MixtureArgumentError('covariancePrior is not positive definite');
    return v;
  }
  v.forEach((e, i) => {
    if (!(e > 0)) throw new MixtureArgumentError(`covariancePrior[${i}] = ${e} must be positive`);
  });
  return v;
}
