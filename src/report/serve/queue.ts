// The live evaluations of `tailor serve`, bounded per run: `concurrency` run at once, `queue` more
// wait, and past that a request is refused with 503 and Retry-After at once instead of piling
// work up; a request that waited `queueWaitMs` is refused too, so no client waits long for an
// answer. Identical requests (the same run and preference) in flight share one evaluation.
import { HttpError } from './http.js';
import type { ServeLimits } from './limits.js';

interface Waiter {
  start(): void;
  timer: NodeJS.Timeout;
}

interface Lane {
  running: number;
  waiting: Waiter[];
}

/** Counters of one queue, for logs and the benchmark. */
export interface QueueStats {
  /** Evaluations started. */
  started: number;
  /** Requests that shared an evaluation already in flight. */
  shared: number;
  /** Requests refused because the queue was full. */
  refusedFull: number;
  /** Requests refused because they waited too long. */
  refusedWait: number;
  /** Evaluations running now, over all runs. */
  running: number;
  /** Evaluations waiting now, over all runs. */
  waiting: number;
}

export class EvaluationQueue {
  private readonly lanes = new Map<string, Lane>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly counts = { started: 0, shared: 0, refusedFull: 0, refusedWait: 0 };

  constructor(private readonly limits: Pick<ServeLimits, 'concurrency' | 'queue' | 'queueWaitMs'>) {}

  /**
   * f's result, run in lane (a run) when a slot is free; a request with the same key in flight
   * gets that request's result. Rejects with a 503 HttpError when the lane's queue is full or the
   * wait is over.
   */
  run<T>(lane: string, key: string, f: () => Promise<T>): Promise<T> {
    const same = this.inFlight.get(key);
    if (same) {
      this.counts.shared++;
      return same as Promise<T>;
    }
    const l = this.lane(lane);
    let promise: Promise<T>;
    if (l.running < this.limits.concurrency) promise = this.start(l, f);
    else if (l.waiting.length >= this.limits.queue) {
      this.counts.refusedFull++;
      return Promise.reject(
        busy(`the evaluation queue of this run is full (${l.running} running, ${l.waiting.length} waiting)`),
      );
    } else promise = this.wait(l, f);
    this.inFlight.set(key, promise);
    const forget = (): void => {
      if (this.inFlight.get(key) === promise) this.inFlight.delete(key);
    };
    promise.then(forget, forget);
    return promise;
  }

  stats(): QueueStats {
    let running = 0;
    let waiting = 0;
    for (const l of this.lanes.values()) {
      running += l.running;
      waiting += l.waiting.length;
    }
    return { ...this.counts, running, waiting };
  }

  private lane(name: string): Lane {
    let l = this.lanes.get(name);
    if (!l) {
      l = { running: 0, waiting: [] };
      this.lanes.set(name, l);
    }
    return l;
  }

  private start<T>(l: Lane, f: () => Promise<T>): Promise<T> {
    l.running++;
    this.counts.started++;
    const release = (): void => {
      l.running--;
      const next = l.waiting.shift();
      if (next) {
        clearTimeout(next.timer);
        next.start();
      }
    };
    let p: Promise<T>;
    try {
      p = f();
    } catch (error) {
      p = Promise.reject(error as Error);
    }
    p.then(release, release);
    return p;
  }

  private wait<T>(l: Lane, f: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolvePromise, reject) => {
      const waiter: Waiter = {
        start: () => this.start(l, f).then(resolvePromise, reject),
        timer: setTimeout(() => {
          const i = l.waiting.indexOf(waiter);
          if (i >= 0) l.waiting.splice(i, 1);
          this.counts.refusedWait++;
          reject(busy(`the evaluation waited ${this.limits.queueWaitMs} ms in the queue of this run`));
        }, this.limits.queueWaitMs),
      };
      l.waiting.push(waiter);
    });
  }
}

function busy(why: string): HttpError {
  return new HttpError(503, `server busy: ${why}; retry in a second`, { 'retry-after': '1' });
}
