// Worker-thread side of the DataLoader: builds the dataset from a module, then answers batch
// requests with host batches whose buffers are transferred (not copied) back. It never loads the
// libtorch addon: datasets used in workers must produce typed arrays only.
import { parentPort, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { isAbsolute } from 'node:path';
import { loadBatch, type AnyDataset, type HostBatch } from './dataset.js';

export interface WorkerSpec {
  /** A module path or file URL exporting the dataset or a (possibly async) factory of it. */
  module: string;
  /** The export to use (default 'default'). */
  exportName?: string;
  /** JSON-able arguments passed to the factory. */
  args?: unknown;
}

export type WorkerRequest = { type: 'batch'; id: number; indices: Int32Array; seed: number };
export type WorkerReply =
  | { type: 'ready'; length: number }
  | { type: 'batch'; id: number; batch: HostBatch }
  | { type: 'error'; id: number; message: string };

/** Buffers that can move to the other thread without copying: whole, unshared, not yet listed. */
export function transferList(batch: HostBatch): ArrayBuffer[] {
  const seen = new Set<ArrayBufferLike>();
  const out: ArrayBuffer[] = [];
  for (const a of [batch.indices, ...Object.values(batch.fields).map((f) => f.data)]) {
    const buffer = a.buffer;
    if (seen.has(buffer)) continue;
    seen.add(buffer);
    if (buffer instanceof ArrayBuffer && a.byteOffset === 0 && a.byteLength === buffer.byteLength)
      out.push(buffer);
  }
  // A buffer shared by several arrays must be copied, not moved: drop those.
  const counts = new Map<ArrayBufferLike, number>();
  for (const a of [batch.indices, ...Object.values(batch.fields).map((f) => f.data)])
    counts.set(a.buffer, (counts.get(a.buffer) ?? 0) + 1);
  return out.filter((b) => counts.get(b) === 1);
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('data/worker.js must run in a worker thread');
  const spec = workerData as WorkerSpec;
  const specifier = isAbsolute(spec.module) ? pathToFileURL(spec.module).href : spec.module;
  const mod = (await import(specifier)) as Record<string, unknown>;
  const exported = mod[spec.exportName ?? 'default'];
  if (exported === undefined)
    throw new Error(`${spec.module} has no export '${spec.exportName ?? 'default'}'`);
  const dataset = (
    typeof exported === 'function' ? await (exported as (args: unknown) => unknown)(spec.args) : exported
  ) as AnyDataset;
  if (!dataset || typeof dataset.length !== 'number') {
    throw new Error(
      `${spec.module}: '${spec.exportName ?? 'default'}' did not give a dataset (an object with length and get or getBatch)`,
    );
  }
  port.on('message', (request: WorkerRequest) => {
    loadBatch(dataset, request.indices, request.seed).then(
      (batch) =>
        port.postMessage({ type: 'batch', id: request.id, batch } satisfies WorkerReply, transferList(batch)),
      (error: unknown) =>
        port.postMessage({
          type: 'error',
          id: request.id,
          message: error instanceof Error ? error.message : String(error),
        } satisfies WorkerReply),
    );
  });
  port.postMessage({ type: 'ready', length: dataset.length } satisfies WorkerReply);
}

if (parentPort) {
  main().catch((error: unknown) => {
    parentPort!.postMessage({
      type: 'error',
      id: -1,
      message: error instanceof Error ? error.message : String(error),
    } satisfies WorkerReply);
  });
}
