// Test-time label-shift pieces that need the trained system: the experts' log-prior offsets read
// from its loss, prior matching on one distribution, and the true-prior oracle.
import {
  estimateTestPrior,
  expertPriorOffsets,
  matchPriorWeights,
  familyPriorByLikelihood,
} from './prior-shift.js';
import { logPrior } from '../losses/priors.js';
import type { TrainableSystem } from '../systems/system.js';
import type { GroupResult, Predictions } from '../train/evaluate.js';

/**
 * likelihood: the most likely prior of the experts' family given the unlabeled set;
 * least_squares: the family member nearest (in log space) to the unconstrained EM estimate.
 */
export type PriorFit = 'likelihood' | 'least_squares';
export const DEFAULT_PRIOR_FIT: PriorFit = 'likelihood';

export interface PriorMatched extends GroupResult {
  weights?: number[];
  preference?: number[];
  fit: PriorFit;
  /** The prior of the family the weights were matched to (the likelihood fit), when fit is likelihood. */
  family_prior?: number[];
  estimated_prior: number[];
  em_iterations: number;
  /** The balanced scores plus the log of the estimated prior (EM's own Bayes correction). */
  adjusted: GroupResult;
}

/**
 * Each expert's log-prior offset o_e (prior-shift.ts), from the loss's logit biases, or why they
 * are unknown. A loss with one bias for a multi-expert model trained the combined output, so
 * every expert gets it.
 */
export function knownPriorOffsets(
  system: TrainableSystem & { experts: number },
  trainCounts: number[],
): { offsets: number[][] } | { unknown: string } {
  const { loss, experts } = system;
  const biases = loss.logitBiases;
  if (!biases) {
    return {
      unknown: `${loss.type} (as configured) is not a logit-adjusted cross-entropy, so the log prior its logits carry is unknown`,
    };
  }
  const perExpert = biases.length === 1 ? new Array(experts).fill(biases[0]) : biases;
  if (perExpert.length !== experts) {
    throw new Error(`${loss.type}: ${biases.length} logit biases for ${experts} experts`);
  }
  return { offsets: expertPriorOffsets(perExpert, logPrior(trainCounts, 1)) };
}

function plusLogPrior(scores: ArrayLike<number>, logPrior: number[]): Float32Array {
  const classes = logPrior.length;
  const out = new Float32Array(scores.length);
  for (let k = 0; k < scores.length; k++) out[k] = scores[k]! + logPrior[k % classes]!;
  return out;
}

/**
 * Prior matching on one distribution: the weights (PRL: the preference) whose log-prior offset
 * fits its prior, fitted from its balanced scores (balancedScores with the same offsets) as `fit`
 * says, and scored through `logitsFor`. The unconstrained EM estimate is reported either way, and
 * gives the adjusted scores.
 */
export function priorMatched(
  p: Predictions,
  offsets: number[][],
  scores: Float64Array,
  score: (l: ArrayLike<number>) => GroupResult,
  logitsFor: (w: number[]) => Float32Array,
  isPrl: boolean,
  fit: PriorFit = DEFAULT_PRIOR_FIT,
): PriorMatched {
  const estimate = estimateTestPrior(scores, p.classes);
  // A class EM drives to (nearly) zero would dominate the fit in log space.
  const logEstimate = estimate.prior.map((v) => Math.log(Math.max(v, 1e-6)));
  const familyPrior = fit === 'likelihood' ? familyPriorByLikelihood(offsets, scores, p.classes) : null;
  // The likelihood fixes the prior, not the weights where the family is degenerate (forward and
  // backward experts cancel): the least-squares match then picks the most even weights giving it.
  const weights = matchPriorWeights(
    offsets,
    familyPrior ? familyPrior.map((v) => Math.log(Math.max(v, 1e-300))) : logEstimate,
  );
  return {
    ...score(logitsFor(weights)),
    ...(isPrl ? { preference: weights } : { weights }),
    fit,
    ...(familyPrior ? { family_prior: familyPrior } : {}),
    estimated_prior: estimate.prior,
    em_iterations: estimate.iterations,
    adjusted: score(plusLogPrior(scores, logEstimate)),
  };
}

/**
 * The oracle: the log of the true test prior (from the distribution's class counts) added to the
 * balanced scores, or to the model output where the experts' offsets are unknown (which counts
 * the training prior twice for a plain CE model).
 */
export function oracle(
  p: Predictions,
  counts: number[],
  score: (l: ArrayLike<number>) => GroupResult,
  balanced: Float64Array | null,
): GroupResult {
  const total = counts.reduce((a, b) => a + b, 0);
  const logTestPrior = counts.map((c) => Math.log(Math.max(c, 1e-12) / total));
  return score(plusLogPrior(balanced ?? p.logits, logTestPrior));
}
