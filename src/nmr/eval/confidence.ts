// How well a peak's confidence tells the model's true peaks from its false ones. The picked peaks
// of a denoised spectrum (3 sigma of the input, as `nmr denoise --uncertainty` picks them) are
// matched to the true peaks as in the metrics; each gets a confidence under every candidate rule,
// and the rules are compared by how they rank true above false peaks. The scale head's own rule
// (height over the 90 % half-width) is one candidate; height over the input's noise, which needs
// no scale, is the yardstick it has to beat.
import { matchPeaks } from './hungarian.js';
import type { MetricContext } from './metrics.js';
import { fwhmAt, pickPeaks } from './peaks.js';

/** Half-width of the central 90 % interval of a Laplace distribution of scale 1: P(|e| > t) = e^-t. */
export const LAPLACE_90 = Math.log(10);

/**
 * How a peak's confidence is computed: 'interval', height / (factor x scale x ln 10), 1 where the
 * top's central 90 % interval just reaches zero; 'snr', height / (3 x the input's noise sigma),
 * 1 at the picking threshold.
 */
export type ConfidenceDefinition = 'interval' | 'snr';

/** The candidate definitions, in the order they are compared (ties keep the first). */
export const CONFIDENCE_DEFINITIONS: readonly ConfidenceDefinition[] = ['interval', 'snr'];

/** A confidence definition and the cut below which a peak is flagged low. */
export interface ConfidenceRule {
  definition: ConfidenceDefinition;
  cut: number;
}

/** What a confidence is computed from: the top's height, scale and the input's noise sigma. */
export interface PeakTop {
  height: number;
  /** The predicted Laplace scale at the top (before the calibration factor). */
  scale: number;
  sigma: number;
}

/** A picked peak, whether it matches a true peak, and its confidence under each definition. */
export interface LabelledPeak extends PeakTop {
  real: boolean;
}

/** The confidence of a top under a definition, with the scale multiplied by `factor`. */
export function confidenceOf(top: PeakTop, definition: ConfidenceDefinition, factor: number): number {
  return definition === 'interval'
    ? top.height / (LAPLACE_90 * factor * top.scale)
    : top.height / (3 * top.sigma);
}

/**
 * The peaks picked from y at 3 sigma (the input's noise), each labelled real when it matches a
 * true peak of ctx (tolerance max(1 Hz, FWHM / 2), one to one, as in the metrics).
 */
export function labelPeaks(
  y: ArrayLike<number>,
  scale: ArrayLike<number>,
  ctx: MetricContext,
  sigma: number,
): LabelledPeak[] {
  const truePeaks = pickPeaks(ctx.truth, 3 * ctx.sigmaIn);
  const tolerance = truePeaks.map((p) => {
    const w = fwhmAt(ctx.truth, p.index);
    return Math.max(1 / ctx.hzPerPoint, Number.isFinite(w) ? w / 2 : 0);
  });
  const picked = pickPeaks(y, 3 * sigma);
  const pairs = matchPeaks(
    picked.map((p) => p.index),
    truePeaks.map((p) => p.index),
    tolerance,
  );
  const real = new Set(pairs.map(([p]) => p));
  return picked.map((p, k) => ({
    height: p.height,
    scale: scale[Math.round(p.index)]!,
    sigma,
    real: real.has(k),
  }));
}

/** How one rule separates real from false peaks, pooled over spectra. */
export interface ConfidenceScore extends ConfidenceRule {
  peaks: number;
  falsePeaks: number;
  /** P(a real peak's confidence > a false one's), ties half: 0.5 is chance, 1 perfect (NaN without both kinds). */
  rocAuc: number;
  /** Average precision of confidence as a detector of real peaks (its chance level is the share of real peaks). */
  prAuc: number;
  /** Share of the false peaks, and of the real ones, flagged low (confidence below the cut). */
  falseFlagged: number;
  realFlagged: number;
}

/** Scores a rule on labelled peaks (scale multiplied by factor). */
export function scoreConfidence(
  peaks: LabelledPeak[],
  rule: ConfidenceRule,
  factor: number,
): ConfidenceScore {
  const c = peaks.map((p) => ({ v: confidenceOf(p, rule.definition, factor), real: p.real }));
  const real = c.filter((p) => p.real).map((p) => p.v);
  const fake = c.filter((p) => !p.real).map((p) => p.v);
  let wins = 0;
  for (const a of real) for (const b of fake) wins += a > b ? 1 : a === b ? 0.5 : 0;
  const sorted = [...c].sort((a, b) => b.v - a.v);
  let tp = 0;
  let ap = 0;
  sorted.forEach((p, i) => {
    if (!p.real) return;
    tp++;
    ap += tp / (i + 1);
  });
  const share = (v: number[]) => (v.length ? v.filter((x) => x < rule.cut).length / v.length : NaN);
  return {
    ...rule,
    peaks: c.length,
    falsePeaks: fake.length,
    rocAuc: real.length && fake.length ? wins / (real.length * fake.length) : NaN,
    prAuc: real.length ? ap / real.length : NaN,
    falseFlagged: share(fake),
    realFlagged: share(real),
  };
}

/**
 * The rule to use, chosen on tuning peaks: the definition of highest ROC AUC (the scale head's
 * 'interval' when the tuning peaks hold no false peak or the AUCs tie), with its cut.
 */
export function chooseConfidenceRule(tuning: LabelledPeak[], factor: number): ConfidenceRule {
  let definition: ConfidenceDefinition = 'interval';
  let bestAuc = -Infinity;
  for (const d of CONFIDENCE_DEFINITIONS) {
    const auc = scoreConfidence(tuning, { definition: d, cut: 1 }, factor).rocAuc;
    if (Number.isFinite(auc) && auc > bestAuc) {
      bestAuc = auc;
      definition = d;
    }
  }
  return confidenceRuleFor(definition, tuning, factor);
}

/**
 * The cut of a definition: 1 for 'interval' (the 90 % interval reaching zero has a meaning of
 * its own); for 'snr', the one that flags the most false peaks for the fewest real ones on the
 * tuning peaks (largest difference of the two shares), just above one of their confidences (1,
 * the picking threshold, which flags nothing, when no cut gains).
 */
export function confidenceRuleFor(
  definition: ConfidenceDefinition,
  tuning: LabelledPeak[],
  factor: number,
): ConfidenceRule {
  if (definition === 'interval') return { definition, cut: 1 };
  let best: ConfidenceRule = { definition, cut: 1 };
  let bestGain = 0;
  for (const p of tuning) {
    if (p.real) continue;
    const rule = { definition, cut: confidenceOf(p, definition, factor) * (1 + 1e-9) };
    const s = scoreConfidence(tuning, rule, factor);
    if (s.falseFlagged - s.realFlagged > bestGain) {
      bestGain = s.falseFlagged - s.realFlagged;
      best = rule;
    }
  }
  return best;
}
