// Layers with parameters: Linear, Conv1d/Conv2d/Conv3d, the 1d and 2d transposes, normalisation, dropout, embedding.
import { Tensor } from '../tensor.js';
import { empty, ones, zeros } from '../creation.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { fanInAndOut, kaimingUniform_, uniform_ } from './init.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** Sizes of layers: positive integers (a JavaScript caller's 2.5 or '2' fails here, named). */
const MAX_SIZE = 2 ** 31 - 1;
const size = (c: ArgumentChecks, v: unknown, name: string) => c.integer(v, name, { min: 1, max: MAX_SIZE });

/** The options object of a layer and, for each numeric option given, its range. */
function checkOptions(
  c: ArgumentChecks,
  o: unknown,
  ranges: Record<string, { min?: number; above?: number; integer?: boolean }>,
) {
  const record = c.object(o, 'options');
  for (const [key, r] of Object.entries(ranges)) {
    if (record[key] === undefined) continue;
    if (r.integer) c.integer(record[key], `options.${key}`, { min: r.min ?? 0 });
    else c.number(record[key], `options.${key}`, r);
  }
  for (const key of ['bias', 'affine', 'trackRunningStats', 'elementwiseAffine'])
    if (record[key] !== undefined && typeof record[key] !== 'boolean')
      c.fail(`options.${key}`, 'true or false', record[key]);
}

/** A fully connected layer y = x W^T + b (torch.nn.Linear): input [..., inFeatures], output [..., outFeatures]. */
export class Linear extends Module {
  readonly weight: Tensor;
  readonly bias: Tensor | null;

  constructor(
    readonly inFeatures: number,
    readonly outFeatures: number,
    layerOptions: { bias?: boolean } = {},
  ) {
    super();
    const c = checksOf('Linear');
    size(c, inFeatures, 'inFeatures');
    size(c, outFeatures, 'outFeatures');
    checkOptions(c, layerOptions, {});
    this.weight = this.registerParameter('weight', empty([outFeatures, inFeatures]));
    this.bias = layerOptions.bias === false ? null : this.registerParameter('bias', empty([outFeatures]));
    resetLinearLike(this.weight, this.bias);
  }

  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.linear(x, this.weight, this.bias);
  }
}

/** PyTorch's default for Linear and Conv: kaiming_uniform(a=sqrt 5) weights, U(+-1/sqrt(fan_in)) bias. */
function resetLinearLike(weight: Tensor, bias: Tensor | null): void {
  kaimingUniform_(weight, { a: Math.sqrt(5) });
  if (bias) {
    const { fanIn } = fanInAndOut(weight.shape);
    const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
    uniform_(bias, -bound, bound);
  }
}

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

/** Options of batch normalisation: eps (default 1e-5), momentum (default 0.1), affine and running statistics (default true). */
export interface BatchNormOptions {
  eps?: number;
  momentum?: number;
  affine?: boolean;
  trackRunningStats?: boolean;
}

class BatchNormNd extends Module {
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;
  readonly runningMean: Tensor | null;
  readonly runningVar: Tensor | null;
  readonly numBatchesTracked: Tensor | null;
  readonly eps: number;
  readonly momentum: number;

  constructor(
    readonly numFeatures: number,
    private readonly expectedDims: number[],
    options: BatchNormOptions,
  ) {
    super();
    const c = checksOf(this.constructor.name);
    size(c, numFeatures, 'numFeatures');
    checkOptions(c, options, { eps: { above: 0 }, momentum: { min: 0 } });
    this.eps = options.eps ?? 1e-5;
    this.momentum = options.momentum ?? 0.1;
    const affine = options.affine ?? true;
    this.weight = affine ? this.registerParameter('weight', ones([numFeatures])) : null;
    this.bias = affine ? this.registerParameter('bias', zeros([numFeatures])) : null;
    const track = options.trackRunningStats ?? true;
    this.runningMean = track ? this.registerBuffer('running_mean', zeros([numFeatures])) : null;
    this.runningVar = track ? this.registerBuffer('running_var', ones([numFeatures])) : null;
    this.numBatchesTracked = track ? this.registerBuffer('num_batches_tracked', zeros([], 'int64')) : null;
  }

  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    if (!this.expectedDims.includes(x.ndim)) {
      throw new Error(
        `${this.constructor.name}: expected a ${this.expectedDims.join(' or ')}-d input, got shape [${x.shape}]`,
      );
    }
    const useBatchStats = this.training || this.runningMean === null;
    if (this.training && this.numBatchesTracked) noGrad(() => this.numBatchesTracked!.add_(1));
    return aten.batch_norm(
      x,
      this.weight,
      this.bias,
      this.runningMean,
      this.runningVar,
      useBatchStats,
      this.momentum,
      this.eps,
      true,
    );
  }
}

