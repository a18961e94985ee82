// Calibration of a model's per-point uncertainty: how often the truth lies in the central 90 %
// interval of the Laplace distribution the scale head predicts (90 % if it is calibrated).
import { pickPeaks } from './peaks.js';
import type { Context } from './yard-context.js';
import {
  CONFIDENCE_DEFINITIONS,
  LAPLACE_90,
  chooseConfidenceRule,
  confidenceOf,
  confidenceRuleFor,
  labelPeaks,
  scoreConfidence,
  type ConfidenceRule,
  type ConfidenceScore,
  type LabelledPeak,
} from './confidence.js';
import { robustSigma } from '../pipeline/noise.js';

export { LAPLACE_90 };

/** How often the truth lies in a method's central 90 % interval (fraction of points). */
export interface Coverage {
  /** Over all points, and over the points of the true peak mask. */
  all: number;
  peak: number;
  /** Mean predicted scale over all points, in units of the noise sigma of x0. */
  meanScaleSigma: number;
  /**
   * The factor on the scale that covers 90 % of the truth on the tuning samples (held-out
   * simulated samples, never scored; NaN without them), and the coverage of all points with the
   * scale multiplied by it.
   */
  factor: number;
  calibrated: number;
  /** The factor stored with the model ('tailor nmr calibrate'; NaN without one) and the coverage with it. */
  storedFactor: number;
  stored: number;
  /**
   * The model's picked peaks (3 sigma of the input) rated by each confidence definition, pooled
   * over the scored samples: how well each ranks true peaks above false ones, and the shares
   * flagged low at its cut. `rule` is the one in use: the stored one, else the one chosen on the
   * tuning samples.
   */
  confidence?: { rule: ConfidenceRule; scores: ConfidenceScore[] };
}

/** The fraction of points whose truth lies within y +- scale x ln 10 (all, and in the peak mask). */
export function coverageOf(
  y: Float64Array,
  scale: Float64Array,
  ctx: Context,
  factor = NaN,
  storedFactor = NaN,
): Coverage {
  let inAll = 0;
  let inCalibrated = 0;
  let inStored = 0;
  let inPeak = 0;
  let nPeak = 0;
  let sum = 0;
  for (let i = 0; i < y.length; i++) {
    const inside = Math.abs(y[i]! - ctx.truth[i]!) <= LAPLACE_90 * scale[i]! ? 1 : 0;
    inAll += inside;
    if (Math.abs(y[i]! - ctx.truth[i]!) <= LAPLACE_90 * factor * scale[i]!) inCalibrated++;
    if (Math.abs(y[i]! - ctx.truth[i]!) <= LAPLACE_90 * storedFactor * scale[i]!) inStored++;
    sum += scale[i]!;
    if (ctx.peakMask[i]) {
      nPeak++;
      inPeak += inside;
    }
  }
  return {
    all: inAll / y.length,
    peak: nPeak ? inPeak / nPeak : NaN,
    meanScaleSigma: sum / y.length / ctx.sigmaIn,
    factor,
    calibrated: Number.isFinite(factor) ? inCalibrated / y.length : NaN,
    storedFactor,
    stored: Number.isFinite(storedFactor) ? inStored / y.length : NaN,
  };
}

/** The mean of each field over samples (NaN entries skipped). */
export function meanCoverage(list: Coverage[]): Coverage {
  const mean = (k: 'all' | 'peak' | 'meanScaleSigma' | 'calibrated' | 'stored') => {
    const v = list.map((c) => c[k]).filter(Number.isFinite);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
  };
  return {
    all: mean('all'),
    peak: mean('peak'),
    meanScaleSigma: mean('meanScaleSigma'),
    factor: list[0]?.factor ?? NaN,
    calibrated: mean('calibrated'),
    storedFactor: list[0]?.storedFactor ?? NaN,
    stored: mean('stored'),
  };
}

/** A peak of a denoised spectrum with how sure the model is of it. */
export interface ConfidentPeak {
  /** Fractional index and interpolated height, as pickPeaks gives them. */
  index: number;
  height: number;
  /** The predicted Laplace scale at the top (times the calibration factor). */
  scale: number;
  /** Under the rule's definition: by default height / (scale x ln 10), 1 where the top's 90 % interval just reaches zero. */
  confidence: number;
  /** confidence below the rule's cut: the peak may not be real. */
  low: boolean;
}

