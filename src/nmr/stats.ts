// Robust statistics used throughout the NMR pipeline (median, MAD, percentiles).

/** Values of x where mask is set (all of x when mask is omitted). */
export function select(x: ArrayLike<number>, mask?: ArrayLike<number | boolean>): Float64Array {
  if (!mask) return Float64Array.from(x);
  let n = 0;
  for (let i = 0; i < x.length; i++) if (mask[i]) n++;
  const out = new Float64Array(n);
  let j = 0;
  for (let i = 0; i < x.length; i++) if (mask[i]) out[j++] = x[i]!;
  return out;
}

/** Percentile p in [0, 100] with linear interpolation (numpy's default). */
export function percentile(x: ArrayLike<number>, p: number): number {
  if (x.length === 0) return NaN;
  const s = Float64Array.from(x).sort();
  const pos = (Math.min(100, Math.max(0, p)) / 100) * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(s.length - 1, lo + 1);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export function median(x: ArrayLike<number>): number {
  return percentile(x, 50);
}

/** Median absolute deviation from the median (unscaled). */
export function mad(x: ArrayLike<number>): number {
  const m = median(x);
  const d = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) d[i] = Math.abs(x[i]! - m);
  return median(d);
}

/** Gaussian-consistent robust standard deviation: 1.4826 * MAD. */
export function robustStd(x: ArrayLike<number>): number {
  return 1.4826 * mad(x);
}

export function mean(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]!;
  return x.length ? s / x.length : NaN;
}

export function std(x: ArrayLike<number>): number {
  const m = mean(x);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += (x[i]! - m) ** 2;
  return x.length ? Math.sqrt(s / x.length) : NaN;
}

export function maxIndex(x: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}

/** Pearson correlation of two equally long arrays. */
export function correlation(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const ma = mean(a);
  const mb = mean(b);
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < a.length; i++) {
    const da = a[i]! - ma;
    const db = b[i]! - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  return sab / Math.sqrt(saa * sbb);
}
