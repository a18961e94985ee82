// More pooling layers with PyTorch's arguments: adaptive max pooling (with its indices),
// power-average pooling (LPPool) and fractional max pooling (random windows drawn as PyTorch does).
import { Tensor } from '../tensor.js';
import { Module } from './module.js';
import { checksOf } from '../../util/arguments.js';
import { asGiven } from './layer-util.js';
import type { PoolSize1d, PoolSize2d, PoolSize3d } from './pooling.js';
import {
  adaptiveMaxPoolOf,
  adaptiveSizes,
  fractionalMaxPoolOf,
  fractionalSizes,
  lpPoolArgs,
  lpPoolOf,
  returnIndicesOf,
  type FractionalMaxPoolOptions,
  type FractionalSizes,
  type MaxPoolOutput,
  type ReturnIndicesOptions,
} from './functional-pooling.js';

export type { FractionalMaxPoolOptions, MaxPoolOutput, ReturnIndicesOptions } from './functional-pooling.js';

/**
 * A max pool that returns its values or, with returnIndices, [values, indices] from forward; the
 * indices (int64) are flat positions within each input plane, what MaxUnpool takes.
 */
abstract class IndexedMaxPool<R extends boolean> extends Module {
  /** forward returns [values, indices] (PyTorch's return_indices). */
  readonly returnIndices: R;
  protected constructor(options: unknown) {
    super();
    this.returnIndices = returnIndicesOf(checksOf(this.constructor.name), options) as R;
  }
  /** The pooled values and the flat indices of their maxima. */
  abstract forwardWithIndices(x: Tensor): [Tensor, Tensor];
  /** Applies the layer to `x`: the values, or [values, indices] with returnIndices. */
  forward(x: Tensor): MaxPoolOutput<R> {
    const [values, indices] = this.forwardWithIndices(x);
    if (this.returnIndices) return [values, indices] as MaxPoolOutput<R>;
    indices.dispose();
    return values as MaxPoolOutput<R>;
  }
}

/** Adaptive max pooling over `dims` spatial axes: windows [floor(i n / o), ceil((i + 1) n / o)). */
abstract class AdaptiveMaxPooling<R extends boolean> extends IndexedMaxPool<R> {
  /** The output size per axis, checked, null keeping the input's. */
  protected readonly sizes: (number | null)[];
  protected constructor(
    dims: number,
    readonly outputSize: number | (number | null)[],
    options: ReturnIndicesOptions<R>,
  ) {
    super(options);
    const name = this.constructor.name;
    this.sizes = adaptiveSizes(checksOf(name), outputSize, dims);
    this.outputSize = Array.isArray(outputSize) ? [...outputSize] : outputSize;
  }
}

