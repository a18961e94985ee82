// Shifting spectra by fractional numbers of points: band-limited (Fourier) or linear
// interpolation, and warping by a smooth per-point shift field (local alignment).
import { fftInPlace, nextPowerOfTwo } from '../fft.js';

/** y(i) = x(i - d): content moves towards higher indices for d > 0. */
export function shiftSignal(
  x: ArrayLike<number>,
  d: number,
  method: 'fourier' | 'linear' = 'fourier',
): Float64Array {
  return method === 'fourier' ? fourierShift(x, d) : linearShift(x, d);
}

/** Band-limited shift; the signal is zero-padded to a power of two so the wrap-around is zeros. */
export function fourierShift(x: ArrayLike<number>, d: number): Float64Array {
  const n = x.length;
  if (d === 0) return Float64Array.from(x);
  const m = nextPowerOfTwo(n + Math.ceil(Math.abs(d)) + 16);
  const re = new Float64Array(m);
  const im = new Float64Array(m);
  // Pad with the edge values fading to the mean of both edges, so the ends do not ring.
  for (let i = 0; i < n; i++) re[i] = x[i]!;
  const a = x[n - 1]!;
  const b = x[0]!;
  const pad = m - n;
  for (let i = 0; i < pad; i++) re[n + i] = a + ((b - a) * (i + 1)) / (pad + 1);
  fftInPlace(re, im);
  for (let k = 0; k < m; k++) {
    const f = k < m / 2 ? k : k - m;
    const ang = (-2 * Math.PI * f * d) / m;
    const c = Math.cos(ang);
    const s = Math.sin(ang);
    if (k === m / 2) {
      // Nyquist bin: keep the result real.
      re[k] = re[k]! * c;
      im[k] = 0;
      continue;
    }
    const r = re[k]! * c - im[k]! * s;
    im[k] = re[k]! * s + im[k]! * c;
    re[k] = r;
  }
  fftInPlace(re, im, true);
  return re.slice(0, n);
}

/** Linear interpolation shift; points moved in from outside take the edge value. */
export function linearShift(x: ArrayLike<number>, d: number): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = sampleLinear(x, i - d);
  return out;
}

export function sampleLinear(x: ArrayLike<number>, t: number): number {
  const n = x.length;
  if (t <= 0) return x[0]!;
  if (t >= n - 1) return x[n - 1]!;
  const i = Math.floor(t);
  const f = t - i;
  return x[i]! * (1 - f) + x[i + 1]! * f;
}

/** Cubic (Catmull-Rom) interpolation, clamped at the ends. */
export function sampleCubic(x: ArrayLike<number>, t: number): number {
  const n = x.length;
  if (t <= 0) return x[0]!;
  if (t >= n - 1) return x[n - 1]!;
  const i = Math.floor(t);
  const f = t - i;
  const p0 = x[Math.max(0, i - 1)]!;
  const p1 = x[i]!;
  const p2 = x[i + 1]!;
  const p3 = x[Math.min(n - 1, i + 2)]!;
  return p1 + 0.5 * f * (p2 - p0 + f * (2 * p0 - 5 * p1 + 4 * p2 - p3 + f * (3 * (p1 - p2) + p3 - p0)));
}

/** y(i) = x(i - field[i]) with cubic interpolation. */
export function warp(x: ArrayLike<number>, field: ArrayLike<number>): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = sampleCubic(x, i - field[i]!);
  return out;
}
