// The data sets the long-tail commands train and evaluate on: in-memory sets (Fashion-MNIST,
// CIFAR) batch synchronously, lazily decoded image lists (ImageNet-LT, Places-LT, iNaturalist)
// asynchronously (sharp decodes on libuv's thread pool, the next batch while the current one is
// used). Both give the same batches for the same options, so one training loop and one
// evaluation loop serve both, consuming the batches with `for await`.
import { iterateBatches, iterateBatchesAsync, type Batch, type BatchOptions } from './batches.js';
import { LazyImageDataset } from './imagelist.js';
import type { ImageDataset } from './types.js';

export type ImageSet = ImageDataset | LazyImageDataset;

export function isLazy(ds: ImageSet): ds is LazyImageDataset {
  return ds instanceof LazyImageDataset;
}

/** One epoch of batches: a plain iterable for in-memory sets, an async one for image lists. */
export function epochBatches(ds: ImageSet, options: BatchOptions): Iterable<Batch> | AsyncIterable<Batch> {
  return isLazy(ds) ? iterateBatchesAsync(ds, options) : iterateBatches(ds, options);
}

/** Runs `fn` on every batch of one epoch (awaiting decoding where the set is lazy). */
export async function forEachBatch(
  ds: ImageSet,
  options: BatchOptions,
  fn: (batch: Batch) => void,
): Promise<void> {
  for await (const batch of epochBatches(ds, options)) fn(batch);
}
