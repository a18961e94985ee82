// Datasets and their batches (torch.utils.data): the map-style Dataset, read item by item on demand
// (files decoded per item, synchronously or asynchronously), TensorDataset of in-memory tensors,
// default_collate, the DataLoader, and the samplers imbalanced data calls for:
// WeightedRandomSampler and class-balanced weights. Their orders come from tailor's seeded
// generator, so an epoch's order depends only on the seed and the epoch (PyTorch draws them from
// its global generator instead). Subset, random_split, ConcatDataset, BatchSampler and
// SubsetRandomSampler live in data-utils.ts.
import { Tensor } from './tensor.js';
import { tensor } from './creation.js';
import { defaultCollate, type Collated } from './data-collate.js';
import { asyncBatches, batchRanges, syncBatches, type EpochPlan } from './data-loading.js';
import type { BatchSamplerLike } from './data-utils.js';
import { Rng } from '../util/rng.js';
import { ArgumentError, checksOf } from '../util/arguments.js';

export { defaultCollate, type Collated } from './data-collate.js';
export { DatasetItemError } from './data-loading.js';
export {
  Subset,
  ConcatDataset,
  randomSplit,
  BatchSampler,
  SubsetRandomSampler,
  type BatchSamplerLike,
} from './data-utils.js';

/** The most indices an epoch's order may hold (a JavaScript array of them is built per epoch). */
const MAX_INDICES = 2 ** 31 - 1;

/**
 * A map-style dataset (torch.utils.data.Dataset): `length` items, item `index` read on demand by
 * `get(index)` (`__len__` and `__getitem__`), synchronously or as a promise (a file read and
 * decoded per item). A {@link DataLoader} takes over what get() returns: it frees the tensors in an
 * item (in its arrays, plain objects, Maps and Sets) once they are collated into a batch, so get()
 * returns new tensors (a view or a copy), never one the dataset keeps and reuses.
 */
export interface Dataset<T> {
  /** The number of items; get() takes the indices 0..length-1. */
  readonly length: number;
  /** Item `index`: a value, or a promise of one. */
  get(index: number): T | Promise<T>;
}

/** Tensors indexed along their first dimension (torch.utils.data.TensorDataset). */
export class TensorDataset implements Dataset<Tensor[]> {
  readonly tensors: Tensor[];
  readonly length: number;
  constructor(...tensors: Tensor[]) {
    const c = checksOf('TensorDataset');
    if (tensors.length === 0) c.fail('tensors', 'one or more tensors', tensors);
    tensors.forEach((t, i) => {
      if (!(t instanceof Tensor) || t.ndim === 0)
        c.fail(`tensors[${i}]`, 'a tensor of at least one dimension', t);
    });
    this.length = tensors[0]!.shape[0]!;
    tensors.forEach((t, i) => {
      if (t.shape[0] !== this.length)
        throw new ArgumentError(
          `TensorDataset: tensors[${i}] has ${t.shape[0]} rows and tensors[0] ${this.length}; every tensor needs one row per sample`,
        );
    });
    this.tensors = tensors;
  }

  /** Row `index` of every tensor (views: `[...rest]` of each `[length, ...rest]`), the caller's to dispose. */
  get(index: number): Tensor[] {
    checksOf('TensorDataset.get').integer(index, 'index', { min: 0, max: this.length - 1 });
    return this.tensors.map((t) => t.select(0, index));
  }
}

/** An order of dataset indices per epoch. */
export interface Sampler {
  /** The indices of epoch `epoch` (0-based). */
  indices(epoch: number): number[];
  /** How many indices an epoch yields. */
  readonly length: number;
}

/** 0, 1, ..., n - 1 every epoch (torch.utils.data.SequentialSampler). */
export class SequentialSampler implements Sampler {
  constructor(readonly length: number) {
    checksOf('SequentialSampler').integer(length, 'length', { min: 0, max: MAX_INDICES });
  }
  indices(): number[] {
    return Array.from({ length: this.length }, (_, i) => i);
  }
}

/** A permutation of 0..n-1 per epoch, from the seed and the epoch (torch.utils.data.RandomSampler). */
export class RandomSampler implements Sampler {
  constructor(
    readonly length: number,
    readonly seed = 0,
  ) {
    const c = checksOf('RandomSampler');
    c.integer(length, 'length', { min: 0, max: MAX_INDICES });
    c.integer(seed, 'seed');
  }
  indices(epoch: number): number[] {
    return new Rng(epochSeed(this.seed, epoch)).permutation(this.length);
  }
}

