// The label-shift baselines for any model: the scores they start from, what is fitted on the
// validation split after training (temperature scaling, BCTS, the confusion matrix), and their
// result on one unlabeled test distribution.
import { fitCalibration, applyCalibration, type Calibration } from './calibration.js';
import {
  argmaxRows,
  bbsePrior,
  conditionalConfusion,
  emPrior,
  priorError,
  shiftScores,
} from './label-shift.js';
import { balancedScores } from './prior-shift.js';
import { knownPriorOffsets } from './prior.js';
import { classPrior } from '../losses/priors.js';
import type { TrainableSystem } from '../systems/system.js';
import type { GroupResult, Predictions } from '../train/evaluate.js';
import type { LabelShiftMethod } from './methods.js';

/**
 * The scores the estimators work on: the experts' balanced scores (mean of z_e - o_e, a uniform
 * source prior) where the log prior each expert carries is known, else the model output, taken
 * to carry the training prior.
 */
export interface ScoreBasis {
  basis: 'balanced' | 'output';
  offsets: number[][] | null;
  sourcePrior: number[];
}

export function scoreBasis(system: TrainableSystem & { experts: number }, trainCounts: number[]): ScoreBasis {
  const known = knownPriorOffsets(system, trainCounts);
  const classes = trainCounts.length;
  return 'offsets' in known
    ? { basis: 'balanced', offsets: known.offsets, sourcePrior: new Array<number>(classes).fill(1 / classes) }
    : { basis: 'output', offsets: null, sourcePrior: classPrior(trainCounts) };
}

export function basisScores(b: ScoreBasis, p: Predictions): Float64Array {
  return b.offsets ? balancedScores(p.expertLogits, p, b.offsets) : Float64Array.from(p.logits);
}

/** What is fitted on the validation split after training, and stored with the run. */
export interface ValidationFit {
  basis: ScoreBasis['basis'];
  source_prior: number[];
  n: number;
  temperature: Calibration;
  bcts: Calibration;
  /** P(pred = i | y = j) of the argmax of the scores, for BBSE. */
  confusion: number[][];
}

export function fitOnValidation(b: ScoreBasis, val: Predictions): ValidationFit {
  const scores = basisScores(b, val);
  const options = { sourcePrior: b.sourcePrior };
  return {
    basis: b.basis,
    source_prior: b.sourcePrior,
    n: val.n,
    temperature: fitCalibration(scores, val.labels, val.classes, 'temperature', options),
    bcts: fitCalibration(scores, val.labels, val.classes, 'bcts', options),
    confusion: conditionalConfusion(argmaxRows(scores, val.classes), val.labels, val.classes),
  };
}

export interface LabelShiftResult extends GroupResult {
  estimated_prior: number[];
  prior_error: { l1: number; kl: number };
  em_iterations?: number;
}

/** Every label-shift baseline on one distribution (its predictions and its true class counts). */
export function labelShiftBaselines(
  fit: ValidationFit,
  b: ScoreBasis,
  p: Predictions,
  counts: number[],
  score: (logits: ArrayLike<number>) => GroupResult,
  methods: readonly LabelShiftMethod[],
): Partial<Record<LabelShiftMethod, LabelShiftResult>> {
  const total = counts.reduce((s, v) => s + v, 0);
  const truth = counts.map((v) => v / total);
  const scores = basisScores(b, p);
  const source = fit.source_prior;
  const out: Partial<Record<LabelShiftMethod, LabelShiftResult>> = {};
  const em = (s: Float64Array): LabelShiftResult => {
    const e = emPrior(s, p.classes, source);
    return {
      ...score(shiftScores(s, e.prior, source)),
      estimated_prior: e.prior,
      prior_error: priorError(e.prior, truth),
      em_iterations: e.iterations,
    };
  };
  for (const m of methods) {
    if (m === 'em') out.em = em(scores);
    else if (m === 'em_ts') out.em_ts = em(applyCalibration(scores, fit.temperature));
    else if (m === 'em_bcts') out.em_bcts = em(applyCalibration(scores, fit.bcts));
    else {
      const q = bbsePrior(fit.confusion, argmaxRows(scores, p.classes), p.classes);
      out.bbse = {
        ...score(shiftScores(scores, q, source)),
        estimated_prior: q,
        prior_error: priorError(q, truth),
      };
    }
  }
  return out;
}
