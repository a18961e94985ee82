// More pooling layers with PyTorch's arguments: adaptive max pooling (with its indices),
// power-average pooling (LPPool) and fractional max pooling (random windows drawn as PyTorch does).
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { rand } from '../creation.js';
import { tidy } from '../scope.js';
import { Module } from './module.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { asGiven, checkRank, perAxis } from './layer-util.js';
import type { PoolSize1d, PoolSize2d, PoolSize3d } from './pooling.js';

/** The options of the adaptive and fractional max pools: PyTorch's return_indices. */
export interface ReturnIndicesOptions<R extends boolean = false> {
  /** forward returns [values, indices] instead of the values (default false); forwardWithIndices always does. */
  returnIndices?: R;
}

/** What forward returns: the values, or [values, indices] with returnIndices. */
export type MaxPoolOutput<R extends boolean> = R extends true ? [Tensor, Tensor] : Tensor;

/** The returnIndices flag, checked. */
function returnIndicesOf(c: ArgumentChecks, options: unknown): boolean {
  const o = c.object(options, 'options');
  if (o.returnIndices !== undefined && typeof o.returnIndices !== 'boolean')
    c.fail('options.returnIndices', 'true or false', o.returnIndices);
  return o.returnIndices === true;
}

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

/** An adaptive pool's output size per axis: a number for all, or one per axis, null keeping the input's size. */
function adaptiveSizes(c: ArgumentChecks, outputSize: unknown, dims: number): (number | null)[] {
  if (typeof outputSize === 'number')
    return new Array<number>(dims).fill(c.integer(outputSize, 'outputSize', { min: 1 }));
  if (!Array.isArray(outputSize) || outputSize.length !== dims)
    c.fail(
      'outputSize',
      `an integer >= 1 or an array of ${dims} of them or null (one per spatial axis)`,
      outputSize,
    );
  return (outputSize as unknown[]).map((v, i) =>
    v === null ? null : c.integer(v, `outputSize[${i}]`, { min: 1 }),
  );
}

/** Adaptive max pooling over `dims` spatial axes: windows [floor(i n / o), ceil((i + 1) n / o)). */
abstract class AdaptiveMaxPooling<R extends boolean> extends IndexedMaxPool<R> {
  private readonly sizes: (number | null)[];
  protected constructor(
    private readonly dims: number,
    readonly outputSize: number | (number | null)[],
    options: ReturnIndicesOptions<R>,
  ) {
    super(options);
    const name = this.constructor.name;
    this.sizes = adaptiveSizes(checksOf(name), outputSize, dims);
    this.outputSize = Array.isArray(outputSize) ? [...outputSize] : outputSize;
  }
  /** The output size per axis, null taken from `x` (as PyTorch's None). */
  protected sizesFor(x: Tensor): number[] {
    const layout = ['N, C, L', 'N, C, H, W', 'N, C, D, H, W'][this.dims - 1]!;
    checkRank(this.constructor.name, x, this.dims + 2, layout);
    const spatial = x.shape.slice(-this.dims);
    return this.sizes.map((s, i) => s ?? spatial[i]!);
  }
}

/** Max pooling of [N, C, L] ([C, L]) to a fixed length (torch.nn.AdaptiveMaxPool1d). */
export class AdaptiveMaxPool1d<R extends boolean = false> extends AdaptiveMaxPooling<R> {
  constructor(outputSize: PoolSize1d, options: ReturnIndicesOptions<R> = {}) {
    super(1, outputSize, options);
  }
  /** The pooled values and the flat indices of their maxima. */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return aten.adaptive_max_pool1d(x, this.sizesFor(x));
  }
}
/** Max pooling of [N, C, H, W] ([C, H, W]) to a fixed size [H', W'], null keeping an axis (torch.nn.AdaptiveMaxPool2d). */
export class AdaptiveMaxPool2d<R extends boolean = false> extends AdaptiveMaxPooling<R> {
  constructor(outputSize: number | [number | null, number | null], options: ReturnIndicesOptions<R> = {}) {
    super(2, outputSize, options);
  }
  /** The pooled values and the flat indices of their maxima. */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return aten.adaptive_max_pool2d(x, this.sizesFor(x));
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
  /** The pooled values and the flat indices of their maxima. */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return aten.adaptive_max_pool3d(x, this.sizesFor(x));
  }
}