/**
 * numSamples indices drawn with probability proportional to `weights` (with replacement by
 * default), as torch.utils.data.WeightedRandomSampler: with {@link classBalancedWeights} every
 * class is drawn equally often, the over-sampling of the tail that imbalanced training uses.
 */
export class WeightedRandomSampler implements Sampler {
  private readonly cumulative: Float64Array;
  constructor(
    weights: ArrayLike<number>,
    readonly length: number,
    readonly options: { replacement?: boolean; seed?: number } = {},
  ) {
    const c = checksOf('WeightedRandomSampler');
    c.object(options, 'options');
    c.integer(length, 'numSamples', { min: 0, max: MAX_INDICES });
    c.integer(options.seed ?? 0, 'options.seed');
    c.numbers(weights, 'weights');
    this.cumulative = new Float64Array(weights.length);
    let total = 0;
    for (let i = 0; i < weights.length; i++) {
      c.number(weights[i], `weights[${i}]`, { min: 0 });
      this.cumulative[i] = total += weights[i]!;
    }
    if (!(total > 0)) c.fail('weights', 'at least one positive weight', Array.from(weights).slice(0, 8));
    if (options.replacement === false) {
      const positive = Array.from(weights).filter((w) => w > 0).length;
      if (length > positive)
        c.fail('numSamples', `at most ${positive} (the positive weights) without replacement`, length);
    }
  }
  indices(epoch: number): number[] {
    const rng = new Rng(epochSeed(this.options.seed ?? 0, epoch));
    const cum = this.cumulative;
    if (this.options.replacement !== false) {
      const total = cum[cum.length - 1]!;
      return Array.from({ length: this.length }, () => lowerBound(cum, rng.uniform() * total));
    }
    // Without replacement: weighted draws one at a time, each drawn index removed (exponential keys).
    const keys = Array.from(cum, (c, i) => {
      const w = c - (i > 0 ? cum[i - 1]! : 0);
      return { i, key: w > 0 ? Math.log(rng.uniform()) / w : -Infinity };
    });
    keys.sort((a, b) => b.key - a.key);
    return keys.slice(0, this.length).map((k) => k.i);
  }
}

/** Per-sample weights 1 / (count of its class), for a WeightedRandomSampler that balances classes. */
export function classBalancedWeights(labels: ArrayLike<number>): Float64Array {
  checksOf('classBalancedWeights').numbers(labels, 'labels');
  const counts = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) counts.set(labels[i]!, (counts.get(labels[i]!) ?? 0) + 1);
  return Float64Array.from(labels, (y) => 1 / counts.get(y)!);
}

/** Options of {@link DataLoader}, for items of type T merged into batches of type B. */
export interface DataLoaderOptions<T = Tensor[], B = Collated<T>> {
  /** Samples per batch (default 1). */
  batchSize?: number;
  /**
   * The batches of each epoch as lists of indices (batch_sampler, such as a {@link BatchSampler}):
   * it takes the place of batchSize, shuffle, sampler and dropLast, which may not be given with it.
   */
  batchSampler?: BatchSamplerLike;
  /** A seeded permutation per epoch (default false: in order); ignored when `sampler` is given. */
  shuffle?: boolean;
  /** The order of each epoch (default: sequential, or random with shuffle). */
  sampler?: Sampler;
  /** Drop the last batch when it is smaller than batchSize (default false). */
  dropLast?: boolean;
  /** Seed of the shuffle (default 0). */
  seed?: number;
  /**
   * Merges a batch's items into the batch (collate_fn; default {@link defaultCollate}). The tensors
   * of the items it does not put in the batch are freed after it returns.
   */
  collate?: (items: T[]) => B;
  /**
   * Batches whose items load ahead under `for await` (default 2, as PyTorch's prefetch_factor): up
   * to prefetch x batchSize get() calls run concurrently, ahead of the batch handed out.
   */
  prefetch?: number;
}

