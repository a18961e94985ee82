// The ONNX forms of the lookup tables: Embedding as a Gather on the weight, EmbeddingBag as that
// Gather reduced per bag. A 2-d input (bags of one length) reduces along its second axis; a 1-d
// input with offsets numbers each index by its bag (a CumSum of marks scattered at the offsets)
// and sums by ScatterElements, or takes a max over a bags x indices mask (opset 17's scatter has
// no max). maxNorm rescales the rows looked up in the graph, as PyTorch's export does, since the
// weight is a constant there: each row's rescaling depends only on the row, so the output is
// the forward's whichever rows an earlier forward renormalised in place.
import * as nn from '../nn/index.js';
import { OnnxExportError, type OnnxGraph } from './graph.js';

/** The optional graph values an EmbeddingBag's forward takes besides its input. */
export interface OnnxEmbeddingBagInputs {
  /** With a 1-d input: where each bag starts, int64 [bags] (one more with includeLastOffset). */
  offsets?: string;
  /** Mode 'sum' only: a float32 weight per index, the input's shape, multiplying its row. */
  perSampleWeights?: string;
}

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);
/** ONNX's TensorProto data types, as Cast's `to` takes them. */
const FLOAT = 1;
const INT64 = 7;
const label = (m: nn.Module, name: string) => `${m.constructor.name}${name ? ` ('${name}')` : ''}`;

/** ReduceSum of `value` along `axis` (opset 13 made its axes an input). */
function sumAlong(g: OnnxGraph, value: string, axis: number, keepdims: boolean): string {
  return g.node('ReduceSum', [value, g.ints('sum.axes', [axis])], { keepdims: { int: keepdims ? 1 : 0 } });
}

/** Refuses indices declared as another type than int64 (ONNX Runtime would refuse the model, less clearly). */
function checkIndices(g: OnnxGraph, value: string, what: string): void {
  const type = g.typeOf(value);
  if (type !== undefined && type !== 'int64')
    throw new OnnxExportError(
      `${what}: '${value}' is declared ${type}, but the indices are int64: declare it with g.input(name, dims, 'int64')`,
    );
}

/**
 * `rows` [..., embeddingDim] rescaled to norm maxNorm where their normType-norm exceeds it, by
 * maxNorm / (norm + 1e-7) as libtorch's embedding_renorm_.
 */
function renorm(m: nn.Embedding | nn.EmbeddingBag, g: OnnxGraph, rows: string, name: string): string {
  if (m.maxNorm === null) return rows;
  const p = m.normType;
  const last = { axes: { ints: [-1] }, keepdims: { int: 1 } };
  let norm: string;
  if (p === 2) norm = g.node('ReduceL2', [rows], last);
  else if (p === 1) norm = g.node('ReduceL1', [rows], last);
  else if (p === Infinity) norm = g.node('ReduceMax', [g.node('Abs', [rows])], last);
  else {
    const powered = g.node('Pow', [g.node('Abs', [rows]), g.scalar(at(name, 'norm_type'), p)]);
    const sum = sumAlong(g, powered, -1, true);
    norm = g.node('Pow', [sum, g.scalar(at(name, 'inv_norm_type'), 1 / p)]);
  }
  const limit = g.scalar(at(name, 'max_norm'), m.maxNorm);
  const scale = g.node('Div', [limit, g.node('Add', [norm, g.scalar('renorm.eps', 1e-7)])]);
  const factor = g.node('Where', [g.node('Greater', [norm, limit]), scale, g.scalar('renorm.one', 1)]);
  return g.node('Mul', [rows, factor]);
}

/** The renormalised rows of the table at `indices`: [...indices, embeddingDim]. */
function lookup(m: nn.Embedding | nn.EmbeddingBag, g: OnnxGraph, indices: string, name: string): string {
  return renorm(m, g, g.node('Gather', [g.tensor(at(name, 'weight'), m.weight), indices]), name);
}

/**
 * Embedding: a Gather of the weight at int64 indices of any shape S, giving S + [embeddingDim];
 * the padding row is looked up as it is, as the forward does (it only stops the gradient).
 */
export function embeddingOnnx(m: nn.Embedding, g: OnnxGraph, x: string, name: string): string {
  checkIndices(g, x, label(m, name));
  return lookup(m, g, x, name);
}

/** Where an index is not the padding index (bool, the indices' shape), or null without one. */
function kept(m: nn.EmbeddingBag, g: OnnxGraph, indices: string, name: string): string | null {
  if (m.paddingIdx === null) return null;
  const pad = g.constant(at(name, 'padding_idx'), { data: [m.paddingIdx], dims: [], type: 'int64' });
  return g.node('Not', [g.node('Equal', [indices, pad])]);
}

