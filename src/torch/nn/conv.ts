// The convolutions and transposed convolutions, 1-d to 3-d, with PyTorch's parameter layout and initialisation.
import type { Tensor } from '../tensor.js';
import { empty } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checkOptions, resetLinearLike, size } from './layer-util.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/** Options of the convolutions: stride, padding, dilation, groups (default 1, 0, 1, 1) and bias (default true). */
export interface ConvOptions {
  stride?: number;
  padding?: number;
  dilation?: number;
  groups?: number;
  bias?: boolean;
}

abstract class ConvNd extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;
  readonly stride: number;
  readonly padding: number;
  readonly dilation: number;
  readonly groups: number;

  /** `transposed`: PyTorch's weight layout [in, out / groups, ...kernel] and an outputPadding option. */
  constructor(
    inChannels: number,
    outChannels: number,
    kernel: number[],
    options: ConvTransposeOptions,
    transposed = false,
  ) {
    super();
    const c = checksOf(this.constructor.name);
    size(c, inChannels, 'inChannels');
    size(c, outChannels, 'outChannels');
    size(c, kernel[0], 'kernelSize');
    checkOptions(c, options, {
      stride: { integer: true, min: 1 },
      padding: { integer: true, min: 0 },
      dilation: { integer: true, min: 1 },
      groups: { integer: true, min: 1 },
      ...(transposed ? { outputPadding: { integer: true, min: 0 } } : {}),
    });
    this.stride = options.stride ?? 1;
    this.padding = options.padding ?? 0;
    this.dilation = options.dilation ?? 1;
    this.groups = options.groups ?? 1;
    const outputPadding = transposed ? (options.outputPadding ?? 0) : 0;
    if (outputPadding >= Math.max(this.stride, this.dilation))
      throw new ArgumentError(
        `${this.constructor.name}: outputPadding ${outputPadding} must be smaller than stride (${this.stride}) or dilation (${this.dilation})`,
      );
    if (inChannels % this.groups !== 0 || outChannels % this.groups !== 0) {
      throw new ArgumentError(
        `${this.constructor.name}: in (${inChannels}) and out (${outChannels}) channels must be divisible by groups (${this.groups})`,
      );
    }
    const shape = transposed
      ? [inChannels, outChannels / this.groups, ...kernel]
      : [outChannels, inChannels / this.groups, ...kernel];
    this.weight = this.registerParameter('weight', empty(shape));
    this.bias = options.bias === false ? null : this.registerParameter('bias', empty([outChannels]));
    resetLinearLike(this.weight, this.bias);
  }
}

/** A 1D convolution (torch.nn.Conv1d): input [batch, inChannels, length], output [batch, outChannels, length']. */
export class Conv1d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number, options: ConvOptions = {}) {
    super(inChannels, outChannels, [kernelSize], options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.conv1d(x, this.weight, this.bias, this.stride, this.padding, this.dilation, this.groups);
  }
}

/** A 2D convolution (torch.nn.Conv2d): input [batch, inChannels, H, W], output [batch, outChannels, H', W']. */
export class Conv2d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number, options: ConvOptions = {}) {
    super(inChannels, outChannels, [kernelSize, kernelSize], options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.conv2d(x, this.weight, this.bias, this.stride, this.padding, this.dilation, this.groups);
  }
}

/**
 * A 3D convolution (torch.nn.Conv3d) with a cubic kernel: input [batch, inChannels, D, H, W],
 * output [batch, outChannels, D', H', W'], each size (n + 2 padding - dilation (k - 1) - 1) / stride + 1,
 * rounded down. Weight [outChannels, inChannels / groups, k, k, k].
 */
export class Conv3d extends ConvNd {
  constructor(inChannels: number, outChannels: number, kernelSize: number, options: ConvOptions = {}) {
    super(inChannels, outChannels, [kernelSize, kernelSize, kernelSize], options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.conv3d(x, this.weight, this.bias, this.stride, this.padding, this.dilation, this.groups);
  }
}

/** Options of the transposed convolutions: the convolution's, and outputPadding (default 0, < stride or dilation) added to one side of the output. */
export interface ConvTransposeOptions extends ConvOptions {
  outputPadding?: number;
}

abstract class ConvTransposeNd extends ConvNd {
  readonly outputPadding: number;

  constructor(inChannels: number, outChannels: number, kernel: number[], options: ConvTransposeOptions) {
    super(inChannels, outChannels, kernel, options, true);
    this.outputPadding = options.outputPadding ?? 0;
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
    kernelSize: number,
    options: ConvTransposeOptions = {},
  ) {
    super(inChannels, outChannels, [kernelSize], options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { stride, padding, outputPadding, groups, dilation } = this;
    return aten.conv_transpose1d(x, this.weight, this.bias, stride, padding, outputPadding, groups, dilation);
  }
}

/** A 2D transposed convolution (torch.nn.ConvTranspose2d): input [batch, inChannels, H, W], each spatial size as ConvTranspose1d's. */
export class ConvTranspose2d extends ConvTransposeNd {
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: number,
    options: ConvTransposeOptions = {},
  ) {
    super(inChannels, outChannels, [kernelSize, kernelSize], options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { stride, padding, outputPadding, groups, dilation } = this;
    return aten.conv_transpose2d_input(
      x,
      this.weight,
      this.bias,
      stride,
      padding,
      outputPadding,
      groups,
      dilation,
    );
  }
}

/**
 * A 3D transposed convolution (torch.nn.ConvTranspose3d) with a cubic kernel: input [batch,
 * inChannels, D, H, W] ([inChannels, D, H, W] unbatched), output [batch, outChannels, D', H', W'],
 * each size (n - 1) stride - 2 padding + dilation (k - 1) + outputPadding + 1. Weight
 * [inChannels, outChannels / groups, k, k, k], bias [outChannels]; PyTorch's initialisation
 * (kaiming_uniform with a = sqrt 5, the fan-in taken from the weight's second dimension).
 */
export class ConvTranspose3d extends ConvTransposeNd {
  constructor(
    inChannels: number,
    outChannels: number,
    kernelSize: number,
    options: ConvTransposeOptions = {},
  ) {
    super(inChannels, outChannels, [kernelSize, kernelSize, kernelSize], options);
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const { stride, padding, outputPadding, groups, dilation } = this;
    return aten.conv_transpose3d_input(
      x,
      this.weight,
      this.bias,
      stride,
      padding,
      outputPadding,
      groups,
      dilation,
    );
  }
}
