// Scoring one test distribution after the searches: the model before any step, each method's
// result, the guard that keeps the uniform start where a search lost on the validation split, and
// the oracle; and the one-line summary the command prints.
import * as torch from '../../torch/index.js';
import type { optim, Tensor } from '../../torch/index.js';
import { evaluateLogits } from '../metrics/metrics.js';
import type { PrlSystem, System } from '../systems/index.js';
import { summarize, type GroupResult, type Predictions } from '../train/evaluate.js';
import { featuresTensor, type ExpertFeatures } from '../train/features.js';
import { oracle, priorMatched, type PriorFit, type PriorMatched } from './prior.js';
import { balancedScores } from './prior-shift.js';
import {
  labelShiftBaselines,
  type LabelShiftResult,
  type ScoreBasis,
  type ValidationFit,
} from './baselines.js';
import type { LabelShiftMethod } from './methods.js';
import { priorWeightedAccuracy } from './search-objective.js';

/**
 * A test-time search as it ran: epochs, whether it stopped early or kept its start, the settings
 * searched.
 */
export interface Searched {
  epochs: number;
  stopped_early: boolean;
  kept_start?: boolean;
  searched?: number[];
  /**
   * Accuracy on the labelled validation split reweighted to the estimated test prior, of the
   * weights found (`searched`) and of the uniform start: recorded wherever a validation split
   * exists, so that a search that collapsed shows it without test labels.
   */
  validation?: { searched: number; start: number };
}

/**
 * The test-time results of one test distribution: its size and class counts, the accuracy before adaptation and after each method that ran.
 */
export interface DistributionTestTime {
  n: number;
  /** Test images per class of this distribution (its true prior, for the prior errors). */
  counts: number[];
  before: GroupResult;
  /** kept_start: the guard kept the uniform start over what the search found (`searched`). */
  aggregation?: GroupResult & Searched & { weights: number[] };
  preference?: GroupResult & Searched & { preference: number[] };
  /** Prior matching: `weights`, or for PRL `preference`, fitted to the test prior (`priorFit`). */
  prior?: PriorMatched;
  /** EM with and without calibration, BBSE (fitted on the validation split). */
  label_shift?: Partial<Record<LabelShiftMethod, LabelShiftResult>>;
  oracle: GroupResult;
}

/** One learner per distribution and method: the parameter on the simplex and its optimizer. */
export interface SimplexLearner {
  theta: Tensor;
  opt: optim.SGD | optim.AdamW;
  epochs: number;
  stopped: boolean;
}

export function weightedSum(expertLogits: Tensor, weights: Tensor): Tensor {
  // expertLogits [E, N, C], weights [E]
  return expertLogits.mul(weights.reshape(-1, 1, 1)).sum(0);
}

/** The experts' logits [E, N, C] of some predictions weighted by w (SADE's aggregation). */
export function weightedExperts(w: number[], p: Predictions): Float32Array {
  return torch.tidy(() =>
    weightedSum(
      torch.tensor(p.expertLogits, { shape: [p.experts, p.n, p.classes] }),
      torch.tensor(w),
    ).toFloat32Array(),
  );
}

/** PRL's output for preference r on some rows of the test set: the experts generated for r. */
export function preferenceLogits(
  prl: PrlSystem,
  f: ExpertFeatures,
  r: number[],
  rows: Int32Array,
): Float32Array {
  return torch.noGrad(() =>
    torch.tidy(() => {
      const sub = featuresTensor(f).indexSelect(1, torch.tensor(rows).long());
      return prl.logitsAt(r, sub)[0]!.output.toFloat32Array();
    }),
  );
}

/**
 * The labelled validation split's predictions (and PRL features) for the searches' guard.
 * 'enforce' keeps the uniform start where the search lost on the split (the 'consistent'
 * objective); 'check' only records both accuracies (the published objective, kept as published).
 */
export interface ValidationGuard {
  val: Predictions;
  features: ExpertFeatures | null;
  aggregation: 'enforce' | 'check' | false;
  preference: boolean;
}

/** A search is reported as having collapsed when it loses this much on the validation split. */
export const COLLAPSE_MARGIN = 0.05;

export interface DistributionTask {
  targetPrior: number[] | null;
  rows: Int32Array;
  counts: number[];
  predictions: Predictions;
  aggregation: SimplexLearner | null;
  preference: SimplexLearner | null;
}

