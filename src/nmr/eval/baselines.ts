// Classical denoisers the learned model is compared with: raw,
// Savitzky-Golay (window and order tuned on validation data), the exponential matched filter,
// wavelet shrinkage with cycle spinning, and inverse-variance fusion of the aligned stack.
import { fftInPlace, nextPowerOfTwo } from '../fft.js';
import { savitzkyGolay } from '../pipeline/savgol.js';
import { fwhmAt, pickPeaks } from './peaks.js';
import { median, robustStd } from '../stats.js';
import { waveletDenoise, type WaveletOptions } from './wavelet.js';

/**
 * Convolution with a unit-area Lorentzian of FWHM width points, done as the exponential window
 * exp(-pi * width * |q| / m) on the Fourier transform of the (zero-padded) spectrum. For
 * Lorentzian lines this is the matched filter when width equals the line width.
 */
export function lorentzianSmooth(x: ArrayLike<number>, width: number): Float64Array {
  const n = x.length;
  if (!(width > 0)) return Float64Array.from(x);
  const m = nextPowerOfTwo(2 * n);
  const re = new Float64Array(m);
  const im = new Float64Array(m);
  for (let i = 0; i < n; i++) re[i] = x[i]!;
  // Mirror padding keeps the ends from being pulled towards zero.
  for (let i = n; i < m; i++) re[i] = x[Math.min(n - 1, Math.max(0, 2 * n - 1 - i))]!;
  fftInPlace(re, im);
  for (let k = 0; k < m; k++) {
    const q = k < m / 2 ? k : m - k;
    const w = Math.exp((-Math.PI * width * q) / m);
    re[k]! *= w;
    im[k]! *= w;
  }
  fftInPlace(re, im, true);
  return re.slice(0, n);
}

/**
 * Matched filter whose width is the median FWHM (points) of the ten tallest clear peaks of a lightly
 * smoothed x (one broad hump or a blended multiplet must not set the width).
 */
export function matchedFilter(x: ArrayLike<number>, width?: number): { output: Float64Array; width: number } {
  let w = width;
  if (w === undefined) {
    const smooth = savitzkyGolay(x, 7, 2);
    // Only clear peaks (5 robust sigmas above the median) count; noise bumps are narrow.
    const floor = median(smooth) + 5 * robustStd(smooth);
    const tops = pickPeaks(smooth, floor, 3)
      .sort((a, b) => b.height - a.height)
      .slice(0, 10);
    // Widths are read on x itself: the smoothing would widen the narrowest lines.
    const widths = tops.map((p) => fwhmAt(x, p.index)).filter((v) => Number.isFinite(v) && v > 0);
    w = widths.length ? median(widths) : 2;
  }
  return { output: lorentzianSmooth(x, w), width: w };
}

export function savgolBaseline(x: ArrayLike<number>, window: number, order: number): Float64Array {
  return savitzkyGolay(x, window, order);
}

export function waveletBaseline(x: ArrayLike<number>, options: WaveletOptions = {}): Float64Array {
  return waveletDenoise(x, options);
}

/** Windows and orders searched on validation data; (5, 4) is the identity, so 'no smoothing' can win. */
export const SAVGOL_GRID: { window: number; order: number }[] = [5, 7, 9, 11, 15, 21, 31, 41].flatMap(
  (window) => [2, 4].map((order) => ({ window, order })),
);
