// Wavelet shrinkage with cycle spinning (Coifman & Donoho 1995): periodic orthogonal DWT
// (Haar or Daubechies db4), soft thresholding of the detail coefficients at the universal
// threshold sigma * sqrt(2 ln n) with sigma from the finest level's MAD, averaged over circular
// shifts of the input to remove the shift dependence of the decimated transform.
import { median } from '../stats.js';

const DB4 = [
  0.23037781330885523, 0.7148465705525415, 0.6308807679295904, -0.02798376941698385, -0.18703481171888114,
  0.030841381835986965, 0.032883011666982945, -0.010597401784997278,
];
const HAAR = [Math.SQRT1_2, Math.SQRT1_2];

export type WaveletName = 'haar' | 'db4';

export function lowPass(name: WaveletName): number[] {
  return name === 'haar' ? HAAR : DB4;
}

function highPass(h: number[]): number[] {
  const L = h.length;
  return h.map((_, k) => (k % 2 === 0 ? 1 : -1) * h[L - 1 - k]!);
}

/** One analysis step of the periodic DWT (length must be even). */
export function dwtStep(x: Float64Array, h: number[]): { a: Float64Array; d: Float64Array } {
  const n = x.length;
  const g = highPass(h);
  const half = n / 2;
  const a = new Float64Array(half);
  const d = new Float64Array(half);
  const L = h.length;
  for (let i = 0; i < half; i++) {
    let sa = 0;
    let sd = 0;
    const base = 2 * i;
    if (base + L <= n) {
      for (let k = 0; k < L; k++) {
        const v = x[base + k]!;
        sa += h[k]! * v;
        sd += g[k]! * v;
      }
    } else {
      for (let k = 0; k < L; k++) {
        const v = x[(base + k) % n]!;
        sa += h[k]! * v;
        sd += g[k]! * v;
      }
    }
    a[i] = sa;
    d[i] = sd;
  }
  return { a, d };
}

/** Inverse of dwtStep. */
export function idwtStep(a: Float64Array, d: Float64Array, h: number[]): Float64Array {
  const half = a.length;
  const n = 2 * half;
  const g = highPass(h);
  const x = new Float64Array(n);
  const L = h.length;
  for (let i = 0; i < half; i++) {
    const base = 2 * i;
    const ai = a[i]!;
    const di = d[i]!;
    if (base + L <= n) for (let k = 0; k < L; k++) x[base + k]! += h[k]! * ai + g[k]! * di;
    else for (let k = 0; k < L; k++) x[(base + k) % n]! += h[k]! * ai + g[k]! * di;
  }
  return x;
}

export interface WaveletOptions {
  wavelet?: WaveletName;
  levels?: number;
  /** Number of circular shifts averaged, spread evenly over the 2^levels period (1 = none; default 16). */
  shifts?: number;
  /** Multiplier of the universal threshold (default 1). */
  thresholdScale?: number;
  /** Known noise sigma; estimated from the finest details when omitted. */
  sigma?: number;
}

function denoiseOnce(
  x: Float64Array,
  h: number[],
  levels: number,
  threshold: (d1: Float64Array) => number,
): Float64Array {
  const details: Float64Array[] = [];
  let a = x;
  for (let l = 0; l < levels; l++) {
    const s = dwtStep(a, h);
    details.push(s.d);
    a = s.a;
  }
  const t = threshold(details[0]!);
  for (const d of details)
    for (let i = 0; i < d.length; i++) d[i] = Math.sign(d[i]!) * Math.max(0, Math.abs(d[i]!) - t);
  for (let l = levels - 1; l >= 0; l--) a = idwtStep(a, details[l]!, h);
  return a;
}

/** Denoises x; its length is padded (by edge reflection) to a multiple of 2^levels. */
export function waveletDenoise(x: ArrayLike<number>, options: WaveletOptions = {}): Float64Array {
  const h = lowPass(options.wavelet ?? 'db4');
  const n = x.length;
  const levels = options.levels ?? Math.max(1, Math.min(6, Math.floor(Math.log2(n)) - 3));
  const block = 2 ** levels;
  const m = Math.ceil(n / block) * block;
  const padded = new Float64Array(m);
  for (let i = 0; i < m; i++) padded[i] = i < n ? x[i]! : x[Math.max(0, 2 * n - 2 - i)]!;
  const scale = options.thresholdScale ?? 1;
  const universal = Math.sqrt(2 * Math.log(m));
  const threshold = (d1: Float64Array): number => {
    const sigma = options.sigma ?? median(d1.map(Math.abs)) / 0.6745;
    return scale * sigma * universal;
  };
  const shifts = Math.min(block, Math.max(1, options.shifts ?? 16));
  const acc = new Float64Array(m);
  const shifted = new Float64Array(m);
  for (let j = 0; j < shifts; j++) {
    // The decimated transform is periodic in shifts of 2^levels: sample that period evenly.
    const s = Math.round((j * block) / shifts);
    for (let i = 0; i < m; i++) shifted[i] = padded[(i + s) % m]!;
    const y = denoiseOnce(shifted, h, levels, threshold);
    for (let i = 0; i < m; i++) acc[(i + s) % m]! += y[i]! / shifts;
  }
  return acc.slice(0, n);
}
