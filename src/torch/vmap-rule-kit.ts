// The tools of tailor's batching rules (vmap-rules.ts, vmap-rules-tensor.ts): which tensors the
// innermost vmap level maps, their physical [batch, ...] form and back, and the rule makers that
// cover whole families of operators (elementwise, reductions, per-sample layers, dimension
// arguments). A rule returns undefined where it does not apply; the operator then runs as libtorch
// has it (its batching rule or its per-example loop), so errors and edge cases keep its behaviour.
import { Tensor } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { tidy } from './scope.js';
import { vmapLevels, type BatchingRule, type VmapLevel } from './vmap-levels.js';

export type Dims = number | number[] | null | undefined;

/** The innermost vmap level, when `t` is a tensor mapped by it. */
export function mappedLevel(t: unknown): VmapLevel | null {
  const v = vmapLevels[vmapLevels.length - 1];
  if (v === undefined || !(t instanceof Tensor)) return null;
  return native.vmapBatchDim(t.handle, v.level) >= 0 ? v : null;
}

/** The innermost level when any of `tensors` is mapped by it. */
export function anyMapped(...tensors: unknown[]): VmapLevel | null {
  for (const t of tensors) {
    const v = mappedLevel(t);
    if (v !== null) return v;
  }
  return null;
}

/** `t` with the mapped dimension first (an unmapped tensor expanded to the batch size: a view). */
export function physical(t: Tensor, v: VmapLevel): Tensor {
  return aten._remove_batch_dim(t, v.level, v.batchSize, 0);
}

/** A physical [batch, ...] result mapped again. */
export function batched(p: Tensor, v: VmapLevel): Tensor {
  return aten._add_batch_dim(p, 0, v.level);
}

/**
 * Runs a rule in a scope of its own (its intermediate views freed at once). An error means the
 * rule met arguments it does not cover: the operator then runs without it, so the error the
 * caller sees (if any) is libtorch's own.
 */
export function attempt<T>(fn: () => T): T | undefined {
  try {
    return tidy(fn);
  } catch {
    return undefined;
  }
}

/** The logical dimensions `dims` (all when null or empty) as physical ones, or null when out of range. */
export function physicalDims(dims: Dims, rank: number): number[] | null {
  const list = dims === null || dims === undefined ? [] : typeof dims === 'number' ? [dims] : dims;
  if (!Array.isArray(list)) return null;
  if (list.length === 0) return Array.from({ length: rank }, (_, i) => i + 1);
  const out: number[] = [];
  for (const d of list) {
    if (!Number.isInteger(d) || d < -rank || d >= rank) return null;
    out.push((d < 0 ? d + rank : d) + 1);
  }
  return out;
}

/**
 * Mapped tensors made physical with size-1 dimensions after the batch up to `rank`, so that the
 * physical tensors broadcast as the logical ones do; unmapped ones as they are (they broadcast
 * from the right).
 */
export function aligned(v: VmapLevel, rank: number, ...tensors: Tensor[]): Tensor[] {
  return tensors.map((t) => {
    if (mappedLevel(t) === null) return t;
    const p = physical(t, v);
    const pad = rank - t.ndim;
    return pad > 0 ? p.reshape(...[v.batchSize, ...new Array<number>(pad).fill(1), ...t.shape]) : p;
  });
}

/** An operator on one tensor that treats every element (or trailing dimensions) alike. */
export function unary(op: (self: Tensor, ...rest: never[]) => Tensor): BatchingRule {
  return (self: unknown, ...rest: unknown[]) => {
    const v = mappedLevel(self);
    if (v === null) return undefined;
    return attempt(() => batched(op(physical(self as Tensor, v), ...(rest as never[])), v));
  };
}

/**
 * An elementwise operator whose first `tensors` arguments broadcast against each other (the rest,
 * numbers or unmapped tensors, passed as they are).
 */
