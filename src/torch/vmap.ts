// torch.vmap: PyTorch's vectorizing map over libtorch's batched tensors. Each mapped input is
// wrapped by _add_batch_dim, which hides the mapped dimension from the operators (their shapes
// are one example's) and runs every operator once over the whole batch through its batching rule
// (or libtorch's fallback loop); _remove_batch_dim turns the results back into plain tensors
// with the batch at out_dims. The structure follows PyTorch's torch/_vmap_internals.py.
import { Tensor } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { tidy } from './scope.js';
import { ArgumentError } from '../util/arguments.js';
import { flattenTree, isPlainObject } from './pytree.js';
import { vmapLevels as active, type VmapRandomness } from './vmap-levels.js';
import { chunkedCall } from './vmap-chunks.js';
import './vmap-rules.js';

export type { VmapRandomness } from './vmap-levels.js';

/**
 * Where an input is mapped: a dimension (negative counts from the end), `null` for an input
 * passed to every call unchanged, or a structure like the arguments' (an array for an array
 * argument, an object for an object argument) whose leaves say it per tensor. A number or `null`
 * stands for every tensor below it.
 */
export type InDims = number | null | readonly InDims[] | { readonly [key: string]: InDims };

/** Where the mapped dimension goes in the outputs: one dimension, or one per output. */
export type OutDims = number | readonly number[];

/** What a vmapped function may return: a tensor, or arrays and records of tensors. */
export type VmapOutput = Tensor | readonly VmapOutput[] | { readonly [key: string]: VmapOutput };

/** The deepest nesting of arrays and objects vmap follows in its inputs. */
const MAX_DEPTH = 32;

