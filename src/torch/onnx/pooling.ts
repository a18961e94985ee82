// The ONNX forms of the pools (and of the circular padding of the convolutions) that take more than
// one ONNX node: average pools with a fixed divisor, a max pool's indices in PyTorch's per-plane
// convention and max unpooling back from them, adaptive average pooling to sizes other than 1.
// The graphs take batched inputs, [N, C, spatial...].
import * as nn from '../nn/index.js';
import { OnnxExportError, type OnnxGraph } from './graph.js';

const at = (name: string, part: string) => (name ? `${name}.${part}` : part);
/** A Slice end past any axis (Slice clamps it to the axis's size). */
const END = Number.MAX_SAFE_INTEGER;

type MaxPool = nn.MaxPool1d | nn.MaxPool2d | nn.MaxPool3d;
type AvgPool = nn.AvgPool1d | nn.AvgPool2d | nn.AvgPool3d;
type AdaptivePool = nn.AdaptiveAvgPool1d | nn.AdaptiveAvgPool2d | nn.AdaptiveAvgPool3d;

/** The values a max pool's export with indices produces, as its forwardWithIndices returns them. */
export interface OnnxMaxPoolOutputs {
  /** The pooled values. */
  values: string;
  /** int64: the flat index of each maximum within its (n, c) input plane, as PyTorch's. */
  indices: string;
}

/** The spatial sizes of `x` (int64 [spatial]). */
const spatialShape = (g: OnnxGraph, x: string) => g.node('Shape', [x], { start: { int: 2 } });
/** The batch and channel sizes of `x` (int64 [2]). */
const leadingShape = (g: OnnxGraph, x: string) => g.node('Shape', [x], { end: { int: 2 } });
const int64Scalar = (g: OnnxGraph, hint: string, v: number) =>
  g.constant(hint, { data: [v], dims: [], type: 'int64' });

/**
 * Circular padding (opset 17's Pad has no wrap mode) as Slice and Concat along each spatial axis,
 * the last axis first as PyTorch's pad lists them: the last `begins[i]` entries of the axis put
 * before it, the first `ends[i]` after it. Sizes stay dynamic.
 */
export function circularPadOnnx(
  g: OnnxGraph,
  x: string,
  begins: readonly number[],
  ends: readonly number[],
  name = '',
): string {
  let y = x;
  for (let i = begins.length - 1; i >= 0; i--) {
    const b = begins[i]!;
    const e = ends[i]!;
    if (b === 0 && e === 0) continue;
    const axis = g.ints(at(name, 'pad_axis'), [2 + i]);
    const parts: string[] = [];
    if (b > 0)
      parts.push(g.node('Slice', [y, g.ints(at(name, 'pad_start'), [-b]), g.ints('end', [END]), axis]));
    parts.push(y);
    if (e > 0) parts.push(g.node('Slice', [y, g.ints('zero', [0]), g.ints(at(name, 'pad_end'), [e]), axis]));
    y = g.node('Concat', parts, { axis: { int: 2 + i } });
  }
  return y;
}

/** MaxPool's or AveragePool's attributes for a pool's window (pads [begin..., end...]). */
function poolAttributes(m: MaxPool | AvgPool) {
  const { kernelSize, stride, padding, dilation } = m.window;
  const average = m instanceof nn.AvgPool1d || m instanceof nn.AvgPool2d || m instanceof nn.AvgPool3d;
  return {
    kernel_shape: { ints: kernelSize },
    strides: { ints: stride },
    pads: { ints: padding.concat(padding) },
    ceil_mode: { int: m.ceilMode ? 1 : 0 },
    ...(average
      ? { count_include_pad: { int: m.countIncludePad ? 1 : 0 } }
      : dilation.some((d) => d !== 1)
        ? { dilations: { ints: dilation } }
        : {}),
  };
}

/** MaxPool or AveragePool; an average pool with divisorOverride as a sum by Conv (see divisorPool). */
export function poolOnnx(m: MaxPool | AvgPool, g: OnnxGraph, x: string, name: string): string {
  const average = m instanceof nn.AvgPool1d || m instanceof nn.AvgPool2d || m instanceof nn.AvgPool3d;
  if (average && m.divisorOverride !== null) return divisorPool(m, g, x, m.divisorOverride, name);
  return g.node(average ? 'AveragePool' : 'MaxPool', [x], poolAttributes(m));
}

