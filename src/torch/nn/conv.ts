// The convolutions and transposed convolutions, 1-d to 3-d, with PyTorch's parameter layout and initialisation.
import type { Tensor } from '../tensor.js';
import { empty } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { asGiven, checkOptions, perAxis, resetLinearLike, size } from './layer-util.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { pyTuple } from './module-repr.js';

/** A size of a 1-d convolution: a number or a one-element array, as PyTorch's int or (int,). */
export type ConvSize1d = number | [number];
/** A size of a 2-d convolution: one number for both axes, or [H, W]. */
export type ConvSize2d = number | [number, number];
/** A size of a 3-d convolution: one number for every axis, or [D, H, W]. */
export type ConvSize3d = number | [number, number, number];

/**
 * Options of the convolutions: stride, padding, dilation, groups (default 1, 0, 1, 1) and bias
 * (default true). stride, padding and dilation are one number for every spatial axis or an array
 * with one per axis, as PyTorch's int or tuple. padding may also be `'valid'` (none) or `'same'`
 * (the output as long as the input, stride 1 only; an odd total padding puts the extra element
 * after the input, as PyTorch does).
 */
export interface ConvOptions {
  stride?: number | number[];
  padding?: number | number[] | 'same' | 'valid';
  dilation?: number | number[];
  groups?: number;
  bias?: boolean;
  /**
   * What the padding holds (PyTorch's padding_mode): zeros (the default), or the input reflected,
   * its edge replicated, or wrapped around (circular).
   */
  paddingMode?: ConvPaddingMode;
}

/** The values a convolution pads its input with (PyTorch's padding_mode). */
export type ConvPaddingMode = 'zeros' | 'reflect' | 'replicate' | 'circular';

/** A convolution's sizes per spatial axis (outputPadding all 0 but for the transposed ones). */
export interface ConvWindow {
  kernelSize: number[];
  stride: number[];
  /** Zeros before the input on each axis (and after it, plus paddingExtra). */
  padding: number[];
  /** Zeros after the input beyond `padding` (1 where `'same'` needs an odd total, else 0). */
  paddingExtra: number[];
  dilation: number[];
  outputPadding: number[];
}