function fail(message: string): never {
  throw new ArgumentError(`vmap: ${message}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value instanceof Tensor) return 'a Tensor';
  return typeof value;
}

/** Checks in_dims against the arguments and returns each tensor leaf with its dimension. */
function flatten(
  value: unknown,
  dims: InDims | undefined,
  path: string,
  out: { tensor: Tensor; dim: number | null; path: string }[],
  open: Set<unknown> = new Set(),
  depth = 0,
): void {
  if (dims === undefined) fail(`in_dims has no entry for the input ${path}; give one (a dimension or null)`);
  // A structure that contains itself (or nests deeper than any real argument list) would never
  // end: refuse it by name before the stack runs out.
  for (const node of [value, dims])
    if (node !== null && typeof node === 'object' && !(node instanceof Tensor) && open.has(node))
      fail(`the input ${path} (or its in_dims) contains itself; pass arrays and objects without cycles`);
  if (depth > MAX_DEPTH) fail(`the input ${path} nests more than ${MAX_DEPTH} levels deep`);
  const inner = new Set(open);
  for (const node of [value, dims]) if (node !== null && typeof node === 'object') inner.add(node);
  const recurse = (v: unknown, d: InDims | undefined, p: string) => flatten(v, d, p, out, inner, depth + 1);
  if (dims === null || typeof dims === 'number') {
    if (value instanceof Tensor) {
      out.push({ tensor: value, dim: dims, path });
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => recurse(v, dims, `${path}[${i}]`));
      return;
    }
    if (isPlainObject(value)) {
      for (const [k, v] of Object.entries(value)) recurse(v, dims, `${path}.${k}`);
      return;
    }
    if (dims !== null)
      fail(
        `in_dims gives dimension ${dims} for the input ${path}, which is ${describe(value)}, not a Tensor; ` +
          'map only tensors and give null for the other inputs',
      );
    return;
  }
  if (Array.isArray(dims)) {
    if (!Array.isArray(value) || value.length !== dims.length)
      fail(
        `in_dims has an array of ${dims.length} for the input ${path}, which is ${describe(value)}; ` +
          'in_dims must follow the structure of the inputs',
      );
    (value as unknown[]).forEach((v, i) => recurse(v, (dims as InDims[])[i], `${path}[${i}]`));
    return;
  }
  if (isPlainObject(dims)) {
    if (!isPlainObject(value))
      fail(
        `in_dims has an object for the input ${path}, which is ${describe(value)}; in_dims must follow the structure of the inputs`,
      );
    for (const key of Object.keys(dims))
      if (!(key in value)) fail(`in_dims names the key ${key} that the input ${path} does not have`);
    for (const [k, v] of Object.entries(value))
      recurse(v, (dims as Record<string, InDims>)[k], `${path}.${k}`);
    return;
  }
  fail(`in_dims must be a dimension, null, or an array or object of them, not ${describe(dims)}`);
}

/** Rebuilds the arguments' structure with each tensor leaf replaced by next(). */
function rebuild(value: unknown, next: (t: Tensor) => Tensor): unknown {
  if (value instanceof Tensor) return next(value);
  if (Array.isArray(value)) return value.map((v) => rebuild(v, next));
  if (isPlainObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebuild(v, next)]));
  return value;
}

function checkOutDims(outDims: unknown): void {
  const isDim = (d: unknown) => typeof d === 'number' && Number.isInteger(d);
  if (isDim(outDims)) return;
  if (Array.isArray(outDims) && outDims.every(isDim)) return;
  fail(`out_dims must be an integer or an array of integers (one per output), not ${describe(outDims)}`);
}

/** The innermost vmap call running now (its level and batch size), or null outside vmap. */
export function currentVmap(): { level: number; batchSize: number; randomness: VmapRandomness } | null {
  return active.length > 0 ? active[active.length - 1]! : null;
}

/** Options of vmap (PyTorch 2.x's torch.vmap arguments `randomness` and `chunk_size`). */
export interface VmapOptions {
  /**
   * Random operators inside func (randn, rand, randint, randperm, the *Like forms, dropout):
   * 'error' (default) refuses them, 'different' gives every example its own draw, 'same' one
   * draw shared by every example.
   */
  randomness?: VmapRandomness;
  /** Map at most this many examples per call of func (lower peak memory); default all at once. */
  chunkSize?: number | null;
}

/** Options of the internal form (autograd.grad's batched gradients). */
export interface VmapInternalOptions extends VmapOptions {
  /** Outputs may be null (an input not used by autograd.grad); they stay null. */
  allowNonePassThrough?: boolean;
}

function checkOptions(options: unknown): Required<VmapOptions> {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    fail(`options must be an object ({ randomness, chunkSize }), not ${describe(options)}`);
  const { randomness = 'error', chunkSize = null } = options as VmapOptions;
  if (randomness !== 'error' && randomness !== 'different' && randomness !== 'same')
    fail(
      `options.randomness must be 'error', 'different' or 'same', not ${typeof randomness === 'string' ? `'${randomness}'` : describe(randomness)}`,
    );
  if (chunkSize !== null && (typeof chunkSize !== 'number' || !Number.isInteger(chunkSize) || chunkSize < 1))
    fail(`options.chunkSize must be a positive integer or null, not ${describe(chunkSize)}`);
  return { randomness, chunkSize };
}

/**
 * torch.vmap: a function that maps `func` over a dimension of its inputs. `func` is written for
 * one example; the returned function takes inputs with an extra dimension (at `inDims`) and
 * returns outputs with it (at `outDims`), running each operator of `func` once over the whole
 * batch (libtorch's batching rules; operators without one fall back to a loop over the batch).
 * Inside `func` a mapped tensor's shape is one example's; reading its values (`item()`,
 * `toArray()`, printing) or branching on them is an error, as in PyTorch. The call runs `func`
 * in a tidy scope: tensors it makes and does not return are freed. Calls nest (a vmapped
 * function may call vmap), and compose with autograd: the outputs have gradients to inputs
 * that require grad, and `autograd.grad(..., { isGradsBatched: true })` is built on it.
 *
 * @param func The function of one example: tensors (in any structure of arrays and plain
 *   objects) and other values in, a tensor or an array of tensors out.
 * @param inDims Per input, the dimension to map over or `null` (default 0 for every tensor).
 * @param outDims Where the mapped dimension goes in each output (default 0).
 * @param options `randomness` ('error', 'different' or 'same': how random operators inside func
 *   draw, as PyTorch 2.x's torch.vmap) and `chunkSize` (at most this many examples per call).
 * @example
 * ```ts
 * import { randn, vmap, dot, type Tensor } from 'tailor/torch';
 *
 * const x = randn([4, 5]);
 * const y = randn([4, 5]);
 * const batchedDot = vmap((a: Tensor, b: Tensor) => dot(a, b));
 * console.log(batchedDot(x, y).shape); // [4]
 * ```
 */
export function vmap<A extends unknown[], R extends VmapOutput>(
  func: (...args: A) => R,
  inDims: InDims = 0,
  outDims: OutDims = 0,
  options: VmapOptions = {},
): (...args: A) => R {
  if (typeof func !== 'function') fail(`func must be a function, not ${describe(func)}`);
  return vmapInternal(func, inDims, outDims, checkOptions(options)) as unknown as (...args: A) => R;
}

/** vmap with PyTorch's internal pass-through of null outputs (see VmapInternalOptions). */
export function vmapInternal(
  func: (...args: never[]) => unknown,
  inDims: InDims,
  outDims: OutDims,
  options: VmapInternalOptions = {},
): (...args: unknown[]) => VmapOutput | (Tensor | null)[] {
  const name = func.name || 'the function';
  return (...args: unknown[]) => {
    checkOutDims(outDims);
    if (args.length === 0) fail(`${name} got no inputs; vmap maps over the inputs of a call`);
    const leaves: { tensor: Tensor; dim: number | null; path: string }[] = [];
    const argDims = typeof inDims === 'number' || inDims === null ? args.map(() => inDims) : inDims;
    if (!Array.isArray(argDims))
      fail('in_dims for several inputs must be an array with one entry per input (or one number for all)');
    if (argDims.length !== args.length)
      fail(`in_dims has ${argDims.length} entries for ${args.length} inputs; give one per input`);
    args.forEach((a, i) => flatten(a, (argDims as InDims[])[i], `#${i}`, leaves));
    const mapped = leaves.filter((l) => l.dim !== null);
    if (mapped.length === 0) fail('no input is mapped (every in_dim is null); map at least one tensor');
    const dims = new Map<Tensor, number>();
    for (const l of mapped) {
      const rank = l.tensor.ndim;
      const d = l.dim as number;
      if (!Number.isInteger(d) || d < -rank || d >= rank)
        fail(
          `in_dim ${d} for the input ${l.path}, a tensor of ${rank} dimension(s): ` +
            (rank === 0
              ? 'a 0-d tensor has no dimension to map; give null'
              : `it must be in [-${rank}, ${rank - 1}]`),
        );
      dims.set(l.tensor, d < 0 ? d + rank : d);
    }
    const sizes = mapped.map((l) => l.tensor.shape[dims.get(l.tensor) as number]);
    if (sizes.some((s) => s !== sizes[0]))
      fail(
        `the mapped dimensions of the inputs differ in size (${mapped.map((l, i) => `${l.path}: ${sizes[i]}`).join(', ')}); ` +
          'they must all have the batch size',
      );
    const batchSize = sizes[0]!;
    const chunkSize = options.chunkSize ?? null;
    if (chunkSize !== null && chunkSize < batchSize) {
      // Each chunk is a vmap call of its own over the chunk's slices of the mapped inputs.
      const whole = { ...options, chunkSize: null };
      const slice = (start: number, length: number) =>
        args.map((a, i) =>
          (argDims as InDims[])[i] === null
            ? a
            : rebuild(a, (t) => {
                const d = dims.get(t);
                return d === undefined ? t : t.narrow(d, start, length);
              }),
        );
      return chunkedCall(batchSize, chunkSize, outDims, options.randomness === 'same', (start, length) =>
        vmapInternal(func, inDims, outDims, whole)(...slice(start, length)),
      ) as VmapOutput;
    }
    const level = native.vmapIncrementNesting();
    active.push({ level, batchSize, randomness: options.randomness ?? 'error' });
    try {
      return tidy(() => {
        const batched = new Map<Tensor, Tensor>();
        const wrapIn = (t: Tensor) => {
          const d = dims.get(t);
          if (d === undefined) return t;
          let b = batched.get(t);
          if (b === undefined) {
            b = aten._add_batch_dim(t, d, level);
            batched.set(t, b);
          }
          return b;
        };
        const inputs = args.map((a, i) => {
          const d = (argDims as InDims[])[i];
          return d === null ? a : rebuild(a, wrapIn);
        });
        const result = callMapped(func, inputs, name);
        if (result instanceof Promise || (typeof result === 'object' && result !== null && 'then' in result))
          fail(`${name} returned a promise; vmap maps synchronous functions`);
        return unwrapOutputs(result, outDims, level, batchSize, name, options.allowNonePassThrough ?? false);
      });
    } finally {
      active.pop();
      native.vmapDecrementNesting();
    }
  };
}

