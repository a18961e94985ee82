// The ONNX form of MultiheadAttention, in MatMul, Softmax and Add as its forward computes it
// (opset 17 has no attention operator): the projections as MatMul and Add on [batch, seq,
// features], the heads by Reshape and Transpose, the masks added to the scores.
import type * as nn from '../nn/index.js';
import { Tensor } from '../tensor.js';
import type { OnnxGraph } from './graph.js';

/**
 * A mask of the attention exports, in MultiheadAttention's convention: a graph value, boolean
 * (true: blocked) or float (added to the scores); or a tensor, stored in the file as a constant
 * (a fixed causal mask). A value of [batch x heads, L, S] says so with `perHead`.
 */
export type OnnxMask = { value: string; type: 'bool' | 'float'; perHead?: boolean } | Tensor;

/** The masks of an exported attention (see MultiheadAttention.forward's). */
export interface OnnxAttentionMasks {
  /** [L, S], or [batch x heads, L, S] per sequence and head. */
  attnMask?: OnnxMask | null;
  /** Keys to ignore, per sequence: [batch, S]. */
  keyPaddingMask?: OnnxMask | null;
}

/** What {@link multiheadAttentionToOnnx} returns besides the output (MultiheadAttention.forward's options). */
export interface OnnxAttentionOptions extends OnnxAttentionMasks {
  /** Produce the attention weights as well (default true). */
  needWeights?: boolean;
  /** Average the weights over the heads (default true): [batch, L, S]; [batch, heads, L, S] otherwise. */
  averageAttnWeights?: boolean;
}

/** The values an exported MultiheadAttention produces. */
export interface OnnxAttentionOutputs {
  /** [L, batch, embedDim] ([batch, L, embedDim] with batchFirst). */
  output: string;
  /** The attention weights, or null with needWeights false. */
  weights: string | null;
}

/**
 * The masks as values added to the [batch, heads, L, S] scores: the attention mask as [L, S] or
 * [batch, heads, L, S], the key padding as [batch, 1, 1, S]. Made once for a whole stack.
 * @internal
 */
export interface ScoreBias {
  attn: string | null;
  padding: string | null;
}

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);

/** A mask as an additive float value (-Infinity where a boolean one blocks). */
function additive(g: OnnxGraph, mask: OnnxMask, hint: string): string {
  if (mask instanceof Tensor) {
    const values =
      mask.dtype === 'bool'
        ? Float32Array.from(mask.toNumbers(), (v) => (v ? -Infinity : 0))
        : mask.toFloat32Array();
    return g.constant(hint, { data: values, dims: mask.shape });
  }
  if (mask.type === 'float') return mask.value;
  return g.node('Where', [mask.value, g.scalar('mask.blocked', -Infinity), g.scalar('mask.open', 0)]);
}

/**
 * The masks of `masks` as additions to the scores of attention with `heads` heads.
 * @internal
 */
export function scoreBias(g: OnnxGraph, heads: number, masks: OnnxAttentionMasks, name: string): ScoreBias {
  let attn: string | null = null;
  const mask = masks.attnMask;
  if (mask) {
    attn = additive(g, mask, at(name, 'attn_mask'));
    const perHead = mask instanceof Tensor ? mask.ndim === 3 : mask.perHead === true;
    if (perHead) {
      // [batch x heads, L, S] as [batch, heads, L, S]: L and S from the mask's own shape.
      const ls = g.node('Shape', [attn], { start: { int: 1 } });
      const shape = g.node('Concat', [g.ints('mask.heads', [-1, heads]), ls], { axis: { int: 0 } });
      attn = g.node('Reshape', [attn, shape]);
    }
  }
  let padding: string | null = null;
  if (masks.keyPaddingMask) {
    const m = additive(g, masks.keyPaddingMask, at(name, 'key_padding_mask'));
    padding = g.node('Unsqueeze', [m, g.ints('mask.axes', [1, 2])]);
  }
  return { attn, padding };
}

/** The weight [out, in] transposed to [in, out] (MatMul's right operand), rows [from, to) of `w`. */
function matmulWeight(g: OnnxGraph, hint: string, w: Tensor, from = 0, to = w.shape[0]!): string {
  const cols = w.shape[1]!;
  const data = w.toFloat32Array();
  const out = new Float32Array((to - from) * cols);
  for (let r = from; r < to; r++)
    for (let c = 0; c < cols; c++) out[c * (to - from) + (r - from)] = data[r * cols + c]!;
  return g.constant(hint, { data: out, dims: [cols, to - from] });
}

