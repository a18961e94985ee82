// Per-class constants of the long-tail losses, computed in float64 from the training class
// counts exactly as the reference code does (SADE / BalPoE / LDAM-DRW), then turned into tensors
// of the logits' dtype at each call (a few hundred values: cheaper than managing cached tensors).
// Graph-mode training is the exception: a CUDA graph cannot capture a copy from host memory, so
// there the constants are made once, during the eager warm-up steps, and reused (cacheConstants).
import {
  branchStreamsEnabled,
  cuda,
  getDefaultDevice,
  keep,
  tensor,
  type DType,
  type Tensor,
} from '../../torch/index.js';

/** The eps the reference code adds before taking log of a prior. */
export const PRIOR_EPS = 1e-9;

export function checkCounts(counts: number[], what = 'class counts'): void {
  if (counts.length === 0) throw new Error(`${what}: empty; the loss needs the training images per class`);
  counts.forEach((n, i) => {
    if (!Number.isFinite(n) || n < 0)
      throw new Error(`${what}: class ${i} has count ${n}; counts must be finite and >= 0`);
  });
  if (counts.reduce((a, b) => a + b, 0) <= 0) throw new Error(`${what}: all counts are 0`);
}

/** For the constants defined only where every class has training images (LDAM, class-balanced). */
function requireEveryClass(counts: number[], what: string): void {
  const empty = counts.filter((n) => n <= 0).length;
  if (empty === 0) return;
  const used = counts.length - empty;
  throw new Error(
    `${what}: every class needs at least one training image, and ${empty} of the ${counts.length} have none; ` +
      `if the data has only ${used} classes, set arch.args.num_classes to ${used}`,
  );
}

/** pi_c = n_c / sum(n). */
export function classPrior(counts: number[]): number[] {
  checkCounts(counts);
  const total = counts.reduce((a, b) => a + b, 0);
  return counts.map((n) => n / total);
}

/** tau * log(pi + eps), the logit adjustment of balanced softmax / BalPoE. */
export function logPrior(counts: number[], tau = 1, eps = PRIOR_EPS): number[] {
  return classPrior(counts).map((p) => tau * Math.log(p + eps));
}

/**
 * SADE's "inverse" prior: the prior values reversed by sorted order, so the most frequent class
 * gets the smallest prior and vice versa. Ties are broken by class index (a stable sort; the
 * reference's torch.sort leaves their order unspecified).
 */
export function inversePrior(prior: number[]): number[] {
  const order = prior.map((_, i) => i).sort((a, b) => prior[a]! - prior[b]! || a - b);
  const sorted = order.map((i) => prior[i]!);
  const C = prior.length;
  const result = new Array<number>(C);
  order.forEach((cls, rank) => {
    result[cls] = sorted[C - 1 - rank]!;
  });
  return result;
}

/** log(pi + eps) - tau * log(pi_bar + eps): the bias of SADE's backward (inverse-prior) expert. */
export function inverseLogitBias(counts: number[], tau: number, eps = PRIOR_EPS): number[] {
  const prior = classPrior(counts);
  const inv = inversePrior(prior);
  return prior.map((p, c) => Math.log(p + eps) - tau * Math.log(inv[c]! + eps));
}

/** LDAM margins m_c proportional to n_c^(-1/4), the largest equal to maxMargin. */
export function ldamMargins(counts: number[], maxMargin = 0.5): number[] {
  checkCounts(counts);
  requireEveryClass(counts, 'LDAM margins');
  const raw = counts.map((n) => 1 / Math.sqrt(Math.sqrt(n)));
  const max = Math.max(...raw);
  return raw.map((m) => m * (maxMargin / max));
}

/**
 * Class-balanced weights (Cui et al.): (1 - beta) / (1 - beta^n_c), normalised to sum to C, as
 * LDAM-DRW's DRW stage and `reweight_CE` use with beta = 0.9999.
 */
export function classBalancedWeights(counts: number[], beta = 0.9999): number[] {
  checkCounts(counts);
  if (!(beta >= 0 && beta < 1))
    throw new Error(`class-balanced weights: beta must be in [0, 1), got ${beta}`);
  requireEveryClass(counts, 'class-balanced weights');
  const w = counts.map((n) => (1 - beta) / (1 - Math.pow(beta, n)));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((v) => (v / sum) * counts.length);
}

/** The cached constants while cacheConstants is on: by values array, then dtype and device. */
let cache: Map<readonly number[], Map<string, Tensor>> | null = null;

/**
 * Turns the constant cache on (graph mode: each constant is made once per values array, dtype
 * and device, and the same tensor is returned after) or off (every cached tensor is freed).
 */
export function cacheConstants(on: boolean): void {
  if (!on && cache) for (const byKey of cache.values()) for (const t of byKey.values()) t.dispose();
  cache = on ? (cache ?? new Map()) : null;
}

/** A 1-d constant tensor of the given float dtype (see cacheConstants). */
export function constant(values: readonly number[], dtype: DType): Tensor {
  if (!cache) return tensor(Float64Array.from(values), { dtype });
  const key = `${dtype}@${getDefaultDevice().name}`;
  let byKey = cache.get(values);
  if (!byKey) cache.set(values, (byKey = new Map()));
  let t = byKey.get(key);
  if (!t) {
    byKey.set(key, (t = keep(tensor(Float64Array.from(values), { dtype }))));
    // Made inside one branch of parallel work (branch streams), the constant's copy is queued on
    // that branch's stream, and the other branches read the cached tensor without waiting for
    // it: wait here (once per constant; constants are made in eager steps, never in a capture).
    if (branchStreamsEnabled() && t.device.type === 'cuda') cuda.synchronize(t.device);
  }
  return t;
}
