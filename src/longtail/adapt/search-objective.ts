// What the self-supervised searches optimize. 'stability' is SADE's: the aggregated predictions of
// two augmented views should agree. Alone it rewards collapse: the expert (or PRL preference) that
// is most confident and least sensitive to the views wins, which on the full Fashion-MNIST-LT kept
// PRL's search near the forward corner even on backward test sets, below doing nothing.
// 'consistent' adds a prior-consistency term: the KL divergence from the test prior that EM
// estimates from the fixed, un-augmented scores (BCTS-calibrated on the validation split when the
// run has one) to the mean prediction of the batch. A collapsed mixture predicts a marginal far
// from that estimate unless the test set really is that skewed, so collapse is no longer free.
// A mild constant bias can still win view agreement at little cost in that term, so the searches
// run under 'consistent' also pass a guard on the labelled validation split: reweighted to the
// estimated test prior, the weights found must score at least as well as the uniform start,
// else the start (doing nothing) is kept. Neither step reads test labels.
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import type { TrainableSystem } from '../systems/system.js';
import type { Predictions } from '../train/evaluate.js';
import { applyCalibration } from './calibration.js';
import { emPrior } from './label-shift.js';
import { basisScores, scoreBasis, type ValidationFit } from './baselines.js';

/**
 * What the unlabelled test-time searches maximise: 'stability' (agreement between two augmented views) or 'consistent' (also close to the estimated test prior).
 */
export type SearchObjective = 'stability' | 'consistent';
/** Every {@link SearchObjective}. */
export const SEARCH_OBJECTIVES: readonly SearchObjective[] = ['stability', 'consistent'];
// Chosen on the validation split with the pool's steps matched to the test set's (BENCHMARKS.md).
export const DEFAULT_CONSISTENCY_WEIGHT = 3;

/** KL(target || mean softmax of both views' aggregated logits [N, C]). */
export function priorConsistency(a1: Tensor, a2: Tensor, target: Tensor): Tensor {
  return torch.tidy(() => {
    const mean = a1.softmax(1).add(a2.softmax(1)).mul(0.5).mean(0);
    const logMean = mean.clamp(1e-8).log();
    return target.mul(target.clamp(1e-12).log().sub(logMean)).sum();
  });
}

/** The EM estimate of a distribution's prior from the model's fixed scores. */
export function targetPrior(
  system: TrainableSystem & { experts: number },
  trainCounts: number[],
  p: Predictions,
  fit: ValidationFit | null,
): number[] {
  const basis = scoreBasis(system, trainCounts);
  const scores = basisScores(basis, p);
  return emPrior(fit ? applyCalibration(scores, fit.bcts) : scores, p.classes, basis.sourcePrior).prior;
}

/**
 * Accuracy on the labelled validation split reweighted to a test prior: each image of class c
 * counts prior[c] / (its class's validation count). It estimates the accuracy on a test set with
 * that prior without touching test labels; the searches use it as a guard, keeping the starting
 * weights (doing nothing) when what the search found is worse at the estimated test prior.
 */
export function priorWeightedAccuracy(
  logits: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
  prior: number[],
): number {
  const perClass = new Array<number>(classes).fill(0);
  for (let i = 0; i < labels.length; i++) perClass[labels[i]!]!++;
  let acc = 0;
  let total = 0;
  for (let i = 0; i < labels.length; i++) {
    const y = labels[i]!;
    let best = 0;
    for (let c = 1; c < classes; c++) if (logits[i * classes + c]! > logits[i * classes + best]!) best = c;
    const w = prior[y]! / perClass[y]!;
    total += w;
    if (best === y) acc += w;
  }
  return total > 0 ? acc / total : 0;
}