export function elementwise(op: (...args: never[]) => Tensor, tensors = 2): BatchingRule {
  return (...args: unknown[]) => {
    const ts = args.slice(0, tensors);
    const rest = args.slice(tensors);
    if (!ts.every((t) => t instanceof Tensor) || rest.some((r) => mappedLevel(r) !== null)) return undefined;
    const v = anyMapped(...ts);
    if (v === null) return undefined;
    const rank = Math.max(...(ts as Tensor[]).map((t) => t.ndim));
    return attempt(() => batched(op(...([...aligned(v, rank, ...(ts as Tensor[])), ...rest] as never[])), v));
  };
}

/** A tensor or the tensors of a tuple result mapped again. */
export function batchedResult(result: Tensor | Tensor[], v: VmapLevel): Tensor | Tensor[] {
  return Array.isArray(result) ? result.map((t) => batched(t, v)) : batched(result, v);
}

/**
 * An operator along one dimension: the argument at `dimAt` (`fallback` when omitted) moves past
 * the batch; the other tensor arguments must be unmapped. Tuple results are mapped each.
 */
export function alongDim(
  op: (...args: never[]) => Tensor | Tensor[],
  dimAt: number,
  fallback?: number,
): BatchingRule {
  return (...args: unknown[]) => {
    const v = mappedLevel(args[0]);
    if (v === null || args.slice(1).some((a) => mappedLevel(a) !== null)) return undefined;
    const x = args[0] as Tensor;
    const dim = args[dimAt] ?? fallback;
    if (typeof dim !== 'number' || x.ndim === 0) return undefined;
    const pd = physicalDims(dim, x.ndim);
    if (pd === null) return undefined;
    const call = args.slice();
    call[0] = physical(x, v);
    call[dimAt] = pd[0];
    return attempt(() => batchedResult(op(...(call as never[])), v));
  };
}

/**
 * An operator over a list of dimensions at `dimsAt` (all when null or empty: each example's
 * elements); the other tensor arguments must be unmapped.
 */
export function overDims(op: (...args: never[]) => Tensor | Tensor[], dimsAt: number): BatchingRule {
  return (...args: unknown[]) => {
    const v = mappedLevel(args[0]);
    if (v === null || args.slice(1).some((a) => mappedLevel(a) !== null)) return undefined;
    const x = args[0] as Tensor;
    if (x.ndim === 0) return undefined;
    const pd = physicalDims(args[dimsAt] as Dims, x.ndim);
    if (pd === null) return undefined;
    const call = args.slice();
    call[0] = physical(x, v);
    call[dimsAt] = pd;
    return attempt(() => batchedResult(op(...(call as never[])), v));
  };
}

/** A reduction of all elements (`mean(x)`, `sum(x)`): over each example's elements. */
export function whole(op: typeof aten.mean_dim): BatchingRule {
  const perExample = overDims(op, 1);
  return (self: unknown, dtype: unknown) => perExample(self, null, false, dtype);
}

/**
 * An operator on [N, C, ...spatial] (or unbatched [C, ...spatial]) that treats the N samples
 * alike: the batch and N merged into one sample dimension, split again after.
 */
export function perSample(unbatchedRank: number, op: (x: Tensor, ...rest: never[]) => Tensor): BatchingRule {
  return (self: unknown, ...rest: unknown[]) => {
    const v = mappedLevel(self);
    if (v === null || rest.some((r) => mappedLevel(r) !== null)) return undefined;
    const x = self as Tensor;
    if (x.ndim !== unbatchedRank && x.ndim !== unbatchedRank + 1) return undefined;
    return attempt(() => {
      const p = physical(x, v);
      if (x.ndim === unbatchedRank) return batched(op(p, ...(rest as never[])), v);
      const y = op(p.flatten(0, 1), ...(rest as never[]));
      return batched(y.reshape(...[v.batchSize, x.shape[0]!, ...y.shape.slice(1)]), v);
    });
  };
}
