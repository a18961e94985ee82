// Worker thread of ImageListLoader: holds the list and builds the batches it is asked for with
// the same function, and so the same generators, as the loader's in-process path.
import { parentPort, workerData } from 'node:worker_threads';
import {
  ListAugmenter,
  SpareBuffers,
  buildListBatch,
  type ListAugmentSpec,
  type ListSource,
} from './imagelist-augment.js';
import { DataFormatError } from './types.js';

export interface ListWorkerInit {
  source: ListSource;
  spec: ListAugmentSpec;
  skipCorrupt: boolean;
  concurrency: number;
}

export interface ListBatchJob {
  id: number;
  indices: Int32Array;
  seed: number;
  epoch: number;
  batch: number;
}

/** A batch's pixel buffer handed back by the loader (recycleBuffers), to build a later batch into. */
export interface ListBufferReturn {
  release: Float32Array;
}

/** A failure as it crosses the thread boundary (a DataFormatError keeps its file and line). */
export interface ListJobError {
  name: string;
  message: string;
  file?: string;
  line?: number;
}

const init = workerData as ListWorkerInit;
const augmenter = new ListAugmenter(init.spec);
// handed-back buffers: enough for the batches a worker has in flight
const spare = new SpareBuffers(4);

parentPort!.on('message', (m: ListBatchJob | ListBufferReturn) => {
  if ('release' in m) {
    spare.give(m.release);
    return;
  }
  const job = m;
  const out = spare.take(job.indices.length * augmenter.imageLength);
  buildListBatch(init.source, augmenter, job.indices, job.seed, job.epoch, job.batch, {
    skipCorrupt: init.skipCorrupt,
    concurrency: init.concurrency,
    ...(out ? { out } : {}),
  }).then(
    (r) => {
      const b = r.batch;
      const transfer = [b.x.buffer, b.y.buffer, b.indices.buffer] as ArrayBuffer[];
      parentPort!.postMessage({ id: job.id, batch: b, skipped: r.skipped, reused: out !== undefined }, transfer);
    },
    (error: Error) => {
      const e: ListJobError = { name: error.name, message: error.message };
      if (error instanceof DataFormatError) {
        // the message already carries the file and line prefix; send its parts to rebuild it
        e.file = error.file;
        if (error.line !== undefined) e.line = error.line;
        const prefix = error.line === undefined ? `${error.file}: ` : `${error.file}:${error.line}: `;
        e.message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      }
      parentPort!.postMessage({ id: job.id, error: e });
    },
  );
});
