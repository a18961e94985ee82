// The max unpooling layers (torch.nn.MaxUnpool1d/2d/3d): a max pool's values put back at the
// indices it returned, with PyTorch's choice of output size.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { asGiven, checkRank, checkTensor, poolSizes } from './layer-util.js';
import type { PoolSize1d, PoolSize2d, PoolSize3d, PoolWindow } from './pooling.js';
/**
 * The inverse of a max pool (torch.nn.MaxUnpool1d/2d/3d): each value put back at the flat index its
 * max pool gave, zeros elsewhere. The output size per axis defaults to (n - 1) stride - 2 padding +
 * kernelSize; `outputSize` (the spatial sizes, or the whole shape) chooses among the sizes a pool
 * could have come from, as PyTorch's output_size.
 */
abstract class MaxUnpooling extends Module {
  readonly kernelSize: number | number[];
  readonly stride: number | number[];
  readonly padding: number | number[];
  /** kernelSize, stride and padding per spatial axis (dilation 1). */
  readonly window: PoolWindow;

  protected constructor(
    private readonly dims: number,
    kernelSize: number | number[],
    stride: number | number[] | null | undefined,
    padding: number | number[],
  ) {
    super();
    const sizes = poolSizes(checksOf(this.constructor.name), dims, kernelSize, stride, padding);
    this.kernelSize = asGiven(kernelSize);
    this.stride = asGiven(stride ?? kernelSize);
    this.padding = asGiven(padding);
    this.window = { ...sizes, dilation: new Array<number>(dims).fill(1) };
  }

  /**
   * x of the layer's rank (libtorch's unpool kernels index the spatial sizes unchecked, and a
   * 0-d input ends the process) and int64 indices of x's shape, as the max pool returns them.
   */
  protected checkInputs(x: Tensor, indices: Tensor): void {
    const name = this.constructor.name;
    checkTensor(name, indices, 'indices');
    checkRank(name, x, this.dims + 2, 'batch, channels and the spatial axes');
    const a = x.shape.join(', ');
    const b = indices.shape.join(', ');
    if (a !== b || indices.dtype !== 'int64')
      throw new ArgumentError(
        `${name}: indices must be int64 of the input's shape [${a}] (as forwardWithIndices returns them), got ${indices.dtype} [${b}]`,
      );
  }

  /** The spatial output sizes: the default, or `outputSize` checked against the sizes a pool allows. */
  protected outputSizes(x: Tensor, outputSize?: number[]): number[] {
    const name = this.constructor.name;
    checkTensor(name, x);
    const { kernelSize, stride, padding } = this.window;
    const spatial = x.shape.slice(-this.dims);
    const defaults = spatial.map((n, i) => (n - 1) * stride[i]! - 2 * padding[i]! + kernelSize[i]!);
    if (outputSize === undefined) return defaults;
    const given =
      outputSize.length === this.dims + 2 || outputSize.length === this.dims + 1
        ? outputSize.slice(-this.dims)
        : outputSize;
    if (given.length !== this.dims)
      throw new ArgumentError(
        `${name}: outputSize has ${outputSize.length} sizes; give the ${this.dims} spatial sizes or the whole output shape`,
      );
    given.forEach((size, i) => {
      const low = defaults[i]! - stride[i]!;
      const high = defaults[i]! + stride[i]!;
      if (!Number.isInteger(size) || size <= low || size >= high)
        throw new ArgumentError(
          `${name}: outputSize ${JSON.stringify(given)} is not a size a pool gives this input from: spatial axis ${i} must lie between ${low} and ${high}, exclusive`,
        );
    });
    return given;
  }

  /** Puts `x`'s values back at `indices` (the max pool's forwardWithIndices), zeros elsewhere. */
  abstract forward(x: Tensor, indices: Tensor, outputSize?: number[]): Tensor;
}

/** Max unpooling of [batch, channels, length] ([channels, length] unbatched) (torch.nn.MaxUnpool1d). */
export class MaxUnpool1d extends MaxUnpooling {
  constructor(kernelSize: PoolSize1d, stride?: PoolSize1d | null, padding: PoolSize1d = 0) {
    super(1, kernelSize, stride, padding);
  }
  /** Applies the layer (shapes: see the class). */
  forward(x: Tensor, indices: Tensor, outputSize?: number[]): Tensor {
    this.checkInputs(x, indices);
    const [length] = this.outputSizes(x, outputSize);
    // as PyTorch's max_unpool1d: a 2-d unpool over a trailing axis of size 1
    const xs = x.unsqueeze(-1);
    const is = indices.unsqueeze(-1);
    const wide = aten.max_unpool2d(xs, is, [length!, 1]);
    try {
      return wide.squeeze(-1);
    } finally {
      for (const t of [xs, is, wide]) t.dispose();
    }
  }
}
/** Max unpooling of [batch, channels, H, W] ([channels, H, W] unbatched) (torch.nn.MaxUnpool2d). */
export class MaxUnpool2d extends MaxUnpooling {
  constructor(kernelSize: PoolSize2d, stride?: PoolSize2d | null, padding: PoolSize2d = 0) {
    super(2, kernelSize, stride, padding);
  }
  /** Applies the layer (shapes: see the class). */
  forward(x: Tensor, indices: Tensor, outputSize?: number[]): Tensor {
    this.checkInputs(x, indices);
    return aten.max_unpool2d(x, indices, this.outputSizes(x, outputSize));
  }
}
/** Max unpooling of [batch, channels, D, H, W] ([channels, D, H, W] unbatched) (torch.nn.MaxUnpool3d). */
export class MaxUnpool3d extends MaxUnpooling {
  constructor(kernelSize: PoolSize3d, stride?: PoolSize3d | null, padding: PoolSize3d = 0) {
    super(3, kernelSize, stride, padding);
  }
  /** Applies the layer (shapes: see the class). */
  forward(x: Tensor, indices: Tensor, outputSize?: number[]): Tensor {
    this.checkInputs(x, indices);
    const { stride, padding } = this.window;
    return aten.max_unpool3d(x, indices, this.outputSizes(x, outputSize), stride, padding);
  }
}
