// The pooling layers: max and average pooling with windows per axis, and adaptive average pooling,
// with PyTorch's options (max unpooling is in unpooling.ts).
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { asGiven, perAxis, poolSizes } from './layer-util.js';

/** A pooling window per spatial axis: kernel size, stride, padding and dilation, one number per axis each. */
export interface PoolWindow {
  kernelSize: number[];
  stride: number[];
  padding: number[];
  /** The spacing of a max pool's window elements (1 for the average pools). */
  dilation: number[];
}

/** A size of a 1-d pooling layer: a number or a one-element array, as PyTorch's int or (int,). */
export type PoolSize1d = number | [number];
/** A size of a 2-d pooling layer: one number for both axes, or [H, W]. */
export type PoolSize2d = number | [number, number];
/** A size of a 3-d pooling layer: one number for every axis, or [D, H, W]. */
export type PoolSize3d = number | [number, number, number];

/** Options of the max pools (PyTorch's dilation and ceil_mode; its return_indices is forwardWithIndices). */
export interface MaxPoolOptions {
  /** Spacing of the window's elements: one number, or one per axis (default 1). */
  dilation?: number | number[];
  /** Output sizes rounded up instead of down, a last window starting inside the input or its left padding (default false). */
  ceilMode?: boolean;
}

/** Options of the average pools (PyTorch's ceil_mode, count_include_pad and divisor_override). */
export interface AvgPoolOptions {
  /** Output sizes rounded up instead of down (default false). */
  ceilMode?: boolean;
  /** Whether the zero padding counts in each window's mean (default true, as PyTorch). */
  countIncludePad?: boolean;
  /** Divide every window's sum by this instead of its size (2-d and 3-d only, as PyTorch; default null). */
  divisorOverride?: number | null;
}

/**
 * Max or average pooling: windows of kernelSize moved by stride (default: kernelSize), the input
 * padded by padding on both sides of each axis (at most half the window, dilated). Each is one
 * number for every spatial axis or an array with one per axis, as PyTorch's int or tuple; the
 * fields keep what was given, `window` holds them per axis.
 */
abstract class Pooling extends Module {
  readonly kernelSize: number | number[];
  readonly stride: number | number[];
  readonly padding: number | number[];
  /** Output sizes rounded up (ceil_mode). */
  readonly ceilMode: boolean;
  /** kernelSize, stride, padding and dilation per spatial axis. */
  readonly window: PoolWindow;

  protected constructor(
    dims: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    padding: number | number[],
    options: { dilation?: number | number[]; ceilMode?: boolean },
  ) {
    super();
    const name = this.constructor.name;
    const c = checksOf(name);
    const {
      kernelSize: kernel,
      stride: strides,
      padding: pads,
    } = poolSizes(c, dims, kernelSize, stride, padding);
    const o = c.object(options, 'options');
    const dilation =
      o.dilation === undefined
        ? new Array<number>(dims).fill(1)
        : perAxis(c, o.dilation, 'options.dilation', dims, 1);
    if (o.ceilMode !== undefined && typeof o.ceilMode !== 'boolean')
      c.fail('options.ceilMode', 'true or false', o.ceilMode);
    pads.forEach((p, i) => {
      // PyTorch's bound: half the dilated window, (k - 1) d + 1, rounded down
      const half = Math.floor(((kernel[i]! - 1) * dilation[i]! + 1) / 2);
      if (p > half)
        throw new ArgumentError(
          `${name}: padding ${p} of spatial axis ${i} must be at most half the ${dilation[i]! > 1 ? 'dilated ' : ''}kernel size ${(kernel[i]! - 1) * dilation[i]! + 1} (rounded down)`,
        );
    });
    this.kernelSize = asGiven(kernelSize);
    this.stride = asGiven(stride ?? kernelSize);
    this.padding = asGiven(padding);
    this.ceilMode = o.ceilMode === true;
    this.window = { kernelSize: kernel, stride: strides, padding: pads, dilation };
  }
  abstract forward(x: Tensor): Tensor;
}

/** The max pools: their dilation, as given (default 1). */
abstract class MaxPooling extends Pooling {
  readonly dilation: number | number[];
  protected constructor(
    dims: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    padding: number | number[],
    options: MaxPoolOptions,
  ) {
    super(dims, kernelSize, stride, padding, options);
    this.dilation = asGiven(options.dilation ?? 1);
  }
  /** The ATen call with the window's sizes per axis. */
  protected pool(
    op: (x: Tensor, k: number[], s: number[], p: number[], d: number[], ceil: boolean) => Tensor,
    x: Tensor,
  ): Tensor {
    const { kernelSize, stride, padding, dilation } = this.window;
    return op(x, kernelSize, stride, padding, dilation, this.ceilMode);
  }
  /**
   * The pooled values and, for each, the flat index of its maximum within its input plane
   * (int64, the output's shape): PyTorch's `return_indices=True`, what MaxUnpool takes.
   */
  abstract forwardWithIndices(x: Tensor): [Tensor, Tensor];
  /** The ATen call returning the indices too. */
  protected poolWithIndices(
    op: (x: Tensor, k: number[], s: number[], p: number[], d: number[], ceil: boolean) => [Tensor, Tensor],
    x: Tensor,
  ): [Tensor, Tensor] {
    const { kernelSize, stride, padding, dilation } = this.window;
    return op(x, kernelSize, stride, padding, dilation, this.ceilMode);
  }
}