/** A max whose empty bags (count 0) give zeros, as PyTorch's. */
function zeroWhereEmpty(g: OnnxGraph, max: string, count: string): string {
  return g.node('Where', [g.node('Greater', [count, g.scalar('bag.zero', 0)]), max, g.scalar('bag.zero', 0)]);
}

/** Bags of one length, [B, N]: the looked-up rows [B, N, D] reduced along the second axis. */
function fixedBags(
  m: nn.EmbeddingBag,
  g: OnnxGraph,
  x: string,
  weights: string | undefined,
  name: string,
): string {
  let rows = lookup(m, g, x, name);
  if (weights) rows = g.node('Mul', [rows, g.node('Unsqueeze', [weights, g.ints('bag.last', [-1])])]);
  const keep = kept(m, g, x, name);
  const reduce = { axes: { ints: [1] }, keepdims: { int: 0 } };
  if (keep === null) {
    if (m.mode === 'sum') return sumAlong(g, rows, 1, false);
    return g.node(m.mode === 'mean' ? 'ReduceMean' : 'ReduceMax', [rows], reduce);
  }
  // the padding entries leave their bag: out of the sum, the max and a mean's count
  const keep3 = g.node('Unsqueeze', [keep, g.ints('bag.last', [-1])]);
  const count = sumAlong(g, g.node('Cast', [keep3], { to: { int: FLOAT } }), 1, false);
  if (m.mode === 'max') {
    const masked = g.node('Where', [keep3, rows, g.scalar('bag.-inf', -Infinity)]);
    return zeroWhereEmpty(g, g.node('ReduceMax', [masked], reduce), count);
  }
  const masked = g.node('Where', [keep3, rows, g.scalar('bag.zero', 0)]);
  const sum = sumAlong(g, masked, 1, false);
  return m.mode === 'sum' ? sum : g.node('Div', [sum, g.node('Max', [count, g.scalar('bag.one', 1)])]);
}

/**
 * Bags of any length, a 1-d input [L] with offsets [K]: rows numbered by bag, then summed by
 * ScatterElements into K rows (O(L x D)), or maxed over a [K, L, D] mask of each bag's indices.
 */
function offsetBags(
  m: nn.EmbeddingBag,
  g: OnnxGraph,
  x: string,
  offsets: string,
  weights: string | undefined,
  name: string,
): string {
  const length = g.node('Shape', [x]);
  const bagCount = g.node('Shape', [offsets]);
  // a 1 at each bag's start (an empty bag's start repeats the next's, or is the input's length)
  const marks = g.node(
    'ScatterElements',
    [
      g.node('ConstantOfShape', [g.node('Add', [length, g.ints('bag.one', [1])])]),
      offsets,
      g.node('Expand', [g.scalar('bag.one', 1), bagCount]),
    ],
    { axis: { int: 0 }, reduction: { string: 'add' } },
  );
  const started = g.node('CumSum', [
    g.node('Cast', [marks], { to: { int: INT64 } }),
    g.ints('bag.axis', [0]),
  ]);
  // each index's bag: how many bags started at or before it, less one
  const bag = g.node('Sub', [
    g.node('Slice', [started, g.ints('bag.start', [0]), length, g.ints('bag.axis', [0])]),
    g.constant('bag.first', { data: [1], dims: [], type: 'int64' }),
  ]);
  let rows = lookup(m, g, x, name);
  if (weights) rows = g.node('Mul', [rows, g.node('Unsqueeze', [weights, g.ints('bag.last', [1])])]);
  const keep = kept(m, g, x, name);
  const column = (v: string) => g.node('Unsqueeze', [v, g.ints('bag.last', [1])]);
  if (m.mode === 'max') {
    const bags = g.node('Range', [
      g.constant('bag.from', { data: [0], dims: [], type: 'int64' }),
      g.node('Squeeze', [bagCount]),
      g.constant('bag.step', { data: [1], dims: [], type: 'int64' }),
    ]);
    // [K, L]: index j belongs to bag k (and is not padding)
    let member = g.node('Equal', [g.node('Unsqueeze', [bag, g.ints('bag.row', [0])]), column(bags)]);
    if (keep !== null) member = g.node('And', [member, g.node('Unsqueeze', [keep, g.ints('bag.row', [0])])]);
    const masked = g.node('Where', [
      g.node('Unsqueeze', [member, g.ints('bag.last', [2])]),
      g.node('Unsqueeze', [rows, g.ints('bag.row', [0])]),
      g.scalar('bag.-inf', -Infinity),
    ]);
    const max = g.node('ReduceMax', [masked], { axes: { ints: [1] }, keepdims: { int: 0 } });
    const count = sumAlong(g, g.node('Cast', [member], { to: { int: FLOAT } }), 1, true);
    return zeroWhereEmpty(g, max, count);
  }
  if (keep !== null) rows = g.node('Where', [column(keep), rows, g.scalar('bag.zero', 0)]);
  const dim = g.ints(at(name, 'embedding_dim'), [m.embeddingDim]);
  const zeros = g.node('ConstantOfShape', [g.node('Concat', [bagCount, dim], { axis: { int: 0 } })]);
  const scatterAdd = { axis: { int: 0 }, reduction: { string: 'add' } };
  const sum = g.node(
    'ScatterElements',
    [zeros, g.node('Expand', [column(bag), g.node('Shape', [rows])]), rows],
    scatterAdd,
  );
  if (m.mode === 'sum') return sum;
  const ones =
    keep === null
      ? g.node('Expand', [g.scalar('bag.one', 1), length])
      : g.node('Cast', [keep], { to: { int: FLOAT } });
  const count = g.node('ScatterElements', [g.node('ConstantOfShape', [bagCount]), bag, ones], scatterAdd);
  return g.node('Div', [sum, column(g.node('Max', [count, g.scalar('bag.one', 1)]))]);
}

