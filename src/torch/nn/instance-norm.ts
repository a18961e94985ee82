// Instance normalisation (torch.nn.InstanceNorm1d/2d/3d): each channel of each sample normalised
// over its own spatial positions, with PyTorch 1.13's defaults (no affine, no running statistics)
// and its train/eval rule.
import type { Tensor } from '../tensor.js';
import { ones, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { Module } from './module.js';
import { checkOptions, checkRank, size } from './layer-util.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/**
 * Options of instance normalisation: eps (default 1e-5), momentum of the running statistics
 * (default 0.1), a learned per-channel affine (default false) and running statistics (default
 * false), as PyTorch's InstanceNorm.
 */
export interface InstanceNormOptions {
  eps?: number;
  momentum?: number;
  affine?: boolean;
  trackRunningStats?: boolean;
}

abstract class InstanceNormNd extends Module {
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;
  readonly runningMean: Tensor | null;
  readonly runningVar: Tensor | null;
  /** Registered as in PyTorch (the state dict has it), but InstanceNorm never counts: it stays 0. */
  readonly numBatchesTracked: Tensor | null;
  readonly eps: number;
  readonly momentum: number;
  readonly affine: boolean;
  readonly trackRunningStats: boolean;

  constructor(
    readonly numFeatures: number,
    private readonly spatialDims: number,
    private readonly layout: string,
    options: InstanceNormOptions,
  ) {
    super();
    const c = checksOf(new.target.name);
    size(c, numFeatures, 'numFeatures');
    checkOptions(c, options, { eps: { above: 0 }, momentum: { min: 0 } });
    this.eps = options.eps ?? 1e-5;
    this.momentum = options.momentum ?? 0.1;
    this.affine = options.affine ?? false;
    this.trackRunningStats = options.trackRunningStats ?? false;
    this.weight = this.affine ? this.registerParameter('weight', ones([numFeatures])) : null;
    this.bias = this.affine ? this.registerParameter('bias', zeros([numFeatures])) : null;
    const track = this.trackRunningStats;
    this.runningMean = track ? this.registerBuffer('running_mean', zeros([numFeatures])) : null;
    this.runningVar = track ? this.registerBuffer('running_var', ones([numFeatures])) : null;
    this.numBatchesTracked = track ? this.registerBuffer('num_batches_tracked', zeros([], 'int64')) : null;
  }

  /**
   * Normalises `x` ([N, C, ...spatial] or, without the batch dimension, [C, ...spatial]) with its
   * own statistics in training mode or without running statistics, else with the running ones;
   * training with running statistics updates them (the mean over the batch of each sample's
   * statistics, PyTorch's rule).
   */
  forward(x: Tensor): Tensor {
    const fn = this.constructor.name;
    checkRank(fn, x, this.spatialDims + 2, this.layout);
    const unbatched = x.ndim === this.spatialDims + 1;
    const channels = x.shape[unbatched ? 0 : 1]!;
    // Without an affine or running statistics numFeatures is unused, as in PyTorch.
    if ((this.affine || this.trackRunningStats) && channels !== this.numFeatures)
      throw new ArgumentError(
        `${fn}: the input has ${channels} channels (shape [${x.shape.join(', ')}]) but the layer was built for numFeatures = ${this.numFeatures}`,
      );
    const useInputStats = this.training || !this.trackRunningStats;
    const spatial = x.shape.slice(unbatched ? 1 : 2).reduce((a, b) => a * b, 1);
    if (useInputStats && spatial === 1)
      throw new ArgumentError(
        `${fn}: the input (shape [${x.shape.join(', ')}]) has one spatial position per channel; normalising by its own statistics needs more than one`,
      );
    const run = (t: Tensor) =>
      aten.instance_norm(
        t,
        this.weight,
        this.bias,
        this.runningMean,
        this.runningVar,
        useInputStats,
        this.momentum,
        this.eps,
        true,
      );
    return unbatched ? tidy(() => run(x.unsqueeze(0)).squeeze(0)) : run(x);
  }
}

/** Instance normalisation of [N, C, L] or [C, L] (torch.nn.InstanceNorm1d). */
export class InstanceNorm1d extends InstanceNormNd {
  constructor(numFeatures: number, options: InstanceNormOptions = {}) {
    super(numFeatures, 1, '[N, C, L]', options);
  }
}

/** Instance normalisation of [N, C, H, W] or [C, H, W] (torch.nn.InstanceNorm2d). */
export class InstanceNorm2d extends InstanceNormNd {
  constructor(numFeatures: number, options: InstanceNormOptions = {}) {
    super(numFeatures, 2, '[N, C, H, W]', options);
  }
}

/** Instance normalisation of [N, C, D, H, W] or [C, D, H, W] (torch.nn.InstanceNorm3d). */
export class InstanceNorm3d extends InstanceNormNd {
  constructor(numFeatures: number, options: InstanceNormOptions = {}) {
    super(numFeatures, 3, '[N, C, D, H, W]', options);
  }
}
