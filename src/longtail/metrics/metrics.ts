// Evaluation metrics of long-tailed recognition: top-1, per-class accuracy, the many / medium /
// few shot-group averages (groups by training count: > 100, 20..100, < 20; a group without
// classes, or without test images, is reported as null, never as 0), the confusion matrix and
// the expected calibration error.

/**
 * A class's group by its number of training images: 'many' (more than 100), 'medium', 'few' (fewer than 20).
 */
export type ShotGroup = 'many' | 'medium' | 'few';
export const SHOT_GROUPS: readonly ShotGroup[] = ['many', 'medium', 'few'];

/** Classes with more training images than this are 'many'-shot. */
export const MANY_SHOT_ABOVE = 100;
/** Classes with fewer training images than this are 'few'-shot; the rest are 'medium'. */
export const FEW_SHOT_BELOW = 20;

/** many: more than 100 training images; few: fewer than 20; medium: 20..100. */
export function shotGroup(
  trainCount: number,
  manyAbove = MANY_SHOT_ABOVE,
  fewBelow = FEW_SHOT_BELOW,
): ShotGroup {
  if (trainCount > manyAbove) return 'many';
  if (trainCount < fewBelow) return 'few';
  return 'medium';
}

/** The classes of each shot group. */
export function shotGroups(trainCounts: readonly number[]): Record<ShotGroup, number[]> {
  const groups: Record<ShotGroup, number[]> = { many: [], medium: [], few: [] };
  trainCounts.forEach((n, c) => groups[shotGroup(n)].push(c));
  return groups;
}

/** Row-wise argmax of n x classes scores (first maximum wins). */
export function argmaxRows(scores: ArrayLike<number>, n: number, classes: number): Int32Array {
  if (scores.length !== n * classes)
    throw new RangeError(`scores have ${scores.length} values, expected ${n} x ${classes}`);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    let bestValue = -Infinity;
    for (let c = 0; c < classes; c++) {
      const v = scores[i * classes + c]!;
      if (v > bestValue) {
        bestValue = v;
        best = c;
      }
    }
    out[i] = best;
  }
  return out;
}

function checkPair(pred: ArrayLike<number>, labels: ArrayLike<number>): void {
  if (pred.length !== labels.length)
    throw new RangeError(`${pred.length} predictions for ${labels.length} labels`);
}

/** Fraction of correct predictions; null for an empty set. */
export function top1(pred: ArrayLike<number>, labels: ArrayLike<number>): number | null {
  checkPair(pred, labels);
  if (labels.length === 0) return null;
  let correct = 0;
  for (let i = 0; i < labels.length; i++) if (pred[i] === labels[i]) correct++;
  return correct / labels.length;
}

/** Accuracy of each class over its test images; null for a class without test images. */
export function perClassAccuracy(
  pred: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
): (number | null)[] {
  checkPair(pred, labels);
  const total = new Array<number>(classes).fill(0);
  const correct = new Array<number>(classes).fill(0);
  for (let i = 0; i < labels.length; i++) {
    const y = labels[i]!;
    if (!(y >= 0 && y < classes)) throw new RangeError(`label ${y} at ${i} out of range 0..${classes - 1}`);
    total[y]!++;
    if (pred[i] === y) correct[y]!++;
  }
  return total.map((t, c) => (t === 0 ? null : correct[c]! / t));
}

/** Mean per-class accuracy in each shot group (classes without test images are left out). */
export function shotAccuracy(
  perClass: readonly (number | null)[],
  trainCounts: readonly number[],
): Record<ShotGroup, number | null> {
  if (perClass.length !== trainCounts.length)
    throw new RangeError(`${perClass.length} classes, ${trainCounts.length} training counts`);
  const out: Record<ShotGroup, number | null> = { many: null, medium: null, few: null };
  const groups = shotGroups(trainCounts);
  for (const g of SHOT_GROUPS) {
    const values = groups[g]
      .map((c) => perClass[c])
      .filter((v): v is number => v !== null && v !== undefined);
    out[g] = values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  }
  return out;
}

/** counts[true * classes + predicted]. */
export function confusionMatrix(
  pred: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
): Int32Array {
  checkPair(pred, labels);
  const m = new Int32Array(classes * classes);
  for (let i = 0; i < labels.length; i++) {
    const y = labels[i]!;
    const p = pred[i]!;
    if (!(y >= 0 && y < classes && p >= 0 && p < classes))
      throw new RangeError(`label ${y} / prediction ${p} at ${i} out of range`);
    m[y * classes + p]!++;
  }
  return m;
}

/** Row-wise softmax of n x classes logits (float64). */
export function softmaxRows(logits: ArrayLike<number>, n: number, classes: number): Float64Array {
  const out = new Float64Array(n * classes);
  for (let i = 0; i < n; i++) {
    let max = -Infinity;
    for (let c = 0; c < classes; c++) max = Math.max(max, logits[i * classes + c]!);
    let sum = 0;
    for (let c = 0; c < classes; c++) sum += out[i * classes + c] = Math.exp(logits[i * classes + c]! - max);
    for (let c = 0; c < classes; c++) out[i * classes + c]! /= sum;
  }
  return out;
}

/**
 * Expected calibration error (Guo et al. 2017): confidences in `bins` equal-width bins
 * (lo, hi], ECE = sum over bins of |B|/n * |accuracy(B) - mean confidence(B)|.
 */
export function expectedCalibrationError(
  confidence: ArrayLike<number>,
  correct: ArrayLike<boolean | number>,
  bins = 15,
): number | null {
  if (confidence.length !== correct.length)
    throw new RangeError(`${confidence.length} confidences for ${correct.length} outcomes`);
  const n = confidence.length;
  if (n === 0) return null;
  const count = new Float64Array(bins);
  const confSum = new Float64Array(bins);
  const accSum = new Float64Array(bins);
  for (let i = 0; i < n; i++) {
    const p = confidence[i]!;
    if (!(p >= 0 && p <= 1)) throw new RangeError(`confidence ${p} at ${i} is not a probability`);
    const b = Math.min(bins - 1, Math.max(0, Math.ceil(p * bins) - 1));
    count[b]!++;
    confSum[b]! += p;
    accSum[b]! += correct[i] ? 1 : 0;
  }
  let ece = 0;
  for (let b = 0; b < bins; b++) if (count[b]! > 0) ece += Math.abs(accSum[b]! - confSum[b]!) / n;
  return ece;
}

export interface EvaluationReport {
  n: number;
  top1: number | null;
  perClass: (number | null)[];
  groups: Record<ShotGroup, number | null>;
  groupClasses: Record<ShotGroup, number>;
  ece: number | null;
  confusion: Int32Array;
}

/** Everything above from n x classes logits. */
export function evaluateLogits(
  logits: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
  trainCounts: readonly number[],
  eceBins = 15,
): EvaluationReport {
  const n = labels.length;
  const pred = argmaxRows(logits, n, classes);
  const probs = softmaxRows(logits, n, classes);
  const confidence = new Float64Array(n);
  const correct = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    confidence[i] = probs[i * classes + pred[i]!]!;
    correct[i] = pred[i] === labels[i] ? 1 : 0;
  }
  const perClass = perClassAccuracy(pred, labels, classes);
  const groups = shotGroups(trainCounts);
  return {
    n,
    top1: top1(pred, labels),
    perClass,
    groups: shotAccuracy(perClass, trainCounts),
    groupClasses: { many: groups.many.length, medium: groups.medium.length, few: groups.few.length },
    ece: expectedCalibrationError(confidence, correct, eceBins),
    confusion: confusionMatrix(pred, labels, classes),
  };
}
