// Batching rules of tensor functions that libtorch 1.13's batched tensors lack: the shape
// functions its per-example loop refuses (flatten, unflatten, ravel: views), einsum (no loop at
// all), indexing (gather, index_select, embedding, masked_fill), sorting and dimension-wise
// reductions, and a few elementwise functions. Registered with the layers' rules by vmap-rules.ts.
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { native } from './native.js';
import type { BatchingRule } from './vmap-levels.js';
import {
  aligned,
  alongDim,
  anyMapped,
  attempt,
  batched,
  elementwise,
  mappedLevel,
  overDims,
  physical,
  physicalDims,
  unary,
} from './vmap-rule-kit.js';

function flatten(self: Tensor, start = 0, end = -1): Tensor | undefined {
  const v = mappedLevel(self);
  const rank = self.ndim;
  if (v === null || rank === 0) return undefined;
  const s = start < 0 ? start + rank : start;
  const e = end < 0 ? end + rank : end;
  if (!(s >= 0 && s < rank && e >= 0 && e < rank && s <= e)) return undefined;
  return attempt(() => batched(physical(self, v).flatten(s + 1, e + 1), v));
}

function ravel(self: Tensor): Tensor | undefined {
  const v = mappedLevel(self);
  if (v === null || self.ndim === 0) return undefined;
  return attempt(() => batched(physical(self, v).flatten(1), v));
}

/** repeat's counts may exceed the tensor's rank: the tensor takes leading size-1 dimensions first. */
function repeat(self: Tensor, repeats: number | number[]): Tensor | undefined {
  const v = mappedLevel(self);
  const counts = typeof repeats === 'number' ? [repeats] : repeats;
  if (v === null || !Array.isArray(counts) || counts.length < self.ndim) return undefined;
  return attempt(() => {
    const ones = new Array<number>(counts.length - self.ndim).fill(1);
    const p = physical(self, v).reshape(...[v.batchSize, ...ones, ...self.shape]);
    return batched(aten.repeat(p, [1, ...counts]), v);
  });
}

/** roll over given dimensions (without them it rolls the flattened tensor: left to libtorch). */
function roll(self: Tensor, shifts: number | number[], dims?: number | number[]): Tensor | undefined {
  const list = dims === undefined ? [] : typeof dims === 'number' ? [dims] : dims;
  if (list.length === 0) return undefined;
  return overDims(aten.roll as never, 2)(self, shifts, list) as Tensor | undefined;
}

/** flip over the given dimensions (none: nothing flipped, left to libtorch). */
function flip(self: Tensor, dims: number | number[]): Tensor | undefined {
  if (Array.isArray(dims) && dims.length === 0) return undefined;
  return overDims(aten.flip as never, 1)(self, dims) as Tensor | undefined;
}

/** argmax and argmin: over a dimension, or over each example's elements when none is given. */
function argReduction(op: typeof aten.argmax): BatchingRule {
  const along = alongDim(op as never, 1);
  return (self: unknown, dim: unknown, keepdim: unknown) => {
    if (dim !== null && dim !== undefined) return along(self, dim, keepdim);
    const v = mappedLevel(self);
    if (v === null || keepdim === true) return undefined;
    return attempt(() => batched(op(physical(self as Tensor, v).flatten(1), 1), v));
  };
}

/** gather with the index mapped or not: both physical (an unmapped one expanded). */
function gather(self: Tensor, dim: number, index: Tensor, sparseGrad?: boolean): Tensor | undefined {
  const v = anyMapped(self, index);
  if (v === null || self.ndim === 0 || self.ndim !== index.ndim) return undefined;
  const pd = physicalDims(dim, self.ndim);
  if (pd === null) return undefined;
  return attempt(() => batched(aten.gather(physical(self, v), pd[0]!, physical(index, v), sparseGrad), v));
}

/**
 * embedding: mapped indices look up the shared table; a mapped table (per-example weights) is one
 * lookup in the tables stacked, each example's indices offset to its own table.
 */
function embedding(
  weight: Tensor,
  indices: Tensor,
  paddingIdx?: number,
  scaleGradByFreq?: boolean,
  sparse?: boolean,
): Tensor | undefined {
  const v = anyMapped(weight, indices);
  if (v === null || weight.ndim !== 2) return undefined;
  if (mappedLevel(weight) === null)
    return attempt(() =>
      batched(aten.embedding(weight, physical(indices, v), paddingIdx, scaleGradByFreq, sparse), v),
    );
  // The padding row's zero gradient and the frequency scaling are the embedding kernel's own.
  if ((paddingIdx !== undefined && paddingIdx !== -1) || scaleGradByFreq === true || sparse === true)
    return undefined;
  return attempt(() => {
    const [rows, width] = weight.shape as [number, number];
    const idx = physical(indices, v).reshape(...[v.batchSize, -1]);
    const offsets = aten
      .arange_start_step(0, v.batchSize * rows, rows, 'int64', null, native.deviceOf(indices.handle))
      .reshape(...[v.batchSize, 1]);
    const picked = aten.index_select(
      physical(weight, v).reshape(...[v.batchSize * rows, width]),
      0,
      idx.add(offsets).flatten(),
    );
    return batched(picked.reshape(...[v.batchSize, ...indices.shape, width]), v);
  });
}

