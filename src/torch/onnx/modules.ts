// The ONNX form of the nn layers, in evaluation mode: moduleToOnnx walks a module tree the way
// its forward pass runs, a layer of this library by the table below, any other module by its own
// toOnnx (a model's blocks say how they compose their layers, as their forward does). A module
// with neither is an OnnxExportError naming its type, never a silently different graph.
import { Module } from '../nn/module.js';
import type { Tensor } from '../tensor.js';
import * as nn from '../nn/index.js';
import { OnnxExportError, type OnnxGraph } from './graph.js';
import { transformerEncoderLayerToOnnx, transformerEncoderToOnnx } from './transformer.js';
import { NORM_ACTIVATION_SHAPE_CONVERTERS } from './norm-activation-shape.js';
import { adaptiveOnnx, circularPadOnnx, poolOnnx } from './pooling.js';
import { embeddingBagToOnnx, embeddingOnnx } from './embedding.js';

/**
 * A module that writes its own ONNX form: its evaluation-mode forward pass as nodes of `g`,
 * from the value `x` to the returned value; `name` is its dotted path (for the weights' names).
 */
export interface OnnxExportable {
  /** Adds the module's nodes to `g` and returns the name of its output value. */
  toOnnx(g: OnnxGraph, x: string, name: string): string;
}

type Converter<M extends Module> = (m: M, g: OnnxGraph, x: string, name: string) => string;

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);

/** The ONNX form of `module` applied to `x` (evaluation mode); OnnxExportError when it has none. */
export function moduleToOnnx(module: Module, g: OnnxGraph, x: string, name = ''): string {
  for (const [type, convert] of CONVERTERS)
    if (module instanceof type) return (convert as Converter<Module>)(module, g, x, name);
  const own = (module as Partial<OnnxExportable>).toOnnx;
  if (typeof own === 'function') return own.call(module, g, x, name);
  throw new OnnxExportError(
    `${module.constructor.name}${name ? ` ('${name}')` : ''} has no ONNX mapping; give the module a toOnnx method (see OnnxExportable) or export a model without it`,
  );
}

/** torch.nn.functional.normalize(x, 2, axis): x / max(||x||, 1e-12) along `axis`. */
export function l2NormalizeOnnx(g: OnnxGraph, x: string, axis: number): string {
  const norm = g.node('ReduceL2', [x], { axes: { ints: [axis] }, keepdims: { int: 1 } });
  return g.node('Div', [x, g.node('Max', [norm, g.scalar('eps', 1e-12)])]);
}

/** The exact GELU, 0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation (opset 17 has no Gelu). */
export function geluOnnx(g: OnnxGraph, x: string, approximate: 'none' | 'tanh' = 'none'): string {
  let inner: string;
  if (approximate === 'tanh') {
    const cube = g.node('Mul', [g.node('Mul', [x, x]), x]);
    const poly = g.node('Add', [x, g.node('Mul', [cube, g.scalar('gelu.c', 0.044715)])]);
    inner = g.node('Tanh', [g.node('Mul', [poly, g.scalar('gelu.k', Math.sqrt(2 / Math.PI))])]);
  } else {
    inner = g.node('Erf', [g.node('Div', [x, g.scalar('gelu.sqrt2', Math.SQRT2)])]);
  }
  const half = g.node('Mul', [x, g.scalar('gelu.half', 0.5)]);
  return g.node('Mul', [half, g.node('Add', [inner, g.scalar('gelu.one', 1)])]);
}

/**
 * ONNX's Softplus has neither beta nor threshold: log(1 + exp(beta x)) / beta, and x itself where
 * beta x > threshold as libtorch computes it (at the default threshold 20 the two differ by less
 * than float rounding, so the plain form is kept).
 */
function softplus(m: nn.Softplus, g: OnnxGraph, x: string): string {
  const scaled = m.beta === 1 ? x : g.node('Mul', [x, g.scalar('softplus.beta', m.beta)]);
  let y = g.node('Softplus', [scaled]);
  if (m.beta !== 1) y = g.node('Div', [y, g.scalar('softplus.beta', m.beta)]);
  if (m.threshold >= 20) return y;
  const linear = g.node('Greater', [scaled, g.scalar('softplus.threshold', m.threshold)]);
  return g.node('Where', [linear, x, y]);
}

