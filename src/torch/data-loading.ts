// The DataLoader's batches of a general (map-style) dataset: items fetched with get(), in the
// sampler's order, merged by the collate function. Synchronously, one batch's items at a time; for
// `for await`, with up to `prefetch` batches' items loading concurrently ahead of the consumer,
// which overlaps reading and decoding with the work on the current batch. Whatever way an epoch
// ends (done, an error, a `break`), every item loaded and not handed out is freed before the loop
// statement finishes, so a loop leaves no native tensors behind.
import type { Dataset } from './data.js';
import { disposeUnused } from './data-collate.js';
import { dispose, keep } from './scope.js';
import { ArgumentError } from '../util/arguments.js';

/**
 * A dataset's get(index) failed while a {@link DataLoader} loaded a batch. The message names the
 * index and the original error's message; `cause` holds the original error (with its stack), and
 * `index` the dataset index. The items loaded for the epoch were freed when it was thrown.
 */
export class DatasetItemError extends Error {
  constructor(
    readonly index: number,
    cause: unknown,
  ) {
    super(
      `DataLoader: dataset.get(${index}) failed: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'DatasetItemError';
  }
}

/** How one epoch of a general dataset is batched. */
export interface EpochPlan<T, B> {
  dataset: Dataset<T>;
  /** The indices of this epoch's batches one after another, already checked against the dataset's length. */
  order: number[];
  /** The [start, end) positions of each batch in `order`. */
  ranges: [number, number][];
  collate: (items: T[]) => B;
}

/** The [start, end) positions of each batch of `batchSize` in an order of n indices. */
export function batchRanges(n: number, batchSize: number, dropLast: boolean): [number, number][] {
  const ranges: [number, number][] = [];
  for (let start = 0; start < n; start += batchSize) {
    const end = Math.min(start + batchSize, n);
    if (dropLast && end - start < batchSize) break;
    ranges.push([start, end]);
  }
  return ranges;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

/** Merges loaded items into a batch and frees what the batch did not take over (also on an error). */
function collateItems<T, B>(collate: (items: T[]) => B, items: T[]): B {
  let batch: B;
  try {
    batch = collate(items);
  } catch (error) {
    dispose(items);
    throw error;
  }
  disposeUnused(items, batch);
  return batch;
}

/**
 * One epoch, synchronously: each batch's items fetched in order, then collated. Tensors the items
 * and batches create belong to the scope open around the loop, as index_select's do for a
 * TensorDataset. A get() that returns a promise is refused: a synchronous loop cannot wait for it.
 */
export function* syncBatches<T, B>(plan: EpochPlan<T, B>): Generator<B> {
  const { dataset, order } = plan;
  for (const [start, end] of plan.ranges) {
    const items: T[] = [];
    for (let p = start; p < end; p++) {
      let item: T | Promise<T>;
      try {
        item = dataset.get(order[p]!);
      } catch (error) {
        dispose(items);
        throw new DatasetItemError(order[p]!, error);
      }
      if (isPromiseLike(item)) {
        dispose(items);
        // Free what it resolves to, and keep its rejection from being unhandled.
        Promise.resolve(item).then(dispose, () => {});
        throw new ArgumentError(
          `DataLoader: dataset.get(${order[p]}) returned a promise, which a synchronous \`for (const batch of loader)\` cannot wait for; iterate with \`for await (const batch of loader)\``,
        );
      }
      items.push(item);
    }
    yield collateItems(plan.collate, items);
  }
}

/** One item being loaded: pending until its get() settles. */
interface Slot<T> {
  state: 'pending' | 'loaded' | 'failed';
  value?: T;
  error?: unknown;
  settled?: Promise<void>;
}

/**
 * One epoch for `for await`: get() is called for up to `prefetch` batches' items ahead of the
 * batch being handed out (at most prefetch x the largest batch's size items started and not yet delivered), and
 * the batches come in the sampler's order whatever order the items finish in. The items and
 * batches belong to the caller (no scope), since they are made across awaits.
 */
export async function* asyncBatches<T, B>(plan: EpochPlan<T, B>, prefetch: number): AsyncGenerator<B> {
  const { dataset, order, ranges } = plan;
  const total = ranges.length > 0 ? ranges[ranges.length - 1]![1] : 0;
  // Batches of a batch sampler may differ in size: the window holds `prefetch` of the largest.
  const window = prefetch * ranges.reduce((most, [from, to]) => Math.max(most, to - from), 1);
  const slots = new Map<number, Slot<T>>();
  let launched = 0;
  let delivered = 0;
  let failed = false;

  const start = (p: number) => {
    const slot: Slot<T> = { state: 'pending' };
    slots.set(p, slot);
    const fail = (error: unknown) => {
      slot.state = 'failed';
      slot.error = error;
      failed = true;
    };
    let result: T | Promise<T>;
    try {
      result = dataset.get(order[p]!);
    } catch (error) {
      fail(error);
      return;
    }
    if (!isPromiseLike(result)) {
      slot.state = 'loaded';
      slot.value = keep(result);
      return;
    }
    slot.settled = Promise.resolve(result).then((value) => {
      slot.state = 'loaded';
      slot.value = keep(value);
    }, fail);
  };
  // Loading stops at the first failure: the epoch ends there, so further items would be wasted.
  const launch = () => {
    while (!failed && launched < total && launched - delivered < window) start(launched++);
  };

  try {
    for (const [from, to] of ranges) {
      launch();
      const items: T[] = [];
      for (let p = from; p < to; p++) {
        const slot = slots.get(p)!;
        if (slot.state === 'pending') await slot.settled;
        if (slot.state === 'failed') throw new DatasetItemError(order[p]!, slot.error);
        items.push(slot.value as T);
      }
      // The batch's items leave the slots only now: until here a failure frees them with the rest.
      for (let p = from; p < to; p++) slots.delete(p);
      delivered = to;
      const batch = keep(collateItems(plan.collate, items));
      // The next batches start loading before this one is handed out, so they load while it is used.
      launch();
      yield batch;
    }
  } finally {
    // Wait for the loads in flight, then free every item not handed out in a batch.
    await Promise.all([...slots.values()].map((s) => s.settled));
    for (const slot of slots.values()) if (slot.state === 'loaded') dispose(slot.value);
    slots.clear();
  }
}
