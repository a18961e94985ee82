// Label-shift adaptation from the experts' known logit biases.
//
// An expert trained with CE(z_e + b_e) on a training prior pi learns z_e + b_e ~ log p_train(y|x)
// = log p(x|y) + log pi + const, so its logits carry the log prior o_e = log pi - b_e on top of the
// balanced score log p(x|y): o = log pi for plain CE, 0 for balanced softmax, about -log pi for
// the inverse-prior (backward) experts. Two things follow:
// - the balanced scores z_e - o_e of all experts give the test prior by Saerens et al.'s EM
//   ("Adjusting the outputs of a classifier to new a priori probabilities", 2002);
// - weights w on the simplex make sum_e w_e z_e carry the log prior sum_e w_e o_e, so the weights
//   (or PRL's preference) whose offset is closest to the estimated log test prior fit that set.
import { softmaxRows } from '../metrics/metrics.js';

export interface PriorEstimate {
  prior: number[];
  iterations: number;
  converged: boolean;
}

/** The log prior each expert's logits carry: o_e = log pi - b_e (b_e null: plain CE). */
export function expertPriorOffsets(biases: readonly (readonly number[] | null)[], logTrainPrior: number[]) {
  return biases.map((b, e) => {
    if (b && b.length !== logTrainPrior.length) {
      throw new Error(
        `expert ${e}: logit bias has ${b.length} classes, the training prior ${logTrainPrior.length}`,
      );
    }
    return logTrainPrior.map((lp, c) => lp - (b ? b[c]! : 0));
  });
}

/**
 * Balanced scores [n x C] (float64): the mean over experts of z_e - o_e. expertLogits is
 * experts x n x C, restricted to `rows` when given.
 */
export function balancedScores(
  expertLogits: ArrayLike<number>,
  shape: { experts: number; n: number; classes: number },
  offsets: number[][],
  rows?: ArrayLike<number>,
): Float64Array {
  const { experts, n, classes } = shape;
  if (offsets.length !== experts) {
    throw new Error(`${offsets.length} expert offsets for ${experts} experts`);
  }
  const m = rows ? rows.length : n;
  const out = new Float64Array(m * classes);
  for (let e = 0; e < experts; e++) {
    const o = offsets[e]!;
    for (let i = 0; i < m; i++) {
      const src = (e * n + (rows ? rows[i]! : i)) * classes;
      for (let c = 0; c < classes; c++) out[i * classes + c]! += (expertLogits[src + c]! - o[c]!) / experts;
    }
  }
  return out;
}

/**
 * Maximum-likelihood test prior by EM, from balanced scores (a uniform source prior):
 * q(y|x) is proportional to softmax(s(x))_y * prior_y, and the prior is the mean of q.
 */
export function estimateTestPrior(
  scores: ArrayLike<number>,
  classes: number,
  options: { maxIterations?: number; tolerance?: number } = {},
): PriorEstimate {
  const n = scores.length / classes;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`estimateTestPrior: ${scores.length} scores for ${classes} classes`);
  const maxIterations = options.maxIterations ?? 1000;
  const tolerance = options.tolerance ?? 1e-8;
  const probs = softmaxRows(scores, n, classes);
  let prior = new Array<number>(classes).fill(1 / classes);
  for (let it = 1; it <= maxIterations; it++) {
    const next = new Array<number>(classes).fill(0);
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let c = 0; c < classes; c++) z += probs[i * classes + c]! * prior[c]!;
      for (let c = 0; c < classes; c++) next[c]! += (probs[i * classes + c]! * prior[c]!) / z / n;
    }
    const change = Math.max(...next.map((p, c) => Math.abs(p - prior[c]!)));
    prior = next;
    if (change < tolerance) return { prior, iterations: it, converged: true };
  }
  return { prior, iterations: maxIterations, converged: false };
}

/** Euclidean projection onto the probability simplex (Duchi et al., 2008). */
export function projectToSimplex(v: number[]): number[] {
  const sorted = [...v].sort((a, b) => b - a);
  let cumulative = 0;
  let theta = 0;
  for (let k = 0; k < sorted.length; k++) {
    cumulative += sorted[k]!;
    const t = (cumulative - 1) / (k + 1);
    if (sorted[k]! - t > 0) theta = t;
  }
  return v.map((x) => Math.max(x - theta, 0));
}

function centered(v: number[]): number[] {
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  return v.map((x) => x - mean);
}

/**
 * Weights on the simplex whose log-prior offset sum_e w_e o_e is closest (up to a constant) to the
 * target log prior, in mean squared log units. The experts usually span a one-parameter family
 * (forward, uniform and backward differ by multiples of log pi), so many weights fit equally
 * well; a small pull towards the uniform weights picks the most even mixture among them.
 */
