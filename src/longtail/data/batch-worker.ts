// Worker thread of ParallelBatchLoader: holds the shared image bytes and builds the batches it
// is asked for with the same per-batch generator as the single-threaded iterator.
import { parentPort, workerData } from 'node:worker_threads';
import { BatchBufferPool, batchRng, buildBatch } from './batches.js';
import { makeTransform, type PipelineSpec } from './pipelines.js';
import type { ImageTransform } from './augment.js';

interface Init {
  images: SharedArrayBuffer;
  labels: SharedArrayBuffer;
  shape: [number, number, number];
}
export interface BatchJob {
  id: number;
  indices: Int32Array;
  seed: number;
  epoch: number;
  batch: number;
  pipeline?: PipelineSpec;
  views: 1 | 2;
}

const init = workerData as Init;
const images = new Uint8Array(init.images);
const labels = new Int32Array(init.labels);
const transforms = new Map<string, ImageTransform>();
const pool = new BatchBufferPool();

parentPort!.on('message', (message: BatchJob | { release: Float32Array[] }) => {
  if ('release' in message) {
    for (const x of message.release) pool.release({ x });
    return;
  }
  const job = message;
  try {
    let transform: ImageTransform | undefined;
    if (job.pipeline) {
      const key = JSON.stringify(job.pipeline);
      if (!transforms.has(key)) transforms.set(key, makeTransform(job.pipeline));
      transform = transforms.get(key);
    }
    const rng = batchRng(job.seed, job.epoch, job.batch);
    const b = buildBatch(images, init.shape, labels, job.indices, transform, rng, job.views, undefined, pool);
    const transfer: ArrayBuffer[] = [
      b.x.buffer as ArrayBuffer,
      b.y.buffer as ArrayBuffer,
      b.indices.buffer as ArrayBuffer,
    ];
    if (b.x2) transfer.push(b.x2.buffer as ArrayBuffer);
    parentPort!.postMessage({ id: job.id, batch: b }, transfer);
  } catch (error) {
    parentPort!.postMessage({ id: job.id, error: (error as Error).message });
  }
});
