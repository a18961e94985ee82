// Calibration of a model's per-point uncertainty: how often the truth lies in the central 90 %
// interval of the Laplace distribution the scale head predicts (90 % if it is calibrated).
import { pickPeaks } from './peaks.js';
import type { Context } from './yard-context.js';

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
}

/** Half-width of the central 90 % interval of a Laplace distribution of scale 1: P(|e| > t) = e^-t. */
export const LAPLACE_90 = Math.log(10);

/** The fraction of points whose truth lies within y +- scale x ln 10 (all, and in the peak mask). */
export function coverageOf(y: Float64Array, scale: Float64Array, ctx: Context, factor = NaN): Coverage {
  let inAll = 0;
  let inCalibrated = 0;
  let inPeak = 0;
  let nPeak = 0;
  let sum = 0;
  for (let i = 0; i < y.length; i++) {
    const inside = Math.abs(y[i]! - ctx.truth[i]!) <= LAPLACE_90 * scale[i]! ? 1 : 0;
    inAll += inside;
    if (Math.abs(y[i]! - ctx.truth[i]!) <= LAPLACE_90 * factor * scale[i]!) inCalibrated++;
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
  };
}

/** The mean of each field over samples (NaN entries skipped). */
export function meanCoverage(list: Coverage[]): Coverage {
  const mean = (k: keyof Coverage) => {
    const v = list.map((c) => c[k]).filter(Number.isFinite);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : NaN;
  };
  return {
    all: mean('all'),
    peak: mean('peak'),
    meanScaleSigma: mean('meanScaleSigma'),
    factor: list[0]?.factor ?? NaN,
    calibrated: mean('calibrated'),
  };
}

/** A peak of a denoised spectrum with how sure the model is of it. */
export interface ConfidentPeak {
  /** Fractional index and interpolated height, as pickPeaks gives them. */
  index: number;
  height: number;
  /** The predicted Laplace scale at the top. */
  scale: number;
  /** height / (scale x ln 10): 1 where the top's central 90 % interval just reaches zero. */
  confidence: number;
  /** confidence < 1: the 90 % interval of the top includes zero, the peak may not be real. */
  low: boolean;
}

/** The peaks of y above threshold, each with its confidence under the predicted scale. */
export function confidentPeaks(
  y: ArrayLike<number>,
  scale: ArrayLike<number>,
  threshold: number,
): ConfidentPeak[] {
  return pickPeaks(y, threshold).map((p) => {
    const b = scale[Math.round(p.index)]!;
    const confidence = p.height / (LAPLACE_90 * b);
    return { index: p.index, height: p.height, scale: b, confidence, low: confidence < 1 };
  });
}

/** |y - truth| / (scale x ln 10) per point: at most 1 where the truth is inside the interval. */
export function errorRatios(y: Float64Array, scale: Float64Array, ctx: Context): number[] {
  return Array.from(y, (v, i) => Math.abs(v - ctx.truth[i]!) / (LAPLACE_90 * scale[i]!));
}

/** The 90th percentile of the error ratios: the scale factor that covers 90 % of those points. */
export function factorFor90(ratios: number[]): number {
  if (ratios.length === 0) return NaN;
  const sorted = [...ratios].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.9 * sorted.length) - 1)]!;
}