/**
 * libtorch's refusals of work on batched tensors: an operator without a batching rule (its
 * message "Batching rule not implemented for aten::<op>") and libtorch's own messages that start
 * "vmap: " (a random operator, data-dependent control flow).
 */
const LIBTORCH_REFUSAL = /Batching rule not implemented|\bvmap: /;
/** "vmap: We do not yet support calling random operations inside of vmap". */
const RANDOM_OPERATOR = /random operations/;
/** Reading a mapped tensor's values: tailor's readers (item, toArray...) or the ATen ops behind them. */
const VALUE_READ = /^(item|to[A-Z]\w*):|aten::(item|_local_scalar_dense|is_nonzero)\b/;

/**
 * Runs the mapped function. libtorch's refusals of what cannot run on a batch (an operator
 * without a batching rule, reading values, a random operator) become one ArgumentError naming
 * vmap and the way out; other errors pass unchanged.
 */
function callMapped(func: (...args: never[]) => unknown, inputs: unknown[], name: string): unknown {
  try {
    return (func as (...a: unknown[]) => unknown)(...inputs);
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    if (!(error instanceof ArgumentError) && LIBTORCH_REFUSAL.test(message)) {
      const first = message.split('\n')[0]!.replace(/\.$/, '');
      const remedy = RANDOM_OPERATOR.test(first)
        ? "pass { randomness: 'different' } (or 'same') to vmap where tailor covers the operator (randn, rand, randint, randperm, their *Like forms, dropout), or draw random numbers outside vmap and pass them in as a mapped input"
        : VALUE_READ.test(first)
          ? 'a mapped tensor stands for the whole batch, so its values cannot be read or branched on inside vmap'
          : 'libtorch has no batched form of this operator: compute it outside vmap, or loop over the batch';
      throw new ArgumentError(`vmap: ${name}: ${first}; ${remedy}`, { cause: error });
    }
    throw error;
  }
}

