// What the yardstick scores each candidate against: the truth (simulated data) or the held-out
// highest level, with the masks, multiplets and picking threshold that go with it.
import type { PreprocessResult } from '../pipeline/preprocess.js';
import { baselineOfPeakMask, maskRegions, peakBaselineMasks } from '../pipeline/masks.js';
import { computeMetrics, type MetricContext, type Metrics } from './metrics.js';
import type { YardSample } from './yardstick.js';

/** What one candidate is scored against, with the held-out reference's noise where there is one. */
export interface Context extends MetricContext {
  /** Held-out reference: its noise sigma, removed from the energy SNR (see energySnrCorrected). */
  refSigma?: number;
}

/** Contexts against the truth (simulated samples), one per level; null without a truth. */
export function truthContexts(s: YardSample, pre: PreprocessResult): Context[] | null {
  if (!s.truth || !s.truthPeakMask || !s.trueSigmas) return null;
  const truth = s.truth.map((v) => v * s.scaleK);
  const baselineMask = baselineOfPeakMask(s.truthPeakMask);
  const multiplets = s.regions && s.regions.length ? s.regions : maskRegions(s.truthPeakMask);
  return pre.spectra.map(() => ({
    truth,
    // One picking threshold for every candidate: 3 sigma of x0 (see the header of yardstick.ts).
    sigmaIn: s.trueSigmas![0]! * s.scaleK,
    hzPerPoint: s.hzPerPoint,
    peakMask: s.truthPeakMask!,
    baselineMask,
    multiplets,
  }));
}

/** Contexts against level K as the reference, for inputs k = 0..K-1. */
export function heldOutContexts(s: YardSample, pre: PreprocessResult): Context[] {
  const K = pre.spectra.length - 1;
  const ref = pre.spectra[K]!;
  const masks = peakBaselineMasks([ref]);
  const multiplets = maskRegions(masks.peak);
  return pre.spectra.slice(0, K).map(() => ({
    truth: ref,
    sigmaIn: pre.sigmas[0]!,
    hzPerPoint: s.hzPerPoint,
    peakMask: masks.peak,
    baselineMask: masks.baseline,
    multiplets,
    refSigma: pre.sigmas[K]!,
  }));
}

/**
 * Energy SNR against a noisy reference r = s + n: ||y - r||^2 and ||r||^2 both carry the
 * reference's noise energy L sigma_r^2 (y is independent of n: the reference is held out), so
 * it is subtracted from both: 10 log10((||r||^2 - L s_r^2) / (||y - r||^2 - L s_r^2)).
 */
export function energySnrCorrected(y: ArrayLike<number>, r: ArrayLike<number>, refSigma: number): number {
  let rr = 0;
  let ee = 0;
  for (let i = 0; i < r.length; i++) {
    rr += r[i]! * r[i]!;
    ee += (y[i]! - r[i]!) ** 2;
  }
  const noise = r.length * refSigma * refSigma;
  const floor = 1e-6 * rr;
  return 10 * Math.log10(Math.max(rr - noise, floor) / Math.max(ee - noise, floor));
}

/** The metrics of y, with the energy SNR corrected for a held-out reference's noise. */
export function score(y: Float64Array, ctx: Context): Metrics {
  const m = computeMetrics(y, ctx);
  if (ctx.refSigma !== undefined) m.energy_snr_db = energySnrCorrected(y, ctx.truth, ctx.refSigma);
  return m;
}