/**
 * The peaks of y above threshold, each with its confidence under the predicted scale times
 * factor (a stored calibration's), rated by rule (default: the 90 % interval, cut 1); sigma is
 * the input's noise, which the 'snr' definition needs (default threshold / 3).
 */
export function confidentPeaks(
  y: ArrayLike<number>,
  scale: ArrayLike<number>,
  threshold: number,
  factor = 1,
  rule: ConfidenceRule = { definition: 'interval', cut: 1 },
  sigma = threshold / 3,
): ConfidentPeak[] {
  return pickPeaks(y, threshold).map((p) => {
    const b = factor * scale[Math.round(p.index)]!;
    const confidence = confidenceOf({ height: p.height, scale: b, sigma }, rule.definition, 1);
    return { index: p.index, height: p.height, scale: b, confidence, low: confidence < rule.cut };
  });
}

/**
 * What the yardstick gathers for a method with a scale: error ratios and labelled peaks on the
 * tuning samples (which fit the factor and choose the confidence rule), then the scored samples'
 * coverage and labelled peaks.
 */
export interface ScaleStats {
  storedFactor: number;
  storedRule: ConfidenceRule | null;
  ratios: number[];
  tuningPeaks: LabelledPeak[];
  factor: number;
  scored: Coverage[];
  scoredPeaks: LabelledPeak[];
}

/** Empty statistics for a method, with the calibration stored with its model (null when none). */
export function newScaleStats(stored: { factor: number; confidence: ConfidenceRule } | null): ScaleStats {
  return {
    storedFactor: stored?.factor ?? NaN,
    storedRule: stored?.confidence ?? null,
    ratios: [],
    tuningPeaks: [],
    factor: NaN,
    scored: [],
    scoredPeaks: [],
  };
}

/** The input's noise sigma from first differences (robust to the lines; as `nmr denoise` rates peaks). */
export function inputSigma(x: Float64Array): number {
  return robustSigma(x, new Uint8Array(x.length).fill(1), 'diff');
}

/** Adds one tuning sample (x the method's input, y its output). */
export function tuneScale(
  st: ScaleStats,
  x: Float64Array,
  y: Float64Array,
  scale: Float64Array,
  ctx: Context,
): void {
  st.ratios.push(...errorRatios(y, scale, ctx));
  st.tuningPeaks.push(...labelPeaks(y, scale, ctx, inputSigma(x)));
}

/** Adds one scored sample, once the factor is fitted (factorFor90 of the tuning ratios). */
export function scoreScale(
  st: ScaleStats,
  x: Float64Array,
  y: Float64Array,
  scale: Float64Array,
  ctx: Context,
): void {
  st.scored.push(coverageOf(y, scale, ctx, st.factor, st.storedFactor));
  st.scoredPeaks.push(...labelPeaks(y, scale, ctx, inputSigma(x)));
}

/** The mean coverage over the scored samples, with the confidence rules scored on their peaks. */
export function summarizeScale(st: ScaleStats): Coverage {
  const factor = Number.isFinite(st.storedFactor) ? st.storedFactor : st.factor;
  const fallback = Number.isFinite(factor) ? factor : 1;
  const rule = st.storedRule ?? chooseConfidenceRule(st.tuningPeaks, fallback);
  const scores = CONFIDENCE_DEFINITIONS.map((d) =>
    scoreConfidence(
      st.scoredPeaks,
      d === rule.definition ? rule : confidenceRuleFor(d, st.tuningPeaks, fallback),
      fallback,
    ),
  );
  return { ...meanCoverage(st.scored), confidence: { rule, scores } };
}

/** |y - truth| / (scale x ln 10) per point: at most 1 where the truth is inside the interval. */
export function errorRatios(y: Float64Array, scale: Float64Array, ctx: Context): number[] {
  return Array.from(y, (v, i) => Math.abs(v - ctx.truth[i]!) / (LAPLACE_90 * scale[i]!));
}

/** The 90th percentile of the error ratios: the scale factor that covers 90 % of those points (NaN without any). */
export function factorFor90(ratios: number[]): number {
  if (ratios.length === 0) return NaN;
  const sorted = [...ratios].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)]!;
}
