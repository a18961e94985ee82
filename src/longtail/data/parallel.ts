// Batches built on worker threads so that augmentation keeps up with the GPU: the image bytes
// live in a SharedArrayBuffer, each worker builds whole batches, finished batches come back as
// transferred buffers (no copy). Batch b of an epoch uses the same generator as in
// iterateBatches, so the parallel and the single-threaded epochs are identical.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { batchIndices, epochOrder, type Batch, type BatchOptions } from './batches.js';
import type { BatchJob } from './batch-worker.js';
import type { PipelineSpec } from './pipelines.js';
import type { ImageDataset } from './types.js';

export interface ParallelBatchOptions extends Omit<BatchOptions, 'transform'> {
  pipeline?: PipelineSpec;
  /** Batches in flight (default 2 per worker). */
  prefetch?: number;
}

function shared(src: Uint8Array | Int32Array): SharedArrayBuffer {
  if (
    src.buffer instanceof SharedArrayBuffer &&
    src.byteOffset === 0 &&
    src.byteLength === src.buffer.byteLength
  )
    return src.buffer;
  const sab = new SharedArrayBuffer(src.byteLength);
  new Uint8Array(sab).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength));
  return sab;
}

export class ParallelBatchLoader {
  private workers: Worker[];
  private waiting = new Map<number, { resolve: (b: Batch) => void; reject: (e: Error) => void }>();
  private nextId = 0;
  private nextWorker = 0;
  private nextRelease = 0;

  constructor(
    readonly ds: ImageDataset,
    workers = Math.max(1, availableParallelism() - 1),
  ) {
    const workerData = { images: shared(ds.images), labels: shared(ds.labels), shape: ds.shape };
    this.workers = Array.from({ length: workers }, () => {
      const w = new Worker(new URL('./batch-worker.js', import.meta.url), { workerData });
      w.on('message', (m: { id: number; batch?: Batch; error?: string }) => {
        const p = this.waiting.get(m.id);
        if (!p) return;
        this.waiting.delete(m.id);
        if (m.error !== undefined || !m.batch) p.reject(new Error(`batch worker: ${m.error}`));
        else p.resolve(m.batch);
      });
      w.on('error', (e) => {
        for (const p of this.waiting.values()) p.reject(e);
        this.waiting.clear();
      });
      return w;
    });
  }

  get size(): number {
    return this.workers.length;
  }

  private submit(job: Omit<BatchJob, 'id'>): Promise<Batch> {
    const id = this.nextId++;
    const worker = this.workers[this.nextWorker++ % this.workers.length]!;
    return new Promise<Batch>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ ...job, id });
    });
  }

  /** One epoch, batches in order; up to `prefetch` batches are being built ahead. */
  async *epoch(options: ParallelBatchOptions): AsyncGenerator<Batch> {
    const order = epochOrder(this.ds.labels, options);
    const chunks = batchIndices(order, options.batchSize, options.dropLast);
    const prefetch = Math.max(1, options.prefetch ?? 2 * this.workers.length);
    const pending: Promise<Batch>[] = [];
    let next = 0;
    const fill = (): void => {
      while (next < chunks.length && pending.length < prefetch) {
        const job = this.submit({
          indices: Int32Array.from(chunks[next]!),
          seed: options.seed ?? 0,
          epoch: options.epoch ?? 0,
          batch: next,
          views: options.views ?? 1,
          ...(options.pipeline ? { pipeline: options.pipeline } : {}),
        });
        // an abandoned epoch must not leave an unhandled rejection behind
        job.catch(() => undefined);
        pending.push(job);
        next++;
      }
    };
    fill();
    while (pending.length > 0) {
      const batch = await pending.shift()!;
      fill();
      yield batch;
    }
  }

  /**
   * Hands a used batch's arrays back to a worker for reuse (optional; see BatchBufferPool). The
   * batch must not be used afterwards: its buffers are transferred away.
   */
  release(batch: Batch): void {
    const arrays = [batch.x, batch.x2].filter((a): a is Float32Array => a !== undefined);
    const worker = this.workers[this.nextRelease++ % this.workers.length]!;
    worker.postMessage(
      { release: arrays },
      arrays.map((a) => a.buffer as ArrayBuffer),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