/** Max pooling of [N, C, L] ([C, L]) to a fixed length (torch.nn.AdaptiveMaxPool1d). */
export class AdaptiveMaxPool1d<R extends boolean = false> extends AdaptiveMaxPooling<R> {
  constructor(outputSize: PoolSize1d, options: ReturnIndicesOptions<R> = {}) {
    super(1, outputSize, options);
  }
  /** The pooled values and the flat indices of their maxima (F.adaptiveMaxPool1d's). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return adaptiveMaxPoolOf(this.constructor.name, x, this.sizes);
  }
}
/** Max pooling of [N, C, H, W] ([C, H, W]) to a fixed size [H', W'], null keeping an axis (torch.nn.AdaptiveMaxPool2d). */
export class AdaptiveMaxPool2d<R extends boolean = false> extends AdaptiveMaxPooling<R> {
  constructor(outputSize: number | [number | null, number | null], options: ReturnIndicesOptions<R> = {}) {
    super(2, outputSize, options);
  }
  /** The pooled values and the flat indices of their maxima (F.adaptiveMaxPool2d's). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return adaptiveMaxPoolOf(this.constructor.name, x, this.sizes);
  }
}
/** Max pooling of [N, C, D, H, W] ([C, D, H, W]) to a fixed size [D', H', W'], null keeping an axis (torch.nn.AdaptiveMaxPool3d). */
export class AdaptiveMaxPool3d<R extends boolean = false> extends AdaptiveMaxPooling<R> {
  constructor(
    outputSize: number | [number | null, number | null, number | null],
    options: ReturnIndicesOptions<R> = {},
  ) {
    super(3, outputSize, options);
  }
  /** The pooled values and the flat indices of their maxima (F.adaptiveMaxPool3d's). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return adaptiveMaxPoolOf(this.constructor.name, x, this.sizes);
  }
}

/** Power-average pooling, (sum over the window of x^p)^(1/p), as F.lpPool1d/2d compute it. */
abstract class LPPooling extends Module {
  readonly normType: number;
  readonly kernelSize: number | number[];
  readonly stride: number | number[] | null;
  readonly ceilMode: boolean;
  /** The arguments checked, per axis, as lpPoolOf takes them. */
  protected readonly args: ReturnType<typeof lpPoolArgs>;
  protected constructor(
    dims: number,
    normType: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    ceilMode: boolean,
  ) {
    super();
    this.args = lpPoolArgs(checksOf(this.constructor.name), dims, normType, kernelSize, stride, ceilMode);
    this.normType = normType;
    this.kernelSize = asGiven(kernelSize);
    this.stride = stride == null ? null : asGiven(stride);
    this.ceilMode = ceilMode;
  }
}

/** Power-average pooling of [N, C, L] ([C, L]) (torch.nn.LPPool1d): normType p, windows kernelSize moved by stride (default kernelSize). */
export class LPPool1d extends LPPooling {
  constructor(normType: number, kernelSize: PoolSize1d, stride?: PoolSize1d | null, ceilMode = false) {
    super(1, normType, kernelSize, stride, ceilMode);
  }
  /** Applies the layer to `x` (shapes: see the class), as F.lpPool1d. */
  forward(x: Tensor): Tensor {
    return lpPoolOf(this.constructor.name, x, this.args);
  }
}
/** Power-average pooling of [N, C, H, W] ([C, H, W]) (torch.nn.LPPool2d): normType p, windows [kH, kW] moved by stride (default kernelSize). */
export class LPPool2d extends LPPooling {
  constructor(normType: number, kernelSize: PoolSize2d, stride?: PoolSize2d | null, ceilMode = false) {
    super(2, normType, kernelSize, stride, ceilMode);
  }
  /** Applies the layer to `x` (shapes: see the class), as F.lpPool2d. */
  forward(x: Tensor): Tensor {
    return lpPoolOf(this.constructor.name, x, this.args);
  }
}

/**
 * Fractional max pooling (Graham, 2014): windows of kernelSize at pseudo-random positions that
 * shrink each axis to outputSize (or floor(n outputRatio)), as F.fractionalMaxPool2d/3d. The
 * positions come from options.randomSamples (a buffer `_random_samples`, as PyTorch registers
 * it) or else from samples torch.rand([N, C, dims]) of the input's dtype drawn from the global
 * generator at each forward, as PyTorch draws them, so a seeded run equals PyTorch's.
 */
abstract class FractionalMaxPooling<R extends boolean> extends IndexedMaxPool<R> {
  readonly kernelSize: number | number[];
  readonly outputSize: number | number[] | null;
  readonly outputRatio: number | number[] | null;
  /** The kernel and the output size or ratio per axis, checked. */
  protected readonly sizes: FractionalSizes;
  /** The given samples (the buffer `_random_samples`), or null to draw them at each forward. */
  protected readonly randomSamples: Tensor | null;
  protected constructor(dims: number, kernelSize: number | number[], options: FractionalMaxPoolOptions<R>) {
    super(options);
    const c = checksOf(this.constructor.name);
    this.sizes = fractionalSizes(c, dims, kernelSize, options);
    const { outputSize, outputRatio, randomSamples } = options;
    if (randomSamples != null && !(randomSamples instanceof Tensor))
      c.fail('options.randomSamples', 'a Tensor or null', randomSamples);
    this.randomSamples = randomSamples == null ? null : this.registerBuffer('_random_samples', randomSamples);
    this.kernelSize = asGiven(kernelSize);
    this.outputSize = outputSize === undefined ? null : asGiven(outputSize);
    this.outputRatio = outputRatio === undefined ? null : asGiven(outputRatio);
  }
}

/** Fractional max pooling of [N, C, H, W] ([C, H, W]) (torch.nn.FractionalMaxPool2d; see the options). */
export class FractionalMaxPool2d<R extends boolean = false> extends FractionalMaxPooling<R> {
  constructor(kernelSize: PoolSize2d, options: FractionalMaxPoolOptions<R>) {
    super(2, kernelSize, options);
  }
  /** The pooled values and the flat indices of their maxima (F.fractionalMaxPool2d's). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return fractionalMaxPoolOf(this.constructor.name, x, this.sizes, this.randomSamples);
  }
}
/** Fractional max pooling of [N, C, D, H, W] ([C, D, H, W]) (torch.nn.FractionalMaxPool3d; see the options). */
export class FractionalMaxPool3d<R extends boolean = false> extends FractionalMaxPooling<R> {
  constructor(kernelSize: PoolSize3d, options: FractionalMaxPoolOptions<R>) {
    super(3, kernelSize, options);
  }
  /** The pooled values and the flat indices of their maxima (F.fractionalMaxPool3d's). */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return fractionalMaxPoolOf(this.constructor.name, x, this.sizes, this.randomSamples);
  }
}
