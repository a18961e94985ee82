// Parameter-free layers: activations, pooling, reshaping and containers.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { perAxis } from './layer-util.js';
import { interpolate, type InterpolateOptions } from './functional.js';

/** Elementwise max(x, 0). */
export class ReLU extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.relu(x);
  }
}
/** The Gaussian error linear unit (exact, or the 'tanh' approximation). */
export class GELU extends Module {
  constructor(readonly approximate: 'none' | 'tanh' = 'none') {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.gelu(x, this.approximate);
  }
}
/** Elementwise max(x, 0) + negativeSlope min(x, 0) (torch.nn.LeakyReLU; default slope 0.01). */
export class LeakyReLU extends Module {
  constructor(readonly negativeSlope = 0.01) {
    super();
    checksOf('LeakyReLU').number(negativeSlope, 'negativeSlope');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.leaky_relu(x, this.negativeSlope);
  }
}
/** Elementwise x sigmoid(x), the sigmoid linear unit or swish (torch.nn.SiLU). */
export class SiLU extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.silu(x);
  }
}
/** Elementwise x for x > 0, alpha (exp(x) - 1) otherwise (torch.nn.ELU; default alpha 1). */
export class ELU extends Module {
  constructor(readonly alpha = 1) {
    super();
    checksOf('ELU').number(alpha, 'alpha');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.elu(x, this.alpha);
  }
}
/** Elementwise log(1 + exp(beta x)) / beta, linear where beta x > threshold (torch.nn.Softplus; defaults 1 and 20). */
export class Softplus extends Module {
  constructor(
    readonly beta = 1,
    readonly threshold = 20,
  ) {
    super();
    const c = checksOf('Softplus');
    c.number(beta, 'beta', { above: 0 });
    c.number(threshold, 'threshold');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.softplus(x, this.beta, this.threshold);
  }
}
/** Softmax along `dim` (torch.nn.Softmax; here `dim` defaults to -1, where PyTorch's legacy default guesses). */
export class Softmax extends Module {
  constructor(readonly dim = -1) {
    super();
    checksOf('Softmax').integer(dim, 'dim', { min: -64, max: 63 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.softmax_int(x, this.dim);
  }
}
/** Log-softmax along `dim` (torch.nn.LogSoftmax; `dim` defaults to -1). */
export class LogSoftmax extends Module {
  constructor(readonly dim = -1) {
    super();
    checksOf('LogSoftmax').integer(dim, 'dim', { min: -64, max: 63 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.log_softmax_int(x, this.dim);
  }
}
/**
 * Resizes [N, C, L] or [N, C, H, W] inputs to `size` or by `scaleFactor` per spatial dimension
 * (torch.nn.Upsample): 'nearest' (default), 'linear' (1-d) or 'bilinear' (2-d), with alignCorners
 * for the linear modes.
 */
export class Upsample extends Module {
  readonly options: InterpolateOptions;
  constructor(options: InterpolateOptions) {
    super();
    const c = checksOf('Upsample');
    c.object(options, 'options');
    if ((options.size === undefined) === (options.scaleFactor === undefined))
      c.fail('options', 'one of size and scaleFactor', options);
    for (const [key, values] of [
      ['size', options.size],
      ['scaleFactor', options.scaleFactor],
    ] as const)
      if (values !== undefined) {
        if (!Array.isArray(values) || values.length < 1 || values.length > 2)
          c.fail(`options.${key}`, 'an array of 1 or 2 numbers (one per spatial dimension)', values);
        values.forEach((v, i) =>
          key === 'size'
            ? c.integer(v, `options.size[${i}]`, { min: 1 })
            : c.number(v, `options.scaleFactor[${i}]`, { above: 0 }),
        );
      }
    const mode = options.mode ?? 'nearest';
    if (mode !== 'nearest' && mode !== 'linear' && mode !== 'bilinear')
      c.fail('options.mode', "'nearest', 'linear' or 'bilinear'", mode);
    this.options = { ...options, mode };
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return interpolate(x, this.options);
  }
}
/** Elementwise logistic sigmoid. */
export class Sigmoid extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.sigmoid(x);
  }
}
/** Elementwise hyperbolic tangent. */
export class Tanh extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.tanh(x);
  }
}
/** Returns its input. */
export class Identity extends Module {
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return x.clone();
  }
}
/** Flattens dimensions startDim..endDim (default 1..-1) into one. */
export class Flatten extends Module {
  constructor(
    readonly startDim = 1,
    readonly endDim = -1,
  ) {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return x.flatten(this.startDim, this.endDim);
  }
}
/** A pooling window per spatial axis: kernel size, stride and padding, one number per axis each. */
export interface PoolWindow {
  kernelSize: number[];
  stride: number[];
  padding: number[];
}

