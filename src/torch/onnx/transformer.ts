// The ONNX forms of the Transformer layers, stacks and the whole model (evaluation mode: dropout
// is the identity). Inside, every value is batch first, as the attention's form computes it; the
// layout is changed once at the way in and out, and the masks are made once per stack.
import type * as nn from '../nn/index.js';
import type { OnnxGraph } from './graph.js';
import { geluOnnx, moduleToOnnx } from './modules.js';
import {
  attentionCore,
  linearOnnx,
  scoreBias,
  swapBatch,
  type OnnxMask,
  type ScoreBias,
} from './attention.js';

/** The masks of an exported encoder layer (see TransformerEncoderLayer.forward's). */
export interface OnnxEncoderLayerMasks {
  /** [S, S] or [batch x nhead, S, S]. */
  srcMask?: OnnxMask | null;
  /** [batch, S]. */
  srcKeyPaddingMask?: OnnxMask | null;
}

/** The masks of an exported encoder (see TransformerEncoder.forward's). */
export interface OnnxEncoderMasks {
  /** [S, S] or [batch x nhead, S, S], for every layer. */
  mask?: OnnxMask | null;
  /** [batch, S]. */
  srcKeyPaddingMask?: OnnxMask | null;
}

/** The masks of an exported decoder layer or decoder (see TransformerDecoderLayer.forward's). */
export interface OnnxDecoderMasks {
  /** [T, T] or [batch x nhead, T, T], on the self-attention. */
  tgtMask?: OnnxMask | null;
  /** [T, S] or [batch x nhead, T, S], on the attention over the memory. */
  memoryMask?: OnnxMask | null;
  /** [batch, T]. */
  tgtKeyPaddingMask?: OnnxMask | null;
  /** [batch, S]. */
  memoryKeyPaddingMask?: OnnxMask | null;
}

/** The masks of an exported Transformer (see Transformer.forward's). */
export interface OnnxTransformerMasks extends OnnxDecoderMasks {
  /** [S, S] or [batch x nhead, S, S], on the encoder's self-attention. */
  srcMask?: OnnxMask | null;
  /** [batch, S], on the encoder's self-attention. */
  srcKeyPaddingMask?: OnnxMask | null;
}

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);

/** linear2(activation(linear1(x))). */
function feedForward(
  m: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer,
  g: OnnxGraph,
  x: string,
  name: string,
): string {
  const h = linearOnnx(m.linear1, g, x, at(name, 'linear1'));
  const a = m.activation === 'relu' ? g.node('Relu', [h]) : geluOnnx(g, h);
  return linearOnnx(m.linear2, g, a, at(name, 'linear2'));
}

/**
 * The residual blocks of a layer in turn: x + block(norm(x)) with normFirst, norm(x + block(x))
 * otherwise, norm i after block i.
 */
function residuals(
  g: OnnxGraph,
  x: string,
  normFirst: boolean,
  steps: [nn.LayerNorm, string, (t: string) => string][],
): string {
  return steps.reduce((t, [norm, part, block]) => {
    const normed = (v: string) => moduleToOnnx(norm, g, v, part);
    return normFirst ? g.node('Add', [t, block(normed(t))]) : normed(g.node('Add', [t, block(t)]));
  }, x);
}

function encoderLayer(
  m: nn.TransformerEncoderLayer,
  g: OnnxGraph,
  x: string,
  bias: ScoreBias,
  name: string,
): string {
  const attention = (t: string) =>
    attentionCore(m.selfAttn, g, [t, t, t], bias, at(name, 'self_attn')).output;
  return residuals(g, x, m.normFirst, [
    [m.norm1, at(name, 'norm1'), attention],
    [m.norm2, at(name, 'norm2'), (t) => feedForward(m, g, t, name)],
  ]);
}

function decoderLayer(
  m: nn.TransformerDecoderLayer,
  g: OnnxGraph,
  x: string,
  memory: string,
  [selfBias, crossBias]: [ScoreBias, ScoreBias],
  name: string,
): string {
  const [n1, n2, n3] = m.norms;
  return residuals(g, x, m.normFirst, [
    [
      n1,
      at(name, 'norm1'),
      (t) => attentionCore(m.selfAttn, g, [t, t, t], selfBias, at(name, 'self_attn')).output,
    ],
    [
      n2,
      at(name, 'norm2'),
      (t) =>
        attentionCore(m.multiheadAttn, g, [t, memory, memory], crossBias, at(name, 'multihead_attn')).output,
    ],
    [n3, at(name, 'norm3'), (t) => feedForward(m, g, t, name)],
  ]);
}

/** The decoder's two score additions, made once. */
function decoderBias(
  g: OnnxGraph,
  nhead: number,
  masks: OnnxDecoderMasks,
  name: string,
): [ScoreBias, ScoreBias] {
  return [
    scoreBias(
      g,
      nhead,
      { attnMask: masks.tgtMask, keyPaddingMask: masks.tgtKeyPaddingMask },
      at(name, 'tgt'),
    ),
    scoreBias(
      g,
      nhead,
      { attnMask: masks.memoryMask, keyPaddingMask: masks.memoryKeyPaddingMask },
      at(name, 'memory'),
    ),
  ];
}

