// Layers that move values between dimensions or drop whole channels: PixelShuffle,
// PixelUnshuffle, ChannelShuffle, Unflatten and Dropout1d/2d/3d (torch.nn's, PyTorch 1.13).
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checkTensor, size } from './layer-util.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { channelDropout, channelShuffleOf, pixelShuffleOf, pixelUnshuffleOf } from './functional-shape.js';

/**
 * [..., C r^2, H, W] to [..., C, H r, W r], r = upscaleFactor (torch.nn.PixelShuffle); the input's
 * channels must be divisible by r squared.
 */
export class PixelShuffle extends Module {
  constructor(readonly upscaleFactor: number) {
    super();
    size(checksOf('PixelShuffle'), upscaleFactor, 'upscaleFactor');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return pixelShuffleOf('PixelShuffle', x, this.upscaleFactor);
  }
}

/** [..., C, H r, W r] to [..., C r^2, H, W], r = downscaleFactor (torch.nn.PixelUnshuffle). */
export class PixelUnshuffle extends Module {
  constructor(readonly downscaleFactor: number) {
    super();
    size(checksOf('PixelUnshuffle'), downscaleFactor, 'downscaleFactor');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return pixelUnshuffleOf('PixelUnshuffle', x, this.downscaleFactor);
  }
}

/** Interleaves `groups` groups of the channels of [N, C, ...] (torch.nn.ChannelShuffle, ShuffleNet's). */
export class ChannelShuffle extends Module {
  constructor(readonly groups: number) {
    super();
    size(checksOf('ChannelShuffle'), groups, 'groups');
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    return channelShuffleOf('ChannelShuffle', x, this.groups);
  }
}

/**
 * Expands dimension `dim` into the sizes `unflattenedSize` (torch.nn.Unflatten, Flatten undone):
 * their product must be that dimension's size; one of them may be -1 (inferred).
 */
export class Unflatten extends Module {
  readonly unflattenedSize: readonly number[];
  constructor(
    readonly dim: number,
    unflattenedSize: readonly number[],
  ) {
    super();
    const c = checksOf('Unflatten');
    c.integer(dim, 'dim', { min: -64, max: 63 });
    const sizes = c.array(unflattenedSize, 'unflattenedSize', { minLength: 1 }).map((v, i) => {
      const s = c.integer(v, `unflattenedSize[${i}]`, { min: -1 });
      if (s === 0) c.fail(`unflattenedSize[${i}]`, 'an integer >= 1, or -1 (inferred)', v);
      return s;
    });
    if (sizes.filter((s) => s === -1).length > 1)
      c.fail('unflattenedSize', 'sizes with at most one -1', unflattenedSize);
    this.unflattenedSize = sizes;
  }
  /** Applies the layer to `x` (shapes: see the class). */
  forward(x: Tensor): Tensor {
    const fn = 'Unflatten';
    checkTensor(fn, x);
    const rank = Math.max(x.ndim, 1);
    if (this.dim < -rank || this.dim >= rank)
      throw new ArgumentError(
        `${fn}: dim ${this.dim} is out of range for the input's shape [${x.shape.join(', ')}]`,
      );
    const d = this.dim < 0 ? this.dim + rank : this.dim;
    const have = x.ndim === 0 ? 1 : x.shape[d]!;
    const known = this.unflattenedSize.filter((s) => s !== -1).reduce((a, b) => a * b, 1);
    const inferred = this.unflattenedSize.includes(-1);
    if (inferred ? have % known !== 0 : have !== known)
      throw new ArgumentError(
        `${fn}: unflattenedSize [${this.unflattenedSize.join(', ')}] does not multiply up to ${have}, the size of dimension ${this.dim} of the input (shape [${x.shape.join(', ')}])`,
      );
    return aten.unflatten_int(x, this.dim, [...this.unflattenedSize]);
  }
}

abstract class ChannelDropout extends Module {
  constructor(
    readonly p: number,
    private readonly spatial: 1 | 2 | 3,
  ) {
    super();
    checksOf(new.target.name).number(p, 'p', { min: 0, max: 1 });
  }
  /** Zeroes whole channels with probability p in training mode (the rest scaled by 1 / (1 - p)); the identity in eval mode. */
  forward(x: Tensor): Tensor {
    return channelDropout(this.constructor.name, this.spatial, x, this.p, this.training);
  }
}

/** Channel dropout of [N, C, L] or [C, L] (torch.nn.Dropout1d; default p 0.5). */
export class Dropout1d extends ChannelDropout {
  constructor(p = 0.5) {
    super(p, 1);
  }
}

/**
 * Channel dropout of [N, C, H, W] (torch.nn.Dropout2d; default p 0.5). A 3-d input is read as
 * [N, C, L], as PyTorch 1.13 does (not as an unbatched [C, H, W]).
 */
export class Dropout2d extends ChannelDropout {
  constructor(p = 0.5) {
    super(p, 2);
  }
}

/** Channel dropout of [N, C, D, H, W] or [C, D, H, W] (torch.nn.Dropout3d; default p 0.5). */
export class Dropout3d extends ChannelDropout {
  constructor(p = 0.5) {
    super(p, 3);
  }
}