/** Batch normalisation over [batch, features] or [batch, features, length] (torch.nn.BatchNorm1d). */
export class BatchNorm1d extends BatchNormNd {
  constructor(numFeatures: number, options: BatchNormOptions = {}) {
    super(numFeatures, [2, 3], options);
  }
}

/** Batch normalisation over [batch, channels, H, W] (torch.nn.BatchNorm2d). */
export class BatchNorm2d extends BatchNormNd {
  constructor(numFeatures: number, options: BatchNormOptions = {}) {
    super(numFeatures, [4], options);
  }
}

/** Batch normalisation over [batch, channels, D, H, W] (torch.nn.BatchNorm3d), for volumes and video. */
export class BatchNorm3d extends BatchNormNd {
  constructor(numFeatures: number, options: BatchNormOptions = {}) {
    super(numFeatures, [5], options);
  }
}

/** Group normalisation: the channels in groups, normalised per sample (torch.nn.GroupNorm); input [batch, channels, ...]. */
export class GroupNorm extends Module {
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;

  constructor(
    readonly numGroups: number,
    readonly numChannels: number,
    options: { eps?: number; affine?: boolean } = {},
  ) {
    super();
    const c = checksOf('GroupNorm');
    size(c, numGroups, 'numGroups');
    size(c, numChannels, 'numChannels');
    checkOptions(c, options, { eps: { above: 0 } });
    if (numChannels % numGroups !== 0)
      throw new ArgumentError(`GroupNorm: ${numChannels} channels do not split into ${numGroups} groups`);
    this.eps = options.eps ?? 1e-5;
    const affine = options.affine ?? true;
    this.weight = affine ? this.registerParameter('weight', ones([numChannels])) : null;
    this.bias = affine ? this.registerParameter('bias', zeros([numChannels])) : null;
  }
  readonly eps: number;

  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.group_norm(x, this.numGroups, this.weight, this.bias, this.eps, true);
  }
}

/** Layer normalisation over the last dimensions (torch.nn.LayerNorm). */
export class LayerNorm extends Module {
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;
  readonly eps: number;

  constructor(
    readonly normalizedShape: number[],
    options: { eps?: number; elementwiseAffine?: boolean } = {},
  ) {
    super();
    const c = checksOf('LayerNorm');
    c.array(normalizedShape, 'normalizedShape', { minLength: 1 }).forEach((v, i) =>
      size(c, v, `normalizedShape[${i}]`),
    );
    checkOptions(c, options, { eps: { above: 0 } });
    this.eps = options.eps ?? 1e-5;
    const affine = options.elementwiseAffine ?? true;
    this.weight = affine ? this.registerParameter('weight', ones(normalizedShape)) : null;
    this.bias = affine ? this.registerParameter('bias', zeros(normalizedShape)) : null;
  }

  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.layer_norm(x, this.normalizedShape, this.weight, this.bias, this.eps, true);
  }
}

/** Zeroes elements with probability p during training and scales the rest by 1 / (1 - p); the identity in eval mode. */
export class Dropout extends Module {
  constructor(readonly p = 0.5) {
    super();
    checksOf('Dropout').number(p, 'p', { min: 0, max: 1 });
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return aten.dropout(x, this.p, this.training);
  }
}

/** A lookup table of numEmbeddings vectors of size embeddingDim: int64 indices [...] give [..., embeddingDim]. */
export class Embedding extends Module {
  readonly weight: Tensor;
  constructor(numEmbeddings: number, embeddingDim: number) {
    super();
    const c = checksOf('Embedding');
    size(c, numEmbeddings, 'numEmbeddings');
    size(c, embeddingDim, 'embeddingDim');
    this.weight = this.registerParameter('weight', empty([numEmbeddings, embeddingDim]));
    noGrad(() => aten.normal_(this.weight, 0, 1));
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(indices: Tensor): Tensor {
    return aten.embedding(this.weight, indices);
  }
}
