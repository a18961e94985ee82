// Fitting the calibration of a model's scale head on held-out simulated samples: the factor on the
// scale whose central 90 % interval covers 90 % of the truth, and the peak-confidence rule that
// best tells the model's true peaks from its false ones there. The samples are preprocessed and
// denoised exactly as the yardstick does, so the factor fitted on the yardstick's tuning samples
// (the first 20 % of a data set) is the one it reports, and its scored samples stay unseen.
import type { UNet1d } from '../model/unet.js';
import { denoiseWithScale } from '../model/denoise.js';
import {
  NmrCalibrationDataError,
  NmrCalibrationFactorError,
  type ScaleCalibration,
} from '../model/calibration.js';
import { preprocessStack } from '../pipeline/preprocess.js';
import {
  CONFIDENCE_DEFINITIONS,
  chooseConfidenceRule,
  confidenceRuleFor,
  scoreConfidence,
  type ConfidenceScore,
} from './confidence.js';
import { factorFor90, newScaleStats, tuneScale } from './coverage.js';
import { truthContexts } from './yard-context.js';
import type { YardSample } from './yardstick.js';

/** Fewer samples give a factor that one spectrum's peaks can swing. */
export const MIN_CALIBRATION_SAMPLES = 2;

/** What {@link calibrateScale} returns: the calibration to store and how the rules did. */
export interface CalibrationResult {
  calibration: ScaleCalibration;
  /** Points the factor was fitted on. */
  points: number;
  /** Each confidence definition on the calibration samples' peaks (with its cut). */
  scores: ConfidenceScore[];
}

/**
 * Fits the scale factor (90 % coverage of the truth) and the confidence rule on simulated samples
 * (`data` names them in the result).
 * @throws NmrCalibrationDataError when a sample has no truth or there are too few samples.
 * @throws NmrCalibrationFactorError when the factor comes out NaN, infinite or zero.
 * @throws NmrUncertaintyError when the model has no scale head.
 */
export function calibrateScale(
  model: UNet1d,
  samples: YardSample[],
  data: string,
  modelName = 'the model',
): CalibrationResult {
  if (samples.length < MIN_CALIBRATION_SAMPLES)
    throw new NmrCalibrationDataError(
      data,
      `${samples.length} sample(s), the calibration needs at least ${MIN_CALIBRATION_SAMPLES}`,
      'give a larger simulated data set or a larger --samples',
    );
  const measured = samples.find((s) => !s.truth || !s.truthPeakMask || !s.trueSigmas);
  if (measured)
    throw new NmrCalibrationDataError(
      measured.name,
      'has no true spectrum (a measured sample)',
      "calibrate on a data set written by 'tailor nmr simulate', whose samples carry their truth",
    );
  const st = newScaleStats(null);
  let inside = 0;
  for (const s of samples) {
    const pre = preprocessStack(s.spectra);
    const ctx = truthContexts(s, pre)![0]!;
    const x = pre.spectra[0]!;
    const r = denoiseWithScale(model, [x], modelName);
    tuneScale(st, x, r.spectra[0]!, r.scales[0]!, ctx);
  }
  const factor = factorFor90(st.ratios);
  if (!(Number.isFinite(factor) && factor > 0)) throw new NmrCalibrationFactorError(factor, data);
  for (const v of st.ratios) if (v <= 1) inside++;
  const rule = chooseConfidenceRule(st.tuningPeaks, factor);
  const scores = CONFIDENCE_DEFINITIONS.map((d) =>
    scoreConfidence(
      st.tuningPeaks,
      d === rule.definition ? rule : confidenceRuleFor(d, st.tuningPeaks, factor),
      factor,
    ),
  );
  return {
    calibration: {
      factor,
      coverage: st.ratios.filter((v) => v <= factor).length / st.ratios.length,
      rawCoverage: inside / st.ratios.length,
      data,
      samples: samples.length,
      confidence: rule,
      fitted: new Date().toISOString(),
    },
    points: st.ratios.length,
    scores,
  };
}
