// DataLoader: batches from a sampler, prepared ahead of the training loop. In-process it keeps
// `prefetch` batches in flight (useful when the dataset does asynchronous I/O); with workers it
// builds batches in worker threads, so decoding and augmentation run beside the training step.
import { Worker } from 'node:worker_threads';
import type { Tensor } from '../tensor.js';
import { tensor } from '../creation.js';
import { dispose } from '../scope.js';
import type { DType } from '../dtype.js';
import { loadBatch, mixSeed, type AnyDataset, type HostBatch } from './dataset.js';
import { RandomSampler, SequentialSampler, batchIndices, type Sampler } from './sampler.js';
import type { WorkerReply, WorkerRequest, WorkerSpec } from './worker.js';

/** A dataset built inside each worker thread from a module (`length` must equal its length). */
export interface WorkerDataset extends WorkerSpec {
  length: number;
}

export interface DataLoaderOptions {
  batchSize: number;
  /** Where the indices come from (default: RandomSampler if shuffle, else SequentialSampler). */
  sampler?: Sampler;
  shuffle?: boolean;
  /** Seeds the default shuffling and every batch's augmentation generator. */
  seed?: number;
  dropLast?: boolean;
  /** Batches prepared ahead of the one being consumed (default 2, or 2 per worker). */
  prefetch?: number;
  /** Worker threads (only with a WorkerDataset; default 1 then). */
  workers?: number;
}

export class DataLoader {
  readonly batchSize: number;
  readonly sampler: Sampler;
  readonly dropLast: boolean;
  private readonly seed: number;
  private readonly prefetch: number;
  private readonly dataset?: AnyDataset;
  private readonly pool?: WorkerPool;
  private nextEpoch = 0;

  constructor(source: AnyDataset | WorkerDataset, options: DataLoaderOptions) {
    this.batchSize = options.batchSize;
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1) {
      throw new RangeError(`DataLoader: batchSize must be a positive integer, got ${options.batchSize}`);
    }
    this.seed = options.seed ?? 0;
    this.dropLast = options.dropLast ?? false;
    const length = source.length;
    this.sampler =
      options.sampler ??
      (options.shuffle ? new RandomSampler(length, { seed: this.seed }) : new SequentialSampler(length));
    if ('module' in source) {
      const workers = options.workers ?? 1;
      if (!Number.isInteger(workers) || workers < 1)
        throw new RangeError(`DataLoader: workers must be >= 1, got ${workers}`);
      this.pool = new WorkerPool(source, workers);
      this.prefetch = options.prefetch ?? 2 * workers;
    } else {
      if (options.workers) {
        throw new TypeError(
          'DataLoader: workers need a WorkerDataset ({ module, exportName, args, length }), not a dataset object',
        );
      }
      this.dataset = source;
      this.prefetch = options.prefetch ?? 2;
    }
    if (!Number.isInteger(this.prefetch) || this.prefetch < 1)
      throw new RangeError(`DataLoader: prefetch must be >= 1, got ${this.prefetch}`);
  }

  /** Batches per epoch. */
  get length(): number {
    const n = this.sampler.length;
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }

  /** The seed of batch `batch` of `epoch` (what its dataset.get calls receive as their Rng). */
  batchSeed(epoch: number, batch: number): number {
    return mixSeed(this.seed, epoch, batch, 3);
  }

  /**
   * The batches of one epoch, in order, with the next ones prepared while the caller works on the
   * current one. `startBatch` skips the first batches (resuming mid-epoch gives the same batches).
   */
  async *epoch(epoch: number, options: { startBatch?: number } = {}): AsyncGenerator<HostBatch> {
    const batches = batchIndices(this.sampler.indices(epoch), this.batchSize, this.dropLast);
    const queue: Promise<HostBatch>[] = [];
    let next = options.startBatch ?? 0;
    const fill = () => {
      while (queue.length < this.prefetch && next < batches.length) {
        const promise = this.load(batches[next]!, this.batchSeed(epoch, next));
        promise.catch(() => undefined); // rejections surface when awaited, not as unhandled
        queue.push(promise);
        next++;
      }
    };
    fill();
    while (queue.length > 0) {
      const batch = await queue.shift()!;
      fill();
      yield batch;
    }
  }

  /** Iterating the loader itself runs epoch 0, 1, 2, ... on successive loops. */
  [Symbol.asyncIterator](): AsyncGenerator<HostBatch> {
    return this.epoch(this.nextEpoch++);
  }

  private load(indices: Int32Array, seed: number): Promise<HostBatch> {
    if (this.pool) return this.pool.request(indices, seed);
    // Deferred so several batches can be in flight when the dataset awaits I/O.
    return Promise.resolve().then(() => loadBatch(this.dataset!, indices, seed));
  }

  /** Stops the worker threads (the loader cannot be used afterwards with workers). */
  async close(): Promise<void> {
    await this.pool?.close();
  }
}

