// Operating points of peak picking: one fixed threshold (3 sigma of x0) is far from the best one
// for a spectrum whose noise was removed, and it lets each candidate pick at a different false-peak
// rate. So each candidate's picks are swept over a grid of thresholds (in units of x0's noise
// sigma, the same grid for all), counting per threshold the true peaks found, the weak ones among
// them (3-5 sigma) and the false peaks. Pooled over the spectra this gives the precision-recall
// curve and its area, the F1 at a threshold chosen on other (tuning) spectra, and the recall at a
// matched false-peak rate per spectrum.
import { matchPeaks } from './hungarian.js';
import type { MetricContext } from './metrics.js';
import { fwhmAt, pickPeaks } from './peaks.js';

/** Picking thresholds of the sweep, in units of the noise sigma of x0: 0.5 to 40, log spaced. */
export const SWEEP_THRESHOLDS: readonly number[] = Array.from(
  { length: 39 },
  (_, i) => 0.5 * Math.pow(80, i / 38),
);

/** The false-peak rates (per spectrum) at which recall is compared. */
export const FALSE_RATES: readonly number[] = [1, 0.2];

/** Counts of a threshold sweep, summed over one or more spectra (index = threshold). */
export interface SweepCounts {
  /** Picked peaks matched to a true peak. */
  tp: number[];
  /** Picked peaks matched to no true peak. */
  fp: number[];
  /** Matched true peaks of 3-5 sigma of x0. */
  tpWeak: number[];
  /** True peaks (picked from the reference at 3 sigma of x0), and those of 3-5 sigma. */
  nTrue: number;
  nWeak: number;
  spectra: number;
}

/** Recall at a false-peak rate, interpolated between the thresholds that bracket it. */
export interface AtFalseRate {
  /** False peaks per spectrum. */
  rate: number;
  recall: number;
  /** Recall of the 3-5 sigma true peaks. */
  recallWeak: number;
  /** The (interpolated) threshold, in sigma of x0. */
  threshold: number;
  /**
   * '>' when even the lowest threshold picks fewer false peaks (recall there is shown; more could
   * be found lower), '<' when even the highest picks more (recall there is shown).
   */
  bound: '' | '<' | '>';
}

/** A candidate's operating points: its pooled precision-recall curve and the summaries. */
export interface OperatingPoints {
  /** Thresholds in sigma of x0, ascending; the arrays below are per threshold. */
  thresholds: number[];
  precision: number[];
  recall: number[];
  recallWeak: number[];
  falsePerSpectrum: number[];
  /** Area under the precision-recall curve (average precision: step rule from recall 0). */
  auc: number;
  /** The threshold of best pooled F1 on the tuning spectra and the scores it gives here. */
  tuned: { threshold: number; f1: number; precision: number; recall: number; recallWeak: number } | null;
  atFalseRate: AtFalseRate[];
}

/** Empty counts for `n` thresholds. */
export function emptyCounts(n = SWEEP_THRESHOLDS.length): SweepCounts {
  return {
    tp: new Array(n).fill(0),
    fp: new Array(n).fill(0),
    tpWeak: new Array(n).fill(0),
    nTrue: 0,
    nWeak: 0,
    spectra: 0,
  };
}

/** Adds b into a (same thresholds). */
export function addCounts(a: SweepCounts, b: SweepCounts): SweepCounts {
  b.tp.forEach((v, i) => {
    a.tp[i]! += v;
    a.fp[i]! += b.fp[i]!;
    a.tpWeak[i]! += b.tpWeak[i]!;
  });
  a.nTrue += b.nTrue;
  a.nWeak += b.nWeak;
  a.spectra += b.spectra;
  return a;
}

/**
 * The sweep on one spectrum: true peaks and tolerances as in the metrics (peaks of the reference
 * at 3 sigma of x0, tolerance max(1 Hz, FWHM / 2)), y's local maxima kept at each threshold
 * (t sigma of x0) and matched one to one with the Hungarian algorithm.
 */
export function sweepSpectrum(
  y: ArrayLike<number>,
  ctx: MetricContext,
  thresholds: readonly number[] = SWEEP_THRESHOLDS,
): SweepCounts {
  const sigma = ctx.sigmaIn;
  const truePeaks = pickPeaks(ctx.truth, 3 * sigma);
  const tolerance = truePeaks.map((p) => {
    const w = fwhmAt(ctx.truth, p.index);
    return Math.max(1 / ctx.hzPerPoint, Number.isFinite(w) ? w / 2 : 0);
  });
  const weak = truePeaks.map((p) => p.height / sigma < 5);
  const all = pickPeaks(y, Math.min(...thresholds) * sigma);
  const out = emptyCounts(thresholds.length);
  out.nTrue = truePeaks.length;
  out.nWeak = weak.filter(Boolean).length;
  out.spectra = 1;
  thresholds.forEach((t, k) => {
    const picked = all.filter((p) => p.value >= t * sigma);
    const pairs = matchPeaks(
      picked.map((p) => p.index),
      truePeaks.map((p) => p.index),
      tolerance,
    );
    out.tp[k] = pairs.length;
    out.fp[k] = picked.length - pairs.length;
    out.tpWeak[k] = pairs.filter(([, j]) => weak[j]).length;
  });
  return out;
}