/**
 * Batches of a {@link Dataset} (torch.utils.data.DataLoader without worker processes). Iterating
 * it runs one epoch; the next iteration runs the next epoch's order. A batch belongs to the
 * caller: dispose it when done (`torch.dispose(batch)`), as the examples do.
 *
 * - A {@link TensorDataset} with the default collate batches synchronously with one index_select
 *   per tensor: `for (const batch of loader)` gives one tensor `[batchSize, ...rest]` per tensor.
 * - Any other dataset gives `collate(items)` per batch (default {@link defaultCollate}: a dataset of
 *   `{ image: Tensor [3, 32, 32], label: number }` gives `{ image: [batchSize, 3, 32, 32], label:
 *   int64 [batchSize] }`). `for await (const batch of loader)` loads items concurrently, up to
 *   `prefetch` batches ahead, and hands the batches out in the sampler's order; `for (const batch
 *   of loader)` works when get() is synchronous (a promise from it is a named error).
 *
 * - With a `batchSampler` (a {@link BatchSampler}), its batches of indices are the batches.
 *
 * A get() that throws ends the epoch with a {@link DatasetItemError} naming the index, once the
 * batches before it were handed out; the items loaded and not yet handed out are freed first, as
 * they are when a loop breaks early (the loop statement waits for the loads in flight to settle).
 * Nothing runs on worker threads: what an async get() overlaps with the training step is its I/O
 * and whatever it hands to libuv's thread pool (file reads, zlib, a decoder such as sharp).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * // 90 samples of class 0 and 10 of class 1, drawn class-balanced
 * const labels = Array.from({ length: 100 }, (_, i) => (i < 90 ? 0 : 1));
 * const x = torch.keep(torch.randn([100, 3]));
 * const y = torch.keep(torch.tensor(labels, { dtype: 'int64' }));
 * const weights = torch.data.classBalancedWeights(labels);
 * const sampler = new torch.data.WeightedRandomSampler(weights, 100, { seed: 1 });
 * const loader = new torch.data.DataLoader(new torch.data.TensorDataset(x, y), { batchSize: 20, sampler });
 * for (const batch of loader) {
 *   const [xb, yb] = batch;
 *   torch.tidy(() => console.log(xb!.shape, yb!.float().mean().item())); // about half of each batch is class 1
 *   torch.dispose(batch);
 * }
 *
 * // A dataset read on demand: each item made (here: after a delay, as a file read would be) when asked for
 * const lazy: torch.data.Dataset<{ x: torch.Tensor; label: number }> = {
 *   length: 10,
 *   async get(i) {
 *     await new Promise((resolve) => setTimeout(resolve, 5));
 *     return { x: torch.full([2, 2], i), label: i % 3 };
 *   },
 * };
 * const lazyLoader = new torch.data.DataLoader(lazy, { batchSize: 4, shuffle: true, prefetch: 2 });
 * for await (const batch of lazyLoader) {
 *   console.log(batch.x.shape, batch.label.toNumbers()); // [4, 2, 2] [...], the last batch [2, 2, 2]
 *   torch.dispose(batch);
 * }
 * ```
 */
// One generic class rather than a second one for general datasets: PyTorch has one DataLoader,
// and with the defaults (T = Tensor[], B = Collated<T> = Tensor[]) `new DataLoader(tensorDataset)`
// and `for (const batch of loader)` type as they did before datasets were generic.
export class DataLoader<T = Tensor[], B = Collated<T>> implements Iterable<B>, AsyncIterable<B> {
  /** Samples per batch; null when a batchSampler makes the batches (PyTorch's None). */
  readonly batchSize: number | null;
  /** The order of each epoch (sequential when a batchSampler makes the batches, as in PyTorch). */
  readonly sampler: Sampler;
  /** The batch sampler given in the options, or undefined. */
  readonly batchSampler: BatchSamplerLike | undefined;
  readonly dropLast: boolean;
  /** Batches loading ahead under `for await`. */
  readonly prefetch: number;
  /** The collate function, or undefined for {@link defaultCollate}. */
  readonly collate: ((items: T[]) => B) | undefined;
  /** The epoch the next iteration runs (0 at first; +1 per completed or abandoned iteration). */
  epoch = 0;

