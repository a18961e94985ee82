// Standard errors from the observed information: the Hessian of the total log-likelihood by
// central differences in the natural parameters (alpha, mu, sigmaB2, sigmaEps2, phi, gamma_2..K),
// inverted by Cholesky. The log-likelihood is cheap (O(N K) once the correlation statistics are
// cached), so the O(P^2) evaluations cost milliseconds.
import type { SubgroupData } from './data.js';
import { inverseSpdBySolves } from '../linalg.js';
import { type SubgroupParams, eStep } from './model.js';
import { type Correlation, type SubjectStats, computeStats } from './stats.js';

/** Standard errors of the estimates (null where they cannot be computed). */
export interface StandardErrors {
  alpha: (number | null)[];
  mu: (number | null)[];
  sigmaB2: number | null;
  sigmaEps2: number | null;
  phi: number | null;
  /** K x q; row 0 (the reference class) is null. */
  gamma: (number | null)[][];
  /** Parameter names in the order of `covariance`. */
  names: string[];
  /** Inverse observed information (row-major), or null when it is not positive definite. */
  covariance: number[] | null;
  warnings: string[];
}

function pack(params: SubgroupParams, K: number, q: number, ar1: boolean): Float64Array {
  const values = [...params.alpha, ...params.mu, params.sigmaB2, params.sigmaEps2];
  if (ar1) values.push(params.phi);
  for (let k = 1; k < K; k++) for (let j = 0; j < q; j++) values.push(params.gamma[k * q + j]!);
  return Float64Array.from(values);
}

function unpack(theta: Float64Array, p: number, K: number, q: number, ar1: boolean): SubgroupParams {
  let o = 0;
  const alpha = theta.slice(o, (o += p));
  const mu = theta.slice(o, (o += K));
  const sigmaB2 = theta[o++]!;
  const sigmaEps2 = theta[o++]!;
  const phi = ar1 ? theta[o++]! : 0;
  const gamma = new Float64Array(K * q);
  for (let k = 1; k < K; k++) for (let j = 0; j < q; j++) gamma[k * q + j] = theta[o++]!;
  return { alpha, mu, sigmaB2, sigmaEps2, phi, gamma };
}

export function parameterNames(data: SubgroupData, K: number, ar1: boolean): string[] {
  const names = [...data.fixedNames.map((n) => `alpha[${n}]`)];
  for (let k = 1; k <= K; k++) names.push(`mu[${k}]`);
  names.push('sigmaB2', 'sigmaEps2');
  if (ar1) names.push('phi');
  const u = ['(intercept)', ...data.membershipNames];
  for (let k = 2; k <= K; k++) for (const n of u) names.push(`gamma[${k}][${n}]`);
  return names;
}

export function standardErrors(
  data: SubgroupData,
  params: SubgroupParams,
  K: number,
  correlation: Correlation,
  separation: boolean,
): StandardErrors {
  const ar1 = correlation === 'ar1';
  const { p, q } = data;
  const theta0 = pack(params, K, q, ar1);
  const P = theta0.length;
  const phiIndex = ar1 ? p + K + 2 : -1;
  const statsCache = new Map<number, SubjectStats>();
  const loglik = (theta: Float64Array): number => {
    const phi = ar1 ? theta[phiIndex]! : 0;
    let stats = statsCache.get(phi);
    if (!stats) statsCache.set(phi, (stats = computeStats(data, correlation, phi)));
    return eStep(data, stats, unpack(theta, p, K, q, ar1), K).logLik;
  };
  const h = new Float64Array(P);
  for (let j = 0; j < P; j++) {
    h[j] = 1e-4 * Math.max(1, Math.abs(theta0[j]!));
    // Variances stay positive and phi inside (-1, 1).
    if (j === p + K || j === p + K + 1) h[j] = Math.min(h[j]!, 0.25 * theta0[j]!);
    if (j === phiIndex) h[j] = Math.min(1e-4, 0.25 * (1 - Math.abs(theta0[j]!)));
  }
  const f0 = loglik(theta0);
  const at = (j: number, sj: number, k: number, sk: number): number => {
    const theta = Float64Array.from(theta0);
    theta[j] = theta[j]! + sj * h[j]!;
    if (k >= 0) theta[k] = theta[k]! + sk * h[k]!;
    return loglik(theta);
  };
  const info = new Float64Array(P * P);
  for (let j = 0; j < P; j++) {
    info[j * P + j] = -(at(j, 1, -1, 0) - 2 * f0 + at(j, -1, -1, 0)) / (h[j]! * h[j]!);
    for (let k = 0; k < j; k++) {
      const value =
        -(at(j, 1, k, 1) - at(j, 1, k, -1) - at(j, -1, k, 1) + at(j, -1, k, -1)) / (4 * h[j]! * h[k]!);
      info[j * P + k] = value;
      info[k * P + j] = value;
    }
  }
  const warnings: string[] = [];
  const gammaStart = p + K + 2 + (ar1 ? 1 : 0);
  // Under separation the gamma block is (numerically) singular: report the other parameters from
  // their own block, which treats gamma as known.
  const keep = Array.from({ length: P }, (_, j) => j).filter((j) => !(separation && j >= gammaStart));
  const n = keep.length;
  const sub = new Float64Array(n * n);
  keep.forEach((j, a) => keep.forEach((k, b) => (sub[a * n + b] = info[j * P + k]!)));
  const inv = inverseSpdBySolves(sub, n);
  const se = new Array<number | null>(P).fill(null);
  let covariance: number[] | null = null;
  if (inv) {
    keep.forEach((j, a) => (se[j] = Math.sqrt(inv[a * n + a]!)));
    if (!separation) covariance = Array.from(inv);
  } else {
    warnings.push(
      'the observed information matrix is not positive definite (a flat or boundary likelihood): standard errors ' +
        'are not reported; the fit may be at a saddle point or a class may be redundant',
    );
  }
  let o = 0;
  const alpha = se.slice(o, (o += p));
  const mu = se.slice(o, (o += K));
  const sigmaB2 = se[o++]!;
  const sigmaEps2 = se[o++]!;
  const phi = ar1 ? se[o++]! : null;
  const gamma: (number | null)[][] = [new Array<number | null>(q).fill(null)];
  for (let k = 1; k < K; k++) gamma.push(se.slice(o + (k - 1) * q, o + k * q));
  return {
    alpha,
    mu,
    sigmaB2,
    sigmaEps2,
    phi,
    gamma,
    names: separation ? keep.map((j) => parameterNames(data, K, ar1)[j]!) : parameterNames(data, K, ar1),
    covariance,
    warnings,
  };
}