export function matchPriorWeights(
  offsets: number[][],
  logTargetPrior: number[],
  options: { ridge?: number; iterations?: number } = {},
): number[] {
  const experts = offsets.length;
  const classes = logTargetPrior.length;
  const ridge = options.ridge ?? 1e-3;
  const iterations = options.iterations ?? 5000;
  const columns = offsets.map(centered);
  const target = centered(logTargetPrior);
  const uniform = 1 / experts;
  // Gram matrix and A^T y of the least-squares problem, scaled by 1 / classes.
  const gram = columns.map((a) => columns.map((b) => a.reduce((s, x, c) => s + x * b[c]!, 0) / classes));
  const aty = columns.map((a) => a.reduce((s, x, c) => s + x * target[c]!, 0) / classes);
  const lipschitz = 2 * (gram.reduce((s, row, e) => s + row[e]!, 0) + ridge);
  let w = new Array<number>(experts).fill(uniform);
  for (let it = 0; it < iterations; it++) {
    const gradient = w.map(
      (_, e) =>
        2 * (gram[e]!.reduce((s, g, k) => s + g * w[k]!, 0) - aty[e]!) + 2 * ridge * (w[e]! - uniform),
    );
    const next = projectToSimplex(w.map((x, e) => x - gradient[e]! / lipschitz));
    const moved = Math.max(...next.map((x, e) => Math.abs(x - w[e]!)));
    w = next;
    if (moved < 1e-12) break;
  }
  return w;
}

/**
 * The maximum-likelihood test prior within the experts' own family softmax(sum_e w_e o_e), w on
 * the simplex: the prior that makes the unlabeled set most likely under the balanced scores,
 * rather than the unconstrained EM estimate projected onto the family. The projection weighs
 * every class's log prior equally, so EM's noise on the rarest test classes (whose log estimates
 * swing the most) steers it; the likelihood weighs each class by the samples that carry evidence
 * about it. Projected gradient ascent with backtracking, from the uniform weights and from every
 * corner (the log-likelihood need not be concave in w). Returns the prior; matchPriorWeights on
 * its log then picks the most even weights that give it.
 */
export function familyPriorByLikelihood(
  offsets: number[][],
  scores: ArrayLike<number>,
  classes: number,
  options: { iterations?: number } = {},
): number[] {
  const experts = offsets.length;
  const n = scores.length / classes;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`familyPriorByLikelihood: ${scores.length} scores for ${classes} classes`);
  const iterations = options.iterations ?? 500;
  const probs = softmaxRows(scores, n, classes);
  const priorOf = (w: number[]) => {
    const a = new Array<number>(classes).fill(0);
    for (let e = 0; e < experts; e++) for (let c = 0; c < classes; c++) a[c]! += w[e]! * offsets[e]![c]!;
    const max = Math.max(...a);
    const q = a.map((v) => Math.exp(v - max));
    const z = q.reduce((s, v) => s + v, 0);
    return q.map((v) => v / z);
  };
  // Mean log-likelihood and its gradient: d/d a_c = (mean posterior of c) - q_c, a = sum w_e o_e.
  const evaluate = (w: number[]) => {
    const q = priorOf(w);
    const posterior = new Array<number>(classes).fill(0);
    let loglik = 0;
    for (let i = 0; i < n; i++) {
      let z = 0;
      for (let c = 0; c < classes; c++) z += probs[i * classes + c]! * q[c]!;
      z = Math.max(z, 1e-300);
      loglik += Math.log(z);
      for (let c = 0; c < classes; c++) posterior[c]! += (probs[i * classes + c]! * q[c]!) / z / n;
    }
    const gradient = offsets.map((o) => o.reduce((s, oc, c) => s + oc * (posterior[c]! - q[c]!), 0));
    return { value: loglik / n, gradient, q };
  };
  const ascend = (start: number[]) => {
    let w = start;
    let current = evaluate(w);
    let step = 1;
    for (let it = 0; it < iterations && step > 1e-12; it++) {
      const candidate = projectToSimplex(w.map((x, e) => x + step * current.gradient[e]!));
      const gain = candidate.reduce((s, x, e) => s + (x - w[e]!) * current.gradient[e]!, 0);
      if (!(gain > 0)) break; // a stationary point of the projected ascent
      const next = evaluate(candidate);
      if (next.value >= current.value + 1e-4 * gain) {
        const change = Math.max(...candidate.map((x, e) => Math.abs(x - w[e]!)));
        w = candidate;
        current = next;
        step *= 2;
        if (change < 1e-10) break;
      } else {
        step /= 2;
      }
    }
    return current;
  };
  const corners = offsets.map((_, e) => offsets.map((__, k) => (k === e ? 1 : 0)));
  let best = ascend(new Array<number>(experts).fill(1 / experts));
  for (const start of corners) {
    const found = ascend(start);
    if (found.value > best.value) best = found;
  }
  return best.q;
}
