// Peak mask M and baseline mask B of one sample. Each (rescaled) spectrum is smoothed with a
// Savitzky-Golay filter, the pointwise maximum over the stack is thresholded at
// median + alpha * MAD, M is dilated to cover the peak skirts, and B is the complement of M eroded
// so that peak feet do not leak into the baseline.
import { mad, median } from '../stats.js';
import { savitzkyGolay } from './savgol.js';

export interface MaskOptions {
  /** Savitzky-Golay window and order of the smoothing (default 11, 3). */
  sgWindow?: number;
  sgOrder?: number;
  /** Threshold multiplier alpha (typically 3 to 5; default 4). */
  alpha?: number;
  /** Scale the MAD by 1.4826 (a Gaussian sigma) before multiplying by alpha (default true). */
  scaleMad?: boolean;
  /** Points added on both sides of every peak region (default 8). */
  dilate?: number;
  /** Points removed from the baseline next to every peak region (default 2). */
  erode?: number;
}

export interface Masks {
  peak: Uint8Array;
  baseline: Uint8Array;
  threshold: number;
  /** The pointwise maximum of the smoothed spectra that was thresholded. */
  envelope: Float64Array;
}

/** Morphological dilation of a binary mask by r points on both sides. */
export function dilate(mask: Uint8Array, r: number): Uint8Array {
  const n = mask.length;
  const out = new Uint8Array(n);
  if (r <= 0) return Uint8Array.from(mask);
  // Distance to the last set point, scanning both ways.
  let last = -Infinity;
  for (let i = 0; i < n; i++) {
    if (mask[i]) last = i;
    if (i - last <= r) out[i] = 1;
  }
  last = Infinity;
  for (let i = n - 1; i >= 0; i--) {
    if (mask[i]) last = i;
    if (last - i <= r) out[i] = 1;
  }
  return out;
}

/** Morphological erosion: a point stays set only if all points within r are set. */
export function erode(mask: Uint8Array, r: number): Uint8Array {
  const inv = mask.map((v) => (v ? 0 : 1));
  return dilate(inv, r).map((v) => (v ? 0 : 1));
}

/** The baseline that goes with a known peak mask: its complement eroded by 2 points. */
export function baselineOfPeakMask(peak: Uint8Array): Uint8Array {
  return erode(
    peak.map((v) => (v ? 0 : 1)),
    2,
  );
}

/** The runs of set points of a mask, as inclusive ranges. */
export function maskRegions(mask: ArrayLike<number>): { from: number; to: number }[] {
  const regions: { from: number; to: number }[] = [];
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    let j = i;
    while (j + 1 < mask.length && mask[j + 1]) j++;
    regions.push({ from: i, to: j });
    i = j;
  }
  return regions;
}

export function pointwiseMax(stack: ArrayLike<number>[]): Float64Array {
  const n = stack[0]!.length;
  const out = new Float64Array(n).fill(-Infinity);
  for (const x of stack) for (let i = 0; i < n; i++) if (x[i]! > out[i]!) out[i] = x[i]!;
  return out;
}

/** Peak and baseline masks of a stack of aligned, rescaled spectra (a single spectrum works too). */
export function peakBaselineMasks(stack: ArrayLike<number>[], options: MaskOptions = {}): Masks {
  const window = options.sgWindow ?? 11;
  const order = options.sgOrder ?? 3;
  const smoothed = stack.map((x) => (window >= 3 ? savitzkyGolay(x, window, order) : Float64Array.from(x)));
  const envelope = pointwiseMax(smoothed);
  const spread = mad(envelope) * (options.scaleMad === false ? 1 : 1.4826);
  const threshold = median(envelope) + (options.alpha ?? 4) * spread;
  const raw = envelope.map((v) => (v >= threshold ? 1 : 0)) as unknown as Uint8Array;
  const peak = dilate(Uint8Array.from(raw), options.dilate ?? 8);
  const baseline = erode(
    peak.map((v) => (v ? 0 : 1)),
    options.erode ?? 2,
  );
  return { peak, baseline, threshold, envelope };
}
