// Sub-point alignment of the spectra of one sample. A global shift is found by
// cross-correlation or phase correlation (FFT), refined below one point by parabolic fitting or by
// maximizing the band-limited correlation c(d) = sum_k Re(P_k e^{2 pi i k d / m}) exactly; local
// drifts are measured in windows around the strongest (anchor) peaks and interpolated into a
// smooth shift field.
import { fftInPlace, nextPowerOfTwo } from '../fft.js';
import { goldenSection } from '../optimize.js';
import { savitzkyGolay } from './savgol.js';
import { shiftSignal, warp } from './shift.js';

export interface ShiftOptions {
  /** 'xcorr': plain cross-correlation; 'phase': phase correlation (whitened cross-power spectrum). */
  method?: 'xcorr' | 'phase';
  /** 'fourier': band-limited refinement (default); 'parabolic': 3-point parabola; 'none': integer. */
  subpixel?: 'fourier' | 'parabolic' | 'none';
  /** Largest shift searched, in points (default min(64, n/4)). */
  maxShift?: number;
  /**
   * Width (points) of a Lorentzian smoothing applied to both spectra before correlating (as a
   * weight on the cross-power spectrum); it suppresses the noise of low-SNR spectra (default 2).
   */
  smooth?: number;
  /** Below this normalized correlation the estimate is not trusted and 0 is returned (default 0.1). */
  minQuality?: number;
}

function spectrumOf(x: ArrayLike<number>, m: number): { re: Float64Array; im: Float64Array } {
  const re = new Float64Array(m);
  const im = new Float64Array(m);
  let mean = 0;
  for (let i = 0; i < x.length; i++) mean += x[i]!;
  mean /= x.length || 1;
  for (let i = 0; i < x.length; i++) re[i] = x[i]! - mean;
  fftInPlace(re, im);
  return { re, im };
}

/**
 * Shift d (points) such that x(i) ~ ref(i - d); correct x with shiftSignal(x, -d).
 * Returns also the peak correlation normalized to [-1, 1] (xcorr) as a quality measure.
 */
export function estimateShift(
  ref: ArrayLike<number>,
  x: ArrayLike<number>,
  options: ShiftOptions = {},
): { shift: number; quality: number } {
  const n = ref.length;
  if (x.length !== n) throw new RangeError(`estimateShift: lengths differ (${n} vs ${x.length})`);
  const m = nextPowerOfTwo(2 * n);
  const R = spectrumOf(ref, m);
  const X = spectrumOf(x, m);
  const pr = new Float64Array(m);
  const pi = new Float64Array(m);
  let maxMag = 0;
  for (let k = 0; k < m; k++) {
    // conj(R) * X
    pr[k] = R.re[k]! * X.re[k]! + R.im[k]! * X.im[k]!;
    pi[k] = R.re[k]! * X.im[k]! - R.im[k]! * X.re[k]!;
    maxMag = Math.max(maxMag, pr[k]! * pr[k]! + pi[k]! * pi[k]!);
  }
  maxMag = Math.sqrt(maxMag);
  if (options.method === 'phase') {
    const eps = 1e-9 * maxMag;
    for (let k = 0; k < m; k++) {
      const mag = Math.sqrt(pr[k]! * pr[k]! + pi[k]! * pi[k]!) + eps;
      pr[k]! /= mag;
      pi[k]! /= mag;
    }
  }
  const smooth = options.smooth ?? 2;
  // Lorentzian smoothing of both spectra = weight exp(-2 pi w |q| / m) on the cross power, built
  // by a recurrence (one exp per half).
  const weight = new Float64Array(m).fill(1);
  if (smooth > 0) {
    const r = Math.exp((-2 * Math.PI * smooth) / m);
    let w = 1;
    for (let q = 0; q <= m / 2; q++) {
      weight[q] = w;
      if (q > 0) weight[m - q] = w;
      w *= r;
    }
    for (let k = 0; k < m; k++) {
      pr[k]! *= weight[k]!;
      pi[k]! *= weight[k]!;
    }
  }
  const cr = Float64Array.from(pr);
  const ci = Float64Array.from(pi);
  fftInPlace(cr, ci, true);
  const maxShift = Math.min(options.maxShift ?? Math.min(64, Math.floor(n / 4)), n - 1);
  let best = 0;
  let bestValue = -Infinity;
  for (let t = -maxShift; t <= maxShift; t++) {
    const v = cr[(t + m) % m]!;
    if (v > bestValue) {
      bestValue = v;
      best = t;
    }
  }
  let energyR = 0;
  let energyX = 0;
  for (let k = 0; k < m; k++) {
    energyR += (R.re[k]! ** 2 + R.im[k]! ** 2) * weight[k]!;
    energyX += (X.re[k]! ** 2 + X.im[k]! ** 2) * weight[k]!;
  }
  const quality =
    options.method === 'phase' ? bestValue : (bestValue * m) / Math.sqrt(energyR * energyX || 1);
  if (quality < (options.minQuality ?? 0.1)) return { shift: 0, quality };
  const sub = options.subpixel ?? 'fourier';
  if (sub === 'none') return { shift: best, quality };
  if (sub === 'parabolic') {
    const a = cr[(best - 1 + m) % m]!;
    const b = cr[(best + m) % m]!;
    const c = cr[(best + 1 + m) % m]!;
    const denom = a - 2 * b + c;
    return { shift: best + (denom < 0 ? (0.5 * (a - c)) / denom : 0), quality };
  }
  // c(d) = sum_k Re(P_k e^{2 pi i f_k d / m}); the phase factors come from a complex recurrence
  // (re-seeded every 1024 bins against rounding drift), so each evaluation costs no trig per bin.
  const corrAt = (d: number): number => {
    let s = 0;
    const stepAngle = (2 * Math.PI * d) / m;
    const sr = Math.cos(stepAngle);
    const si = Math.sin(stepAngle);
    let wr = 1;
    let wi = 0;
    for (let k = 0; k < m; k++) {
      if ((k & 1023) === 0 || k === m / 2) {
        const f = k < m / 2 ? k : k - m;
        wr = Math.cos(stepAngle * f);
        wi = Math.sin(stepAngle * f);
      }
      s += pr[k]! * wr - pi[k]! * wi;
      const t = wr * sr - wi * si;
      wi = wr * si + wi * sr;
      wr = t;
    }
    return s;
  };
  const shift = goldenSection((d) => -corrAt(d), best - 1, best + 1, 1e-4, 40);
  return { shift, quality };
}

