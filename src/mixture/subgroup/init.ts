// Starting values. The deterministic theta_0 follows the recipe of the reference cases (so the EM
// trace can be compared with theirs): OLS of y on [1, W]; subject means of y - W alpha split at
// their K-quantiles; mu_k = group means; sigmaEps2 = mean within-subject variance of the OLS
// residuals; sigmaB2 = pooled within-group variance of the subject means - sigmaEps2 / t (floored at
// 0.1 sigmaEps2); gamma = 0; phi = 0.3 for AR(1). Random starts replace the quantile split by
// k-means++-style seeds among the subject means (nearest-seed groups) and draw phi.
import type { Rng } from '../../util/rng.js';
import { cholSolve, cholesky } from '../linalg.js';
import type { SubgroupData } from './data.js';
import type { SubgroupParams } from './model.js';
import { CollinearityError } from './em.js';
import type { Correlation } from './stats.js';

interface Baseline {
  alpha: Float64Array;
  subjectMeans: Float64Array;
  sigmaEps2: number;
  meanVisits: number;
}

/** OLS of y on [1, W] and the per-subject summaries every start needs. */
function baseline(data: SubgroupData): Baseline {
  const { p, nObs, nSubjects: N } = data;
  const d = p + 1;
  const xtx = new Float64Array(d * d);
  const xty = new Float64Array(d);
  const row = new Float64Array(d);
  for (let o = 0; o < nObs; o++) {
    row[0] = 1;
    for (let c = 0; c < p; c++) row[c + 1] = data.W[o * p + c]!;
    for (let a = 0; a < d; a++) {
      xty[a] += row[a]! * data.y[o]!;
      for (let b = 0; b < d; b++) xtx[a * d + b] += row[a]! * row[b]!;
    }
  }
  const L = cholesky(xtx, d);
  if (!L) throw CollinearityError.fixedEffects();
  const beta = cholSolve(L, d, xty);
  const alpha = beta.slice(1);
  const subjectMeans = new Float64Array(N);
  let varSum = 0;
  let varCount = 0;
  for (let i = 0; i < N; i++) {
    const start = data.offsets[i]!;
    const end = data.offsets[i + 1]!;
    const t = end - start;
    let sum = 0;
    for (let o = start; o < end; o++) {
      let fitted = 0;
      for (let c = 0; c < p; c++) fitted += data.W[o * p + c]! * alpha[c]!;
      sum += data.y[o]! - fitted;
    }
    const mean = sum / t;
    subjectMeans[i] = mean;
    if (t > 1) {
      // The OLS residuals differ from y - W alpha by the constant beta_0, which the variance ignores.
      let ss = 0;
      for (let o = start; o < end; o++) {
        let fitted = 0;
        for (let c = 0; c < p; c++) fitted += data.W[o * p + c]! * alpha[c]!;
        ss += (data.y[o]! - fitted - mean) ** 2;
      }
      varSum += ss / (t - 1);
      varCount++;
    }
  }
  const sigmaEps2 = varCount > 0 ? varSum / varCount : 1;
  return { alpha, subjectMeans, sigmaEps2: sigmaEps2 > 0 ? sigmaEps2 : 1, meanVisits: nObs / N };
}

/** numpy's default (linear) quantile of sorted values. */
function quantileSorted(sorted: Float64Array, prob: number): number {
  const h = (sorted.length - 1) * prob;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

function paramsFromLabels(
  data: SubgroupData,
  base: Baseline,
  labels: Int32Array,
  K: number,
  correlation: Correlation,
  phi: number,
): SubgroupParams {
  const N = data.nSubjects;
  const sums = new Float64Array(K);
  const counts = new Float64Array(K);
  for (let i = 0; i < N; i++) {
    sums[labels[i]!] += base.subjectMeans[i]!;
    counts[labels[i]!]++;
  }
  const overall = base.subjectMeans.reduce((a, b) => a + b, 0) / N;
  const mu = new Float64Array(K);
  for (let k = 0; k < K; k++) mu[k] = counts[k]! > 0 ? sums[k]! / counts[k]! : overall;
  let ss = 0;
  for (let i = 0; i < N; i++) ss += (base.subjectMeans[i]! - mu[labels[i]!]!) ** 2;
  const pooled = N > K ? ss / (N - K) : ss / Math.max(N, 1);
  const sigmaB2 = Math.max(pooled - base.sigmaEps2 / base.meanVisits, 0.1 * base.sigmaEps2);
  return {
    alpha: Float64Array.from(base.alpha),
    mu,
    sigmaB2,
    sigmaEps2: base.sigmaEps2,
    phi: correlation === 'ar1' ? phi : 0,
    gamma: new Float64Array(K * data.q),
  };
}

/** The deterministic theta_0 of the reference cases (K-quantile split of the subject means). */
export function quantileStart(data: SubgroupData, K: number, correlation: Correlation): SubgroupParams {
  const base = baseline(data);
  const sorted = Float64Array.from(base.subjectMeans).sort();
  const cuts = Array.from({ length: K - 1 }, (_, j) => quantileSorted(sorted, (j + 1) / K));
  const labels = new Int32Array(data.nSubjects);
  for (let i = 0; i < data.nSubjects; i++) {
    let k = 0;
    // searchsorted(cuts, x, side='right')
    while (k < cuts.length && cuts[k]! <= base.subjectMeans[i]!) k++;
    labels[i] = k;
  }
  return paramsFromLabels(data, base, labels, K, correlation, 0.3);
}

/** A random start: k-means++ seeds among the subject means, nearest-seed groups, random phi. */
export function randomStart(
  data: SubgroupData,
  K: number,
  correlation: Correlation,
  rng: Rng,
): SubgroupParams {
  const base = baseline(data);
  const N = data.nSubjects;
  const x = base.subjectMeans;
  const seeds = [x[rng.int(N)]!];
  const d2 = new Float64Array(N);
  while (seeds.length < K) {
    let total = 0;
    for (let i = 0; i < N; i++) {
      let best = Infinity;
      for (const s of seeds) best = Math.min(best, (x[i]! - s) ** 2);
      d2[i] = best;
      total += best;
    }
    let pick = rng.int(N);
    if (total > 0) {
      let u = rng.uniform() * total;
      for (let i = 0; i < N; i++) {
        u -= d2[i]!;
        if (u <= 0) {
          pick = i;
          break;
        }
      }
    }
    seeds.push(x[pick]!);
  }
  const labels = new Int32Array(N);
  for (let i = 0; i < N; i++) {
    let best = 0;
    for (let k = 1; k < K; k++) if (Math.abs(x[i]! - seeds[k]!) < Math.abs(x[i]! - seeds[best]!)) best = k;
    labels[i] = best;
  }
  return paramsFromLabels(data, base, labels, K, correlation, 0.8 * rng.uniform());
}
