// The dense-algebra check of bench/gmm.ts: the full-covariance log-density kernel as tailor runs
// it (plain Float64Array loops) against the same product through ml-matrix, timed and compared,
// and the median both this and the fit timings report. Apart from gmm.ts, which times whole fits
// against scikit-learn, because it needs neither the Python worker nor the command line.
import { Matrix } from 'ml-matrix';
import { GaussianMixture } from '../../src/mixture/gaussian.js';
import { estimateWeightedLogGaussianProb } from '../../src/mixture/gaussian-density.js';
import { kmeans } from '../../src/mixture/kmeans.js';
import type { DenseMatrix } from '../../src/mixture/linalg.js';
import { Rng } from '../../src/util/rng.js';

export function linalgComparison(x: DenseMatrix): { plainMs: number; mlMatrixMs: number; maxDiff: number } {
  const k = 5;
  const d = x.cols;
  const gm = new GaussianMixture({
    nComponents: k,
    initLabels: kmeans(x, k, new Rng(1)).labels,
    maxIter: 2,
    onWarning: () => {},
  }).fit(x);
  const logW = gm.weights.map(Math.log);
  const plain = () => estimateWeightedLogGaussianProb(x, gm.means, gm.precisionsCholesky, logW, 'full');
  const X = new Matrix(x.rows, d);
  for (let i = 0; i < x.rows; i++) for (let j = 0; j < d; j++) X.set(i, j, x.data[i * d + j]!);
  const withMlMatrix = () => {
    const out = new Float64Array(x.rows * k);
    for (let c = 0; c < k; c++) {
      const a = new Matrix(d, d);
      let logDet = 0;
      for (let r = 0; r < d; r++) {
        for (let s = 0; s < d; s++) a.set(r, s, gm.precisionsCholesky[c * d * d + r * d + s]!);
        logDet += Math.log(a.get(r, r));
      }
      const mu = new Matrix([Array.from(gm.means.subarray(c * d, c * d + d))]);
      const y = X.mmul(a).subRowVector(mu.mmul(a).getRow(0));
      const sq = y.mul(y).sum('row');
      const constant = logW[c]! - 0.5 * d * Math.log(2 * Math.PI) + logDet;
      for (let i = 0; i < x.rows; i++) out[i * k + c] = constant - 0.5 * sq[i]!;
    }
    return out;
  };
  const a = plain();
  const b = withMlMatrix();
  let maxDiff = 0;
  for (let e = 0; e < a.length; e++) maxDiff = Math.max(maxDiff, Math.abs(a[e]! - b[e]!));
  const time = (f: () => unknown) => {
    const t: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      f();
      t.push(performance.now() - t0);
    }
    return median(t);
  };
  return { plainMs: time(plain), mlMatrixMs: time(withMlMatrix), maxDiff };
}

export function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
