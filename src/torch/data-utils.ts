// The rest of torch.utils.data's everyday pieces: Subset, random_split, ConcatDataset,
// BatchSampler and SubsetRandomSampler. The random ones draw as PyTorch 1.13 does, with libtorch's
// randperm on the CPU generator (the global one, or a seeded one of their own), so the same
// torch.manualSeed gives PyTorch's splits and orders.
import type { Dataset, Sampler } from './data.js';
import { native } from './native.js';
import { randperm } from './creation.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../util/arguments.js';

/**
 * What a {@link DataLoader}'s `batchSampler` gives: the batches of an epoch as lists of dataset
 * indices (a {@link BatchSampler}, or any object with these members).
 */
export interface BatchSamplerLike {
  /** The batches of epoch `epoch` (0-based), each a list of dataset indices. */
  batches(epoch: number): number[][];
  /** How many batches an epoch yields. */
  readonly length: number;
}

/** `value` checked to be a Dataset (a length and a get method). */
function checkDataset<T>(c: ArgumentChecks, value: unknown, name: string): Dataset<T> {
  const d = value as Partial<Dataset<T>> | null;
  if (d === null || typeof d !== 'object' || typeof d.get !== 'function')
    c.fail(name, 'a Dataset (a length and a get(index) method)', value);
  c.integer(d.length, `${name}.length`, { min: 0 });
  return value as Dataset<T>;
}

/** `index` within -length..length-1 (Python's indexing), as an index 0..length-1. */
function wrapIndex(fn: string, index: number, length: number): number {
  if (!Number.isSafeInteger(index) || index < -length || index >= length)
    throw new ArgumentError(
      `${fn}: index must be an integer in ${-length}..${length - 1} (negative counts from the end), got ${index}`,
    );
  return index < 0 ? index + length : index;
}

/**
 * The items of `dataset` at `indices`, in that order (torch.utils.data.Subset): item i is
 * `dataset.get(indices[i])`; a negative i counts from the end, as in Python.
 */
export class Subset<T> implements Dataset<T> {
  readonly indices: readonly number[];
  constructor(
    readonly dataset: Dataset<T>,
    indices: ArrayLike<number>,
  ) {
    const c = checksOf('Subset');
    checkDataset(c, dataset, 'dataset');
    c.numbers(indices, 'indices');
    this.indices = Array.from(indices, (i, k) =>
      c.integer(i, `indices[${k}]`, { min: 0, max: dataset.length - 1 }),
    );
  }
  /** The number of indices. */
  get length(): number {
    return this.indices.length;
  }
  /** `dataset.get(indices[index])`. */
  get(index: number): T | Promise<T> {
    return this.dataset.get(this.indices[wrapIndex('Subset.get', index, this.indices.length)]!);
  }
}

/**
 * Datasets one after another (torch.utils.data.ConcatDataset): the items of `datasets[0]`, then
 * those of `datasets[1]`, ...; `cumulativeSizes[k]` is the number of items in datasets 0..k, and a
 * negative index counts from the end.
 */
export class ConcatDataset<T> implements Dataset<T> {
  readonly datasets: readonly Dataset<T>[];
  readonly cumulativeSizes: readonly number[];
  constructor(datasets: Iterable<Dataset<T>>) {
    const c = checksOf('ConcatDataset');
    const list = datasets !== null && typeof datasets === 'object' ? Array.from(datasets) : [];
    if (list.length === 0) c.fail('datasets', 'a non-empty array of datasets', datasets);
    let total = 0;
    this.cumulativeSizes = list.map((d, k) => (total += checkDataset(c, d, `datasets[${k}]`).length));
    this.datasets = list;
  }
  /** The number of items in all the datasets. */
  get length(): number {
    return this.cumulativeSizes[this.cumulativeSizes.length - 1]!;
  }
  /** Item `index` of the concatenation, from the dataset it falls in. */
  get(index: number): T | Promise<T> {
    const i = wrapIndex('ConcatDataset.get', index, this.length);
    // The first dataset whose cumulative size exceeds i (Python's bisect_right).
    let lo = 0;
    let hi = this.cumulativeSizes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulativeSizes[mid]! > i) hi = mid;
      else lo = mid + 1;
    }
    return this.datasets[lo]!.get(lo === 0 ? i : i - this.cumulativeSizes[lo - 1]!);
  }
}

/**
 * Draws on libtorch's CPU generator: the global one (seed undefined), or a generator of its own
 * seeded with `seed`, as `torch.Generator().manual_seed(seed)` is; its state carries over from one
 * draw to the next, and the global generator is left as it was.
 */
class CpuDraws {
  private state: Uint8Array | undefined;
  constructor(private readonly seed: number | undefined) {}

  /** A permutation of 0..n-1 (torch.randperm(n, generator=...)). */
  randperm(n: number): number[] {
    if (this.seed === undefined) return permutation(n);
    const global = native.getRngState();
    try {
      if (this.state === undefined) native.manualSeed(this.seed);
      else native.setRngState(this.state);
      const perm = permutation(n);
      this.state = native.getRngState();
      return perm;
    } finally {
      native.setRngState(global);
    }
  }
}

/** randperm(n) on the CPU generator, as numbers (the CPU whatever the default device: PyTorch draws there). */
function permutation(n: number): number[] {
  if (n === 0) return [];
  const t = randperm(n, 'int64', 'cpu');
  try {
    return t.toNumbers();
  } finally {
    t.dispose();
  }
}

/** Python's math.isclose(a, b) with its default tolerances (relative 1e-9, absolute 0). */
function isClose(a: number, b: number): boolean {
  return Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
}

