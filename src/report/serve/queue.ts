// The live evaluations of `tailor serve`, bounded per run: `concurrency` run at once, `queue` more
// wait, and past that a request is refused with 503 and Retry-After at once instead of piling
// work up; a request that waited `queueWaitMs` is refused too, so no client waits long for an
// answer. Identical requests (the same run and preference) in flight share one evaluation.
import { HttpError } from './http.js';
import type { ServeLimits } from './limits.js';

interface Waiter {
  start(): void;
  timer: NodeJS.Timeout;
  /** Takes the waiter out of the queue (all its clients left) and rejects its promise. */
  cancel(): void;
}

/** The clients waiting for one key's result, and how to drop its evaluation while it still waits. */
interface Interest {
  clients: number;
  cancel: (() => void) | null;
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
  /** Waiting evaluations dropped because every client that asked for them left. */
  abandoned: number;
  /** Evaluations running now, over all runs. */
  running: number;
  /** Evaluations waiting now, over all runs. */
  waiting: number;
}

export class EvaluationQueue {
  private readonly lanes = new Map<string, Lane>();
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly interest = new Map<string, Interest>();
  private readonly counts = { started: 0, shared: 0, refusedFull: 0, refusedWait: 0, abandoned: 0 };

  constructor(private readonly limits: Pick<ServeLimits, 'concurrency' | 'queue' | 'queueWaitMs'>) {}

  /**
   * f's result, run in lane (a run) when a slot is free; a request with the same key in flight
   * gets that request's result. Rejects with a 503 HttpError when the lane's queue is full or the
   * wait is over. `signal` aborts when the client has gone: an evaluation still waiting in the
   * queue whose clients have all gone is dropped (a running one finishes; its result is shared).
   */
  run<T>(lane: string, key: string, f: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const same = this.inFlight.get(key);
    if (same) {
      this.counts.shared++;
      this.follow(key, signal);
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
    } else promise = this.wait(l, f, key);
    this.inFlight.set(key, promise);
    this.interest.set(key, { clients: 0, cancel: this.interest.get(key)?.cancel ?? null });
    this.follow(key, signal);
    const forget = (): void => {
      if (this.inFlight.get(key) === promise) {
        this.inFlight.delete(key);
        this.interest.delete(key);
      }
    };
    promise.then(forget, forget);
    return promise;
  }

  /** Counts one more client of `key`; when its signal aborts and no client is left, drops the wait. */
  private follow(key: string, signal: AbortSignal | undefined): void {
    const interest = this.interest.get(key);
    if (!interest) return;
    interest.clients++;
    if (!signal) {
      // A client that cannot leave keeps the evaluation for good.
      interest.clients = Number.POSITIVE_INFINITY;
      return;
    }
    signal.addEventListener(
      'abort',
      () => {
        if (--interest.clients === 0) interest.cancel?.();
      },
      { once: true },
    );
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

  private wait<T>(l: Lane, f: () => Promise<T>, key: string): Promise<T> {
    return new Promise<T>((resolvePromise, reject) => {
      const leave = (): boolean => {
        const i = l.waiting.indexOf(waiter);
        if (i < 0) return false;
        l.waiting.splice(i, 1);
        clearTimeout(waiter.timer);
        return true;
      };
      const waiter: Waiter = {
        start: () => {
          // Running now: leaving clients no longer stop it.
          const interest = this.interest.get(key);
          if (interest) interest.cancel = null;
          this.start(l, f).then(resolvePromise, reject);
        },
        timer: setTimeout(() => {
          if (!leave()) return;
          this.counts.refusedWait++;
          reject(busy(`the evaluation waited ${this.limits.queueWaitMs} ms in the queue of this run`));
        }, this.limits.queueWaitMs),
        cancel: () => {
          if (!leave()) return;
          this.counts.abandoned++;
          reject(new HttpError(499, 'the client closed the connection while its evaluation waited'));
        },
      };
      l.waiting.push(waiter);
      this.interest.set(key, { clients: 0, cancel: () => waiter.cancel() });
    });
  }
}

function busy(why: string): HttpError {
  return new HttpError(503, `server busy: ${why}; retry in a second`, { 'retry-after': '1' });
}
