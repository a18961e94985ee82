// In-place radix-2 complex FFT on split real/imaginary Float64Arrays. Spectra are processed at
// power-of-two sizes (zero filling), so a radix-2 transform with cached twiddles is all we need.

const twiddleCache = new Map<number, { cos: Float64Array; sin: Float64Array; rev: Uint32Array }>();

function plan(n: number): { cos: Float64Array; sin: Float64Array; rev: Uint32Array } {
  let p = twiddleCache.get(n);
  if (p) return p;
  if (!isPowerOfTwo(n)) throw new RangeError(`FFT size must be a power of two, got ${n}`);
  const cos = new Float64Array(n / 2);
  const sin = new Float64Array(n / 2);
  for (let i = 0; i < n / 2; i++) {
    cos[i] = Math.cos((2 * Math.PI * i) / n);
    sin[i] = Math.sin((2 * Math.PI * i) / n);
  }
  const rev = new Uint32Array(n);
  const bits = Math.log2(n);
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (let b = 0, x = i; b < bits; b++, x >>= 1) r = (r << 1) | (x & 1);
    rev[i] = r;
  }
  p = { cos, sin, rev };
  if (twiddleCache.size > 16) twiddleCache.clear();
  twiddleCache.set(n, p);
  return p;
}

/** Whether `n` is a positive integer power of two (the FFT sizes). */
export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

export function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Forward (sign -1, X_k = sum x_j e^{-2 pi i jk/n}) or inverse (sign +1, scaled by 1/n) transform,
 * in place.
 */
export function fftInPlace(re: Float64Array, im: Float64Array, inverse = false): void {
  const n = re.length;
  if (im.length !== n) throw new RangeError('FFT: real and imaginary parts differ in length');
  if (n <= 1) return;
  const { cos, sin, rev } = plan(n);
  for (let i = 0; i < n; i++) {
    const j = rev[i]!;
    if (j > i) {
      let t = re[i]!;
      re[i] = re[j]!;
      re[j] = t;
      t = im[i]!;
      im[i] = im[j]!;
      im[j] = t;
    }
  }
  const sgn = inverse ? 1 : -1;
  for (let size = 2; size <= n; size *= 2) {
    const half = size / 2;
    const step = n / size;
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < half; k++) {
        const wr = cos[k * step]!;
        const wi = sgn * sin[k * step]!;
        const a = start + k;
        const b = a + half;
        const xr = re[b]! * wr - im[b]! * wi;
        const xi = re[b]! * wi + im[b]! * wr;
        re[b] = re[a]! - xr;
        im[b] = im[a]! - xi;
        re[a]! += xr;
        im[a]! += xi;
      }
    }
  }
  if (inverse) {
    for (let i = 0; i < n; i++) {
      re[i]! /= n;
      im[i]! /= n;
    }
  }
}

/** Swap the two halves so that the zero frequency sits at index n/2. */
export function fftShift(x: Float64Array): Float64Array {
  const n = x.length;
  const out = new Float64Array(n);
  const h = Math.floor(n / 2);
  for (let i = 0; i < n; i++) out[(i + h) % n] = x[i]!;
  return out;
}

/** Frequency index of FFT bin k in -n/2..n/2-1. */
export function signedBin(k: number, n: number): number {
  return k < n / 2 ? k : k - n;
}

/** Real-input convenience: the complex spectrum of a real signal (length must be a power of two). */
export function fftReal(x: ArrayLike<number>): { re: Float64Array; im: Float64Array } {
  const re = Float64Array.from(x);
  const im = new Float64Array(re.length);
  fftInPlace(re, im);
  return { re, im };
}