/**
 * Conv, or ConvTranspose for the transposed layers: explicit pads (and output_padding) give
 * PyTorch's output size, with no output_shape or auto_pad.
 */
function conv(
  m: nn.Conv1d | nn.Conv2d | nn.Conv3d | nn.ConvTranspose1d | nn.ConvTranspose2d | nn.ConvTranspose3d,
  g: OnnxGraph,
  x: string,
  name: string,
): string {
  // per axis, so rectangular kernels and per-axis options keep their shape ([begin..., end...] pads)
  const { stride, padding, paddingExtra, dilation, outputPadding } = m.window;
  const ends = padding.map((p, i) => p + paddingExtra[i]!);
  let input = x;
  let pads = padding.concat(ends);
  if (m.paddingMode === 'circular') {
    // opset 17's Pad has no wrap mode (it arrived in opset 19): Slice and Concat make it
    input = circularPadOnnx(g, x, padding, ends, name);
    pads = pads.map(() => 0);
  } else if (m.paddingMode !== 'zeros') {
    // Pad lists every axis's begins, then every axis's ends; batch and channels get none
    const none = [0, 0];
    input = g.node('Pad', [x, g.ints(at(name, 'pads'), [...none, ...padding, ...none, ...ends])], {
      mode: { string: m.paddingMode === 'reflect' ? 'reflect' : 'edge' },
    });
    pads = pads.map(() => 0);
  }
  const inputs = [input, g.tensor(at(name, 'weight'), m.weight)];
  if (m.bias) inputs.push(g.tensor(at(name, 'bias'), m.bias));
  const transposed =
    m instanceof nn.ConvTranspose1d || m instanceof nn.ConvTranspose2d || m instanceof nn.ConvTranspose3d;
  return g.node(transposed ? 'ConvTranspose' : 'Conv', inputs, {
    kernel_shape: { ints: m.weight.shape.slice(2) },
    strides: { ints: stride },
    pads: { ints: pads },
    ...(transposed ? { output_padding: { ints: outputPadding } } : {}),
    dilations: { ints: dilation },
    group: { int: m.groups },
  });
}

/**
 * Resize by the scale factors (no roi), with the coordinate mapping of PyTorch's kernels: nearest
 * takes floor(dst / scale) ('asymmetric', 'floor'); the linear modes half-pixel centres, or the
 * corners with alignCorners. A fixed output size would need the input's shape at run time, so
 * only scaleFactor is exported.
 */
function upsample(m: nn.Upsample, g: OnnxGraph, x: string, name: string): string {
  const { scaleFactor, mode, alignCorners } = m.options;
  if (mode !== 'nearest' && mode !== 'linear' && mode !== 'bilinear')
    throw new OnnxExportError(
      `Upsample ('${name}') in mode '${mode}' has no ONNX form here: the export covers 'nearest', 'linear' and 'bilinear'`,
    );
  if (m.options.antialias === true || m.options.recomputeScaleFactor === true)
    throw new OnnxExportError(
      `Upsample ('${name}') with antialias or recomputeScaleFactor has no ONNX form here: export it without them`,
    );
  if (!scaleFactor)
    throw new OnnxExportError(
      `Upsample ('${name}') to a fixed size has no ONNX form here: give it a scaleFactor`,
    );
  const scales = g.constant(at(name, 'scales'), {
    data: [1, 1, ...scaleFactor],
    dims: [2 + scaleFactor.length],
  });
  const linear = mode !== 'nearest';
  return g.node('Resize', [x, '', scales], {
    mode: { string: linear ? 'linear' : 'nearest' },
    coordinate_transformation_mode: {
      string: !linear ? 'asymmetric' : alignCorners ? 'align_corners' : 'pytorch_half_pixel',
    },
    ...(linear ? {} : { nearest_mode: { string: 'floor' } }),
  });
}

