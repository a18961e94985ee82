// The E-step side of a Gaussian mixture's parameters: the precision Cholesky factors of the
// covariances and the weighted log densities, for the four covariance types (scikit-learn 1.2's
// `_compute_precision_cholesky` and `_estimate_log_gaussian_prob`, in the storage and with the
// corrections that gaussian-params.ts describes). Apart from gaussian-params.ts, which keeps the
// types, the counts and the M step (means and covariances from responsibilities).
import type { DenseMatrix } from './linalg.js';
import { choleskyLower, inverseLowerTransposed } from './linalg.js';
import { diagMahalanobisKernel, mahalanobisKernel } from './gaussian-kernels.js';
import { SingularCovarianceError, type CovarianceType } from './gaussian-params.js';

const LOG_2PI = Math.log(2 * Math.PI);

/**
 * Precision Cholesky factors from covariances: full / tied: A = L^{-T} (upper triangular) with
 * L L^T = Sigma; diag / spherical: 1 / sqrt(sigma^2). Throws SingularCovarianceError naming the
 * component when a covariance is not positive definite.
 */
export function computePrecisionCholesky(
  covariances: Float64Array,
  type: CovarianceType,
  k: number,
  d: number,
  regCovar: number,
  nk?: Float64Array,
): Float64Array {
  const out = new Float64Array(covariances.length);
  if (type === 'full' || type === 'tied') {
    const count = type === 'full' ? k : 1;
    const l = new Float64Array(d * d);
    for (let c = 0; c < count; c++) {
      if (choleskyLower(covariances, c * d * d, d, l, 0) >= 0) {
        throw new SingularCovarianceError(
          type,
          type === 'tied' ? -1 : c,
          k,
          regCovar,
          nk && type === 'full' ? nk[c] : undefined,
        );
      }
      inverseLowerTransposed(l, 0, d, out, c * d * d);
    }
    return out;
  }
  const per = type === 'diag' ? d : 1;
  for (let e = 0; e < covariances.length; e++) {
    const v = covariances[e]!;
    if (!(v > 0) || !Number.isFinite(v)) {
      const c = Math.floor(e / per);
      throw new SingularCovarianceError(type, c, k, regCovar, nk ? nk[c] : undefined);
    }
    out[e] = 1 / Math.sqrt(v);
  }
  return out;
}

/**
 * log N(x_i; mu_k, Sigma_k) + logWeights[k] for every sample and component, n x K row-major,
 * written into `buffer` when it has that size (every entry is overwritten).
 */
export function estimateWeightedLogGaussianProb(
  x: DenseMatrix,
  means: Float64Array,
  precisionsChol: Float64Array,
  logWeights: Float64Array,
  type: CovarianceType,
  buffer?: Float64Array,
): Float64Array {
  const { rows: n, cols: d, data } = x;
  const k = logWeights.length;
  const out = buffer?.length === n * k ? buffer : new Float64Array(n * k);
  // Per-component constant: log weight - d/2 log(2 pi) + log|A|.
  const constant = new Float64Array(k);
  for (let c = 0; c < k; c++) {
    let logDet = 0;
    if (type === 'full')
      for (let j = 0; j < d; j++) logDet += Math.log(precisionsChol[c * d * d + j * d + j]!);
    else if (type === 'tied') for (let j = 0; j < d; j++) logDet += Math.log(precisionsChol[j * d + j]!);
    else if (type === 'diag') for (let j = 0; j < d; j++) logDet += Math.log(precisionsChol[c * d + j]!);
    else logDet = d * Math.log(precisionsChol[c]!);
    constant[c] = logWeights[c]! - 0.5 * d * LOG_2PI + logDet;
  }
  if (type === 'full' || type === 'tied') {
    const kernel = mahalanobisKernel(d);
    if (kernel) {
      kernel(data, n, means, precisionsChol, type === 'full' ? d * d : 0, constant, k, out);
      return out;
    }
    const diff = new Float64Array(d);
    const dd = d * d;
    for (let i = 0; i < n; i++) {
      const xo = i * d;
      for (let c = 0; c < k; c++) {
        const mo = c * d;
        for (let j = 0; j < d; j++) diff[j] = data[xo + j]! - means[mo + j]!;
        const ao = type === 'full' ? c * dd : 0;
        // y_j = sum_{l <= j} diff_l A[l][j] (A upper triangular).
        let sq = 0;
        for (let j = 0; j < d; j++) {
          let y = 0;
          for (let l = 0; l <= j; l++) y += diff[l]! * precisionsChol[ao + l * d + j]!;
          sq += y * y;
        }
        out[i * k + c] = constant[c]! - 0.5 * sq;
      }
    }
    return out;
  }
  // diag / spherical: squared precisions.
  const prec = new Float64Array(type === 'diag' ? k * d : k);
  for (let e = 0; e < prec.length; e++) prec[e] = precisionsChol[e]! * precisionsChol[e]!;
  const kernel = diagMahalanobisKernel(d, type === 'spherical');
  if (kernel) {
    kernel(data, n, means, prec, constant, k, out);
    return out;
  }
  for (let i = 0; i < n; i++) {
    const xo = i * d;
    for (let c = 0; c < k; c++) {
      const mo = c * d;
      let sq = 0;
      if (type === 'diag') {
        for (let j = 0; j < d; j++) {
          const t = data[xo + j]! - means[mo + j]!;
          sq += t * t * prec[mo + j]!;
        }
      } else {
        for (let j = 0; j < d; j++) {
          const t = data[xo + j]! - means[mo + j]!;
          sq += t * t;
        }
        sq *= prec[c]!;
      }
      out[i * k + c] = constant[c]! - 0.5 * sq;
    }
  }
  return out;
}
