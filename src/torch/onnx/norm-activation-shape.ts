// The ONNX forms (opset 17, evaluation mode) of instance normalisation, the activations PReLU ...
// Threshold, the shuffles, Unflatten, channel dropout and the padding layers (circular padding in
// the circular convolutions' Slice and Concat form, pooling.ts); modules.ts puts
// them in its table. The layers whose forward reads the input's rank (PReLU per channel, the
// shuffles, Unflatten) compute shapes in the graph, so the batch and spatial sizes stay dynamic.
import type { Module } from '../nn/module.js';
import * as nn from '../nn/index.js';
import { OnnxExportError, type OnnxGraph } from './graph.js';
import { circularPadOnnx } from './pooling.js';

type Converter<M extends Module> = (m: M, g: OnnxGraph, x: string, name: string) => string;

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);
const filled = (n: number, v: number) => ({ data: new Float32Array(n).fill(v), dims: [n] });
const INT64_MAX = Number.MAX_SAFE_INTEGER;

/**
 * Evaluation mode: with running statistics the layer normalises by them (BatchNormalization);
 * without, by each sample's own (InstanceNormalization), with numFeatures as the channel count.
 */
function instanceNorm(
  m: nn.InstanceNorm1d | nn.InstanceNorm2d | nn.InstanceNorm3d,
  g: OnnxGraph,
  x: string,
  name: string,
): string {
  const c = m.numFeatures;
  const scale = m.weight
    ? g.tensor(at(name, 'weight'), m.weight)
    : g.constant(at(name, 'weight'), filled(c, 1));
  const bias = m.bias ? g.tensor(at(name, 'bias'), m.bias) : g.constant(at(name, 'bias'), filled(c, 0));
  const epsilon = { float: m.eps };
  if (m.runningMean && m.runningVar)
    return g.node(
      'BatchNormalization',
      [
        x,
        scale,
        bias,
        g.tensor(at(name, 'running_mean'), m.runningMean),
        g.tensor(at(name, 'running_var'), m.runningVar),
      ],
      { epsilon },
    );
  return g.node('InstanceNormalization', [x, scale, bias], { epsilon });
}

/**
 * ONNX's PRelu broadcasts the slope from the right, PyTorch's applies one per channel (dimension
 * 1): the input as [N, C, rest] meets slopes shaped [C, 1], then takes its own shape back.
 */
function prelu(m: nn.PReLU, g: OnnxGraph, x: string, name: string): string {
  const slopes = m.weight.numel;
  if (slopes === 1) return g.node('PRelu', [x, g.tensor(at(name, 'weight'), m.weight, [1])]);
  const flat = g.node('Reshape', [x, g.ints('prelu.shape', [0, 0, -1])]);
  const y = g.node('PRelu', [flat, g.tensor(at(name, 'weight'), m.weight, [slopes, 1])]);
  return g.node('Reshape', [y, g.node('Shape', [x])]);
}

/** Dimensions [start, end) of `x`'s shape, as an int64 vector in the graph. */
function shapePart(g: OnnxGraph, shape: string, start: number, end: number): string {
  return g.node('Slice', [shape, g.ints('slice.start', [start]), g.ints('slice.end', [end])]);
}

/** PyTorch's pixel_shuffle is DepthToSpace in the column-row-depth order (CRD), for [N, C, H, W]. */
function pixelShuffle(m: nn.PixelShuffle, g: OnnxGraph, x: string): string {
  return g.node('DepthToSpace', [x], { blocksize: { int: m.upscaleFactor }, mode: { string: 'CRD' } });
}

/**
 * [N, C, H r, W r] to [N, C r^2, H, W] with channel c r^2 + i r + j holding offset (i, j), as
 * PyTorch orders them (SpaceToDepth's order differs): the width split first, then the height, with
 * Reshape's 0 (keep) and -1 (infer) so no size is fixed.
 */