/**
 * Each window's sum divided by `divisor` (AveragePool divides by the window): every (n, c) plane
 * made a batch item of one channel, so one Conv with a kernel of ones sums the windows whatever the
 * channel count, the zero padding adding nothing as in PyTorch. With ceilMode the Conv is padded
 * by stride - 1 more at the end, which gives ceil((in + 2p - k) / s) + 1 windows, and a Slice keeps
 * the ceil((in + p) / s) of them that start inside the input or its left padding (PyTorch drops a
 * last window starting further on).
 */
function divisorPool(m: AvgPool, g: OnnxGraph, x: string, divisor: number, name: string): string {
  const { kernelSize, stride, padding } = m.window;
  const spatial = kernelSize.length;
  const planes = g.node('Reshape', [
    x,
    g.node('Concat', [g.ints('planes', [-1, 1]), spatialShape(g, x)], { axis: { int: 0 } }),
  ]);
  const count = kernelSize.reduce((a, b) => a * b, 1);
  const ones = g.constant(at(name, 'ones'), {
    data: new Float32Array(count).fill(1),
    dims: [1, 1, ...kernelSize],
  });
  const ends = m.ceilMode ? padding.map((p, i) => p + stride[i]! - 1) : padding;
  let sum = g.node('Conv', [planes, ones], {
    kernel_shape: { ints: kernelSize },
    strides: { ints: stride },
    pads: { ints: padding.concat(ends) },
  });
  if (m.ceilMode) {
    const windows = g.node('Div', [
      g.node('Add', [
        spatialShape(g, x),
        g.ints(
          'ceil',
          padding.map((p, i) => p + stride[i]! - 1),
        ),
      ]),
      g.ints(at(name, 'stride'), stride),
    ]);
    const axes = g.ints(
      'axes',
      Array.from({ length: spatial }, (_, i) => 2 + i),
    );
    sum = g.node('Slice', [sum, g.ints('zeros', new Array<number>(spatial).fill(0)), windows, axes]);
  }
  const shape = g.node('Concat', [leadingShape(g, x), spatialShape(g, sum)], { axis: { int: 0 } });
  return g.node('Div', [g.node('Reshape', [sum, shape]), g.scalar(at(name, 'divisor'), divisor)]);
}

/**
 * A max pool's forwardWithIndices: ONNX MaxPool's second output counts over the whole
 * [N, C, spatial] tensor, PyTorch's within each (n, c) plane, so the indices are taken modulo the
 * input plane's size (the plane's offset is a multiple of it, the index within it smaller).
 */
export function maxPoolWithIndicesToOnnx(
  pool: nn.MaxPool1d | nn.MaxPool2d | nn.MaxPool3d,
  g: OnnxGraph,
  x: string,
  _name = '',
): OnnxMaxPoolOutputs {
  const [values, flat] = g.nodeN('MaxPool', [x], 2, poolAttributes(pool));
  const plane = g.node('ReduceProd', [spatialShape(g, x)], { keepdims: { int: 1 } });
  return { values: values!, indices: g.node('Mod', [flat!, plane]) };
}

/**
 * MaxUnpool1d/2d/3d from a max pool's values `x` and PyTorch's per-plane `indices`: each plane's
 * offset ((n C + c) times the output plane's size) added to make ONNX's flat indices, then ONNX
 * MaxUnpool to PyTorch's output size: (in - 1) stride - 2 padding + kernel per spatial axis, or
 * `outputSize` (the spatial sizes, or the whole shape, as the layer's forward takes it).
 */