const ratio = (a: number, b: number, empty: number): number => (b > 0 ? a / b : empty);

function f1Of(c: SweepCounts, k: number): { f1: number; precision: number; recall: number } {
  const precision = ratio(c.tp[k]!, c.tp[k]! + c.fp[k]!, 1);
  const recall = ratio(c.tp[k]!, c.nTrue, 1);
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { f1, precision, recall };
}

/** The threshold index of best pooled F1 (ties: the higher threshold). */
export function bestF1Index(c: SweepCounts): number {
  let best = -1;
  let bestF1 = -Infinity;
  for (let k = c.tp.length - 1; k >= 0; k--) {
    const { f1 } = f1Of(c, k);
    if (f1 > bestF1) {
      bestF1 = f1;
      best = k;
    }
  }
  return best;
}

/**
 * Recall at a false-peak rate: the false peaks per spectrum rise as the threshold falls, so the
 * rate is bracketed by two neighbouring thresholds and recall interpolated linearly in the rate.
 */
export function recallAtFalseRate(c: SweepCounts, thresholds: readonly number[], rate: number): AtFalseRate {
  const n = thresholds.length;
  const fpr = c.fp.map((v) => v / Math.max(1, c.spectra));
  const recall = (k: number) => ratio(c.tp[k]!, c.nTrue, NaN);
  const weak = (k: number) => ratio(c.tpWeak[k]!, c.nWeak, NaN);
  const at = (k: number, bound: AtFalseRate['bound']): AtFalseRate => ({
    rate,
    recall: recall(k),
    recallWeak: weak(k),
    threshold: thresholds[k]!,
    bound,
  });
  if (fpr[0]! <= rate) return at(0, fpr[0]! < rate ? '>' : '');
  if (fpr[n - 1]! > rate) return at(n - 1, '<');
  // Highest index whose rate still exceeds `rate`; the next one is at or below it.
  let k = 0;
  while (k + 1 < n && fpr[k + 1]! > rate) k++;
  const hi = fpr[k]!;
  const lo = fpr[k + 1]!;
  const w = hi > lo ? (hi - rate) / (hi - lo) : 1;
  const mix = (a: number, b: number) => a + w * (b - a);
  return {
    rate,
    recall: mix(recall(k), recall(k + 1)),
    recallWeak: mix(weak(k), weak(k + 1)),
    threshold: mix(thresholds[k]!, thresholds[k + 1]!),
    bound: '',
  };
}

/** Average precision: sum over thresholds, highest first, of (recall gained) x precision there. */
export function prAuc(c: SweepCounts): number {
  let area = 0;
  let prev = 0;
  for (let k = c.tp.length - 1; k >= 0; k--) {
    const { precision, recall } = f1Of(c, k);
    area += Math.max(0, recall - prev) * precision;
    prev = Math.max(prev, recall);
  }
  return area;
}

/**
 * The operating points of pooled counts; `tuning` (the same candidate's counts on the tuning
 * spectra) picks the threshold whose F1 is reported.
 */
export function operatingPoints(
  c: SweepCounts,
  tuning: SweepCounts | null,
  thresholds: readonly number[] = SWEEP_THRESHOLDS,
): OperatingPoints {
  const n = thresholds.length;
  const idx = Array.from({ length: n }, (_, k) => k);
  let tuned: OperatingPoints['tuned'] = null;
  if (tuning && tuning.spectra > 0) {
    const k = bestF1Index(tuning);
    tuned = { threshold: thresholds[k]!, ...f1Of(c, k), recallWeak: ratio(c.tpWeak[k]!, c.nWeak, NaN) };
  }
  return {
    thresholds: [...thresholds],
    precision: idx.map((k) => f1Of(c, k).precision),
    recall: idx.map((k) => ratio(c.tp[k]!, c.nTrue, NaN)),
    recallWeak: idx.map((k) => ratio(c.tpWeak[k]!, c.nWeak, NaN)),
    falsePerSpectrum: idx.map((k) => c.fp[k]! / Math.max(1, c.spectra)),
    auc: prAuc(c),
    tuned,
    atFalseRate: FALSE_RATES.map((r) => recallAtFalseRate(c, thresholds, r)),
  };
}