/** A size of a 1-d pooling layer: a number or a one-element array, as PyTorch's int or (int,). */
export type PoolSize1d = number | [number];
/** A size of a 2-d pooling layer: one number for both axes, or [H, W]. */
export type PoolSize2d = number | [number, number];
/** A size of a 3-d pooling layer: one number for every axis, or [D, H, W]. */
export type PoolSize3d = number | [number, number, number];

/**
 * Max or average pooling: windows of kernelSize moved by stride (default: kernelSize), the input
 * padded by padding on both sides of each axis (at most half the window). Each is one number for
 * every spatial axis or an array with one per axis, as PyTorch's int or tuple; the fields keep
 * what was given, `window` holds them per axis.
 */
abstract class Pooling extends Module {
  readonly kernelSize: number | number[];
  readonly stride: number | number[];
  readonly padding: number | number[];
  /** kernelSize, stride and padding per spatial axis. */
  readonly window: PoolWindow;

  protected constructor(
    dims: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    padding: number | number[],
  ) {
    super();
    const name = this.constructor.name;
    const c = checksOf(name);
    const kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
    const strides = stride == null ? kernel : perAxis(c, stride, 'stride', dims, 1);
    const pads = perAxis(c, padding, 'padding', dims, 0);
    pads.forEach((p, i) => {
      if (p > Math.floor(kernel[i]! / 2))
        throw new ArgumentError(
          `${name}: padding ${p} of spatial axis ${i} must be at most half the kernel size ${kernel[i]} (rounded down)`,
        );
    });
    const copy = (v: number | number[]) => (Array.isArray(v) ? [...v] : v);
    this.kernelSize = copy(kernelSize);
    this.stride = stride == null ? copy(kernelSize) : copy(stride);
    this.padding = copy(padding);
    this.window = { kernelSize: kernel, stride: strides, padding: pads };
  }
  abstract forward(x: Tensor): Tensor;
}
/** 1D max pooling over [batch, channels, length] ([channels, length] unbatched) (torch.nn.MaxPool1d). */
export class MaxPool1d extends Pooling {
  constructor(kernelSize: PoolSize1d, stride?: PoolSize1d | null, padding: PoolSize1d = 0) {
    super(1, kernelSize, stride, padding);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { kernelSize, stride, padding } = this.window;
    return aten.max_pool1d(x, kernelSize, stride, padding);
  }
}
/**
 * 2D max pooling over [batch, channels, H, W] ([channels, H, W] unbatched) (torch.nn.MaxPool2d):
 * windows kernelSize [kH, kW] (or one number for both), output sizes
 * floor((n + 2 padding - k) / stride) + 1 per axis.
 */
