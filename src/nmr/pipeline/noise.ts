// Robust noise level in the baseline mask, robust SNR, and T estimated from the
// noise levels of the rescaled spectra.
import { median, percentile, robustStd, select } from '../stats.js';

/**
 * 'mad' (the default): sigma = 1.4826 * median |x_i - median(x_B)| over i in B.
 * 'diff': 1.4826 * MAD of first differences x_{i+1} - x_i (both points in B), over sqrt 2;
 * insensitive to broad signal left in B, for spectra without a clean baseline (e.g. solid-state
 * lines filling the window). Noise correlated by apodization makes it read low, but equally for
 * all spectra processed alike, so ratios (T) stay right.
 */
export function robustSigma(
  x: ArrayLike<number>,
  baseline: ArrayLike<number>,
  method: 'mad' | 'diff' = 'mad',
): number {
  if (method === 'diff') {
    const d: number[] = [];
    for (let i = 0; i + 1 < x.length; i++) if (baseline[i] && baseline[i + 1]) d.push(x[i + 1]! - x[i]!);
    if (d.length < 8) throw new RangeError(`robustSigma: baseline mask has only ${d.length} adjacent pairs`);
    return robustStd(d) / Math.SQRT2;
  }
  const b = select(x, baseline);
  if (b.length < 8) throw new RangeError(`robustSigma: baseline mask has only ${b.length} points`);
  return robustStd(b);
}

/** SNR = (P95(x_M) - median(x_B)) / sigma. */
export function robustSnr(
  x: ArrayLike<number>,
  peak: ArrayLike<number>,
  baseline: ArrayLike<number>,
  sigma?: number,
): number {
  const s = sigma ?? robustSigma(x, baseline);
  const m = select(x, peak);
  if (m.length === 0) return 0;
  return (percentile(m, 95) - median(select(x, baseline))) / s;
}

/**
 * T from the noise levels of spectra ordered from low to high SNR (after rescaling to a common
 * amplitude): median of sigma_k / sigma_{k+1} ('ratio'), or exp of the slope of a least-squares
 * line through log sigma_k ('loglinear').
 */
export function estimateT(sigmas: number[], method: 'ratio' | 'loglinear' = 'ratio'): number {
  if (sigmas.length < 2) return NaN;
  if (method === 'ratio') {
    const r: number[] = [];
    for (let k = 0; k + 1 < sigmas.length; k++) r.push(sigmas[k]! / sigmas[k + 1]!);
    return median(r);
  }
  const n = sigmas.length;
  const xs = sigmas.map((_, k) => k);
  const ys = sigmas.map((s) => Math.log(s));
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let k = 0; k < n; k++) {
    sxy += (xs[k]! - mx) * (ys[k]! - my);
    sxx += (xs[k]! - mx) ** 2;
  }
  return Math.exp(-sxy / sxx);
}
