// Sliding blocks: unfold (ATen's im2col) cuts an image into the blocks a convolution sees, fold
// (col2im) sums such blocks back into an image, as torch.nn.Unfold/Fold and F.unfold/F.fold.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { asGiven, checkRank, perAxis } from './layer-util.js';

/** A size per spatial axis of fold and unfold: one number for both, or [H, W]. */
export type BlockSize = number | [number, number];

/** The options of unfold and fold other than the sizes: PyTorch's dilation, padding and stride. */
export interface BlockOptions {
  /** Spacing of a block's elements (default 1). */
  dilation?: BlockSize;
  /** Zeros added on both sides of each spatial axis (default 0). */
  padding?: BlockSize;
  /** Step between blocks (default 1). */
  stride?: BlockSize;
}

/** The block sizes per axis in ATen's order (kernel, dilation, padding, stride), checked. */
function blockArgs(
  c: ArgumentChecks,
  kernelSize: unknown,
  options: unknown,
): [number[], number[], number[], number[]] {
  const o = c.object(options, 'options');
  return [
    perAxis(c, kernelSize, 'kernelSize', 2, 1),
    perAxis(c, o.dilation ?? 1, 'options.dilation', 2, 1),
    perAxis(c, o.padding ?? 0, 'options.padding', 2, 0),
    perAxis(c, o.stride ?? 1, 'options.stride', 2, 1),
  ];
}

/**
 * The sliding blocks of `input` [N, C, H, W] ([C, H, W] unbatched) as columns, as F.unfold:
 * [N, C kH kW, L], L the number of block positions, prod over the axes of
 * floor((n + 2 padding - dilation (k - 1) - 1) / stride) + 1.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * torch.tidy(() => {
 *   const x = torch.randn([1, 3, 4, 4]);
 *   const cols = torch.nn.functional.unfold(x, 2, { stride: 2 }); // [1, 12, 4]
 *   const back = torch.nn.functional.fold(cols, [4, 4], 2, { stride: 2 }); // x again
 * });
 * ```
 */
export function unfold(input: Tensor, kernelSize: BlockSize, options: BlockOptions = {}): Tensor {
  const c = checksOf('unfold');
  if (!(input instanceof Tensor)) c.fail('input', 'a Tensor', input);
  const args = blockArgs(c, kernelSize, options);
  checkRank('unfold', input, 4, 'N, C, H, W');
  return aten.im2col(input, ...args);
}

/**
 * The inverse arrangement of unfold, as F.fold: blocks [N, C kH kW, L] ([C kH kW, L] unbatched)
 * summed into [N, C, H, W], `outputSize` [H, W]; where blocks overlap their values add up.
 */
export function fold(
  input: Tensor,
  outputSize: BlockSize,
  kernelSize: BlockSize,
  options: BlockOptions = {},
): Tensor {
  const c = checksOf('fold');
  if (!(input instanceof Tensor)) c.fail('input', 'a Tensor', input);
  const size = perAxis(c, outputSize, 'outputSize', 2, 1);
  const [kernel, dilation, padding, stride] = blockArgs(c, kernelSize, options);
  checkRank('fold', input, 3, 'N, C kH kW, L');
  return aten.col2im(input, size, kernel, dilation, padding, stride);
}

/** Options of nn.Unfold: the block size and PyTorch's dilation, padding and stride. */
export interface UnfoldOptions extends BlockOptions {
  /** The block size: one number for both axes, or [kH, kW]. */
  kernelSize: BlockSize;
}

/** Options of nn.Fold: the image size, the block size and PyTorch's dilation, padding and stride. */
export interface FoldOptions extends UnfoldOptions {
  /** The spatial size [H, W] of the output (one number for both). */
  outputSize: BlockSize;
}

/** The sizes as given (numbers or copies of the arrays), with PyTorch's defaults filled in. */
function given(o: BlockOptions) {
  return {
    dilation: asGiven(o.dilation ?? 1) as BlockSize,
    padding: asGiven(o.padding ?? 0) as BlockSize,
    stride: asGiven(o.stride ?? 1) as BlockSize,
  };
}

/** Sliding blocks of [N, C, H, W] ([C, H, W]) as columns [N, C kH kW, L] (torch.nn.Unfold; see unfold). */
export class Unfold extends Module {
  readonly kernelSize: BlockSize;
  readonly dilation: BlockSize;
  readonly padding: BlockSize;
  readonly stride: BlockSize;
  constructor(options: UnfoldOptions) {
    super();
    const c = checksOf('Unfold');
    const o = c.object(options, 'options') as Partial<UnfoldOptions>;
    if (o.kernelSize === undefined) c.fail('options.kernelSize', 'a number or [kH, kW]', undefined);
    blockArgs(c, o.kernelSize, o);
    this.kernelSize = asGiven(o.kernelSize) as BlockSize;
    ({ dilation: this.dilation, padding: this.padding, stride: this.stride } = given(o));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return unfold(x, this.kernelSize, this);
  }
}

/** Blocks [N, C kH kW, L] ([C kH kW, L]) summed into [N, C, H, W] (torch.nn.Fold; see fold). */
export class Fold extends Module {
  readonly outputSize: BlockSize;
  readonly kernelSize: BlockSize;
  readonly dilation: BlockSize;
  readonly padding: BlockSize;
  readonly stride: BlockSize;
  constructor(options: FoldOptions) {
    super();
    const c = checksOf('Fold');
    const o = c.object(options, 'options') as Partial<FoldOptions>;
    if (o.outputSize === undefined) c.fail('options.outputSize', 'a number or [H, W]', undefined);
    if (o.kernelSize === undefined) c.fail('options.kernelSize', 'a number or [kH, kW]', undefined);
    perAxis(c, o.outputSize, 'options.outputSize', 2, 1);
    blockArgs(c, o.kernelSize, o);
    this.outputSize = asGiven(o.outputSize) as BlockSize;
    this.kernelSize = asGiven(o.kernelSize) as BlockSize;
    ({ dilation: this.dilation, padding: this.padding, stride: this.stride } = given(o));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return fold(x, this.outputSize, this.kernelSize, this);
  }
}