export function maxUnpoolToOnnx(
  unpool: nn.MaxUnpool1d | nn.MaxUnpool2d | nn.MaxUnpool3d,
  g: OnnxGraph,
  x: string,
  indices: string,
  name = '',
  outputSize?: readonly number[],
): string {
  const { kernelSize, stride, padding } = unpool.window;
  const spatial = kernelSize.length;
  let sizes: string;
  if (outputSize === undefined) {
    const scaled = g.node('Mul', [
      g.node('Sub', [spatialShape(g, x), g.ints('one', new Array<number>(spatial).fill(1))]),
      g.ints(at(name, 'stride'), stride),
    ]);
    sizes = g.node('Add', [
      scaled,
      g.ints(
        at(name, 'extent'),
        kernelSize.map((k, i) => k - 2 * padding[i]!),
      ),
    ]);
  } else {
    const given = outputSize.length > spatial ? outputSize.slice(-spatial) : outputSize;
    if (
      outputSize.length > spatial + 2 ||
      given.length !== spatial ||
      !given.every((s) => Number.isInteger(s) && s > 0)
    )
      throw new OnnxExportError(
        `${unpool.constructor.name} ('${name}'): outputSize ${JSON.stringify(outputSize)} must be the ${spatial} spatial sizes (positive integers) or the whole output shape`,
      );
    sizes = g.ints(at(name, 'output_size'), given);
  }
  const shape = g.node('Concat', [leadingShape(g, x), sizes], { axis: { int: 0 } });
  const planeSize = g.node('ReduceProd', [sizes], { keepdims: { int: 1 } });
  const planeCount = g.node('ReduceProd', [leadingShape(g, indices)], { keepdims: { int: 0 } });
  const planeIds = g.node('Range', [int64Scalar(g, 'zero', 0), planeCount, int64Scalar(g, 'one', 1)]);
  const perPlane = g.node(
    'Concat',
    [leadingShape(g, indices), g.ints('ones', new Array<number>(spatial).fill(1))],
    {
      axis: { int: 0 },
    },
  );
  const offsets = g.node('Mul', [g.node('Reshape', [planeIds, perPlane]), planeSize]);
  return g.node('MaxUnpool', [x, g.node('Add', [indices, offsets]), shape], {
    kernel_shape: { ints: kernelSize },
    strides: { ints: stride },
    pads: { ints: padding.concat(padding) },
  });
}

/**
 * Adaptive average pooling: global (GlobalAveragePool) to size 1; to another size, the windows of
 * output i along an axis, [floor(i in / out), ceil((i + 1) in / out)), depend on the input's size,
 * which must be known at export (g.dimsOf: a graph input's declared dims, or g.setDims). An axis
 * whose size divides evenly is one AveragePool (kernel = stride = in / out), another a ReduceMean
 * per window and a Concat; the mean over a box is the mean of the per-axis means.
 */
export function adaptiveOnnx(m: AdaptivePool, g: OnnxGraph, x: string, name: string): string {
  const spatial = m instanceof nn.AdaptiveAvgPool1d ? 1 : m instanceof nn.AdaptiveAvgPool2d ? 2 : 3;
  const out = typeof m.outputSize === 'number' ? new Array<number>(spatial).fill(m.outputSize) : m.outputSize;
  if (out.every((s) => s === 1)) return g.node('GlobalAveragePool', [x]);
  const dims = g.dimsOf(x);
  const ins = dims?.slice(2) ?? [];
  if (!dims || dims.length !== spatial + 2 || !ins.every((d): d is number => typeof d === 'number'))
    throw new OnnxExportError(
      `${m.constructor.name} ('${name}') to an output size of ${JSON.stringify(m.outputSize)} needs the input's ${spatial} spatial sizes at export time (its windows depend on them): '${x}' has ${dims ? `dims ${JSON.stringify(dims)}` : 'no known dims'}; declare fixed spatial dims on the graph input (or record them with g.setDims)`,
    );
  let y = x;
  if (ins.every((n, i) => n % out[i]! === 0)) {
    const kernel = ins.map((n, i) => n / out[i]!);
    y = g.node('AveragePool', [x], { kernel_shape: { ints: kernel }, strides: { ints: kernel } });
  } else {
    ins.forEach((n, i) => {
      const o = out[i]!;
      if (n === o) return;
      const axis = 2 + i;
      if (n % o === 0) {
        const kernel = ins.map((_, j) => (j === i ? n / o : 1));
        y = g.node('AveragePool', [y], { kernel_shape: { ints: kernel }, strides: { ints: kernel } });
        return;
      }
      const axes = g.ints('axis', [axis]);
      const windows = Array.from({ length: o }, (_, k) => {
        const start = Math.floor((k * n) / o);
        const end = Math.ceil(((k + 1) * n) / o);
        const part = g.node('Slice', [y, g.ints('start', [start]), g.ints('end', [end]), axes]);
        return g.node('ReduceMean', [part], { axes: { ints: [axis] }, keepdims: { int: 1 } });
      });
      y = g.node('Concat', windows, { axis: { int: axis } });
    });
  }
  g.setDims(y, [dims[0]!, dims[1]!, ...out]);
  return y;
}