/** Before, after each method, and the oracle, on one distribution. */
export function scoreDistribution(
  t: DistributionTask,
  c: {
    system: System;
    prl: PrlSystem | null;
    features: ExpertFeatures | null;
    knownOffsets: number[][] | null;
    offsets: number[][] | null;
    priorFit: PriorFit;
    trainCounts: number[];
    calibration: { basis: ScoreBasis; fit: ValidationFit } | null;
    labelShift: LabelShiftMethod[];
    guard: ValidationGuard | null;
  },
): DistributionTestTime {
  const { predictions } = t;
  const { prl, features } = c;
  const score = (logits: ArrayLike<number>) =>
    summarize(evaluateLogits(logits, predictions.labels, predictions.classes, c.trainCounts));
  const before = score(predictions.logits);
  // The experts' scores without the log prior each carries: for the oracle and prior matching.
  const balanced = c.knownOffsets
    ? balancedScores(predictions.expertLogits, predictions, c.knownOffsets)
    : null;
  const entry: DistributionTestTime = {
    n: predictions.n,
    counts: t.counts,
    before,
    oracle: oracle(predictions, t.counts, score, balanced),
  };
  if (c.calibration && c.labelShift.length > 0) {
    const { basis, fit } = c.calibration;
    entry.label_shift = labelShiftBaselines(fit, basis, predictions, t.counts, score, c.labelShift);
  }
  // The guard: keep the uniform start where the search's result is worse on the validation
  // split reweighted to this distribution's estimated prior (with enforce false, only record both).
  const guarded = (found: number[], valLogits: (w: number[]) => ArrayLike<number>, enforce = true) => {
    const g = c.guard!;
    const start = found.map(() => 1 / found.length);
    const acc = (w: number[]) =>
      priorWeightedAccuracy(valLogits(w), g.val.labels, g.val.classes, t.targetPrior!);
    const validation = { searched: acc(found), start: acc(start) };
    return !enforce || validation.searched >= validation.start
      ? { weights: found, kept_start: false, validation }
      : { weights: start, kept_start: true, validation };
  };
  if (t.aggregation) {
    const found = torch.tidy(() => t.aggregation!.theta.softmax(0).toNumbers());
    const mode = c.guard?.aggregation;
    const checked =
      mode && t.targetPrior
        ? guarded(found, (w) => weightedExperts(w, c.guard!.val), mode === 'enforce')
        : { weights: found, kept_start: false, validation: undefined };
    const weights = checked.weights;
    entry.aggregation = {
      ...score(weightedExperts(weights, predictions)),
      weights,
      ...(checked.kept_start ? { kept_start: true, searched: found } : {}),
      ...(checked.validation ? { validation: checked.validation } : {}),
      epochs: t.aggregation.epochs,
      stopped_early: t.aggregation.stopped,
    };
  }
  if (c.offsets && balanced) {
    entry.prior = priorMatched(
      predictions,
      c.offsets,
      balanced,
      score,
      (w) => (prl && features ? preferenceLogits(prl, features, w, t.rows) : weightedExperts(w, predictions)),
      prl !== null,
      c.priorFit,
    );
  }
  if (t.preference && prl && features) {
    const found = torch.tidy(() => t.preference!.theta.softmax(0).toNumbers());
    const g = c.guard;
    const checked =
      g?.preference && g.features && t.targetPrior
        ? guarded(found, (r) =>
            preferenceLogits(
              prl,
              g.features!,
              r,
              Int32Array.from({ length: g.val.n }, (_, i) => i),
            ),
          )
        : { weights: found, kept_start: false, validation: undefined };
    const preference = checked.weights;
    entry.preference = {
      ...score(preferenceLogits(prl, features, preference, t.rows)),
      preference,
      ...(checked.kept_start ? { kept_start: true, searched: found } : {}),
      ...(checked.validation ? { validation: checked.validation } : {}),
      epochs: t.preference.epochs,
      stopped_early: t.preference.stopped,
    };
  }
  return entry;
}

export function describe(name: string, entry: DistributionTestTime, isPrl: boolean): string {
  const pct = (v: number | null | undefined) => (v === null || v === undefined ? '-' : (100 * v).toFixed(2));
  return (
    `${name}: before ${pct(entry.before.top1)}` +
    (entry.aggregation
      ? ` | aggregation ${pct(entry.aggregation.top1)} weights ${entry.aggregation.weights.map((v) => v.toFixed(3)).join('/')}`
      : '') +
    (entry.preference
      ? ` | preference ${pct(entry.preference.top1)} r ${entry.preference.preference.map((v) => v.toFixed(3)).join('/')}`
      : '') +
    (entry.prior
      ? ` | prior ${pct(entry.prior.top1)} ${isPrl ? 'r' : 'weights'} ${(entry.prior.preference ?? entry.prior.weights ?? []).map((v) => v.toFixed(3)).join('/')} (adjusted ${pct(entry.prior.adjusted.top1)})`
      : '') +
    Object.entries(entry.label_shift ?? {})
      .map(([m, r]) => ` | ${m} ${pct(r.top1)}`)
      .join('') +
    ` | oracle prior ${pct(entry.oracle.top1)}`
  );
}

/**
 * A warning when SADE's published aggregation (not guarded, kept as published) lost more than
 * COLLAPSE_MARGIN on the validation split at the estimated prior: its objective rewards putting
 * the weight on the most view-stable expert, which collapses on experts that are not classifiers
 * on their own (a CE model's heads trained only through their average).
 */
export function collapseWarning(name: string, entry: DistributionTestTime): string | null {
  const a = entry.aggregation;
  if (!a?.validation || a.kept_start) return null;
  const { searched, start } = a.validation;
  if (searched >= start - COLLAPSE_MARGIN) return null;
  const pct = (v: number) => (100 * v).toFixed(2);
  return (
    `warning: ${name}: the aggregation weights found score ${pct(searched)} on the validation split ` +
    `at the estimated prior, against ${pct(start)} for the uniform start: the search has likely ` +
    `collapsed onto one expert; set "aggregation_objective": "consistent" in the test-time config ` +
    `to keep the start where the search loses`
  );
}
