// What the function transforms of torch.func (func.ts, func-jacobians.ts) share: the argnums
// rule, the differentiable stand-ins of the inputs (physical [batch, ...] ones inside vmap), and
// the nesting depth that decides whether results keep their graph.
//
// tailor builds these transforms on libtorch's ordinary autograd (PyTorch 1.13's libtorch has no
// functorch layers): a transform makes fresh differentiable stand-ins of the inputs, and inside
// another transform (or for inputs that require grad) it computes its derivatives with a graph, so
// that the outer one can differentiate them again. Inside vmap a transform differentiates every
// example at once through physical stand-ins (callWithBatchedStandIns; jacfwd's tangents alike).
import { Tensor } from './tensor.js';
import { zerosLike } from './creation.js';
import * as aten from './generated/aten.js';
import * as forwardAd from './forward-ad.js';
import { isFloatingPoint } from './dtype.js';
import { flattenTree, type Flattened } from './pytree.js';
import { ArgumentError, describeValue } from '../util/arguments.js';

/**
 * What a transformed function returns: tensors shaped as the caller's arguments and outputs (a
 * Tensor, or arrays and records of them), so its static type is left open.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TensorTree = any;

/** Which positional arguments a transform differentiates: one index or several (negative from the end). */
export type Argnums = number | readonly number[];

let depth = 0;
let forwardDepth = 0;

/** Runs fn as jacfwd's vmapped forward-mode pass (see refuseInsideForward). */
export function forwardPass<T>(fn: () => T): T {
  forwardDepth++;
  try {
    return fn();
  } finally {
    forwardDepth--;
  }
}

/**
 * Reverse-mode transforms cannot run inside jacfwd's pass: libtorch 1.13's batched tensors carry
 * no forward-mode tangents through a backward pass (functorch's jacfwd(jacrev(f))).
 */
export function refuseInsideForward(fn: string): void {
  if (forwardDepth > 0)
    throw new ArgumentError(
      `${fn} inside func.jacfwd (forward over reverse) is not available: libtorch's batched tensors cannot carry the tangents through a backward pass; use func.hessian or func.jacrev(func.jacrev(f))`,
    );
}

/** Runs fn as one level of transforms; returns whether it is nested in another. */
export function transformLevel<T>(fn: (nested: boolean) => T): T {
  depth++;
  try {
    return fn(depth > 1);
  } finally {
    depth--;
  }
}

/** The argument indices of `argnums` over `count` arguments, checked as functorch checks them. */
export function argnumsOf(fn: string, argnums: unknown, count: number): number[] {
  const list =
    typeof argnums === 'number' ? [argnums] : Array.isArray(argnums) ? (argnums as unknown[]) : null;
  if (list === null || list.length === 0)
    throw new ArgumentError(`${fn}: argnums must be an integer or a non-empty array of integers`);
  const out = list.map((a) => {
    if (typeof a !== 'number' || !Number.isInteger(a) || a < -count || a >= count)
      throw new ArgumentError(
        `${fn}: argnums ${typeof a === 'number' ? a : describeValue(a)} is out of range for ${count} positional argument(s); it must be in [-${count}, ${count - 1}]`,
      );
    return a < 0 ? a + count : a;
  });
  if (new Set(out).size !== out.length)
    throw new ArgumentError(`${fn}: argnums must not repeat, got [${out.join(', ')}]`);
  return out;
}

/** The differentiated arguments flattened, each checked to hold tensors of a floating dtype. */
export function differentiated(fn: string, args: unknown[], argnums: number[]): Flattened[] {
  return argnums.map((a) => {
    const flat = flattenTree(args[a], `${fn}: argument ${a}`);
    if (flat.leaves.length === 0)
      throw new ArgumentError(`${fn}: argument ${a} holds no Tensor to differentiate`);
    for (const t of flat.leaves)
      if (!isFloatingPoint(t.dtype) && !t.dtype.startsWith('complex'))
        throw new ArgumentError(
          `${fn}: argument ${a} holds a ${t.dtype} tensor; only floating point tensors can be differentiated`,
        );
    return flat;
  });
}

/**
 * A fresh differentiable stand-in of an input: a view that keeps its graph when it requires grad
 * (or carries a forward-mode tangent: the forward-over-reverse of hessian), else a detached copy
 * that requires grad.
 */
export function standIn(t: Tensor): Tensor {
  if (!t.requiresGrad && forwardAd.currentDualLevel() >= 0 && forwardAd.unpackDual(t).tangent !== null)
    t.requiresGrad_(true);
  return t.requiresGrad ? t.view(...t.shape) : t.detach().requiresGrad_(true);
}

/** `args` with argument argnums[j] rebuilt around leaves[j]. */
export function replaceArgs(
  args: unknown[],
  argnums: number[],
  flats: Flattened[],
  leaves: Tensor[][],
): unknown[] {
  const out = args.slice();
  argnums.forEach((a, j) => (out[a] = flats[j]!.rebuild(leaves[j]!)));
  return out;
}