function pixelUnshuffle(m: nn.PixelUnshuffle, g: OnnxGraph, x: string): string {
  const r = m.downscaleFactor;
  let y = g.node('Reshape', [x, g.ints('unshuffle.w', [0, 0, 0, -1, r])]); // [N, C, Hr, W, j]
  y = g.node('Transpose', [y], { perm: { ints: [0, 1, 4, 3, 2] } }); // [N, C, j, W, Hr]
  y = g.node('Reshape', [y, g.ints('unshuffle.h', [0, 0, 0, 0, -1, r])]); // [N, C, j, W, H, i]
  y = g.node('Transpose', [y], { perm: { ints: [0, 4, 3, 1, 5, 2] } }); // [N, H, W, C, i, j]
  y = g.node('Reshape', [y, g.ints('unshuffle.c', [0, 0, 0, -1])]); // [N, H, W, C r^2]
  return g.node('Transpose', [y], { perm: { ints: [0, 3, 1, 2] } });
}

/** [N, C, ...] as [N, groups, C / groups, rest], the two middle axes swapped, the shape back. */
function channelShuffle(m: nn.ChannelShuffle, g: OnnxGraph, x: string): string {
  const flat = g.node('Reshape', [x, g.ints('shuffle.flat', [0, 0, -1])]);
  const s = g.node('Shape', [flat]);
  const target = g.node(
    'Concat',
    [shapePart(g, s, 0, 1), g.ints('shuffle.groups', [m.groups, -1]), shapePart(g, s, 2, 3)],
    { axis: { int: 0 } },
  );
  const grouped = g.node('Reshape', [flat, target]);
  const swapped = g.node('Transpose', [grouped], { perm: { ints: [0, 2, 1, 3] } });
  return g.node('Reshape', [swapped, g.node('Shape', [x])]);
}

/** The input's shape with dimension `dim` replaced by the sizes (a -1 among them inferred by Reshape). */
function unflatten(m: nn.Unflatten, g: OnnxGraph, x: string): string {
  const s = g.node('Shape', [x]);
  const d = m.dim;
  const parts = [];
  if (d !== 0) parts.push(shapePart(g, s, 0, d));
  parts.push(g.ints('unflatten.sizes', m.unflattenedSize));
  if (d !== -1) parts.push(shapePart(g, s, d + 1, INT64_MAX));
  return g.node('Reshape', [x, g.node('Concat', parts, { axis: { int: 0 } })]);
}

/**
 * Pad over a batched input ([N, C] and the padded dimensions): PyTorch's (left, right, top,
 * bottom, front, back) of the last dimensions first become ONNX's begins of every axis, then ends.
 * Negative sides crop, as in PyTorch (not in reflect mode, below).
 */
function pad(m: PaddingLayer, g: OnnxGraph, x: string, name: string): string {
  const k = m.padding.length / 2;
  const begins = [0, 0];
  const ends = [0, 0];
  for (let axis = 0; axis < k; axis++) {
    const i = k - 1 - axis; // the pair of the axis-th padded dimension, counted from the first
    begins.push(m.padding[2 * i]!);
    ends.push(m.padding[2 * i + 1]!);
  }
  if (m.mode === 'circular') {
    // opset 17's Pad has no wrap mode: the convolutions' Slice and Concat form, which pads only
    if (m.padding.some((p) => p < 0))
      throw new OnnxExportError(
        `${m.constructor.name} ('${name}') with negative padding (cropping) has no ONNX form in circular mode; crop with a ConstantPad before it`,
      );
    return circularPadOnnx(g, x, begins.slice(2), ends.slice(2), name);
  }
  const inputs = [x, g.ints(at(name, 'pads'), [...begins, ...ends])];
  if (m.mode === 'constant') {
    if (m.value !== 0) inputs.push(g.scalar(at(name, 'value'), m.value));
    return g.node('Pad', inputs, { mode: { string: 'constant' } });
  }
  // Edge padding after a crop repeats the same values as PyTorch's; a reflection after a crop
  // reaches only the cropped values (ONNX Runtime crops first), which is PyTorch's only while each
  // side stays shorter than the cropped size, a size the graph leaves dynamic.
  if (m.mode === 'reflect' && m.padding.some((p) => p < 0))
    throw new OnnxExportError(
      `${m.constructor.name} ('${name}') with negative padding (cropping) has no exact ONNX mapping in reflect mode; crop with a ConstantPad before it`,
    );
  return g.node('Pad', inputs, { mode: { string: m.mode === 'reflect' ? 'reflect' : 'edge' } });
}

