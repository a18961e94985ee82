// Denoising quality metrics, computed against a known ground truth (in
// the truth's units): energy SNR, robust peak SNR and its gain, L1/L2/NRMSE in the peak and
// baseline masks, peak precision/recall/F1 with Hungarian matching (threshold 3 sigma_in,
// tolerance max(1 Hz, FWHM/2)), recall binned by true peak SNR, hallucinated peaks, position
// error, FWHM and multiplet-integral relative errors.
import { median, percentile, select, std } from '../stats.js';
import { matchPeaks } from './hungarian.js';
import { fwhmAt, integral, pickPeaks } from './peaks.js';

export interface MetricContext {
  truth: Float64Array;
  /** Noise sigma of the input spectrum, in truth units (sets the 3 sigma picking threshold). */
  sigmaIn: number;
  hzPerPoint: number;
  peakMask: ArrayLike<number>;
  baselineMask: ArrayLike<number>;
  /** Integration ranges of the multiplets (inclusive point indices). */
  multiplets: { from: number; to: number }[];
  /** How many of the tallest true peaks enter the FWHM error (default 5). */
  fwhmPeaks?: number;
}

export const SNR_BINS = [3, 5, 10, 20, Infinity] as const;

/**
 * The quality of a denoised spectrum against its reference (truth or held-out highest level): SNR in dB, errors, peak detection and hallucinations.
 */
export interface Metrics {
  energy_snr_db: number;
  nrmse: number;
  l1: number;
  l2: number;
  l1_peak: number;
  l2_peak: number;
  l1_baseline: number;
  l2_baseline: number;
  /** Robust peak SNR: (P95(y_M) - median(y_B)) / std(y_B). */
  peak_snr: number;
  peak_precision: number;
  peak_recall: number;
  peak_f1: number;
  hallucinated: number;
  position_error_hz: number;
  fwhm_rel_error: number;
  integral_rel_error: number;
  /** Recall of true peaks with SNR (height / sigma_in) in [3,5), [5,10), [10,20), [20,inf). */
  recall_by_snr: number[];
}

function meanOf(v: number[]): number {
  const f = v.filter(Number.isFinite);
  return f.length ? f.reduce((a, b) => a + b, 0) / f.length : NaN;
}

function norms(
  y: ArrayLike<number>,
  s: ArrayLike<number>,
  mask?: ArrayLike<number>,
): { l1: number; l2: number } {
  let a = 0;
  let b = 0;
  let n = 0;
  for (let i = 0; i < y.length; i++) {
    if (mask && !mask[i]) continue;
    const d = y[i]! - s[i]!;
    a += Math.abs(d);
    b += d * d;
    n++;
  }
  return { l1: n ? a / n : NaN, l2: n ? Math.sqrt(b / n) : NaN };
}

/** Energy SNR in dB, 10 log10(||truth||^2 / ||y - truth||^2), the error at least `floor`. */
export function energySnrDb(y: ArrayLike<number>, truth: ArrayLike<number>, floor = 0): number {
  let signal = 0;
  let error = 0;
  for (let i = 0; i < truth.length; i++) {
    signal += truth[i]! * truth[i]!;
    error += (y[i]! - truth[i]!) ** 2;
  }
  return 10 * Math.log10(signal / Math.max(error, floor));
}

export function peakSnr(
  y: ArrayLike<number>,
  peakMask: ArrayLike<number>,
  baselineMask: ArrayLike<number>,
): number {
  const m = select(y, peakMask);
  const b = select(y, baselineMask);
  if (m.length === 0 || b.length < 2) return NaN;
  return (percentile(m, 95) - median(b)) / std(b);
}

export function computeMetrics(y: ArrayLike<number>, ctx: MetricContext): Metrics {
  const s = ctx.truth;
  let es = 0;
  let ee = 0;
  for (let i = 0; i < s.length; i++) {
    es += s[i]! * s[i]!;
    ee += (y[i]! - s[i]!) ** 2;
  }
  const all = norms(y, s);
  const pk = norms(y, s, ctx.peakMask);
  const bl = norms(y, s, ctx.baselineMask);
  const threshold = 3 * ctx.sigmaIn;
  const truePeaks = pickPeaks(s, threshold);
  const predPeaks = pickPeaks(y, threshold);
  const trueWidths = truePeaks.map((p) => fwhmAt(s, p.index));
  const tolerance = trueWidths.map((w) => Math.max(1 / ctx.hzPerPoint, Number.isFinite(w) ? w / 2 : 0));
  const pairs = matchPeaks(
    predPeaks.map((p) => p.index),
    truePeaks.map((p) => p.index),
    tolerance,
  );
  const tp = pairs.length;
  const precision = predPeaks.length ? tp / predPeaks.length : truePeaks.length ? 0 : 1;
  const recall = truePeaks.length ? tp / truePeaks.length : 1;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  const posErr = pairs.map(([p, t]) => Math.abs(predPeaks[p]!.index - truePeaks[t]!.index) * ctx.hzPerPoint);
  const matchedTrue = new Map(pairs.map(([p, t]) => [t, p]));
  const recallBySnr: number[] = [];
  for (let b = 0; b + 1 < SNR_BINS.length; b++) {
    const inBin = truePeaks
      .map((p, t) => [p.height / ctx.sigmaIn, t] as const)
      .filter(([r]) => r >= SNR_BINS[b]! && r < SNR_BINS[b + 1]!);
    recallBySnr.push(inBin.length ? inBin.filter(([, t]) => matchedTrue.has(t)).length / inBin.length : NaN);
  }
  const tallest = truePeaks
    .map((p, t) => ({ p, t }))
    .sort((a, b) => b.p.height - a.p.height)
    .slice(0, ctx.fwhmPeaks ?? 5);
  const fwhmErr = tallest.map(({ p, t }) => {
    const wy = fwhmAt(y, matchedTrue.has(t) ? predPeaks[matchedTrue.get(t)!]!.index : p.index);
    return Math.abs(wy - trueWidths[t]!) / trueWidths[t]!;
  });
  const intErr = ctx.multiplets
    .map((m) => {
      const ts = integral(s, m.from, m.to);
      return ts !== 0 ? Math.abs(integral(y, m.from, m.to) - ts) / Math.abs(ts) : NaN;
    })
    .filter(Number.isFinite);
  return {
    energy_snr_db: 10 * Math.log10(es / ee),
    nrmse: Math.sqrt(ee / es),
    l1: all.l1,
    l2: all.l2,
    l1_peak: pk.l1,
    l2_peak: pk.l2,
    l1_baseline: bl.l1,
    l2_baseline: bl.l2,
    peak_snr: peakSnr(y, ctx.peakMask, ctx.baselineMask),
    peak_precision: precision,
    peak_recall: recall,
    peak_f1: f1,
    hallucinated: predPeaks.length - tp,
    position_error_hz: meanOf(posErr),
    fwhm_rel_error: meanOf(fwhmErr),
    integral_rel_error: meanOf(intErr),
    recall_by_snr: recallBySnr,
  };
}

/** Mean of each metric over several evaluations (NaN entries are skipped). */
export function averageMetrics(list: Metrics[]): Metrics {
  const keys = Object.keys(list[0] ?? {}) as (keyof Metrics)[];
  const out = {} as Record<string, number | number[]>;
  for (const k of keys) {
    if (k === 'recall_by_snr') {
      out[k] = list[0]!.recall_by_snr.map((_, b) => meanOf(list.map((m) => m.recall_by_snr[b]!)));
    } else out[k] = meanOf(list.map((m) => m[k] as number));
  }
  return out as unknown as Metrics;
}
