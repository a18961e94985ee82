// Test-time adaptation on a pool of unlabeled images as it is (`tailor predict`): the same
// runTestTime as `tailor test-time-train`, on one "distribution", the whole pool, and the choice it
// made (the aggregation weights, the preference, the matched weights, the estimated prior) applied
// to the pool's predictions. The pool has no labels (every image carries label 0), so only the
// choices are used, never the accuracies runTestTime computes along the way.
import { UserError } from '../../util/errors.js';
import { softmaxRows } from '../metrics/metrics.js';
import { classPrior } from '../losses/priors.js';
import { applyCalibration } from './calibration.js';
import { basisScores, scoreBasis, type ValidationFit } from './baselines.js';
import { emPrior, shiftScores } from './label-shift.js';
import { preferenceLogits, weightedExperts } from './score.js';
import { knownPriorOffsets } from './prior.js';
import { runTestTime, WHOLE_POOL, type AdaptInput, type TestTimeOptions } from './testtime.js';
import type { TestTimeMethod } from './methods.js';

/** The adaptations `tailor predict` offers, by their CLI names. */
export const PREDICT_ADAPTATIONS = [
  'none',
  'em',
  'em-bcts',
  'bbse',
  'prior',
  'aggregation',
  'preference',
] as const;
/** One of {@link PREDICT_ADAPTATIONS}. */
export type PredictAdaptation = (typeof PREDICT_ADAPTATIONS)[number];

/** An adaptation the run cannot do (no validation split, no hypernetwork, unknown expert priors). */
export class AdaptationError extends UserError {}

/** The result of adapting a run to an unlabeled pool: probabilities and what was estimated. */
export interface UnlabeledAdaptation {
  n: number;
  classes: number;
  /** n x classes probabilities after the adaptation (calibrated where a calibration is known). */
  probabilities: Float64Array;
  /** The EM estimate of the pool's class prior (on BCTS-calibrated scores where known). */
  estimatedPrior: number[];
  trainingPrior: number[];
  /** What the adaptation chose: expert weights, a preference, or a prior. */
  chosen: { weights?: number[]; preference?: number[]; prior?: number[] };
  /** Where the probabilities' calibration came from. */
  calibration: { kind: 'temperature' | 'bcts' | 'none'; temperature?: number; source: string };
}

/** test-time-train's method of each adaptation (what runs on the input). */
export const ADAPTATION_METHOD: Record<Exclude<PredictAdaptation, 'none'>, TestTimeMethod> = {
  em: 'em',
  'em-bcts': 'em_bcts',
  bbse: 'bbse',
  prior: 'prior',
  aggregation: 'aggregation',
  preference: 'preference',
};

/**
 * Adapts the system to the pool `input.test` (its labels ignored). `stored` is the calibration
 * the run stored after training (results.json), used before one fitted here on the validation split.
 */
export async function adaptUnlabeled(
  input: AdaptInput,
  adaptation: PredictAdaptation,
  options: TestTimeOptions,
  stored: { fit: ValidationFit | null; source: string },
  log: (s: string) => void,
): Promise<UnlabeledAdaptation> {
  const { system, trainCounts } = input;
  const prl = system.kind === 'prl' ? system : null;
  if (adaptation === 'preference' && !prl)
    throw new AdaptationError(`--adapt preference needs a PRL run (this run has no hypernetwork)`);
  if ((adaptation === 'em' || adaptation === 'em-bcts' || adaptation === 'bbse') && !input.val)
    throw new AdaptationError(
      `--adapt ${adaptation} needs the run's validation split (calibration, confusion matrix); this run has none`,
    );
  if (adaptation === 'prior') {
    const known = knownPriorOffsets(system, trainCounts);
    if ('unknown' in known)
      throw new AdaptationError(`--adapt prior: ${known.unknown}; use aggregation or em-bcts`);
  }
  const methods: TestTimeMethod[] = adaptation === 'none' ? [] : [ADAPTATION_METHOD[adaptation]];
  // EM after BCTS also gives the summary's estimated prior (one pass over the validation split).
  if (input.val && !methods.includes('em_bcts')) methods.push('em_bcts');
  const ran = await runTestTime(input, { ...options, methods, distributions: [WHOLE_POOL] }, log);
  const result = ran.results[WHOLE_POOL]!;
  const p = ran.predictions;
  const classes = p.classes;
  const basis = scoreBasis(system, trainCounts);
  const fit = stored.fit ?? ran.calibration;
  const calibration: UnlabeledAdaptation['calibration'] = !fit
    ? { kind: 'none', source: 'none: no calibration stored and no validation split (plain softmax)' }
    : adaptation === 'em-bcts'
      ? {
          kind: 'bcts',
          temperature: fit.bcts.temperature,
          source: stored.fit ? stored.source : 'validation split',
        }
      : {
          kind: 'temperature',
          temperature: fit.temperature.temperature,
          source: stored.fit ? stored.source : 'validation split',
        };
  const scaled = (scores: ArrayLike<number>) => (fit ? applyCalibration(scores, fit.temperature) : scores);
  const shifted = result.label_shift;
  let scores: ArrayLike<number>;
  const chosen: UnlabeledAdaptation['chosen'] = {};
  if (adaptation === 'none') {
    scores = scaled(p.logits);
  } else if (adaptation === 'em' || adaptation === 'bbse' || adaptation === 'em-bcts') {
    const r = shifted?.[ADAPTATION_METHOD[adaptation] as 'em' | 'bbse' | 'em_bcts'];
    if (!r) throw new AdaptationError(`--adapt ${adaptation}: the estimator did not run`);
    chosen.prior = r.estimated_prior;
    const source = basis.sourcePrior;
    const raw = basisScores(basis, p);
    scores =
      adaptation === 'em-bcts'
        ? shiftScores(applyCalibration(raw, fit!.bcts), r.estimated_prior, source)
        : scaled(shiftScores(raw, r.estimated_prior, source));
  } else if (adaptation === 'aggregation') {
    const weights = result.aggregation!.weights;
    chosen.weights = weights;
    scores = scaled(weightedExperts(weights, p));
  } else if (adaptation === 'preference') {
    const preference = result.preference!.preference;
    chosen.preference = preference;
    scores = scaled(preferenceLogits(prl!, ran.features!, preference, allRows(p.n)));
  } else {
    const matched = result.prior;
    if (!matched) throw new AdaptationError('--adapt prior: prior matching did not run');
    chosen.prior = matched.estimated_prior;
    if (matched.preference) {
      chosen.preference = matched.preference;
      scores = scaled(preferenceLogits(prl!, ran.features!, matched.preference, allRows(p.n)));
    } else {
      chosen.weights = matched.weights!;
      scores = scaled(weightedExperts(matched.weights!, p));
    }
  }
  const estimatedPrior =
    shifted?.em_bcts?.estimated_prior ?? emPrior(basisScores(basis, p), classes, basis.sourcePrior).prior;
  return {
    n: p.n,
    classes,
    probabilities: softmaxRows(scores, p.n, classes),
    estimatedPrior,
    trainingPrior: classPrior(trainCounts),
    chosen,
    calibration,
  };
}

const allRows = (n: number) => Int32Array.from({ length: n }, (_, i) => i);