export interface LocalAlignOptions {
  /** Number of anchor peaks (strongest first). */
  anchors?: number;
  /** Half width of an anchor window in points. */
  halfWidth?: number;
  /** Largest local shift accepted (points). */
  maxShift?: number;
  /** Anchor shifts whose window correlation is below this are ignored. */
  minQuality?: number;
}

export interface Anchor {
  center: number;
  shift: number;
  quality: number;
}

/** Centres of the strongest peaks of ref, at least 2*halfWidth apart. */
export function anchorPeaks(ref: ArrayLike<number>, count: number, halfWidth: number): number[] {
  const n = ref.length;
  const smooth = n > 11 ? savitzkyGolay(ref, 11, 3) : Float64Array.from(ref);
  const candidates: number[] = [];
  for (let i = halfWidth; i < n - halfWidth; i++)
    if (smooth[i]! > smooth[i - 1]! && smooth[i]! >= smooth[i + 1]!) candidates.push(i);
  candidates.sort((a, b) => smooth[b]! - smooth[a]!);
  const chosen: number[] = [];
  for (const c of candidates) {
    if (chosen.length >= count) break;
    if (chosen.every((o) => Math.abs(o - c) >= 2 * halfWidth)) chosen.push(c);
  }
  return chosen.sort((a, b) => a - b);
}

/** Measures the local shift of x against ref in windows around anchor peaks. */
export function localShifts(
  ref: ArrayLike<number>,
  x: ArrayLike<number>,
  options: LocalAlignOptions = {},
): Anchor[] {
  const halfWidth = options.halfWidth ?? 64;
  const maxShift = options.maxShift ?? Math.floor(halfWidth / 2);
  const minQuality = options.minQuality ?? 0.5;
  const out: Anchor[] = [];
  for (const c of anchorPeaks(ref, options.anchors ?? 8, halfWidth)) {
    const lo = Math.max(0, c - halfWidth);
    const hi = Math.min(ref.length, c + halfWidth + 1);
    // A Hann taper keeps neighbouring peaks at the window edge from dominating.
    const len = hi - lo;
    const a = new Float64Array(len);
    const b = new Float64Array(len);
    for (let i = 0; i < len; i++) {
      const w = 0.5 - 0.5 * Math.cos((2 * Math.PI * (i + 0.5)) / len);
      a[i] = ref[lo + i]! * w;
      b[i] = x[lo + i]! * w;
    }
    const { shift, quality } = estimateShift(a, b, { maxShift });
    if (quality >= minQuality && Math.abs(shift) <= maxShift) out.push({ center: c, shift, quality });
  }
  return out;
}

/** Piecewise-linear shift field through the anchors, constant beyond the first and last. */
export function shiftField(n: number, anchors: Anchor[]): Float64Array {
  const field = new Float64Array(n);
  if (anchors.length === 0) return field;
  const sorted = [...anchors].sort((a, b) => a.center - b.center);
  let j = 0;
  for (let i = 0; i < n; i++) {
    while (j < sorted.length - 1 && sorted[j + 1]!.center <= i) j++;
    const a = sorted[j]!;
    const b = sorted[Math.min(j + 1, sorted.length - 1)]!;
    if (i <= sorted[0]!.center) field[i] = sorted[0]!.shift;
    else if (i >= sorted[sorted.length - 1]!.center) field[i] = sorted[sorted.length - 1]!.shift;
    else field[i] = a.shift + ((b.shift - a.shift) * (i - a.center)) / (b.center - a.center);
  }
  return field;
}

export interface AlignOptions extends ShiftOptions {
  interpolation?: 'fourier' | 'linear';
  /** Also correct local drifts in anchor windows (default false). */
  local?: boolean | LocalAlignOptions;
}

export interface AlignResult {
  aligned: Float64Array[];
  /** Global shift of each spectrum relative to the reference (points). */
  shifts: number[];
  /** Anchors of the local alignment for each spectrum (empty when not used). */
  anchors: Anchor[][];
}

/** Aligns every spectrum of a stack to stack[refIndex]. */
export function alignStack(stack: Float64Array[], refIndex: number, options: AlignOptions = {}): AlignResult {
  const ref = stack[refIndex]!;
  const aligned: Float64Array[] = [];
  const shifts: number[] = [];
  const anchors: Anchor[][] = [];
  for (let k = 0; k < stack.length; k++) {
    if (k === refIndex) {
      aligned.push(Float64Array.from(ref));
      shifts.push(0);
      anchors.push([]);
      continue;
    }
    const { shift } = estimateShift(ref, stack[k]!, options);
    let y = shiftSignal(stack[k]!, -shift, options.interpolation ?? 'fourier');
    let used: Anchor[] = [];
    if (options.local) {
      used = localShifts(ref, y, options.local === true ? {} : options.local);
      if (used.length)
        y = warp(
          y,
          shiftField(y.length, used).map((v) => -v),
        );
    }
    aligned.push(y);
    shifts.push(shift);
    anchors.push(used);
  }
  return { aligned, shifts, anchors };
}