/**
 * Power-average pooling, (sum over the window of x^p)^(1/p), as PyTorch computes it: an average
 * pool of x^p times the window size (no padding), negative sums set to 0, then the 1/p power.
 */
abstract class LPPooling extends Module {
  readonly normType: number;
  readonly kernelSize: number | number[];
  readonly stride: number | number[] | null;
  readonly ceilMode: boolean;
  protected readonly kernel: number[];
  protected readonly strides: number[];
  protected constructor(
    dims: number,
    normType: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    ceilMode: boolean,
  ) {
    super();
    const c = checksOf(this.constructor.name);
    this.normType = c.number(normType, 'normType', { above: 0 });
    this.kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
    this.strides = stride == null ? this.kernel : perAxis(c, stride, 'stride', dims, 1);
    if (typeof ceilMode !== 'boolean') c.fail('ceilMode', 'true or false', ceilMode);
    this.kernelSize = asGiven(kernelSize);
    this.stride = stride == null ? null : asGiven(stride);
    this.ceilMode = ceilMode;
  }
  /** The power average from the average pool `avg` of x^p (PyTorch's lp_pool formula). */
  protected power(x: Tensor, avg: (xp: Tensor) => Tensor): Tensor {
    return tidy(() => {
      const out = avg(x.pow(this.normType));
      const size = this.kernel.reduce((a, b) => a * b, 1);
      return out
        .sign()
        .mul(out.abs().relu())
        .mul(size)
        .pow(1 / this.normType);
    });
  }
}

/** Power-average pooling of [N, C, L] ([C, L]) (torch.nn.LPPool1d): normType p, windows kernelSize moved by stride (default kernelSize). */
export class LPPool1d extends LPPooling {
  constructor(normType: number, kernelSize: PoolSize1d, stride?: PoolSize1d | null, ceilMode = false) {
    super(1, normType, kernelSize, stride, ceilMode);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.power(x, (xp) => aten.avg_pool1d(xp, this.kernel, this.strides, [0], this.ceilMode, true));
  }
}
/** Power-average pooling of [N, C, H, W] ([C, H, W]) (torch.nn.LPPool2d): normType p, windows [kH, kW] moved by stride (default kernelSize). */
export class LPPool2d extends LPPooling {
  constructor(normType: number, kernelSize: PoolSize2d, stride?: PoolSize2d | null, ceilMode = false) {
    super(2, normType, kernelSize, stride, ceilMode);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.power(x, (xp) =>
      aten.avg_pool2d(xp, this.kernel, this.strides, [0, 0], this.ceilMode, true, null),
    );
  }
}

/** Options of the fractional max pools: the output size or its ratio to the input's (one of them), and returnIndices. */
export interface FractionalMaxPoolOptions<R extends boolean = false> extends ReturnIndicesOptions<R> {
  /** The output's spatial size: one number for every axis, or one per axis. */
  outputSize?: number | number[];
  /** The output's size as a fraction in (0, 1) of the input's: one number for every axis, or one per axis. */
  outputRatio?: number | number[];
}

/**
 * Fractional max pooling (Graham, 2014): windows of kernelSize at pseudo-random positions that
 * shrink each axis to outputSize (or floor(n outputRatio)). The positions come from samples
 * torch.rand([N, C, dims]) of the input's dtype drawn from the global generator at each forward,
 * as PyTorch's F.fractional_max_pool draws them, so a seeded run equals PyTorch's.
 */
