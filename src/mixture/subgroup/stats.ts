// Per-subject sufficient statistics of the residual correlation R_i (independence, or AR(1) in
// time with corr(e_s, e_t) = phi^|s - t|). Every quadratic form x' R^-1 z of the model is a dot
// product after "whitening" by the AR(1) innovations (z_1 = x_1, z_j = (x_j - rho_j x_{j-1}) /
// sqrt(1 - rho_j^2), rho_j = phi^(t_j - t_{j-1})), so R^-1 is never formed and unbalanced, unequally
// spaced visits cost nothing extra.
import type { SubgroupData } from './data.js';
import { MixtureArgumentError } from '../errors.js';

/** Residual correlation within a subject: none, or AR(1) in time. */
export type Correlation = 'independent' | 'ar1';

export interface SubjectStats {
  phi: number;
  /** 1' R^-1 1 per subject. */
  s: Float64Array;
  /** y' R^-1 y. */
  yy: Float64Array;
  /** 1' R^-1 y. */
  y1: Float64Array;
  /** W' R^-1 y (N x p). */
  Wy: Float64Array;
  /** W' R^-1 1 (N x p). */
  W1: Float64Array;
  /** W' R^-1 W (N x p x p). */
  WW: Float64Array;
  /** log |R_i|. */
  logdetR: Float64Array;
  /** Sum over subjects of W' R^-1 W (p x p). */
  sumWW: Float64Array;
}

/** The open interval of admissible phi: negative phi needs integer time gaps (phi^gap real). */
export function phiRange(data: SubgroupData): [number, number] {
  let integerGaps = true;
  for (let i = 0; i < data.nSubjects; i++) {
    for (let o = data.offsets[i]! + 1; o < data.offsets[i + 1]!; o++) {
      if (!Number.isInteger(data.time[o]! - data.time[o - 1]!)) integerGaps = false;
    }
  }
  return integerGaps ? [-0.995, 0.995] : [0, 0.995];
}

/** Checks that AR(1) is usable: no two visits of a subject at the same time. */
export function checkAr1Times(data: SubgroupData): void {
  for (let i = 0; i < data.nSubjects; i++) {
    for (let o = data.offsets[i]! + 1; o < data.offsets[i + 1]!; o++) {
      if (data.time[o] === data.time[o - 1]) {
        throw new MixtureArgumentError(
          `subject '${data.ids[i]}' has two visits at time ${data.time[o]}: AR(1) correlation needs distinct times ` +
            '(use --cor independent or fix the time column)',
        );
      }
    }
  }
}

export function computeStats(data: SubgroupData, correlation: Correlation, phi: number): SubjectStats {
  const { nSubjects: N, p } = data;
  const ar1 = correlation === 'ar1' && phi !== 0;
  const stats: SubjectStats = {
    phi: correlation === 'ar1' ? phi : 0,
    s: new Float64Array(N),
    yy: new Float64Array(N),
    y1: new Float64Array(N),
    Wy: new Float64Array(N * p),
    W1: new Float64Array(N * p),
    WW: new Float64Array(N * p * p),
    logdetR: new Float64Array(N),
    sumWW: new Float64Array(p * p),
  };
  const zw = new Float64Array(p);
  const prevW = new Float64Array(p);
  for (let i = 0; i < N; i++) {
    let s = 0;
    let yy = 0;
    let y1 = 0;
    let logdet = 0;
    let prevY = 0;
    for (let o = data.offsets[i]!; o < data.offsets[i + 1]!; o++) {
      const yo = data.y[o]!;
      let zy = yo;
      let z1 = 1;
      for (let c = 0; c < p; c++) zw[c] = data.W[o * p + c]!;
      if (ar1 && o > data.offsets[i]!) {
        const rho = Math.pow(phi, data.time[o]! - data.time[o - 1]!);
        const scale = 1 / Math.sqrt(1 - rho * rho);
        logdet += Math.log(1 - rho * rho);
        zy = (yo - rho * prevY) * scale;
        z1 = (1 - rho) * scale;
        for (let c = 0; c < p; c++) zw[c] = (data.W[o * p + c]! - rho * prevW[c]!) * scale;
      }
      prevY = yo;
      for (let c = 0; c < p; c++) prevW[c] = data.W[o * p + c]!;
      s += z1 * z1;
      yy += zy * zy;
      y1 += z1 * zy;
      for (let c = 0; c < p; c++) {
        stats.Wy[i * p + c] += zw[c]! * zy;
        stats.W1[i * p + c] += zw[c]! * z1;
        for (let d = 0; d < p; d++) stats.WW[i * p * p + c * p + d] += zw[c]! * zw[d]!;
      }
    }
    stats.s[i] = s;
    stats.yy[i] = yy;
    stats.y1[i] = y1;
    stats.logdetR[i] = logdet;
    for (let c = 0; c < p * p; c++) stats.sumWW[c] += stats.WW[i * p * p + c]!;
  }
  return stats;
}
