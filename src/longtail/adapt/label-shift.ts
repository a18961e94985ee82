// Label-shift estimators that apply to any model, single or multi-expert, given its scores
// (balanced scores where the experts' log prior is known, the output otherwise) and the source
// prior those scores stand for:
// - EM / MLLS (Saerens, Latinne and Decaestecker, 2002): posteriors reweighted by q / p_source,
//   q = their mean, to a fixed point; on raw, temperature-scaled or BCTS-calibrated scores;
// - BBSE (Lipton, Wang and Smola, ICML 2018): the test histogram of hard predictions equals the
//   validation confusion matrix P(pred | y) times q; solved for q, clipped and renormalized.
// Each gives a prior q; the adapted prediction is argmax s + log q - log p_source.
import { softmaxRows } from '../metrics/metrics.js';

/** EM prior estimation from scores whose softmax are posteriors under sourcePrior. */
export function emPrior(
  scores: ArrayLike<number>,
  classes: number,
  sourcePrior: number[],
  options: { maxIterations?: number; tolerance?: number } = {},
): { prior: number[]; iterations: number; converged: boolean } {
  const n = scores.length / classes;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`emPrior: ${scores.length} scores for ${classes} classes`);
  const probs = softmaxRows(scores, n, classes);
  const maxIterations = options.maxIterations ?? 1000;
  const tolerance = options.tolerance ?? 1e-8;
  const source = sourcePrior.map((p) => Math.max(p, 1e-12));
  let prior = [...source];
  for (let it = 1; it <= maxIterations; it++) {
    const ratio = prior.map((q, c) => q / source[c]!);
    const next = new Array<number>(classes).fill(0);
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let c = 0; c < classes; c++) z += probs[i * classes + c]! * ratio[c]!;
      z = Math.max(z, 1e-300);
      for (let c = 0; c < classes; c++) next[c]! += (probs[i * classes + c]! * ratio[c]!) / z / n;
    }
    const change = Math.max(...next.map((p, c) => Math.abs(p - prior[c]!)));
    prior = next;
    if (change < tolerance) return { prior, iterations: it, converged: true };
  }
  return { prior, iterations: maxIterations, converged: false };
}

/** Row-wise argmax of scores [n x C]. */
export function argmaxRows(scores: ArrayLike<number>, classes: number): Int32Array {
  const n = scores.length / classes;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (scores[i * classes + c]! > scores[i * classes + best]!) best = c;
    out[i] = best;
  }
  return out;
}

/** P(pred = i | y = j) as a C x C matrix [i][j] from labelled predictions; empty classes get identity columns. */
export function conditionalConfusion(
  predicted: ArrayLike<number>,
  labels: ArrayLike<number>,
  classes: number,
) {
  const m = Array.from({ length: classes }, () => new Array<number>(classes).fill(0));
  const perClass = new Array<number>(classes).fill(0);
  for (let k = 0; k < labels.length; k++) {
    m[predicted[k]!]![labels[k]!]!++;
    perClass[labels[k]!]!++;
  }
  for (let j = 0; j < classes; j++)
    for (let i = 0; i < classes; i++) m[i]![j] = perClass[j] ? m[i]![j]! / perClass[j]! : i === j ? 1 : 0;
  return m;
}

/** Solves A x = y by Gaussian elimination with partial pivoting; null when singular. */
export function solveLinear(a: number[][], y: number[]): number[] | null {
  const n = y.length;
  const m = a.map((row, i) => [...row, y[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    if (Math.abs(m[pivot]![col]!) < 1e-12) return null;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / m[col]![col]!;
      if (f !== 0) for (let c = col; c <= n; c++) m[r]![c]! -= f * m[col]![c]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/**
 * BBSE: the test prior q with confusion q = histogram of the test predictions, clipped at zero
 * and renormalized; the least-squares solution (normal equations) when the matrix is singular.
 */
export function bbsePrior(
  confusion: number[][],
  testPredicted: ArrayLike<number>,
  classes: number,
): number[] {
  const histogram = new Array<number>(classes).fill(0);
  for (let k = 0; k < testPredicted.length; k++) histogram[testPredicted[k]!]! += 1 / testPredicted.length;
  let q = solveLinear(confusion, histogram);
  if (!q) {
    // normal equations with a small ridge: the matrix has an empty or indistinguishable class
    const at = confusion[0]!.map((_, j) => confusion.map((row) => row[j]!));
    const ata = at.map((r) => at.map((s) => r.reduce((t, v, k) => t + v * s[k]!, 0)));
    ata.forEach((row, i) => (row[i]! += 1e-6));
    q =
      solveLinear(
        ata,
        at.map((r) => r.reduce((t, v, k) => t + v * histogram[k]!, 0)),
      ) ?? histogram;
  }
  const clipped = q.map((v) => Math.max(v, 0));
  const total = clipped.reduce((s, v) => s + v, 0);
  return total > 0 ? clipped.map((v) => v / total) : new Array<number>(classes).fill(1 / classes);
}

/** The scores re-targeted from the source prior to q: s + log q - log p_source ([n x C], float32). */
export function shiftScores(scores: ArrayLike<number>, q: number[], sourcePrior: number[]): Float32Array {
  const classes = q.length;
  const shift = q.map((v, c) => Math.log(Math.max(v, 1e-12)) - Math.log(Math.max(sourcePrior[c]!, 1e-12)));
  const out = new Float32Array(scores.length);
  for (let k = 0; k < scores.length; k++) out[k] = scores[k]! + shift[k % classes]!;
  return out;
}

/** How far an estimated prior is from the true one: L1 distance and KL(true || estimate). */
export function priorError(estimate: number[], truth: number[]): { l1: number; kl: number } {
  let l1 = 0;
  let kl = 0;
  truth.forEach((p, c) => {
    const q = estimate[c]!;
    l1 += Math.abs(p - q);
    if (p > 0) kl += p * Math.log(p / Math.max(q, 1e-12));
  });
  return { l1, kl };
}
