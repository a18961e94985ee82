// Low-rank Hankel (Cadzow) denoising of a real spectrum, windowed: a segment of a few lines on a
// smooth baseline is close to a sum of a few damped exponentials along the frequency axis, so its
// Hankel matrix is close to low rank while white noise spreads over all singular values. Each
// window of `window` points becomes a Hankel matrix (window/2 rows), is truncated to `rank`
// singular values and mapped back by averaging anti-diagonals (`iterations` times, Cadzow 1988);
// windows overlap by half and are blended with a triangular weight. Working on windows keeps the
// SVDs small (32 x 33 for the default) where one Hankel matrix of a whole 32k-point spectrum would
// not be tractable; the FID-domain form needs the complex FID, which a real spectrum lacks.
export interface CadzowOptions {
  window?: number;
  rank?: number;
  iterations?: number;
}

/**
 * Orthonormal basis (columns of a rows x r array, row-major) of the r leading eigenvectors of the
 * symmetric matrix g (rows x rows), by subspace iteration: the top singular subspace of the
 * Hankel matrix, without a full SVD (the windows are small and many).
 */
function leadingSubspace(g: Float64Array, rows: number, r: number, sweeps: number): Float64Array {
  const u = new Float64Array(rows * r);
  // A fixed, well-spread start (no randomness: the baseline must be deterministic).
  for (let i = 0; i < rows; i++)
    for (let q = 0; q < r; q++)
      u[i * r + q] = Math.cos(((i + 0.5) * (q + 1) * Math.PI) / rows) + (i === q ? 1 : 0);
  const next = new Float64Array(rows * r);
  for (let sweep = 0; sweep < sweeps; sweep++) {
    next.fill(0);
    for (let i = 0; i < rows; i++)
      for (let k = 0; k < rows; k++) {
        const gik = g[i * rows + k]!;
        if (gik === 0) continue;
        for (let q = 0; q < r; q++) next[i * r + q]! += gik * u[k * r + q]!;
      }
    // Modified Gram-Schmidt on the columns.
    for (let q = 0; q < r; q++) {
      for (let p = 0; p < q; p++) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += next[i * r + q]! * next[i * r + p]!;
        for (let i = 0; i < rows; i++) next[i * r + q]! -= dot * next[i * r + p]!;
      }
      let norm = 0;
      for (let i = 0; i < rows; i++) norm += next[i * r + q]! ** 2;
      norm = Math.sqrt(norm);
      for (let i = 0; i < rows; i++) next[i * r + q] = norm > 0 ? next[i * r + q]! / norm : 0;
    }
    u.set(next);
  }
  return u;
}

/** Rank-r approximation of the Hankel matrix of x, mapped back to a signal (anti-diagonal means). */
function lowRankHankel(x: Float64Array, rank: number, iterations: number): Float64Array {
  const n = x.length;
  const rows = Math.floor(n / 2);
  const cols = n - rows + 1;
  const r = Math.min(rank, rows);
  let signal = x;
  for (let it = 0; it < iterations; it++) {
    // G = H H^T with H[i][j] = signal[i + j].
    const g = new Float64Array(rows * rows);
    for (let i = 0; i < rows; i++)
      for (let k = i; k < rows; k++) {
        let dot = 0;
        for (let j = 0; j < cols; j++) dot += signal[i + j]! * signal[k + j]!;
        g[i * rows + k] = dot;
        g[k * rows + i] = dot;
      }
    const u = leadingSubspace(g, rows, r, 12);
    // H_r = U (U^T H); accumulate anti-diagonals.
    const uth = new Float64Array(r * cols);
    for (let q = 0; q < r; q++)
      for (let j = 0; j < cols; j++) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += u[i * r + q]! * signal[i + j]!;
        uth[q * cols + j] = dot;
      }
    const sum = new Float64Array(n);
    const count = new Float64Array(n);
    for (let i = 0; i < rows; i++)
      for (let j = 0; j < cols; j++) {
        let value = 0;
        for (let q = 0; q < r; q++) value += u[i * r + q]! * uth[q * cols + j]!;
        sum[i + j]! += value;
        count[i + j]! += 1;
      }
    signal = sum.map((v, i) => v / count[i]!);
  }
  return signal;
}

export function cadzowDenoise(x: ArrayLike<number>, options: CadzowOptions = {}): Float64Array {
  const n = x.length;
  const window = Math.min(options.window ?? 64, n);
  const rank = options.rank ?? 6;
  const iterations = options.iterations ?? 2;
  if (window < 8) return Float64Array.from(x);
  const hop = Math.max(1, Math.floor(window / 2));
  const out = new Float64Array(n);
  const weight = new Float64Array(n);
  const starts: number[] = [];
  for (let s = 0; s + window <= n; s += hop) starts.push(s);
  if (starts[starts.length - 1]! + window < n) starts.push(n - window);
  for (const start of starts) {
    const seg = Float64Array.from({ length: window }, (_, i) => x[start + i]!);
    const den = lowRankHankel(seg, rank, iterations);
    for (let i = 0; i < window; i++) {
      // Triangular blending; the ends of the spectrum keep full weight.
      const edge = Math.min(i + 1, window - i);
      const w = (start === 0 && i < hop) || (start + window === n && i >= window - hop) ? hop : edge;
      out[start + i]! += w * den[i]!;
      weight[start + i]! += w;
    }
  }
  for (let i = 0; i < n; i++) out[i] = weight[i]! > 0 ? out[i]! / weight[i]! : x[i]!;
  return out;
}
