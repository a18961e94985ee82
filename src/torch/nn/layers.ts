// Layers with parameters: Linear, normalisation, dropout (the convolutions are in conv.ts, the
// embeddings in embedding.ts).
import type { Tensor } from '../tensor.js';
import { empty, ones, zeros } from '../creation.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checkOptions, checkTensor, resetLinearLike, size } from './layer-util.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { pyBool, pyFloat, pyTuple } from './module-repr.js';

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

  /** PyTorch's `in_features=..., out_features=..., bias=...`. */
  override extraRepr(): string {
    return `in_features=${this.inFeatures}, out_features=${this.outFeatures}, bias=${pyBool(this.bias !== null)}`;
  }
}

/**
 * Options of batch normalisation: eps (default 1e-5), momentum (default 0.1; null for a
 * cumulative average of the batches' statistics, as PyTorch's momentum=None), affine and running
 * statistics (default true).
 */
export interface BatchNormOptions {
  eps?: number;
  momentum?: number | null;
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
  private momentumValue: number | null;

  constructor(
    readonly numFeatures: number,
    private readonly expectedDims: number[],
    options: BatchNormOptions,
  ) {
    super();
    const c = checksOf(this.constructor.name);
    size(c, numFeatures, 'numFeatures');
    // null is PyTorch's momentum=None (a cumulative average), not a number to range-check
    const cumulative = (options as { momentum?: unknown } | null)?.momentum === null;
    checkOptions(c, options, { eps: { above: 0 }, ...(cumulative ? {} : { momentum: { min: 0 } }) });
    this.eps = options.eps ?? 1e-5;
    this.momentumValue = cumulative ? null : (options.momentum ?? 0.1);
    const affine = options.affine ?? true;
    this.weight = affine ? this.registerParameter('weight', ones([numFeatures])) : null;
    this.bias = affine ? this.registerParameter('bias', zeros([numFeatures])) : null;
    const track = options.trackRunningStats ?? true;
    this.runningMean = track ? this.registerBuffer('running_mean', zeros([numFeatures])) : null;
    this.runningVar = track ? this.registerBuffer('running_var', ones([numFeatures])) : null;
    this.numBatchesTracked = track ? this.registerBuffer('num_batches_tracked', zeros([], 'int64')) : null;
  }

  /**
   * The weight of a batch's statistics in the running ones (PyTorch's `momentum`); null makes the
   * running statistics the plain average of every batch seen since they were reset (a factor of
   * 1 / num_batches_tracked), as PyTorch's momentum=None, which `optim.swaUtils.updateBn` uses.
   * Settable, as in PyTorch.
   */
  get momentum(): number | null {
    return this.momentumValue;
  }

  set momentum(value: number | null) {
    if (value !== null) checksOf(`${this.constructor.name}.momentum`).number(value, 'momentum', { min: 0 });
    this.momentumValue = value;
  }

  /**
   * Resets the running statistics (PyTorch's reset_running_stats): mean 0, variance 1, no batches
   * tracked; a layer without running statistics is left as it is.
   */
  resetRunningStats(): void {
    noGrad(() => {
      this.runningMean?.zero_();
      this.runningVar?.fill_(1);
      this.numBatchesTracked?.zero_();
    });
  }

  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    checkTensor(this.constructor.name, x);
    if (!this.expectedDims.includes(x.ndim)) {
      throw new Error(
        `${this.constructor.name}: expected a ${this.expectedDims.join(' or ')}-d input, got shape [${x.shape}]`,
      );
    }
    const useBatchStats = this.training || this.runningMean === null;
    let factor = this.momentum ?? 0;
    if (this.training && this.numBatchesTracked) {
      noGrad(() => this.numBatchesTracked!.add_(1));
      // the cumulative average: the n-th batch weighs 1 / n (PyTorch reads the count the same way)
      if (this.momentum === null) factor = 1 / this.numBatchesTracked.item();
    }
    return aten.batch_norm(
      x,
      this.weight,
      this.bias,
      this.runningMean,
      this.runningVar,
      useBatchStats,
      factor,
      this.eps,
      true,
    );
  }

  /** PyTorch's `C, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True`. */
  override extraRepr(): string {
    const momentum = this.momentum === null ? 'None' : pyFloat(this.momentum);
    return `${this.numFeatures}, eps=${pyFloat(this.eps)}, momentum=${momentum}, affine=${pyBool(this.weight !== null)}, track_running_stats=${pyBool(this.runningMean !== null)}`;
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

  /** PyTorch's `(shape,), eps=1e-05, elementwise_affine=True`. */
  override extraRepr(): string {
    return `${pyTuple(this.normalizedShape)}, eps=${pyFloat(this.eps)}, elementwise_affine=${pyBool(this.weight !== null)}`;
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

  /** PyTorch's `p=0.5, inplace=False`. */
  override extraRepr(): string {
    return `p=${pyFloat(this.p)}, inplace=False`;
  }
}