/** x W^T + b for `x` of any rank (Gemm takes only matrices). */
export function linearOnnx(m: nn.Linear, g: OnnxGraph, x: string, name = ''): string {
  const y = g.node('MatMul', [x, matmulWeight(g, at(name, 'weight'), m.weight)]);
  return m.bias ? g.node('Add', [y, g.tensor(at(name, 'bias'), m.bias)]) : y;
}

/** The query, key or value projection (`part` 0, 1, 2) of `x` [batch, seq, features]. */
function project(m: nn.MultiheadAttention, g: OnnxGraph, x: string, part: number, name: string): string {
  const E = m.embedDim;
  const which = ['q', 'k', 'v'][part]!;
  const separate = [m.qProjWeight, m.kProjWeight, m.vProjWeight][part];
  const w = separate
    ? matmulWeight(g, at(name, `${which}_proj_weight`), separate)
    : matmulWeight(g, at(name, `in_proj_weight.${which}`), m.inProjWeight!, part * E, (part + 1) * E);
  const y = g.node('MatMul', [x, w]);
  if (!m.inProjBias) return y;
  const bias = m.inProjBias.toFloat32Array().subarray(part * E, (part + 1) * E);
  return g.node('Add', [y, g.constant(at(name, `in_proj_bias.${which}`), { data: bias, dims: [E] })]);
}

/**
 * Attention on batch-first values q [batch, L, embedDim], k, v [batch, S, kdim / vdim], with the
 * score additions `bias`; returns the output [batch, L, embedDim] and the weights
 * [batch, heads, L, S].
 * @internal
 */
export function attentionCore(
  m: nn.MultiheadAttention,
  g: OnnxGraph,
  [query, key, value]: [string, string, string],
  bias: ScoreBias,
  name: string,
): { output: string; weights: string } {
  const { numHeads: H, headDim: D, embedDim: E } = m;
  const heads = (t: string) =>
    g.node('Transpose', [g.node('Reshape', [t, g.ints('attn.heads', [0, 0, H, D])])], {
      perm: { ints: [0, 2, 1, 3] },
    });
  const q = heads(project(m, g, query, 0, name));
  const k = heads(project(m, g, key, 1, name));
  const v = heads(project(m, g, value, 2, name));
  const scaled = g.node('Mul', [q, g.scalar('attn.scale', 1 / Math.sqrt(D))]);
  let scores = g.node('MatMul', [scaled, g.node('Transpose', [k], { perm: { ints: [0, 1, 3, 2] } })]);
  if (bias.attn) scores = g.node('Add', [scores, bias.attn]);
  if (bias.padding) scores = g.node('Add', [scores, bias.padding]);
  const weights = g.node('Softmax', [scores], { axis: { int: -1 } });
  const merged = g.node('Reshape', [
    g.node('Transpose', [g.node('MatMul', [weights, v])], { perm: { ints: [0, 2, 1, 3] } }),
    g.ints('attn.merge', [0, 0, E]),
  ]);
  return { output: linearOnnx(m.outProj, g, merged, at(name, 'out_proj')), weights };
}

/** [seq, batch, features] and [batch, seq, features] into each other. */
export const swapBatch = (g: OnnxGraph, x: string) => g.node('Transpose', [x], { perm: { ints: [1, 0, 2] } });

/**
 * The ONNX form of MultiheadAttention (evaluation mode) from `query` over `key` and `value`,
 * batched (3-d) values in the layer's layout; the same value name three times for
 * self-attention. Returns the output and, unless needWeights is false, the weights, as its
 * forward does.
 */
export function multiheadAttentionToOnnx(
  m: nn.MultiheadAttention,
  g: OnnxGraph,
  query: string,
  key: string,
  value: string,
  options: OnnxAttentionOptions = {},
  name = '',
): OnnxAttentionOutputs {
  const bias = scoreBias(g, m.numHeads, options, name);
  // One Transpose per distinct value (one for self-attention).
  const inner = new Map<string, string>();
  const batchFirst = (t: string) => {
    if (m.batchFirst) return t;
    if (!inner.has(t)) inner.set(t, swapBatch(g, t));
    return inner.get(t)!;
  };
  const core = attentionCore(m, g, [batchFirst(query), batchFirst(key), batchFirst(value)], bias, name);
  const output = m.batchFirst ? core.output : swapBatch(g, core.output);
  if (options.needWeights === false) return { output, weights: null };
  const average = options.averageAttnWeights !== false;
  const weights = average
    ? g.node('ReduceMean', [core.weights], { axes: { ints: [1] }, keepdims: { int: 0 } })
    : core.weights;
  return { output, weights };
}