function batchNorm(
  m: nn.BatchNorm1d | nn.BatchNorm2d | nn.BatchNorm3d,
  g: OnnxGraph,
  x: string,
  name: string,
): string {
  if (!m.runningMean || !m.runningVar)
    throw new OnnxExportError(
      `${m.constructor.name} ('${name}') keeps no running statistics, so its evaluation-mode output depends on the batch; it has no ONNX mapping`,
    );
  const c = m.numFeatures;
  const scale = m.weight ? g.tensor(at(name, 'weight'), m.weight) : g.constant(at(name, 'weight'), ones(c));
  const bias = m.bias ? g.tensor(at(name, 'bias'), m.bias) : g.constant(at(name, 'bias'), zeros(c));
  return g.node(
    'BatchNormalization',
    [
      x,
      scale,
      bias,
      g.tensor(at(name, 'running_mean'), m.runningMean),
      g.tensor(at(name, 'running_var'), m.runningVar),
    ],
    { epsilon: { float: m.eps } },
  );
}

/**
 * GroupNorm as the usual decomposition (opset 17 has no GroupNormalization): instance
 * normalization over [N, groups, rest], the input's shape back, then the per-channel affine.
 */
function groupNorm(m: nn.GroupNorm, g: OnnxGraph, x: string, name: string): string {
  const grouped = g.node('Reshape', [x, g.ints('gn.shape', [0, m.numGroups, -1])]);
  const normed = g.node(
    'InstanceNormalization',
    [
      grouped,
      g.constant(at(name, 'ones'), ones(m.numGroups)),
      g.constant(at(name, 'zeros'), zeros(m.numGroups)),
    ],
    { epsilon: { float: m.eps } },
  );
  if (!m.weight && !m.bias) return g.node('Reshape', [normed, g.node('Shape', [x])]);
  // [N, C, rest] whatever the input's rank, so the affine broadcasts as [C, 1].
  let y = g.node('Reshape', [normed, g.ints('gn.flat', [0, m.numChannels, -1])]);
  const column = (t: Tensor, part: string) => g.tensor(at(name, part), t, [m.numChannels, 1]);
  if (m.weight) y = g.node('Mul', [y, column(m.weight, 'weight')]);
  if (m.bias) y = g.node('Add', [y, column(m.bias, 'bias')]);
  y = g.node('Reshape', [y, g.node('Shape', [x])]);
  return y;
}

function sequential(m: nn.Sequential, g: OnnxGraph, x: string, name: string): string {
  let out = x;
  m.layers.forEach((layer, i) => (out = moduleToOnnx(layer, g, out, at(name, String(i)))));
  return out;
}

/**
 * A layer whose forward takes more than one value or returns more than one: it has no form from
 * one value to one value, so the error names the function that exports it.
 */
const elsewhere =
  (fn: string) =>
  (m: Module, _g: OnnxGraph, _x: string, name: string): string => {
    throw new OnnxExportError(
      `${m.constructor.name}${name ? ` ('${name}')` : ''} takes or returns more than one value: export it with onnx.${fn}`,
    );
  };

const ones = (n: number) => ({ data: new Float32Array(n).fill(1), dims: [n] });
const zeros = (n: number) => ({ data: new Float32Array(n), dims: [n] });