  constructor(
    readonly dataset: Dataset<T>,
    options: DataLoaderOptions<T, B> = {},
  ) {
    const c = checksOf('DataLoader');
    const d = dataset as Partial<Dataset<T>> | null;
    if (d === null || typeof d !== 'object' || typeof d.get !== 'function')
      c.fail('dataset', 'a Dataset (a length and a get(index) method) or a TensorDataset', dataset);
    c.integer(dataset.length, 'dataset.length', { min: 0, max: MAX_INDICES });
    c.object(options, 'options');
    this.batchSampler = options.batchSampler;
    if (options.batchSampler !== undefined) {
      const b = options.batchSampler as Partial<BatchSamplerLike> | null;
      if (typeof b?.batches !== 'function')
        c.fail('options.batchSampler', 'a BatchSampler (a batches(epoch) method)', b);
      // PyTorch's check: the batch sampler decides batch size, order and the last batch.
      if (
        (options.batchSize !== undefined && options.batchSize !== 1) ||
        options.shuffle === true ||
        options.sampler !== undefined ||
        options.dropLast === true
      )
        throw new ArgumentError(
          'DataLoader: options.batchSampler is mutually exclusive with batchSize, shuffle, sampler and dropLast; give the batch size, order and dropLast to the BatchSampler instead',
        );
    }
    this.batchSize =
      options.batchSampler === undefined
        ? c.integer(options.batchSize ?? 1, 'options.batchSize', { min: 1 })
        : null;
    this.prefetch = c.integer(options.prefetch ?? 2, 'options.prefetch', { min: 1 });
    this.dropLast = options.dropLast === true;
    if (options.collate !== undefined && typeof options.collate !== 'function')
      c.fail('options.collate', 'a function of the items', options.collate);
    this.collate = options.collate;
    if (options.sampler !== undefined) {
      const s = options.sampler as Partial<Sampler>;
      if (typeof s?.indices !== 'function')
        c.fail('options.sampler', 'a Sampler (an indices(epoch) method)', s);
      this.sampler = options.sampler;
    } else
      this.sampler = options.shuffle
        ? new RandomSampler(dataset.length, options.seed ?? 0)
        : new SequentialSampler(dataset.length);
  }

  /** Batches per epoch. */
  get length(): number {
    if (this.batchSize === null) return this.batchSampler!.length;
    const n = this.sampler.length;
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }

  /** One epoch, synchronously: the batches of the sampler's next order. */
  *[Symbol.iterator](): Iterator<B> {
    if (this.fastPath()) yield* this.tensorBatches() as Iterable<unknown> as Iterable<B>;
    else yield* syncBatches(this.plan());
  }

  /** One epoch for `for await`: items load concurrently, up to `prefetch` batches ahead. */
  async *[Symbol.asyncIterator](): AsyncIterator<B> {
    if (this.fastPath()) yield* this.tensorBatches() as Iterable<unknown> as Iterable<B>;
    else yield* asyncBatches(this.plan(), this.prefetch);
  }

  /** A TensorDataset with the default collate: stacking rows is one index_select per tensor. */
  private fastPath(): boolean {
    return this.dataset instanceof TensorDataset && this.collate === undefined;
  }

  /**
   * The next epoch's indices, batch after batch, and each batch's [start, end) in them, checked
   * against the dataset (this starts the epoch).
   */
  private nextOrder(): { order: number[]; ranges: [number, number][] } {
    const epoch = this.epoch++;
    let order: number[];
    let ranges: [number, number][];
    if (this.batchSize === null) {
      const batches = this.batchSampler!.batches(epoch);
      order = batches.flat();
      let end = 0;
      ranges = batches.map((b) => [end, (end += b.length)]);
    } else {
      order = this.sampler.indices(epoch);
      ranges = batchRanges(order.length, this.batchSize, this.dropLast);
    }
    const n = this.dataset.length;
    const source = this.batchSize === null ? 'batch sampler' : 'sampler';
    for (const i of order)
      if (!(Number.isInteger(i) && i >= 0 && i < n))
        throw new RangeError(`DataLoader: the ${source} gave index ${i}, outside the dataset's 0..${n - 1}`);
    return { order, ranges };
  }

  private plan(): EpochPlan<T, B> {
    return {
      dataset: this.dataset,
      ...this.nextOrder(),
      collate: this.collate ?? (defaultCollate as unknown as (items: T[]) => B),
    };
  }

  private *tensorBatches(): Generator<Tensor[]> {
    const dataset = this.dataset as unknown as TensorDataset;
    const { order, ranges } = this.nextOrder();
    for (const [start, end] of ranges) {
      const device = dataset.tensors[0]!.device;
      const index = tensor(order.slice(start, end), { dtype: 'int64', device });
      try {
        yield dataset.tensors.map((t) => t.indexSelect(0, index));
      } finally {
        index.dispose();
      }
    }
  }
}

/** The first index whose cumulative weight exceeds u. */
function lowerBound(cumulative: Float64Array, u: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** A seed per epoch, so that epochs differ and each depends only on (seed, epoch). */
function epochSeed(seed: number, epoch: number): number {
  checksOf('Sampler.indices').integer(epoch, 'epoch', { min: 0 });
  return (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) + Math.imul(epoch + 1, 0x85ebca6b)) >>> 0;
}