function unwrapOutputs(
  result: unknown,
  outDims: OutDims,
  level: number,
  batchSize: number,
  name: string,
  allowNone: boolean,
): VmapOutput | (Tensor | null)[] {
  if (!(result instanceof Tensor) && !Array.isArray(result) && !isPlainObject(result))
    fail(`${name} must return a Tensor, or arrays and records of Tensors, and returned ${describe(result)}`);
  const outputs: unknown[] = Array.isArray(result) ? result : [result];
  if (Array.isArray(outDims) && (!Array.isArray(result) || outDims.length !== outputs.length))
    fail(
      `out_dims has ${outDims.length} entries for the ${outputs.length} output(s) of ${name}; give one per output`,
    );
  const unwrapped = outputs.map((o, i) => {
    if (o === null && allowNone) return null;
    const bad = firstNonTensor(o, Array.isArray(result) ? `${i}` : '');
    if (bad !== null)
      fail(
        `${name} must return only Tensors, and returned ${describe(bad.value)} as output ${bad.path || 0}`,
      );
    const d = Array.isArray(outDims) ? (outDims[i] as number) : (outDims as number);
    const flat = flattenTree(o, `vmap: the output of ${name}`);
    return flat.rebuild(
      flat.leaves.map((t) => {
        const rank = t.ndim + 1;
        if (d < -rank || d >= rank)
          fail(
            `out_dim ${d} for output ${i}, which has ${rank} dimension(s) with the mapped one: it must be in [-${rank}, ${rank - 1}]`,
          );
        return aten._remove_batch_dim(t, level, batchSize, d < 0 ? d + rank : d);
      }),
    );
  });
  return (Array.isArray(result) ? unwrapped : unwrapped[0]) as VmapOutput;
}

/** The first value in an output structure that is not a Tensor (arrays and records followed). */
function firstNonTensor(value: unknown, path: string): { value: unknown; path: string } | null {
  if (value instanceof Tensor) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = firstNonTensor(value[i], path ? `${path}[${i}]` : `${i}`);
      if (bad) return bad;
    }
    return null;
  }
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const bad = firstNonTensor(v, path ? `${path}.${k}` : k);
      if (bad) return bad;
    }
    return null;
  }
  return { value, path };
}
