// Amplitude rescaling of each spectrum onto the reference (the highest-SNR one) inside the peak
// mask, so that the levels of one sample share one intensity scale before fusion and training.
//  'seed':    s = sum M x_ref x / sum M x^2 (plain least squares of x_ref on x; biased towards 0
//             when x is much noisier than the reference, because the noise adds to sum x^2);
//  'inverse': s = sum M x_ref^2 / sum M x_ref x (regress x on the cleaner reference; unbiased for
//             noise in x);
//  'huber':   'inverse' with iteratively reweighted Huber weights on the residuals, so that peaks
//             whose relative intensity differs (other sequences, saturation) count less.
import { robustStd } from '../stats.js';

/**
 * How the levels of a stack are brought to a common scale: 'seed' (by the scan ratio), 'inverse' (least squares against the reference), 'huber' (robust).
 */
export type RescaleMethod = 'seed' | 'inverse' | 'huber';

/**
 * Noise levels of x and ref (their own units). When given, the noise energy |M| sigma^2 is
 * taken out of the sums of squares, which removes the errors-in-variables bias of both
 * least-squares forms (the noise of the regressor otherwise inflates its sum of squares).
 */
export interface NoiseLevels {
  sigmaX: number;
  sigmaRef: number;
}

export function scaleFactor(
  x: ArrayLike<number>,
  ref: ArrayLike<number>,
  mask: ArrayLike<number>,
  method: RescaleMethod = 'huber',
  noise?: NoiseLevels,
): number {
  let sxr = 0;
  let sxx = 0;
  let srr = 0;
  let count = 0;
  for (let i = 0; i < x.length; i++) {
    if (!mask[i]) continue;
    sxr += x[i]! * ref[i]!;
    sxx += x[i]! * x[i]!;
    srr += ref[i]! * ref[i]!;
    count++;
  }
  if (noise) {
    // Never remove more than 90 % (a mask of pure noise would otherwise give nonsense).
    sxx = Math.max(0.1 * sxx, sxx - count * noise.sigmaX ** 2);
    srr = Math.max(0.1 * srr, srr - count * noise.sigmaRef ** 2);
  }
  if (method === 'seed') return sxx > 0 ? sxr / sxx : 1;
  let s = sxr !== 0 ? srr / sxr : 1;
  if (method === 'inverse') return s;
  // IRLS for b in x ~ b * ref (s = 1/b), Huber constant 1.345 robust sigmas.
  const idx: number[] = [];
  for (let i = 0; i < x.length; i++) if (mask[i]) idx.push(i);
  for (let iter = 0; iter < 20; iter++) {
    const b = 1 / s;
    const res = idx.map((i) => x[i]! - b * ref[i]!);
    const sigma = robustStd(res) || 1e-300;
    let num = 0;
    let den = 0;
    for (let j = 0; j < idx.length; j++) {
      const i = idx[j]!;
      const u = Math.abs(res[j]!) / (1.345 * sigma);
      const w = u <= 1 ? 1 : 1 / u;
      num += w * x[i]! * ref[i]!;
      den += w * (ref[i]! * ref[i]! - (noise ? noise.sigmaRef ** 2 : 0));
    }
    const bNew = den > 0 ? num / den : b;

    const sNew = bNew !== 0 ? 1 / bNew : s;
    if (Math.abs(sNew - s) < 1e-10 * Math.abs(s)) {
      s = sNew;
      break;
    }
    s = sNew;
  }
  return s;
}