/** The split sizes of random_split: `lengths` as given, or fractions made into sizes. */
function splitLengths(lengths: ArrayLike<number>, n: number): number[] {
  const c = checksOf('randomSplit');
  c.numbers(lengths, 'lengths', { minLength: 1 });
  const given = Array.from(lengths);
  // Summed in order, as Python's sum(), so the fraction test matches PyTorch's on the same floats.
  const sum = given.reduce((a, b) => a + b, 0);
  if (isClose(sum, 1) && sum <= 1) {
    // PyTorch 1.13: floor(n x fraction) each, then the remainder one by one, round-robin from the first.
    const sizes = given.map((f, i) => {
      if (f < 0 || f > 1) c.fail(`lengths[${i}]`, 'a fraction between 0 and 1', f);
      return Math.floor(n * f);
    });
    const remainder = n - sizes.reduce((a, b) => a + b, 0);
    for (let i = 0; i < remainder; i++) sizes[i % sizes.length]! += 1;
    return sizes;
  }
  given.forEach((l, i) => {
    if (!Number.isInteger(l) || l < 0)
      c.fail(
        `lengths[${i}]`,
        'a non-negative integer (or every length a fraction, the fractions summing to 1)',
        l,
      );
  });
  if (sum !== n)
    throw new ArgumentError(
      `randomSplit: lengths must sum to the dataset's length ${n} (or be fractions summing to 1), got [${given.join(', ')}] summing to ${sum}`,
    );
  return given;
}

/**
 * Splits `dataset` at random into non-overlapping {@link Subset}s of the given lengths
 * (torch.utils.data.random_split). `lengths` are sizes summing to the dataset's length, or
 * fractions summing to 1: then each split gets floor(length x fraction) items and the remaining
 * items go one each to the splits in turn, from the first, as PyTorch 1.13 rounds. The order is
 * `randperm(length)` on libtorch's global CPU generator, or with `generator` on a generator of its
 * own seeded with it (`torch.Generator().manual_seed(generator)`), so the same seed gives
 * PyTorch's split.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const data = new torch.data.TensorDataset(torch.keep(torch.arange(0, 10)));
 * const [train, val] = torch.data.randomSplit(data, [0.8, 0.2], { generator: 42 });
 * console.log(train!.length, val!.length); // 8 2
 * console.log(val!.indices); // the same indices as PyTorch's random_split with Generator().manual_seed(42)
 * ```
 */
export function randomSplit<T>(
  dataset: Dataset<T>,
  lengths: ArrayLike<number>,
  options: { generator?: number } = {},
): Subset<T>[] {
  const c = checksOf('randomSplit');
  checkDataset(c, dataset, 'dataset');
  c.object(options, 'options');
  if (options.generator !== undefined) c.integer(options.generator, 'options.generator', { min: 0 });
  const sizes = splitLengths(lengths, dataset.length);
  const order = new CpuDraws(options.generator).randperm(dataset.length);
  let offset = 0;
  return sizes.map((size) => new Subset(dataset, order.slice(offset, (offset += size))));
}

/**
 * The indices of a sampler (or a fixed list) in batches of `batchSize`, the last one smaller
 * unless `dropLast` (torch.utils.data.BatchSampler); a {@link DataLoader} takes it as its
 * `batchSampler`.
 */
export class BatchSampler implements BatchSamplerLike {
  constructor(
    readonly sampler: Sampler | readonly number[],
    readonly batchSize: number,
    readonly dropLast: boolean,
  ) {
    const c = checksOf('BatchSampler');
    if (!Array.isArray(sampler) && typeof (sampler as Partial<Sampler>)?.indices !== 'function')
      c.fail('sampler', 'a Sampler (an indices(epoch) method) or an array of indices', sampler);
    c.integer(batchSize, 'batchSize', { min: 1 });
    if (typeof dropLast !== 'boolean') c.fail('dropLast', 'a boolean', dropLast);
  }
  /** Batches per epoch. */
  get length(): number {
    const n = this.sampler.length;
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }
  /** The sampler's order of epoch `epoch`, cut into batches. */
  batches(epoch: number): number[][] {
    const order = Array.isArray(this.sampler) ? this.sampler : (this.sampler as Sampler).indices(epoch);
    const out: number[][] = [];
    for (let start = 0; start < order.length; start += this.batchSize) {
      if (this.dropLast && start + this.batchSize > order.length) break;
      out.push(order.slice(start, start + this.batchSize));
    }
    return out;
  }
}

/**
 * The given indices in a random order, each once per epoch (torch.utils.data.SubsetRandomSampler):
 * epoch by epoch `indices[randperm(indices.length)]`, drawn on libtorch's global CPU generator as
 * PyTorch draws it, or with `generator` on a generator of its own seeded with it. The draws follow
 * the generator, not the epoch number: each call of indices() draws the next order.
 */
export class SubsetRandomSampler implements Sampler {
  /** The indices it orders (PyTorch's `indices` attribute; here `indices()` is the Sampler's order). */
  readonly subset: readonly number[];
  private readonly draws: CpuDraws;
  constructor(indices: ArrayLike<number>, options: { generator?: number } = {}) {
    const c = checksOf('SubsetRandomSampler');
    c.numbers(indices, 'indices');
    this.subset = Array.from(indices, (i, k) => c.integer(i, `indices[${k}]`, { min: 0 }));
    c.object(options, 'options');
    if (options.generator !== undefined) c.integer(options.generator, 'options.generator', { min: 0 });
    this.draws = new CpuDraws(options.generator);
  }
  /** The number of indices. */
  get length(): number {
    return this.subset.length;
  }
  /** The next order of the indices. */
  indices(): number[] {
    return this.draws.randperm(this.subset.length).map((i) => this.subset[i]!);
  }
}
