// The default evaluator of `tailor serve`'s preference endpoint: the run's PRL model, run on a
// worker thread (serve/evaluator-worker.ts) so that an evaluation, tens of milliseconds of tensor
// work, never holds up the pages, files and refusals the server's own thread answers. The thread
// starts on the first evaluation (a server that never evaluates never loads libtorch) and again
// after it stopped; the queue (serve/queue.ts) bounds what is sent to it.
import { Worker } from 'node:worker_threads';
import type { Preference } from '../../longtail/index.js';
import type { PreferenceAnswer } from '../types.js';

/** A message to the worker: evaluate a run at a preference, or report the engine's state. */
export type EvaluatorRequest =
  { kind: 'evaluate'; id: number; runDir: string; weights: number[] } | { kind: 'stats'; id: number };

/** The worker's answer to request `id`. */
export type EvaluatorReply =
  | { id: number; answer: PreferenceAnswer }
  | { id: number; error: string }
  | { id: number; stats: EngineStats };

/** The tensor engine's state on the evaluator thread. */
export interface EngineStats {
  /** Native tensors alive (flat over a long session unless something leaks). */
  liveTensors: number;
}

interface Pending {
  resolve(reply: EvaluatorReply): void;
  reject(error: Error): void;
}

export class WorkerEvaluator {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** The accuracy of the run's PRL model at a preference (the run's errors reject with their message). */
  async evaluate(runDir: string, preference: Preference): Promise<PreferenceAnswer> {
    const reply = await this.send({ kind: 'evaluate', id: 0, runDir, weights: [...preference.weights] });
    if ('error' in reply) throw new Error(reply.error);
    if (!('answer' in reply)) throw new Error('the evaluator thread answered out of turn');
    return reply.answer;
  }

  /** The engine's state, or null when no evaluation has started the thread yet. */
  async stats(): Promise<EngineStats | null> {
    if (!this.worker) return null;
    const reply = await this.send({ kind: 'stats', id: 0 });
    return 'stats' in reply ? reply.stats : null;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }

  private send(request: EvaluatorRequest): Promise<EvaluatorReply> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  }

  private start(): Worker {
    const worker = new Worker(new URL('./evaluator-worker.js', import.meta.url));
    // Open sockets keep a serving process alive; the thread alone must not.
    worker.unref();
    worker.on('message', (reply: EvaluatorReply) => {
      const p = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      p?.resolve(reply);
    });
    const fail = (why: string): void => {
      if (this.worker === worker) this.worker = null;
      for (const p of this.pending.values()) p.reject(new Error(`the evaluator thread stopped (${why})`));
      this.pending.clear();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }
}