/**
 * The ONNX form of an EmbeddingBag applied to int64 `input`, as its forward: a 2-d input [B, N]
 * is B bags of N indices; a 1-d input [L] needs `offsets`, where each bag starts (bags of any
 * length, an empty one giving zeros). `perSampleWeights` (mode 'sum') is a float32 value of the
 * input's shape. Gives [B, embeddingDim]. The rank is taken as 2 without offsets (a graph input
 * declared 1-d without them is refused by name). With includeLastOffset the offsets end with the
 * input's length (CSR style, as PyTorch documents it: with another last offset libtorch's mean
 * counts the indices past it); over a 2-d input it is refused, PyTorch's reading of it dropping
 * the last row.
 *
 * @example
 * ```ts
 * import { nn, onnx } from 'tailor/torch';
 * const bag = new nn.EmbeddingBag(100, 8, { mode: 'sum' });
 * const g = new onnx.OnnxGraph();
 * const input = g.input('input', ['indices'], 'int64');
 * const offsets = g.input('offsets', ['bags'], 'int64');
 * g.output('bags', onnx.embeddingBagToOnnx(bag, g, input, 'bag', { offsets }), ['bags', 8]);
 * ```
 */
export function embeddingBagToOnnx(
  m: nn.EmbeddingBag,
  g: OnnxGraph,
  input: string,
  name = '',
  inputs: OnnxEmbeddingBagInputs = {},
): string {
  const what = label(m, name);
  const { offsets, perSampleWeights } = inputs;
  checkIndices(g, input, what);
  if (offsets !== undefined) checkIndices(g, offsets, `${what}'s offsets`);
  if (perSampleWeights !== undefined && m.mode !== 'sum')
    throw new OnnxExportError(
      `${what}: perSampleWeights needs mode 'sum', the layer's is '${m.mode}' (as its forward)`,
    );
  const rank = g.dimsOf(input)?.length;
  if (offsets !== undefined) {
    if (rank !== undefined && rank !== 1)
      throw new OnnxExportError(
        `${what}: offsets go with a 1-d input, '${input}' is ${rank}-d: give no offsets`,
      );
    const out = offsetBags(m, g, input, offsets, perSampleWeights, name);
    // includeLastOffset: offsets also holds the last bag's end, so its bag past the end is dropped
    return m.includeLastOffset
      ? g.node('Slice', [out, g.ints('bag.start', [0]), g.ints('bag.end', [-1])])
      : out;
  }
  if (rank !== undefined && rank !== 2)
    throw new OnnxExportError(
      `${what}: the input '${input}' is ${rank}-d: give 2-d bags [B, N], or a 1-d input with offsets (onnx.embeddingBagToOnnx(bag, g, input, name, { offsets }))`,
    );
  if (m.includeLastOffset)
    throw new OnnxExportError(
      `${what} with includeLastOffset over a 2-d input has no ONNX form: PyTorch's offsets for it lack the end, so the last row is dropped and (mode 'mean') the bag before it divided by a count that includes it; export a layer without includeLastOffset`,
    );
  return fixedBags(m, g, input, perSampleWeights, name);
}