export class MaxPool2d extends Pooling {
  constructor(kernelSize: PoolSize2d, stride?: PoolSize2d | null, padding: PoolSize2d = 0) {
    super(2, kernelSize, stride, padding);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { kernelSize, stride, padding } = this.window;
    return aten.max_pool2d(x, kernelSize, stride, padding);
  }
}
/** 3D max pooling over [batch, channels, D, H, W] ([channels, D, H, W] unbatched), windows [kD, kH, kW] or one number for all three (torch.nn.MaxPool3d). */
export class MaxPool3d extends Pooling {
  constructor(kernelSize: PoolSize3d, stride?: PoolSize3d | null, padding: PoolSize3d = 0) {
    super(3, kernelSize, stride, padding);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { kernelSize, stride, padding } = this.window;
    return aten.max_pool3d(x, kernelSize, stride, padding);
  }
}
/** 1D average pooling over [batch, channels, length], the padding counted in the mean (torch.nn.AvgPool1d). */
export class AvgPool1d extends Pooling {
  constructor(kernelSize: PoolSize1d, stride?: PoolSize1d | null, padding: PoolSize1d = 0) {
    super(1, kernelSize, stride, padding);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { kernelSize, stride, padding } = this.window;
    return aten.avg_pool1d(x, kernelSize, stride, padding);
  }
}
/** 2D average pooling over [batch, channels, H, W], windows [kH, kW] or one number for both, the padding counted in the mean (torch.nn.AvgPool2d). */
export class AvgPool2d extends Pooling {
  constructor(kernelSize: PoolSize2d, stride?: PoolSize2d | null, padding: PoolSize2d = 0) {
    super(2, kernelSize, stride, padding);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { kernelSize, stride, padding } = this.window;
    return aten.avg_pool2d(x, kernelSize, stride, padding);
  }
}
/** 3D average pooling over [batch, channels, D, H, W], windows [kD, kH, kW] or one number for all three, the padding counted in the mean (torch.nn.AvgPool3d). */
export class AvgPool3d extends Pooling {
  constructor(kernelSize: PoolSize3d, stride?: PoolSize3d | null, padding: PoolSize3d = 0) {
    super(3, kernelSize, stride, padding);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { kernelSize, stride, padding } = this.window;
    return aten.avg_pool3d(x, kernelSize, stride, padding);
  }
}
/** Average pooling of [batch, channels, D, H, W] to a fixed output size [D', H', W'] whatever the input size (torch.nn.AdaptiveAvgPool3d). */
export class AdaptiveAvgPool3d extends Module {
  constructor(readonly outputSize: number | [number, number, number]) {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.adaptive_avg_pool3d(x, this.outputSize);
  }
}
/** Average pooling to a fixed output size [H, W] whatever the input size. */
export class AdaptiveAvgPool2d extends Module {
  constructor(readonly outputSize: number | [number, number]) {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.adaptive_avg_pool2d(x, this.outputSize);
  }
}
/** Average pooling to a fixed output length. */
export class AdaptiveAvgPool1d extends Module {
  constructor(readonly outputSize: number) {
    super();
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.adaptive_avg_pool1d(x, this.outputSize);
  }
}

/** A module whose forward takes one tensor and returns one tensor. */
export type Layer = Module & {
  /** Applies the layer. */
  forward(x: Tensor): Tensor;
};

/** Applies its layers in order, freeing each intermediate output as soon as the next exists. */
export class Sequential extends Module {
  readonly layers: Layer[];
  constructor(...layers: Layer[]) {
    super();
    this.layers = layers.map((layer, i) => this.registerModule(String(i), layer));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    let out = x;
    for (const layer of this.layers) {
      const next = layer.forward(out);
      if (out !== x) out.dispose();
      out = next;
    }
    return out === x ? x.clone() : out;
  }
}

/** Holds submodules by index (names '0', '1', ...), as nn.ModuleList. */
export class ModuleList<M extends Module = Module> extends Module {
  readonly items: M[];
  constructor(items: M[]) {
    super();
    this.items = items.map((m, i) => this.registerModule(String(i), m));
  }
  get length(): number {
    return this.items.length;
  }
  /** The item at index i (0-based); RangeError when out of range. */
  at(i: number): M {
    const m = this.items[i];
    if (!m) throw new RangeError(`ModuleList index ${i} out of range (length ${this.items.length})`);
    return m;
  }
}