/** A call of func on fresh stand-ins of the differentiated arguments (see standIn). */
export interface StandInCall {
  nums: number[];
  flats: Flattened[];
  /** The stand-ins, per differentiated argument. */
  leaves: Tensor[][];
  /** Whether the results keep their graph: nested in another transform, or inputs that require grad. */
  keepGraph: boolean;
  output: unknown;
  aux: unknown;
}

/** Calls func with the arguments at argnums replaced by differentiable stand-ins (grad mode on). */
export function callWithStandIns(
  fn: string,
  func: (...args: never[]) => unknown,
  args: unknown[],
  argnums: Argnums,
  hasAux: boolean,
  nested: boolean,
): StandInCall {
  const nums = argnumsOf(fn, argnums, args.length);
  const flats = differentiated(fn, args, nums);
  const keepGraph = nested || flats.some((f) => f.leaves.some((t) => t.requiresGrad));
  const leaves = flats.map((f) => f.leaves.map(standIn));
  const result = (func as (...a: unknown[]) => unknown)(...replaceArgs(args, nums, flats, leaves));
  const [output, aux] = splitAux(fn, result, hasAux);
  return { nums, flats, leaves, keepGraph, output, aux };
}

/** A call of func inside vmap on batched physical stand-ins (see callWithBatchedStandIns). */
export interface BatchedStandInCall {
  nums: number[];
  flats: Flattened[];
  /** The physical [batch, ...] stand-ins, all differentiated arguments' in order. */
  stands: Tensor[];
  keepGraph: boolean;
  output: unknown;
  aux: unknown;
  /** A tensor of this vmap level as its physical [batch, ...] form. */
  unbatch: (t: Tensor) => Tensor;
  /** A physical [batch, ...] tensor mapped by this vmap level. */
  batch: (t: Tensor) => Tensor;
  /** A mapped tensor detached unless keepGraph (batched tensors have no detach of their own). */
  detached: (t: Tensor) => Tensor;
}

/**
 * Calls func inside vmap level `v` for every example at once: each differentiated input becomes
 * a physical [batch, ...] stand-in (an expanded view for an input the vmap does not map), batched
 * again for func. Differentiating the physical outputs with respect to the stand-ins gives every
 * example's derivatives in one backward pass (grad and jacrev inside vmap). Grad mode on.
 */
export function callWithBatchedStandIns(
  fn: string,
  func: (...args: never[]) => unknown,
  args: unknown[],
  argnums: Argnums,
  hasAux: boolean,
  nested: boolean,
  v: { level: number; batchSize: number },
): BatchedStandInCall {
  const unbatch = (t: Tensor) => aten._remove_batch_dim(t, v.level, v.batchSize, 0);
  const batch = (t: Tensor) => aten._add_batch_dim(t, 0, v.level);
  const nums = argnumsOf(fn, argnums, args.length);
  const flats = differentiated(fn, args, nums);
  const physical = flats.map((f) => f.leaves.map(unbatch));
  const keepGraph = nested || physical.some((ps) => ps.some((t) => t.requiresGrad));
  const stands = physical.map((ps) =>
    ps.map((t) => (t.requiresGrad ? t.view(...t.shape) : t.detach().requiresGrad_(true))),
  );
  const inputs = replaceArgs(
    args,
    nums,
    flats,
    stands.map((ss) => ss.map(batch)),
  );
  const [output, aux] = splitAux(fn, (func as (...a: unknown[]) => unknown)(...inputs), hasAux);
  const detached = (t: Tensor) => (keepGraph ? t : batch(unbatch(t).detach()));
  return { nums, flats, stands: stands.flat(), keepGraph, output, aux, unbatch, batch, detached };
}

/** The tensor leaves of func's output, which must hold at least one. */
export function outputLeaves(fn: string, output: unknown): Flattened {
  const flat = flattenTree(output, `${fn}: the output of func`);
  if (flat.leaves.length === 0)
    throw new ArgumentError(`${fn}: func must return a Tensor, or arrays and records of them`);
  return flat;
}

/**
 * The gradients of the stand-ins `all` (null where unused: zeros of the stand-in's shape), each
 * through `wrap`, arranged as the differentiated arguments.
 */
export function perArgument(
  flats: Flattened[],
  all: Tensor[],
  grads: (Tensor | null)[],
  wrap: (g: Tensor) => Tensor = (g) => g,
): unknown[] {
  let k = 0;
  return flats.map((f) =>
    f.rebuild(
      f.leaves.map(() => {
        const g = wrap(grads[k] ?? zerosLike(all[k]!));
        k++;
        return g;
      }),
    ),
  );
}

/** `[output, aux]` of a function with hasAux, checked. */
export function splitAux(fn: string, result: unknown, hasAux: boolean): [unknown, unknown] {
  if (!hasAux) return [result, undefined];
  if (!Array.isArray(result) || result.length !== 2)
    throw new ArgumentError(`${fn}: with hasAux, func must return an array [output, aux]`);
  return [result[0], result[1]];
}

/** Tensors of a structure detached unless `keepGraph` (the aux outputs and values of a transform). */
export function detachTree(value: unknown, keepGraph: boolean): unknown {
  if (keepGraph) return value;
  const flat = flattenTree(value, 'output');
  return flat.rebuild(flat.leaves.map((t) => (t.requiresGrad ? t.detach() : t)));
}