type PaddingLayer =
  | nn.ZeroPad1d
  | nn.ZeroPad2d
  | nn.ZeroPad3d
  | nn.CircularPad1d
  | nn.CircularPad2d
  | nn.CircularPad3d
  | nn.ConstantPad1d
  | nn.ConstantPad2d
  | nn.ConstantPad3d
  | nn.ReflectionPad1d
  | nn.ReflectionPad2d
  | nn.ReflectionPad3d
  | nn.ReplicationPad1d
  | nn.ReplicationPad2d
  | nn.ReplicationPad3d;

const scalar = (g: OnnxGraph, hint: string, v: number) => g.scalar(hint, v);

/** The table modules.ts appends to its own (ReLU6 is a Hardtanh, so it is Clip too). */
export const NORM_ACTIVATION_SHAPE_CONVERTERS: [
  abstract new (...args: never[]) => Module,
  Converter<never>,
][] = [
  [nn.InstanceNorm1d, instanceNorm],
  [nn.InstanceNorm2d, instanceNorm],
  [nn.InstanceNorm3d, instanceNorm],
  [nn.PReLU, prelu],
  [
    nn.Hardtanh,
    (m: nn.Hardtanh, g, x) =>
      g.node('Clip', [x, scalar(g, 'clip.min', m.minVal), scalar(g, 'clip.max', m.maxVal)]),
  ],
  [nn.Hardswish, (_m, g, x) => g.node('HardSwish', [x])],
  [
    nn.Hardsigmoid,
    (_m, g, x) => g.node('HardSigmoid', [x], { alpha: { float: 1 / 6 }, beta: { float: 0.5 } }),
  ],
  // opset 17 has no Mish (it came in 18)
  [nn.Mish, (_m, g, x) => g.node('Mul', [x, g.node('Tanh', [g.node('Softplus', [x])])])],
  // -softplus(-x), the stable form of log(sigmoid(x))
  [nn.LogSigmoid, (_m, g, x) => g.node('Neg', [g.node('Softplus', [g.node('Neg', [x])])])],
  [nn.Softsign, (_m, g, x) => g.node('Softsign', [x])],
  [nn.Softmin, (m: nn.Softmin, g, x) => g.node('Softmax', [g.node('Neg', [x])], { axis: { int: m.dim } })],
  [
    nn.GLU,
    (m: nn.GLU, g, x) => {
      const [a, b] = g.nodeN('Split', [x], 2, { axis: { int: m.dim } });
      return g.node('Mul', [a!, g.node('Sigmoid', [b!])]);
    },
  ],
  // ONNX's Selu defaults are PyTorch's alpha and scale (to float precision)
  [nn.SELU, (_m, g, x) => g.node('Selu', [x])],
  [nn.CELU, (m: nn.CELU, g, x) => g.node('Celu', [x], { alpha: { float: m.alpha } })],
  [
    nn.Threshold,
    (m: nn.Threshold, g, x) =>
      g.node('Where', [
        g.node('Greater', [x, scalar(g, 'threshold', m.threshold)]),
        x,
        scalar(g, 'threshold.value', m.value),
      ]),
  ],
  [nn.PixelShuffle, pixelShuffle],
  [nn.PixelUnshuffle, pixelUnshuffle],
  [nn.ChannelShuffle, channelShuffle],
  [nn.Unflatten, unflatten],
  // channel dropout is the identity in evaluation mode, the only mode exported
  [nn.Dropout1d, (_m, g, x) => g.node('Identity', [x])],
  [nn.Dropout2d, (_m, g, x) => g.node('Identity', [x])],
  [nn.Dropout3d, (_m, g, x) => g.node('Identity', [x])],
  [nn.ZeroPad1d, pad],
  [nn.ZeroPad2d, pad],
  [nn.ZeroPad3d, pad],
  [nn.ConstantPad1d, pad],
  [nn.ConstantPad2d, pad],
  [nn.ConstantPad3d, pad],
  [nn.ReflectionPad1d, pad],
  [nn.ReflectionPad2d, pad],
  [nn.ReflectionPad3d, pad],
  [nn.ReplicationPad1d, pad],
  [nn.ReplicationPad2d, pad],
  [nn.ReplicationPad3d, pad],
  [nn.CircularPad1d, pad],
  [nn.CircularPad2d, pad],
  [nn.CircularPad3d, pad],
];
