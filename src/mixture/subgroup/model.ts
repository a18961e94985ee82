// The latent-subgroup linear mixed model and its E step.
//   y_i | (delta_i = k, b_i) = W_i alpha + 1 b_i + eps_i,  b_i ~ N(mu_k, sigmaB2),
//   eps_i ~ N(0, sigmaEps2 R_i(phi)),  P(delta_i = k | U_i) = softmax_k(U_i gamma_k), gamma_1 = 0.
// Marginally y_i | k ~ N(W_i alpha + mu_k 1, Sigma_i) with Sigma_i = sigmaB2 J + sigmaEps2 R_i; by
// Woodbury, with s = 1'R^-1 1, a = 1'R^-1 e and c = sigmaB2 / (sigmaEps2 + sigmaB2 s):
//   e' Sigma^-1 e = (e'R^-1 e - c a^2) / sigmaEps2,
//   log|Sigma| = t log sigmaEps2 + log|R| + log(1 + sigmaB2 s / sigmaEps2).
import type { SubgroupData } from './data.js';
import type { SubjectStats } from './stats.js';

/** The parameters of the latent-subgroup model (see the model at the top of this file). */
export interface SubgroupParams {
  /** Fixed effects (length p). */
  alpha: Float64Array;
  /** Class means of the random intercept (length K). */
  mu: Float64Array;
  sigmaB2: number;
  sigmaEps2: number;
  /** AR(1) parameter; 0 under independence. */
  phi: number;
  /** K x q membership coefficients, row-major; row 0 (class 1) is the zero reference. */
  gamma: Float64Array;
}

export interface EStep {
  logLik: number;
  /** Posterior class probabilities P_ik (N x K). */
  resp: Float64Array;
  /** Posterior means m_ik of b_i given class k (N x K). */
  m: Float64Array;
  /** Posterior variance v_i of b_i given any class. */
  v: Float64Array;
  /** Per-subject log-likelihood contributions. */
  perSubject: Float64Array;
}

const LOG_2PI = Math.log(2 * Math.PI);

export function cloneParams(params: SubgroupParams): SubgroupParams {
  return {
    alpha: Float64Array.from(params.alpha),
    mu: Float64Array.from(params.mu),
    sigmaB2: params.sigmaB2,
    sigmaEps2: params.sigmaEps2,
    phi: params.phi,
    gamma: Float64Array.from(params.gamma),
  };
}

/** a_i = 1'R^-1 r_i and qf_i = r_i'R^-1 r_i for r_i = y_i - W_i alpha. */
export function residualForms(
  stats: SubjectStats,
  i: number,
  alpha: Float64Array,
): { a: number; qf: number } {
  const p = alpha.length;
  let a = stats.y1[i]!;
  let qf = stats.yy[i]!;
  for (let c = 0; c < p; c++) {
    const ac = alpha[c]!;
    a -= stats.W1[i * p + c]! * ac;
    qf -= 2 * ac * stats.Wy[i * p + c]!;
    let row = 0;
    for (let d = 0; d < p; d++) row += stats.WW[i * p * p + c * p + d]! * alpha[d]!;
    qf += ac * row;
  }
  return { a, qf };
}

/** The membership logits eta_k = U_i gamma_k of subject i for all k into out[0..K); returns their maximum. */
export function membershipLogits(
  data: SubgroupData,
  i: number,
  gamma: Float64Array,
  K: number,
  out: Float64Array,
): number {
  const q = data.q;
  let max = -Infinity;
  for (let k = 0; k < K; k++) {
    let eta = 0;
    for (let j = 0; j < q; j++) eta += data.U[i * q + j]! * gamma[k * q + j]!;
    out[k] = eta;
    if (eta > max) max = eta;
  }
  return max;
}

/** log P(delta_i = k | U_i) for all k into out[0..K). */
export function logPriors(
  data: SubgroupData,
  i: number,
  gamma: Float64Array,
  K: number,
  out: Float64Array,
): void {
  const max = membershipLogits(data, i, gamma, K, out);
  let sum = 0;
  for (let k = 0; k < K; k++) sum += Math.exp(out[k]! - max);
  const norm = max + Math.log(sum);
  for (let k = 0; k < K; k++) out[k] = out[k]! - norm;
}

export function eStep(data: SubgroupData, stats: SubjectStats, params: SubgroupParams, K: number): EStep {
  const N = data.nSubjects;
  const { alpha, mu, sigmaB2: sb2, sigmaEps2: se2, gamma } = params;
  const resp = new Float64Array(N * K);
  const m = new Float64Array(N * K);
  const v = new Float64Array(N);
  const perSubject = new Float64Array(N);
  const logPrior = new Float64Array(K);
  let logLik = 0;
  for (let i = 0; i < N; i++) {
    const t = data.offsets[i + 1]! - data.offsets[i]!;
    const s = stats.s[i]!;
    const { a, qf } = residualForms(stats, i, alpha);
    const c = sb2 / (se2 + sb2 * s);
    const logdet = t * Math.log(se2) + stats.logdetR[i]! + Math.log1p((sb2 * s) / se2);
    const vi = 1 / (1 / sb2 + s / se2);
    v[i] = vi;
    logPriors(data, i, gamma, K, logPrior);
    let max = -Infinity;
    for (let k = 0; k < K; k++) {
      const mk = mu[k]!;
      const ak = a - mk * s;
      const qk = qf - 2 * mk * a + mk * mk * s;
      const logf = -0.5 * (t * LOG_2PI + logdet + (qk - c * ak * ak) / se2);
      const lj = logPrior[k]! + logf;
      resp[i * K + k] = lj;
      if (lj > max) max = lj;
      m[i * K + k] = vi * (mk / sb2 + a / se2);
    }
    let sum = 0;
    for (let k = 0; k < K; k++) sum += Math.exp(resp[i * K + k]! - max);
    const li = max + Math.log(sum);
    for (let k = 0; k < K; k++) resp[i * K + k] = Math.exp(resp[i * K + k]! - li);
    perSubject[i] = li;
    logLik += li;
  }
  return { logLik, resp, m, v, perSubject };
}

/** Number of free parameters: alpha, mu, two variances, phi (AR(1)), gamma_2..gamma_K. */
export function parameterCount(p: number, q: number, K: number, ar1: boolean): number {
  return p + K + 2 + (ar1 ? 1 : 0) + (K - 1) * q;
}
