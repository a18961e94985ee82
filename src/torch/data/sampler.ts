// Seeded samplers. Each one's order for an epoch is a pure function of (seed, epoch), so a run
// resumed from a checkpoint at epoch e sees exactly the batches the uninterrupted run would have.
import { Rng } from '../rng.js';
import { mixSeed } from './dataset.js';

export interface Sampler {
  /** Number of indices per epoch. */
  readonly length: number;
  indices(epoch: number): Int32Array;
}

function checkSize(owner: string, n: number, what = 'dataset size'): void {
  if (!Number.isInteger(n) || n < 0)
    throw new RangeError(`${owner}: ${what} must be a non-negative integer, got ${n}`);
}

export class SequentialSampler implements Sampler {
  constructor(readonly length: number) {
    checkSize('SequentialSampler', length);
  }
  indices(): Int32Array {
    return Int32Array.from({ length: this.length }, (_, i) => i);
  }
}

export interface RandomSamplerOptions {
  seed?: number;
  /** Draw with replacement (default false: a fresh permutation every epoch). */
  replacement?: boolean;
  /** Indices per epoch (default: the dataset size; without replacement, whole permutations are concatenated). */
  numSamples?: number;
}

export class RandomSampler implements Sampler {
  readonly length: number;
  private readonly seed: number;
  private readonly replacement: boolean;

  constructor(
    private readonly size: number,
    options: RandomSamplerOptions = {},
  ) {
    checkSize('RandomSampler', size);
    this.length = options.numSamples ?? size;
    checkSize('RandomSampler', this.length, 'numSamples');
    if (size === 0 && this.length > 0)
      throw new RangeError('RandomSampler: cannot draw samples from an empty dataset');
    this.seed = options.seed ?? 0;
    this.replacement = options.replacement ?? false;
  }

  indices(epoch: number): Int32Array {
    const rng = new Rng(mixSeed(this.seed, epoch, 1));
    const out = new Int32Array(this.length);
    if (this.replacement) {
      for (let i = 0; i < out.length; i++) out[i] = rng.int(this.size);
      return out;
    }
    for (let filled = 0; filled < out.length;) {
      const perm = rng.permutation(this.size);
      for (let j = 0; j < perm.length && filled < out.length; j++) out[filled++] = perm[j]!;
    }
    return out;
  }
}

/**
 * Draws indices with probability proportional to weights (torch.utils.data.WeightedRandomSampler).
 * With replacement it uses Walker's alias table (O(1) per draw); without replacement, weighted
 * random keys u^(1/w) (Efraimidis-Spirakis), which is sequential weighted sampling without replacement.
 */
export class WeightedRandomSampler implements Sampler {
  readonly length: number;
  private readonly weights: Float64Array;
  private readonly seed: number;
  private readonly replacement: boolean;
  private alias?: { prob: Float64Array; alias: Int32Array };

  constructor(
    weights: ArrayLike<number>,
    numSamples: number,
    options: { replacement?: boolean; seed?: number } = {},
  ) {
    this.weights = Float64Array.from(weights);
    checkSize('WeightedRandomSampler', numSamples, 'numSamples');
    let total = 0;
    this.weights.forEach((w, i) => {
      if (!(w >= 0) || !Number.isFinite(w))
        throw new RangeError(`WeightedRandomSampler: weight ${i} is ${w} (must be finite and >= 0)`);
      total += w;
    });
    if (numSamples > 0 && !(total > 0)) throw new RangeError('WeightedRandomSampler: all weights are zero');
    this.replacement = options.replacement ?? true;
    const positive = this.weights.reduce((n, w) => n + (w > 0 ? 1 : 0), 0);
    if (!this.replacement && numSamples > positive) {
      throw new RangeError(
        `WeightedRandomSampler: ${numSamples} samples without replacement, but only ${positive} weights are > 0`,
      );
    }
    this.length = numSamples;
    this.seed = options.seed ?? 0;
  }

  private table(): { prob: Float64Array; alias: Int32Array } {
    if (this.alias) return this.alias;
    const n = this.weights.length;
    const total = this.weights.reduce((a, b) => a + b, 0);
    const prob = new Float64Array(n);
    const alias = new Int32Array(n);
    const scaled = Float64Array.from(this.weights, (w) => (w * n) / total);
    const small: number[] = [];
    const large: number[] = [];
    scaled.forEach((p, i) => (p < 1 ? small : large).push(i));
    while (small.length > 0 && large.length > 0) {
      const s = small.pop()!;
      const l = large.pop()!;
      prob[s] = scaled[s]!;
      alias[s] = l;
      scaled[l] = scaled[l]! + scaled[s]! - 1;
      (scaled[l]! < 1 ? small : large).push(l);
    }
    for (const i of [...small, ...large]) {
      prob[i] = 1;
      alias[i] = i;
    }
    this.alias = { prob, alias };
    return this.alias;
  }

  indices(epoch: number): Int32Array {
    const rng = new Rng(mixSeed(this.seed, epoch, 2));
    const out = new Int32Array(this.length);
    if (this.replacement) {
      const { prob, alias } = this.table();
      const n = prob.length;
      for (let i = 0; i < out.length; i++) {
        const column = rng.int(n);
        out[i] = rng.uniform() < prob[column]! ? column : alias[column]!;
      }
      return out;
    }
    const keys: { index: number; key: number }[] = [];
    this.weights.forEach((w, index) => {
      if (w > 0) keys.push({ index, key: Math.log(1 - rng.uniform()) / w });
    });
    keys.sort((a, b) => b.key - a.key);
    for (let i = 0; i < out.length; i++) out[i] = keys[i]!.index;
    return out;
  }
}

/**
 * Per-sample weights that make class c drawn with probability proportional to n_c^q:
 * q = 0 class-balanced (every class equally often), q = 0.5 square-root sampling, q = 1 the
 * natural (instance-balanced) distribution.
 */
export function classBalancedWeights(labels: ArrayLike<number>, q = 0): Float64Array {
  const counts = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) {
    const y = labels[i]!;
    if (!Number.isInteger(y))
      throw new TypeError(`classBalancedWeights: label ${i} is ${y}, not an integer class`);
    counts.set(y, (counts.get(y) ?? 0) + 1);
  }
  return Float64Array.from({ length: labels.length }, (_, i) => counts.get(labels[i]!)! ** (q - 1));
}

/** Class-balanced sampling with replacement (see classBalancedWeights for q). */
export class ClassBalancedSampler extends WeightedRandomSampler {
  constructor(labels: ArrayLike<number>, options: { q?: number; numSamples?: number; seed?: number } = {}) {
    super(classBalancedWeights(labels, options.q ?? 0), options.numSamples ?? labels.length, {
      replacement: true,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
    });
  }
}

/** Splits a sampler's indices into batches (the last one shorter unless dropLast). */
export function batchIndices(indices: Int32Array, batchSize: number, dropLast = false): Int32Array[] {
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize must be a positive integer, got ${batchSize}`);
  const batches: Int32Array[] = [];
  for (let start = 0; start < indices.length; start += batchSize) {
    const batch = indices.subarray(start, Math.min(indices.length, start + batchSize));
    if (dropLast && batch.length < batchSize) break;
    batches.push(batch.slice());
  }
  return batches;
}