/** A value in a layer's layout as batch first (`batchFirst`: the layer's), or back. */
const layout = (g: OnnxGraph, x: string, batchFirst: boolean) => (batchFirst ? x : swapBatch(g, x));

/**
 * The ONNX form of a TransformerEncoderLayer (evaluation mode) applied to `src`, a 3-d value in
 * the layer's layout, with the optional masks of its self-attention.
 */
export function transformerEncoderLayerToOnnx(
  m: nn.TransformerEncoderLayer,
  g: OnnxGraph,
  src: string,
  masks: OnnxEncoderLayerMasks = {},
  name = '',
): string {
  const bias = scoreBias(
    g,
    m.nhead,
    { attnMask: masks.srcMask, keyPaddingMask: masks.srcKeyPaddingMask },
    name,
  );
  const bf = m.selfAttn.batchFirst;
  return layout(g, encoderLayer(m, g, layout(g, src, bf), bias, name), bf);
}

/** Batch first in, batch first out: the encoder's layers and norm. */
function encoderStack(
  m: nn.TransformerEncoder,
  g: OnnxGraph,
  x: string,
  masks: OnnxEncoderMasks,
  name: string,
) {
  const first = m.layers.items[0]!;
  const bias = scoreBias(
    g,
    first.nhead,
    { attnMask: masks.mask, keyPaddingMask: masks.srcKeyPaddingMask },
    name,
  );
  let y = x;
  m.layers.items.forEach((layer, i) => (y = encoderLayer(layer, g, y, bias, at(name, `layers.${i}`))));
  return m.norm ? moduleToOnnx(m.norm, g, y, at(name, 'norm')) : y;
}

/**
 * The ONNX form of a TransformerEncoder (evaluation mode) applied to `src`, a 3-d value in its
 * layers' layout; `mask` and `srcKeyPaddingMask` go to every layer.
 */
export function transformerEncoderToOnnx(
  m: nn.TransformerEncoder,
  g: OnnxGraph,
  src: string,
  masks: OnnxEncoderMasks = {},
  name = '',
): string {
  const bf = m.layers.items[0]!.selfAttn.batchFirst;
  return layout(g, encoderStack(m, g, layout(g, src, bf), masks, name), bf);
}

/**
 * The ONNX form of a TransformerDecoderLayer (evaluation mode): the target `tgt` attending over
 * `memory`, 3-d values in the layer's layout, with the optional masks.
 */
export function transformerDecoderLayerToOnnx(
  m: nn.TransformerDecoderLayer,
  g: OnnxGraph,
  tgt: string,
  memory: string,
  masks: OnnxDecoderMasks = {},
  name = '',
): string {
  const bf = m.selfAttn.batchFirst;
  const bias = decoderBias(g, m.nhead, masks, name);
  return layout(g, decoderLayer(m, g, layout(g, tgt, bf), layout(g, memory, bf), bias, name), bf);
}

/** Batch first in, batch first out: the decoder's layers and norm. */
function decoderStack(
  m: nn.TransformerDecoder,
  g: OnnxGraph,
  tgt: string,
  memory: string,
  masks: OnnxDecoderMasks,
  name: string,
) {
  const bias = decoderBias(g, m.layers.items[0]!.nhead, masks, name);
  let y = tgt;
  m.layers.items.forEach(
    (layer, i) => (y = decoderLayer(layer, g, y, memory, bias, at(name, `layers.${i}`))),
  );
  return m.norm ? moduleToOnnx(m.norm, g, y, at(name, 'norm')) : y;
}

/**
 * The ONNX form of a TransformerDecoder (evaluation mode): `tgt` attending over `memory`, 3-d
 * values in its layers' layout; the masks go to every layer.
 */
export function transformerDecoderToOnnx(
  m: nn.TransformerDecoder,
  g: OnnxGraph,
  tgt: string,
  memory: string,
  masks: OnnxDecoderMasks = {},
  name = '',
): string {
  const bf = m.layers.items[0]!.selfAttn.batchFirst;
  return layout(g, decoderStack(m, g, layout(g, tgt, bf), layout(g, memory, bf), masks, name), bf);
}

/**
 * The ONNX form of a Transformer (evaluation mode): `src` encoded, `tgt` decoded over the
 * encoding, 3-d values in the model's layout, with the optional masks; returns the decoder's
 * output.
 */
export function transformerToOnnx(
  m: nn.Transformer,
  g: OnnxGraph,
  src: string,
  tgt: string,
  masks: OnnxTransformerMasks = {},
  name = '',
): string {
  const { srcMask, srcKeyPaddingMask, ...decoderMasks } = masks;
  const bf = m.batchFirst;
  const memory = encoderStack(
    m.encoder,
    g,
    layout(g, src, bf),
    { mask: srcMask, srcKeyPaddingMask },
    at(name, 'encoder'),
  );
  return layout(
    g,
    decoderStack(m.decoder, g, layout(g, tgt, bf), memory, decoderMasks, at(name, 'decoder')),
    bf,
  );
}
