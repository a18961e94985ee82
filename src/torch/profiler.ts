// Which dispatcher operators a piece of work runs, and how often: the counts PyTorch's profiler
// lists (torch.autograd.profiler.profile().key_averages()), forward and backward alike. On a GPU
// each leaf operator launches at least one kernel, so a step's counts against the reference
// model's show extra launches on the CPU, where there is no GPU to time them.
import { native } from './native.js';

/** How often one operator ran: every call, and the kinds of call that {@link OpCount.calls} counts apart. */
export interface OpCount {
  /** Every call, those that other operators made inside them included. */
  calls: number;
  /** The calls made while no other operator ran on that thread: what the code itself asked for. */
  outermost: number;
  /**
   * The calls made inside a multi-tensor `_foreach_` operator: its CPU fallback runs the
   * per-tensor operator once per tensor, while on CUDA the `_foreach_` operator is one fused
   * kernel, so these calls are no launches there.
   */
  inForeach: number;
  /**
   * The calls made directly inside a call of the same operator: an overload passing the work on
   * (`add_(Scalar)` to `add_(Tensor)`, `sum()` to `sum(dim)`), one computation counted twice.
   */
  redispatched: number;
}

/** A running operator count: stop() ends it and returns the counts by operator name. */
export interface OpCounter {
  /** Ends the count (an error the second time) and returns the counts by operator name. */
  stop(): Map<string, OpCount>;
}

/**
 * Starts counting every dispatcher operator (process-wide: all threads, the autograd engine's
 * backward functions included) until the returned counter's stop(). One count at a time: a
 * second start before stop is an error. {@link countOps} wraps a function.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const counter = torch.profiler.startCountingOps();
 * torch.randn([8]).relu();
 * console.log(counter.stop().get('aten::relu')); // { calls: 1, outermost: 1, inForeach: 0, redispatched: 0 }
 * ```
 */
export function startCountingOps(): OpCounter {
  native.opCountStart();
  let stopped = false;
  return {
    stop() {
      if (stopped) throw new Error('this operator count was already stopped');
      stopped = true;
      const raw = native.opCountStop();
      return new Map(
        Object.entries(raw).map(
          ([name, [calls, outermost, inForeach, redispatched]]) =>
            [name, { calls, outermost, inForeach, redispatched }] as const,
        ),
      );
    },
  };
}

/**
 * Runs `fn` with every dispatcher operator counted (as {@link startCountingOps}) and returns
 * the counts by operator name, with fn's result. The counter is stopped however fn ends.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const x = torch.randn([4, 3]).requiresGrad_();
 * const { counts } = torch.profiler.countOps(() => x.mul(2).sum().backward());
 * console.log(counts.get('aten::sum')); // how often sum ran, forward and backward
 * ```
 */
export function countOps<T>(fn: () => T): { result: T; counts: Map<string, OpCount> } {
  const counter = startCountingOps();
  let result: T;
  try {
    result = fn();
  } catch (e) {
    counter.stop();
    throw e;
  }
  return { result, counts: counter.stop() };
}
