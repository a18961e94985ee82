// The image-list loader: batches of a list decoded and augmented on `workers` worker threads
// (num_workers of the configs: 0 builds them on the calling thread), up to `prefetch` batches
// ahead. Each worker builds whole batches, as a PyTorch DataLoader worker does; sharp decodes on
// libuv's thread pool, which the CLI sizes to the machine (UV_THREADPOOL_SIZE), while the crops,
// flips, jitter and normalization run on the workers. Finished batches come back as transferred
// buffers (no copy). Batch b is built by the same function with the same per-image generators
// whichever thread builds it, so every worker count gives the same epoch, pixel for pixel.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { batchIndices, epochOrder, type Batch, type BatchOptions } from './batches.js';
import {
  ListAugmenter,
  SpareBuffers,
  buildListBatch,
  type ListAugmentSpec,
  type ListBatchResult,
  type ListSource,
  type SkippedImage,
} from './imagelist-augment.js';
import type { ImageList } from './imagelist.js';
import type { ListBatchJob, ListBufferReturn, ListJobError, ListWorkerInit } from './imagelist-worker.js';
import { DataFormatError } from './types.js';

export interface ImageListLoaderOptions {
  spec: ListAugmentSpec;
  /** Worker threads (num_workers); 0 builds the batches on the calling thread. Capped to the cores. */
  workers?: number;
  /** Batches in flight (default 2 per worker, PyTorch's prefetch_factor; 2 without workers). */
  prefetch?: number;
  /** Leave corrupt or truncated images out of their batch (counted in `skipped`) instead of failing. */
  skipCorrupt?: boolean;
  /** Images of one batch decoded at the same time (default 4). */
  concurrency?: number;
  /** Called once per skipped image (default console.warn). */
  warn?: (message: string) => void;
  /**
   * Hand each batch's pixel buffer back to the thread that built it once the next batch is asked
   * for, so that building a batch allocates (and page-faults in) no new memory. Only for a
   * consumer done with a batch's `x` before it asks for the next one (the trainer copies it into
   * a tensor at once): a buffer handed back to a worker thread is detached (empty) here, and
   * without workers it is overwritten by a later batch. Default false.
   */
  recycleBuffers?: boolean;
}

/** How a training run batches an image list (from data_loader.args of the config). */
export interface ImageListPipeline {
  spec: ListAugmentSpec;
  /** num_workers: worker threads building batches (0: the training thread). */
  workers: number;
  /** Batches in flight (PyTorch's prefetch_factor x num_workers by default). */
  prefetch?: number;
  skipCorrupt?: boolean;
}

/** The batching options of one epoch (the transform is the loader's spec). */
export type ListEpochOptions = Omit<BatchOptions, 'transform' | 'views' | 'pool'> & {
  /** Stops the epoch: pending batches are dropped, the workers ended, the epoch throws the reason. */
  signal?: AbortSignal;
};

/** A list's entries as the loader's threads need them. */
export function listSource(list: ImageList): ListSource {
  return {
    root: list.root,
    listFile: list.listFile,
    paths: list.entries.map((e) => e.path),
    lines: Int32Array.from(list.entries, (e) => e.line),
    labels: Int32Array.from(list.entries, (e) => e.label),
  };
}

/** A worker's answer to a job: the batch (built into a handed-back buffer when `reused`) or the failure. */
interface ListJobReply {
  id: number;
  batch?: Batch;
  skipped?: SkippedImage[];
  reused?: boolean;
  error?: ListJobError;
}

interface Waiting {
  resolve: (r: ListBatchResult) => void;
  reject: (e: Error) => void;
}

export class ImageListLoader {
  /** The worker threads used (the request capped to the cores). */
  readonly workers: number;
  readonly prefetch: number;
  /** Every image left out so far (skipCorrupt). */
  readonly skipped: SkippedImage[] = [];
  private threads: Worker[] = [];
  private waiting = new Map<number, Waiting>();
  private nextId = 0;
  private closed = false;
  private readonly augmenter: ListAugmenter;
  /** Handed-back buffers of the in-process path (no workers). */
  private readonly spare = new SpareBuffers(2);
  private reused = 0;

  constructor(
    readonly source: ListSource,
    private readonly options: ImageListLoaderOptions,
  ) {
    const requested = options.workers ?? 0;
    if (!(Number.isInteger(requested) && requested >= 0))
      throw new RangeError(`num_workers must be a non-negative integer, got ${requested}`);
    this.workers = Math.min(requested, availableParallelism());
    this.prefetch = Math.max(1, options.prefetch ?? 2 * Math.max(1, this.workers));
    this.augmenter = new ListAugmenter(options.spec);
    const init: ListWorkerInit = {
      source,
      spec: options.spec,
      skipCorrupt: options.skipCorrupt ?? false,
      concurrency: options.concurrency ?? 4,
    };
    for (let w = 0; w < this.workers; w++) this.threads.push(this.startWorker(init));
  }