// Matched with instanceof, in order: a subclass of one of these layers gets its parent's form.
const CONVERTERS: [abstract new (...args: never[]) => Module, Converter<never>][] = [
  [
    nn.Linear,
    (m: nn.Linear, g, x, name) => {
      const inputs = [x, g.tensor(at(name, 'weight'), m.weight)];
      if (m.bias) inputs.push(g.tensor(at(name, 'bias'), m.bias));
      // Gemm takes [N, in]: the layer's input in every model of tailor that is exported.
      return g.node('Gemm', inputs, { transB: { int: 1 } });
    },
  ],
  [nn.Conv1d, conv],
  [nn.Conv2d, conv],
  [nn.Conv3d, conv],
  [nn.ConvTranspose1d, conv],
  [nn.ConvTranspose2d, conv],
  [nn.ConvTranspose3d, conv],
  [nn.Upsample, upsample],
  [nn.BatchNorm1d, batchNorm],
  [nn.BatchNorm2d, batchNorm],
  [nn.BatchNorm3d, batchNorm],
  [nn.GroupNorm, groupNorm],
  [
    nn.LayerNorm,
    (m: nn.LayerNorm, g, x, name) => {
      const n = m.normalizedShape.reduce((a, b) => a * b, 1);
      const scale = m.weight
        ? g.tensor(at(name, 'weight'), m.weight)
        : g.constant(at(name, 'weight'), ones(n));
      const inputs = [x, scale];
      if (m.bias) inputs.push(g.tensor(at(name, 'bias'), m.bias));
      return g.node('LayerNormalization', inputs, {
        axis: { int: -m.normalizedShape.length },
        epsilon: { float: m.eps },
      });
    },
  ],
  [nn.ReLU, (_m, g, x) => g.node('Relu', [x])],
  [nn.LeakyReLU, (m: nn.LeakyReLU, g, x) => g.node('LeakyRelu', [x], { alpha: { float: m.negativeSlope } })],
  [nn.SiLU, (_m, g, x) => g.node('Mul', [x, g.node('Sigmoid', [x])])],
  [nn.ELU, (m: nn.ELU, g, x) => g.node('Elu', [x], { alpha: { float: m.alpha } })],
  [nn.Softplus, softplus],
  [nn.Softmax, (m: nn.Softmax, g, x) => g.node('Softmax', [x], { axis: { int: m.dim } })],
  [nn.LogSoftmax, (m: nn.LogSoftmax, g, x) => g.node('LogSoftmax', [x], { axis: { int: m.dim } })],
  [nn.Sigmoid, (_m, g, x) => g.node('Sigmoid', [x])],
  [nn.Tanh, (_m, g, x) => g.node('Tanh', [x])],
  [nn.GELU, (m: nn.GELU, g, x) => geluOnnx(g, x, m.approximate)],
  [nn.Identity, (_m, g, x) => g.node('Identity', [x])],
  // Dropout is the identity in evaluation mode, the only mode exported.
  [nn.Dropout, (_m, g, x) => g.node('Identity', [x])],
  [
    nn.Flatten,
    (m: nn.Flatten, g, x, name) => {
      if (m.endDim !== -1)
        throw new OnnxExportError(
          `Flatten ('${name}') up to dimension ${m.endDim} has no ONNX mapping (only to the last)`,
        );
      return g.node('Flatten', [x], { axis: { int: m.startDim } });
    },
  ],
  [nn.MaxPool1d, poolOnnx],
  [nn.MaxPool2d, poolOnnx],
  [nn.MaxPool3d, poolOnnx],
  [nn.AvgPool1d, poolOnnx],
  [nn.AvgPool2d, poolOnnx],
  [nn.AvgPool3d, poolOnnx],
  [nn.AdaptiveAvgPool1d, adaptiveOnnx],
  [nn.AdaptiveAvgPool2d, adaptiveOnnx],
  [nn.AdaptiveAvgPool3d, adaptiveOnnx],
  [nn.MaxUnpool1d, elsewhere('maxUnpoolToOnnx')],
  [nn.MaxUnpool2d, elsewhere('maxUnpoolToOnnx')],
  [nn.MaxUnpool3d, elsewhere('maxUnpoolToOnnx')],
  [nn.Sequential, sequential],
  [nn.Embedding, embeddingOnnx],
  // Bags of one length, [B, N]: offsets and per-sample weights are embeddingBagToOnnx's inputs.
  [nn.EmbeddingBag, (m: nn.EmbeddingBag, g, x, name) => embeddingBagToOnnx(m, g, x, name)],
  [nn.AdaptiveLogSoftmaxWithLoss, elsewhere('adaptiveLogSoftmaxToOnnx')],
  // Without masks: transformerEncoderLayerToOnnx and transformerEncoderToOnnx take them.
  [
    nn.TransformerEncoderLayer,
    (m: nn.TransformerEncoderLayer, g, x, name) => transformerEncoderLayerToOnnx(m, g, x, {}, name),
  ],
  [
    nn.TransformerEncoder,
    (m: nn.TransformerEncoder, g, x, name) => transformerEncoderToOnnx(m, g, x, {}, name),
  ],
  [nn.LSTM, elsewhere('lstmToOnnx')],
  [nn.GRU, elsewhere('gruToOnnx')],
  [nn.MultiheadAttention, elsewhere('multiheadAttentionToOnnx')],
  [nn.TransformerDecoderLayer, elsewhere('transformerDecoderLayerToOnnx')],
  [nn.TransformerDecoder, elsewhere('transformerDecoderToOnnx')],
  [nn.Transformer, elsewhere('transformerToOnnx')],
  ...NORM_ACTIVATION_SHAPE_CONVERTERS,
];