/** The average pools: whether padding counts in the mean, and a fixed divisor. */
abstract class AvgPooling extends Pooling {
  readonly countIncludePad: boolean;
  readonly divisorOverride: number | null;
  protected constructor(
    dims: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    padding: number | number[],
    options: AvgPoolOptions,
  ) {
    // checked before super() reads ceilMode from it
    checksOf(new.target.name).object(options, 'options');
    super(dims, kernelSize, stride, padding, { ceilMode: options.ceilMode });
    const c = checksOf(this.constructor.name);
    if (options.countIncludePad !== undefined && typeof options.countIncludePad !== 'boolean')
      c.fail('options.countIncludePad', 'true or false', options.countIncludePad);
    this.countIncludePad = options.countIncludePad ?? true;
    const divisor = options.divisorOverride ?? null;
    if (divisor !== null) {
      if (dims === 1) c.fail('options.divisorOverride', 'null (AvgPool1d has none, as in PyTorch)', divisor);
      c.integer(divisor, 'options.divisorOverride', { min: 1 });
    }
    this.divisorOverride = divisor;
  }
  /** The window's sizes per axis and the mean's settings, in ATen's order. */
  protected args(): [number[], number[], number[], boolean, boolean] {
    const { kernelSize, stride, padding } = this.window;
    return [kernelSize, stride, padding, this.ceilMode, this.countIncludePad];
  }
}

/** 1D max pooling over [batch, channels, length] ([channels, length] unbatched) (torch.nn.MaxPool1d). */
export class MaxPool1d extends MaxPooling {
  constructor(
    kernelSize: PoolSize1d,
    stride?: PoolSize1d | null,
    padding: PoolSize1d = 0,
    options: MaxPoolOptions = {},
  ) {
    super(1, kernelSize, stride, padding, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.pool(aten.max_pool1d, x);
  }
  /** The pooled values and the flat indices of their maxima (see MaxPooling). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return this.poolWithIndices(aten.max_pool1d_with_indices, x);
  }
}
/**
 * 2D max pooling over [batch, channels, H, W] ([channels, H, W] unbatched) (torch.nn.MaxPool2d):
 * windows kernelSize [kH, kW] (or one number for both), output sizes
 * floor((n + 2 padding - dilation (k - 1) - 1) / stride) + 1 per axis (ceil with ceilMode).
 */
export class MaxPool2d extends MaxPooling {
  constructor(
    kernelSize: PoolSize2d,
    stride?: PoolSize2d | null,
    padding: PoolSize2d = 0,
    options: MaxPoolOptions = {},
  ) {
    super(2, kernelSize, stride, padding, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.pool(aten.max_pool2d, x);
  }
  /** The pooled values and the flat indices of their maxima (see MaxPooling). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return this.poolWithIndices(aten.max_pool2d_with_indices, x);
  }
}
/** 3D max pooling over [batch, channels, D, H, W] ([channels, D, H, W] unbatched), windows [kD, kH, kW] or one number for all three (torch.nn.MaxPool3d). */
export class MaxPool3d extends MaxPooling {
  constructor(
    kernelSize: PoolSize3d,
    stride?: PoolSize3d | null,
    padding: PoolSize3d = 0,
    options: MaxPoolOptions = {},
  ) {
    super(3, kernelSize, stride, padding, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.pool(aten.max_pool3d, x);
  }
  /** The pooled values and the flat indices of their maxima (see MaxPooling). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return this.poolWithIndices(aten.max_pool3d_with_indices, x);
  }
}
/** 1D average pooling over [batch, channels, length], the padding counted in the mean unless countIncludePad is false (torch.nn.AvgPool1d). */
export class AvgPool1d extends AvgPooling {
  constructor(
    kernelSize: PoolSize1d,
    stride?: PoolSize1d | null,
    padding: PoolSize1d = 0,
    options: AvgPoolOptions = {},
  ) {
    super(1, kernelSize, stride, padding, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.avg_pool1d(x, ...this.args());
  }
}
/** 2D average pooling over [batch, channels, H, W], windows [kH, kW] or one number for both, the padding counted in the mean unless countIncludePad is false (torch.nn.AvgPool2d). */
export class AvgPool2d extends AvgPooling {
  constructor(
    kernelSize: PoolSize2d,
    stride?: PoolSize2d | null,
    padding: PoolSize2d = 0,
    options: AvgPoolOptions = {},
  ) {
    super(2, kernelSize, stride, padding, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.avg_pool2d(x, ...this.args(), this.divisorOverride);
  }
}
/** 3D average pooling over [batch, channels, D, H, W], windows [kD, kH, kW] or one number for all three, the padding counted in the mean unless countIncludePad is false (torch.nn.AvgPool3d). */
export class AvgPool3d extends AvgPooling {
  constructor(
    kernelSize: PoolSize3d,
    stride?: PoolSize3d | null,
    padding: PoolSize3d = 0,
    options: AvgPoolOptions = {},
  ) {
    super(3, kernelSize, stride, padding, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.avg_pool3d(x, ...this.args(), this.divisorOverride);
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