/** einsum: a fresh subscript letter for the batch on each mapped operand and the output. */
function einsum(equation: string, tensors: Tensor[], path?: number | number[] | null): Tensor | undefined {
  if (typeof equation !== 'string' || !Array.isArray(tensors)) return undefined;
  const v = anyMapped(...tensors);
  if (v === null) return undefined;
  const spec = equation.replace(/\s+/g, '');
  const arrow = spec.indexOf('->');
  const inputs = (arrow >= 0 ? spec.slice(0, arrow) : spec).split(',');
  if (inputs.length !== tensors.length) return undefined;
  const free = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'].find((c) => !spec.includes(c));
  if (free === undefined) return undefined;
  let output: string;
  if (arrow >= 0) output = spec.slice(arrow + 2);
  else {
    // The implicit output: the letters used once, in alphabetical order, after any ellipsis.
    const letters = inputs.join('').replace(/\./g, '');
    const once = [...new Set(letters)].filter((c) => letters.indexOf(c) === letters.lastIndexOf(c)).sort();
    output = (spec.includes('...') ? '...' : '') + once.join('');
  }
  const mapped = tensors.map((t) => mappedLevel(t) !== null);
  const terms = inputs.map((term, i) => (mapped[i] ? free + term : term));
  return attempt(() =>
    batched(
      aten.einsum(
        `${terms.join(',')}->${free}${output}`,
        tensors.map((t, i) => (mapped[i] ? physical(t, v) : t)),
        path,
      ),
      v,
    ),
  );
}

/** outer in operators libtorch batches (unsqueeze and mul). */
function outer(self: Tensor, other: Tensor): Tensor | undefined {
  if (anyMapped(self, other) === null || self.ndim !== 1 || other.ndim !== 1) return undefined;
  return attempt(() => self.unsqueeze(-1).mul(other.unsqueeze(-2)));
}

/** cosine_similarity along a dimension of the broadcast inputs. */
function cosineSimilarity(x1: Tensor, x2: Tensor, dim = 1, eps?: number): Tensor | undefined {
  const v = anyMapped(x1, x2);
  if (v === null) return undefined;
  const rank = Math.max(x1.ndim, x2.ndim);
  const pd = physicalDims(dim, rank);
  if (pd === null) return undefined;
  return attempt(() => {
    const [a, b] = aligned(v, rank, x1, x2);
    return batched(aten.cosine_similarity(a!, b!, pd[0], eps), v);
  });
}

/** The tensor functions' rules, by generated wrapper name. */
export const tensorRules = {
  flatten_using_ints: flatten as BatchingRule,
  unflatten_int: alongDim(aten.unflatten_int as never, 1),
  ravel: ravel as BatchingRule,
  repeat: repeat as BatchingRule,
  roll: roll as BatchingRule,
  flip: flip as BatchingRule,
  einsum: einsum as BatchingRule,
  outer: outer as BatchingRule,
  gather: gather as BatchingRule,
  index_select: alongDim(aten.index_select as never, 1),
  embedding: embedding as BatchingRule,
  masked_fill_Scalar: elementwise(aten.masked_fill_Scalar as never),
  masked_fill_Tensor: elementwise(aten.masked_fill_Tensor as never),
  cosine_similarity: cosineSimilarity as BatchingRule,
  argmax: argReduction(aten.argmax),
  argmin: argReduction(aten.argmin),
  max_dim: alongDim(aten.max_dim as never, 1),
  min_dim: alongDim(aten.min_dim as never, 1),
  sort: alongDim(aten.sort as never, 1, -1),
  sort_stable: alongDim(aten.sort_stable as never, 2, -1),
  argsort_stable: alongDim(aten.argsort_stable as never, 2, -1),
  topk: alongDim(aten.topk as never, 2, -1),
  cumsum: alongDim(aten.cumsum as never, 1),
  logcumsumexp: alongDim(aten.logcumsumexp as never, 1),
  prod_dim_int: alongDim(aten.prod_dim_int as never, 1),
  glu: alongDim(aten.glu as never, 1, -1),
  var_correction: overDims(aten.var_correction as never, 1),
  std_correction: overDims(aten.std_correction as never, 1),
  linalg_vector_norm: overDims(aten.linalg_vector_norm as never, 2),
  atan2: elementwise(aten.atan2),
  fmod_Tensor: elementwise(aten.fmod_Tensor),
  remainder_Tensor: elementwise(aten.remainder_Tensor),
  fmod_Scalar: unary(aten.fmod_Scalar as never),
  remainder_Scalar: unary(aten.remainder_Scalar as never),
  erf: unary(aten.erf),
  log_sigmoid: unary(aten.log_sigmoid),
  relu6: unary(aten.relu6),
  selu: unary(aten.selu),
  celu: unary(aten.celu as never),
} satisfies Record<string, BatchingRule>;