abstract class ConvNd extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  /** The kernel size as given: one number, or one per spatial axis. */
  readonly kernelSize: number | number[];
  /** The stride as given (default 1). */
  readonly stride: number | number[];
  /** The padding as given (default 0). */
  readonly padding: number | number[] | 'same' | 'valid';
  /** The dilation as given (default 1). */
  readonly dilation: number | number[];
  readonly groups: number;
  /** What the padding holds (default zeros). */
  readonly paddingMode: ConvPaddingMode;
  /** kernelSize, stride, padding, dilation and outputPadding per spatial axis. */
  readonly window: ConvWindow;

  /** `transposed`: PyTorch's weight layout [in, out / groups, ...kernel] and an outputPadding option. */
  constructor(
    dims: number,
    inChannels: number,
    outChannels: number,
    kernelSize: number | number[],
    options: ConvOptions & { outputPadding?: number | number[] },
    transposed = false,
  ) {
    super();
    const name = this.constructor.name;
    const c = checksOf(name);
    size(c, inChannels, 'inChannels');
    size(c, outChannels, 'outChannels');
    checkOptions(c, options, { groups: { integer: true, min: 1 } });
    const kernel = perAxis(c, kernelSize, 'kernelSize', dims, 1);
    const axes = (value: unknown, key: string, fallback: number, min: number) =>
      value === undefined
        ? new Array<number>(dims).fill(fallback)
        : perAxis(c, value, `options.${key}`, dims, min);
    const stride = axes(options.stride, 'stride', 1, 1);
    const dilation = axes(options.dilation, 'dilation', 1, 1);
    const padding = paddingPerAxis(c, options.padding, kernel, stride, dilation, transposed);
    const window: ConvWindow = {
      kernelSize: kernel,
      stride,
      padding: padding.begin,
      paddingExtra: padding.extra,
      dilation,
      outputPadding: transposed
        ? axes(options.outputPadding, 'outputPadding', 0, 0)
        : axes(undefined, '', 0, 0),
    };
    window.outputPadding.forEach((p, i) => {
      const limit = Math.max(window.stride[i]!, window.dilation[i]!);
      if (p >= limit)
        throw new ArgumentError(
          `${name}: outputPadding ${p} of spatial axis ${i} must be smaller than its stride (${window.stride[i]}) or dilation (${window.dilation[i]})`,
        );
    });
    this.kernelSize = asGiven(kernelSize);
    this.stride = asGiven(options.stride ?? 1);
    this.padding = asGiven(options.padding ?? 0);
    this.dilation = asGiven(options.dilation ?? 1);
    this.groups = options.groups ?? 1;
    this.window = window;
    const mode = options.paddingMode ?? 'zeros';
    if (!['zeros', 'reflect', 'replicate', 'circular'].includes(mode) || (transposed && mode !== 'zeros'))
      c.fail(
        'options.paddingMode',
        transposed
          ? `'zeros' (the transposed convolutions pad with zeros only)`
          : `'zeros', 'reflect', 'replicate' or 'circular'`,
        mode,
      );
    this.paddingMode = mode;
    if (inChannels % this.groups !== 0 || outChannels % this.groups !== 0) {
      throw new ArgumentError(
        `${name}: in (${inChannels}) and out (${outChannels}) channels must be divisible by groups (${this.groups})`,
      );
    }
    const shape = transposed
      ? [inChannels, outChannels / this.groups, ...kernel]
      : [outChannels, inChannels / this.groups, ...kernel];
    this.weight = this.registerParameter('weight', empty(shape));
    this.bias = options.bias === false ? null : this.registerParameter('bias', empty([outChannels]));
    resetLinearLike(this.weight, this.bias);
  }

  /** The convolution's ATen call (the window's sizes per axis). */
  protected convolve(
    op: (
      x: Tensor,
      w: Tensor,
      b: Tensor | null,
      stride: number[],
      padding: number[],
      dilation: number[],
      groups: number,
    ) => Tensor,
    x: Tensor,
  ): Tensor {
    const { stride, padding, paddingExtra, dilation } = this.window;
    // constant_pad_nd and pad list the last axis first: before, after, then the axis before it
    const pads = (before: number[]) =>
      before
        .map((p, i) => [p, p + paddingExtra[i]!])
        .reverse()
        .flat();
    let input = x;
    let convPadding = padding;
    if (this.paddingMode !== 'zeros') {
      // as PyTorch: the whole padding made with the mode, then the convolution without any
      input = aten.pad(x, pads(padding), this.paddingMode, null);
      convPadding = padding.map(() => 0);
    } else if (paddingExtra.some((e) => e > 0)) {
      // 'same' with an odd total: the extra zero after the input, as PyTorch's _convolution_mode
      input = aten.constant_pad_nd(x, pads(padding.map(() => 0)), 0);
    }
    try {
      return op(input, this.weight, this.bias, stride, convPadding, dilation, this.groups);
    } finally {
      if (input !== x) input.dispose();
    }
  }

  /** PyTorch's `in, out, kernel_size=(k,), stride=(s,)` and the settings that are not defaults. */
  override extraRepr(): string {
    const { kernelSize, stride, padding, dilation, outputPadding } = this.window;
    const [w0, w1] = this.weight.shape as [number, number];
    const transposed = this instanceof ConvTransposeNd;
    const [inChannels, outChannels] = transposed ? [w0, w1 * this.groups] : [w1 * this.groups, w0];
    let s = `${inChannels}, ${outChannels}, kernel_size=${pyTuple(kernelSize)}, stride=${pyTuple(stride)}`;
    if (typeof this.padding === 'string') s += `, padding=${this.padding}`;
    else if (padding.some((p) => p !== 0)) s += `, padding=${pyTuple(padding)}`;
    if (dilation.some((d) => d !== 1)) s += `, dilation=${pyTuple(dilation)}`;
    if (outputPadding.some((p) => p !== 0)) s += `, output_padding=${pyTuple(outputPadding)}`;
    if (this.groups !== 1) s += `, groups=${this.groups}`;
    if (this.bias === null) s += ', bias=False';
    if (this.paddingMode !== 'zeros') s += `, padding_mode=${this.paddingMode}`;
    return s;
  }
}

/**
 * The padding per axis: numbers as given, `'valid'` none, `'same'` dilation (k - 1) in all, half
 * before the input (rounded down) and the rest after it. String paddings are the convolutions'
 * only, at stride 1 for `'same'` (PyTorch refuses the rest too).
 */
function paddingPerAxis(
  c: ArgumentChecks,
  value: unknown,
  kernel: number[],
  stride: number[],
  dilation: number[],
  transposed: boolean,
): { begin: number[]; extra: number[] } {
  const dims = kernel.length;
  const zeros = () => new Array<number>(dims).fill(0);
  if (value === undefined) return { begin: zeros(), extra: zeros() };
  if (typeof value !== 'string')
    return { begin: perAxis(c, value, 'options.padding', dims, 0), extra: zeros() };
  if (transposed || (value !== 'same' && value !== 'valid'))
    c.fail(
      'options.padding',
      transposed
        ? 'an integer >= 0 or one per spatial axis'
        : `an integer >= 0, one per axis, 'same' or 'valid'`,
      value,
    );
  if (value === 'valid') return { begin: zeros(), extra: zeros() };
  if (stride.some((s) => s !== 1))
    c.fail(
      'options.padding',
      `a number when the stride is not 1 ('same' needs stride 1, got ${JSON.stringify(stride)})`,
      value,
    );
  const total = kernel.map((k, i) => dilation[i]! * (k - 1));
  return { begin: total.map((t) => Math.floor(t / 2)), extra: total.map((t) => t % 2) };
}

