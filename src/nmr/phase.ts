// Automatic zero- and first-order phasing by the ACME criterion (Chen et al., J. Magn. Reson. 158,
// 2002): entropy of the first derivative of the real part plus a penalty on negative intensity.
import { nelderMead } from './optimize.js';

export interface AutoPhaseOptions {
  /** Weight of the negative-intensity penalty (spectrum scaled to unit maximum magnitude). */
  gamma?: number;
  /** Search the first-order phase too (default true). */
  firstOrder?: boolean;
}

/** ACME objective of the real part after phasing by (p0, p1) degrees. */
export function acmeScore(re: Float64Array, im: Float64Array, p0: number, p1: number, gamma: number): number {
  const n = re.length;
  let sumAbsDeriv = 0;
  let prev = 0;
  const real = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = (-(p0 + (p1 * i) / n) * Math.PI) / 180;
    real[i] = re[i]! * Math.cos(a) - im[i]! * Math.sin(a);
  }
  for (let i = 1; i < n; i++) sumAbsDeriv += Math.abs(real[i]! - real[i - 1]!);
  let entropy = 0;
  let negative = 0;
  for (let i = 0; i < n; i++) {
    if (i > 0) {
      const h = Math.abs(real[i]! - prev) / (sumAbsDeriv || 1);
      if (h > 0) entropy -= h * Math.log(h);
    }
    prev = real[i]!;
    if (real[i]! < 0) negative += real[i]! * real[i]!;
  }
  return entropy + gamma * negative;
}

/** Finds (p0, p1) in degrees: a p0 grid at p1 = 0, then a simplex refinement of both. */
export function autoPhase(
  re: Float64Array,
  im: Float64Array,
  options: AutoPhaseOptions = {},
): { p0: number; p1: number } {
  let maxMag = 0;
  for (let i = 0; i < re.length; i++) maxMag = Math.max(maxMag, Math.hypot(re[i]!, im[i]!));
  const scale = maxMag > 0 ? 1 / maxMag : 1;
  const r = re.map((v) => v * scale);
  const m = im.map((v) => v * scale);
  const gamma = options.gamma ?? 1000;
  let best = { p0: 0, score: Infinity };
  for (let p0 = -180; p0 < 180; p0 += 10) {
    const s = acmeScore(r, m, p0, 0, gamma);
    if (s < best.score) best = { p0, score: s };
  }
  const firstOrder = options.firstOrder ?? true;
  const x = firstOrder
    ? nelderMead(([a, b]) => acmeScore(r, m, a!, b!, gamma), [best.p0, 0], [10, 30], 200)
    : nelderMead(([a]) => acmeScore(r, m, a!, 0, gamma), [best.p0], [10], 100);
  const p0 = ((((x[0]! + 180) % 360) + 360) % 360) - 180;
  return { p0, p1: firstOrder ? x[1]! : 0 };
}