  /** Batches built into a handed-back buffer so far (recycleBuffers). */
  get reusedBuffers(): number {
    return this.reused;
  }

  get labels(): Int32Array {
    return this.source.labels;
  }

  /** True once close() ran or an error or abort ended the workers. */
  get isClosed(): boolean {
    return this.closed;
  }

  private startWorker(init: ListWorkerInit): Worker {
    const w = new Worker(new URL('./imagelist-worker.js', import.meta.url), { workerData: init });
    w.on('message', (m: ListJobReply) => {
      const p = this.waiting.get(m.id);
      if (!p) return;
      this.waiting.delete(m.id);
      if (m.reused) this.reused++;
      if (m.error) p.reject(rebuildError(m.error));
      else p.resolve({ batch: m.batch!, skipped: m.skipped ?? [] });
    });
    w.on('error', (e) => this.failAll(new Error(`image-list worker failed: ${e.message}`, { cause: e })));
    w.on('exit', (code) => {
      if (!this.closed) this.failAll(new Error(`an image-list worker exited (code ${code})`));
    });
    return w;
  }

  private failAll(error: Error): void {
    for (const p of this.waiting.values()) p.reject(error);
    this.waiting.clear();
  }

  /** Batch b built on worker b mod workers, or here without workers. */
  private build(indices: Int32Array, seed: number, epoch: number, b: number): Promise<ListBatchResult> {
    if (this.closed) return Promise.reject(new Error('the image-list loader is closed'));
    if (this.threads.length === 0) {
      const out = this.spare.take(indices.length * this.augmenter.imageLength);
      if (out) this.reused++;
      return buildListBatch(this.source, this.augmenter, indices, seed, epoch, b, {
        skipCorrupt: this.options.skipCorrupt ?? false,
        concurrency: this.options.concurrency ?? 4,
        ...(out ? { out } : {}),
      });
    }
    const id = this.nextId++;
    const job: ListBatchJob = { id, indices: Int32Array.from(indices), seed, epoch, batch: b };
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.threads[b % this.threads.length]!.postMessage(job);
    });
  }

  /**
   * One epoch, batches in order, `prefetch` of them being built ahead. An error (a corrupt image
   * without skipCorrupt) or an abort stops the prefetching and ends the workers before it is
   * thrown; a consumer that stops early leaves the workers for the next epoch.
   */
  async *epoch(options: ListEpochOptions): AsyncGenerator<Batch> {
    const order = epochOrder(this.source.labels, options);
    const chunks = batchIndices(order, options.batchSize, options.dropLast);
    const seed = options.seed ?? 0;
    const epoch = options.epoch ?? 0;
    const signal = options.signal;
    const pending: Promise<ListBatchResult>[] = [];
    let next = 0;
    const fill = (): void => {
      while (next < chunks.length && pending.length < this.prefetch) {
        const p = this.build(chunks[next]!, seed, epoch, next);
        // a batch built ahead and never awaited must not become an unhandled rejection
        p.catch(() => undefined);
        pending.push(p);
        next++;
      }
    };
    try {
      signal?.throwIfAborted();
      fill();
      for (let b = 0; pending.length > 0; b++) {
        const r = await abortable(pending.shift()!, signal);
        this.noteSkipped(r.skipped);
        fill();
        if (r.batch.n === 0) continue;
        yield r.batch;
        // the consumer asked for the next batch: it is done with this one's pixels
        if (this.options.recycleBuffers) this.recycle(r.batch.x, b);
      }
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /** x back to the thread that built batch b (which builds b + workers next). */
  private recycle(x: Float32Array, b: number): void {
    if (this.closed || x.byteOffset !== 0 || x.byteLength !== x.buffer.byteLength) return;
    if (this.threads.length === 0) {
      this.spare.give(x);
      return;
    }
    const message: ListBufferReturn = { release: x };
    this.threads[b % this.threads.length]!.postMessage(message, [x.buffer as ArrayBuffer]);
  }

  private noteSkipped(skipped: SkippedImage[]): void {
    const warn = this.options.warn ?? console.warn;
    for (const s of skipped) {
      this.skipped.push(s);
      warn(`${this.source.listFile}:${s.line}: skipping unreadable image (${s.message})`);
    }
  }

  /** Ends the workers; batches still being built are dropped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.failAll(new Error('the image-list loader was closed'));
    await Promise.all(this.threads.map((w) => w.terminate()));
    this.threads = [];
  }
}

function rebuildError(e: ListJobError): Error {
  if (e.file !== undefined) return new DataFormatError(e.message, e.file, e.line);
  const error = new Error(e.message);
  error.name = e.name;
  return error;
}

/** `p`, or the signal's reason as soon as it aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