/** Engine tensors for a host batch (owned by the caller or the enclosing tidy scope). */
export function batchToTensors(batch: HostBatch, dtypes: Record<string, DType> = {}): Record<string, Tensor> {
  const out: Record<string, Tensor> = {};
  try {
    for (const [key, { data, shape }] of Object.entries(batch.fields)) {
      const dtype = dtypes[key];
      out[key] = tensor(data, dtype ? { shape, dtype } : { shape });
    }
  } catch (error) {
    dispose(out);
    throw error;
  }
  return out;
}

interface PoolWorker {
  worker: Worker;
  inflight: number;
}

/** Worker threads that build batches; replies are matched to requests by id. */
class WorkerPool {
  private readonly workers: PoolWorker[] = [];
  private readonly pending = new Map<
    number,
    { resolve: (b: HostBatch) => void; reject: (e: Error) => void }
  >();
  private nextId = 0;
  private failure?: Error;
  private readonly ready: Promise<void>;

  constructor(
    private readonly spec: WorkerDataset,
    count: number,
  ) {
    const readies: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const worker = new Worker(new URL('./worker.js', import.meta.url), {
        workerData: {
          module: spec.module,
          exportName: spec.exportName,
          args: spec.args,
        } satisfies WorkerSpec,
      });
      const entry: PoolWorker = { worker, inflight: 0 };
      this.workers.push(entry);
      worker.unref(); // an idle pool must not keep the process alive
      readies.push(
        new Promise<void>((resolve, reject) => {
          worker.on('message', (reply: WorkerReply) => {
            if (reply.type === 'ready') {
              if (reply.length !== spec.length) {
                reject(
                  new Error(
                    `DataLoader worker: ${spec.module} built a dataset of length ${reply.length}, the loader was told ${spec.length}`,
                  ),
                );
              } else resolve();
            } else if (reply.id === -1) {
              reject(
                new Error(
                  `DataLoader worker could not build the dataset from ${spec.module}: ${reply.type === 'error' ? reply.message : ''}`,
                ),
              );
            } else this.settle(entry, reply);
          });
          worker.on('error', (error) => {
            this.fail(new Error(`DataLoader worker crashed: ${error.message}`));
            reject(error);
          });
          worker.on('exit', (code) => {
            if (code !== 0 || entry.inflight > 0)
              this.fail(new Error(`DataLoader worker exited with code ${code}`));
          });
        }),
      );
    }
    this.ready = Promise.all(readies).then(() => undefined);
    this.ready.catch((error: Error) => this.fail(error));
  }

  private settle(entry: PoolWorker, reply: WorkerReply): void {
    if (reply.type === 'ready') return;
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    entry.inflight--;
    if (entry.inflight === 0) entry.worker.unref();
    if (reply.type === 'batch') waiter.resolve(reply.batch);
    else waiter.reject(new Error(`DataLoader worker (${this.spec.module}): ${reply.message}`));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const entry of this.workers) {
      entry.inflight = 0;
      entry.worker.unref();
    }
    for (const [id, waiter] of this.pending) {
      this.pending.delete(id);
      waiter.reject(this.failure);
    }
  }

  async request(indices: Int32Array, seed: number): Promise<HostBatch> {
    if (this.failure) throw this.failure;
    const entry = this.workers.reduce((a, b) => (b.inflight < a.inflight ? b : a));
    entry.inflight++;
    entry.worker.ref(); // keep the process alive while a reply is due
    const id = this.nextId++;
    const result = new Promise<HostBatch>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    result.catch(() => undefined); // the caller awaits it; a failure before then is not unhandled
    try {
      await this.ready;
    } catch (error) {
      this.pending.delete(id);
      throw error;
    }
    if (this.failure) throw this.failure;
    entry.worker.postMessage({ type: 'batch', id, indices, seed } satisfies WorkerRequest);
    return result;
  }

  async close(): Promise<void> {
    this.fail(new Error('DataLoader was closed'));
    // A terminating worker's handle no longer keeps the event loop alive, so without this timer
    // the process could exit while this await is pending (seen as a hang-then-exit under load).
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      await Promise.all(this.workers.map((w) => w.worker.terminate()));
    } finally {
      clearInterval(keepAlive);
    }
  }
}
