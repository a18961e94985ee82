// The data sets the long-tail commands train and evaluate on: in-memory sets (Fashion-MNIST,
// CIFAR) batch synchronously, lazily decoded image lists (ImageNet-LT, Places-LT, iNaturalist)
// asynchronously (sharp decodes on libuv's thread pool, the next batch while the current one is
// used). Both give the same batches for the same options, so one training loop and one
// evaluation loop serve both, consuming the batches with `for await`.
import { iterateBatches, iterateBatchesAsync, type Batch, type BatchOptions } from './batches.js';
import { LazyImageDataset } from './imagelist.js';
import { ImageListLoader, listSource, type ImageListPipeline } from './imagelist-loader.js';
import type { ImageDataset } from './types.js';

export type ImageSet = ImageDataset | LazyImageDataset;

export function isLazy(ds: ImageSet): ds is LazyImageDataset {
  return ds instanceof LazyImageDataset;
}

/**
 * One epoch of batches: a plain iterable for in-memory sets, an async one for image lists. With
 * `listPipeline` (training on an image list), the list's own loader builds the batches: its
 * augmentation happens while decoding, on its worker threads, and options.transform is not used;
 * each batch's `x` is then reused for a later batch once the next one is asked for (copy what
 * outlives the loop body, as the trainer's tensors do).
 */
export function epochBatches(
  ds: ImageSet,
  options: BatchOptions,
  listPipeline?: ImageListPipeline,
): Iterable<Batch> | AsyncIterable<Batch> {
  if (isLazy(ds) && listPipeline) return listEpoch(ds, options, listPipeline);
  return isLazy(ds) ? iterateBatchesAsync(ds, options) : iterateBatches(ds, options);
}

/** One epoch from a loader of its own, whose workers end with the epoch (or its error). */
async function* listEpoch(
  ds: LazyImageDataset,
  options: BatchOptions,
  p: ImageListPipeline,
): AsyncGenerator<Batch> {
  if ((options.views ?? 1) !== 1)
    throw new RangeError('the image-list loader builds one view per image; use the per-batch transform for two');
  const loader = new ImageListLoader(listSource(ds.list), {
    spec: p.spec,
    workers: p.workers,
    ...(p.prefetch !== undefined ? { prefetch: p.prefetch } : {}),
    ...(p.skipCorrupt ? { skipCorrupt: true } : {}),
    // the trainer copies each batch into a tensor before it asks for the next
    recycleBuffers: true,
  });
  try {
    const { transform: _transform, views: _views, pool: _pool, ...epoch } = options;
    yield* loader.epoch(epoch);
  } finally {
    await loader.close();
  }
}

/** Runs `fn` on every batch of one epoch (awaiting decoding where the set is lazy). */
export async function forEachBatch(
  ds: ImageSet,
  options: BatchOptions,
  fn: (batch: Batch) => void,
): Promise<void> {
  for await (const batch of epochBatches(ds, options)) fn(batch);
}