/** A 1D convolution (torch.nn.Conv1d): input [batch, inChannels, length], output [batch, outChannels, length']. */
export class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: ConvSize1d, options: ConvOptions = {}) {
    super(1, inChannels, outChannels, kernelSize, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.convolve(aten.conv1d, x);
  }
}

/**
 * A 2D convolution (torch.nn.Conv2d): input [batch, inChannels, H, W], output [batch, outChannels,
 * H', W']; kernelSize [kH, kW] (or one number for both), and the options per axis alike.
 */
export class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: ConvSize2d, options: ConvOptions = {}) {
    super(2, inChannels, outChannels, kernelSize, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.convolve(aten.conv2d, x);
  }
}

/**
 * A 3D convolution (torch.nn.Conv3d): input [batch, inChannels, D, H, W], output [batch,
 * outChannels, D', H', W'], each size (n + 2 padding - dilation (k - 1) - 1) / stride + 1, rounded
 * down, per axis. Weight [outChannels, inChannels / groups, kD, kH, kW]; kernelSize and the options
 * are one number for every axis or one per axis.
 */
export class Conv3d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: ConvSize3d, options: ConvOptions = {}) {
    super(3, inChannels, outChannels, kernelSize, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.convolve(aten.conv3d, x);
  }
}

/**
 * Options of the transposed convolutions: the convolution's, and outputPadding (default 0, per axis
 * smaller than the stride or the dilation) added to one side of the output.
 */
export interface ConvTransposeOptions extends Omit<ConvOptions, 'padding'> {
  /** Zeros taken off each side of the output: one number, or one per axis (no strings here). */
  padding?: number | number[];
  outputPadding?: number | number[];
}

abstract class ConvTransposeNd extends ConvNd {
  /** The output padding as given (default 0). */
  readonly outputPadding: number | number[];

  constructor(
    dims: number,
    inChannels: number,
    outChannels: number,
    kernelSize: number | number[],
    options: ConvTransposeOptions,
  ) {
    super(dims, inChannels, outChannels, kernelSize, options, true);
    this.outputPadding = asGiven(options.outputPadding ?? 0);
  }

  /** The transposed convolution's ATen call (the window's sizes per axis). */
  protected convolveTransposed(
    op: (
      x: Tensor,
      w: Tensor,
      b: Tensor | null,
      stride: number[],
      padding: number[],
      outputPadding: number[],
      groups: number,
      dilation: number[],
    ) => Tensor,
    x: Tensor,
  ): Tensor {
    const { stride, padding, outputPadding, dilation } = this.window;
    return op(x, this.weight, this.bias, stride, padding, outputPadding, this.groups, dilation);
  }
}

/**
 * A 1D transposed convolution (torch.nn.ConvTranspose1d): input [batch, inChannels, L], output
 * [batch, outChannels, (L - 1) stride - 2 padding + dilation (k - 1) + outputPadding + 1].
 */
export class ConvTranspose1d extends ConvTransposeNd {
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: ConvSize1d,
    options: ConvTransposeOptions = {},
  ) {
    super(1, inChannels, outChannels, kernelSize, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.convolveTransposed(aten.conv_transpose1d, x);
  }
}

/**
 * A 2D transposed convolution (torch.nn.ConvTranspose2d): input [batch, inChannels, H, W], each
 * spatial size as ConvTranspose1d's with that axis's kernel size and options (one number for both
 * axes, or [H, W]).
 */
export class ConvTranspose2d extends ConvTransposeNd {
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: ConvSize2d,
    options: ConvTransposeOptions = {},
  ) {
    super(2, inChannels, outChannels, kernelSize, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.convolveTransposed(aten.conv_transpose2d_input, x);
  }
}

/**
 * A 3D transposed convolution (torch.nn.ConvTranspose3d): input [batch, inChannels, D, H, W]
 * ([inChannels, D, H, W] unbatched), output [batch, outChannels, D', H', W'], each size (n - 1)
 * stride - 2 padding + dilation (k - 1) + outputPadding + 1 per axis. Weight [inChannels,
 * outChannels / groups, kD, kH, kW], bias [outChannels]; PyTorch's initialisation (kaiming_uniform
 * with a = sqrt 5, the fan-in taken from the weight's second dimension).
 */
export class ConvTranspose3d extends ConvTransposeNd {
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: ConvSize3d,
    options: ConvTransposeOptions = {},
  ) {
    super(3, inChannels, outChannels, kernelSize, options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return this.convolveTransposed(aten.conv_transpose3d_input, x);
  }
}