abstract class FractionalMaxPooling<R extends boolean> extends IndexedMaxPool<R> {
  readonly kernelSize: number | number[];
  readonly outputSize: number | number[] | null;
  readonly outputRatio: number | number[] | null;
  private readonly kernel: number[];
  protected constructor(
    private readonly dims: number,
    kernelSize: number | number[],
    options: FractionalMaxPoolOptions<R>,
  ) {
    super(options);
    const c = checksOf(this.constructor.name);
    this.kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
    const { outputSize, outputRatio } = options;
    if ((outputSize === undefined) === (outputRatio === undefined))
      throw new ArgumentError(
        `${this.constructor.name}: give one of options.outputSize and options.outputRatio (got ${outputSize === undefined ? 'neither' : 'both'})`,
      );
    if (outputSize !== undefined) perAxis(c, outputSize, 'options.outputSize', dims, 1);
    if (outputRatio !== undefined) {
      const expected = `a number in (0, 1) or an array of ${dims} of them (one per spatial axis)`;
      if (typeof outputRatio !== 'number' && (!Array.isArray(outputRatio) || outputRatio.length !== dims))
        c.fail('options.outputRatio', expected, outputRatio);
      const ratios = typeof outputRatio === 'number' ? [outputRatio] : outputRatio;
      ratios.forEach((r) => {
        if (typeof r !== 'number' || !(r > 0 && r < 1)) c.fail('options.outputRatio', expected, outputRatio);
      });
    }
    this.kernelSize = asGiven(kernelSize);
    this.outputSize = outputSize === undefined ? null : asGiven(outputSize);
    this.outputRatio = outputRatio === undefined ? null : asGiven(outputRatio);
  }
  /** ATen's op with the output size for `x` and freshly drawn samples. */
  protected pool(
    x: Tensor,
    op: (x: Tensor, k: number[], size: number[], samples: Tensor) => [Tensor, Tensor],
  ): [Tensor, Tensor] {
    const name = this.constructor.name;
    checkRank(name, x, this.dims + 2, this.dims === 2 ? 'N, C, H, W' : 'N, C, D, H, W');
    const spatial = x.shape.slice(-this.dims);
    const per = (v: number | number[]) => (typeof v === 'number' ? new Array<number>(this.dims).fill(v) : v);
    const size =
      this.outputSize !== null
        ? per(this.outputSize)
        : per(this.outputRatio!).map((r, i) => Math.trunc(spatial[i]! * r));
    const batch = x.ndim === this.dims + 2 ? x.shape[0]! : 1;
    const channels = x.shape[x.ndim - this.dims - 1]!;
    // drawn here, in PyTorch's order and dtype, so that a seeded generator gives PyTorch's windows
    const samples = rand([batch, channels, this.dims], x.dtype, x.device.name);
    try {
      return op(x, this.kernel, size, samples);
    } finally {
      samples.dispose();
    }
  }
}

/** Fractional max pooling of [N, C, H, W] ([C, H, W]) (torch.nn.FractionalMaxPool2d; see the options). */
export class FractionalMaxPool2d<R extends boolean = false> extends FractionalMaxPooling<R> {
  constructor(kernelSize: PoolSize2d, options: FractionalMaxPoolOptions<R>) {
    super(2, kernelSize, options);
  }
  /** The pooled values and the flat indices of their maxima. */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return this.pool(x, aten.fractional_max_pool2d);
  }
}
/** Fractional max pooling of [N, C, D, H, W] ([C, D, H, W]) (torch.nn.FractionalMaxPool3d; see the options). */
export class FractionalMaxPool3d<R extends boolean = false> extends FractionalMaxPooling<R> {
  constructor(kernelSize: PoolSize3d, options: FractionalMaxPoolOptions<R>) {
    super(3, kernelSize, options);
  }
  /** The pooled values and the flat indices of their maxima. */
  forwardWithIndices(x: Tensor): [Tensor, Tensor] {
    return this.pool(x, aten.fractional_max_pool3d);
  }
}
