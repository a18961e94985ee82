// torch.nn.functional's channel rearrangements (pixel_shuffle, pixel_unshuffle, channel_shuffle)
// and channel dropout (dropout1d/2d/3d), with PyTorch 1.13's input ranks; the layers of
// shuffle.ts call these. Re-exported by functional.ts.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { checkRank, size } from './layer-util.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

const shapeOf = (x: Tensor) => `[${x.shape.join(', ')}]`;

function atLeast(fn: string, x: unknown, rank: number, layout: string): Tensor {
  if (!(x instanceof Tensor)) checksOf(fn).fail('x', 'a Tensor', x);
  const t = x as Tensor;
  if (t.ndim < rank)
    throw new ArgumentError(
      `${fn}: the input must have at least ${rank} dimensions (${layout}), got shape ${shapeOf(t)}`,
    );
  return t;
}

/**
 * Rearranges [..., C r^2, H, W] into [..., C, H r, W r] (F.pixel_shuffle, the sub-pixel
 * convolution's upsampling): the channels must be divisible by upscaleFactor squared.
 */
export function pixelShuffle(x: Tensor, upscaleFactor: number): Tensor {
  return pixelShuffleOf('pixelShuffle', x, upscaleFactor);
}

/** pixelShuffle with errors named after `fn` (the layer's name). */
export function pixelShuffleOf(fn: string, x: Tensor, upscaleFactor: number): Tensor {
  const r = size(checksOf(fn), upscaleFactor, 'upscaleFactor');
  atLeast(fn, x, 3, '[..., C, H, W]');
  const channels = x.shape[x.ndim - 3]!;
  if (channels % (r * r) !== 0)
    throw new ArgumentError(
      `${fn}: upscaleFactor ${r} does not fit the input's ${channels} channels (shape ${shapeOf(x)}): they must be divisible by upscaleFactor squared (${r * r})`,
    );
  return aten.pixel_shuffle(x, r);
}

/** Rearranges [..., C, H r, W r] into [..., C r^2, H, W] (F.pixel_unshuffle, pixelShuffle undone). */
export function pixelUnshuffle(x: Tensor, downscaleFactor: number): Tensor {
  return pixelUnshuffleOf('pixelUnshuffle', x, downscaleFactor);
}

/** pixelUnshuffle with errors named after `fn`. */
export function pixelUnshuffleOf(fn: string, x: Tensor, downscaleFactor: number): Tensor {
  const r = size(checksOf(fn), downscaleFactor, 'downscaleFactor');
  atLeast(fn, x, 3, '[..., C, H, W]');
  const [h, w] = x.shape.slice(-2) as [number, number];
  if (h % r !== 0 || w % r !== 0)
    throw new ArgumentError(
      `${fn}: downscaleFactor ${r} does not divide the input's height ${h} and width ${w} (shape ${shapeOf(x)})`,
    );
  return aten.pixel_unshuffle(x, r);
}

/**
 * Splits the channels of [N, C, ...] into `groups` groups and interleaves them (F.channel_shuffle,
 * ShuffleNet's): [N, groups, C / groups, ...] transposed to [N, C / groups, groups, ...].
 */
export function channelShuffle(x: Tensor, groups: number): Tensor {
  return channelShuffleOf('channelShuffle', x, groups);
}

/** channelShuffle with errors named after `fn`. */
export function channelShuffleOf(fn: string, x: Tensor, groups: number): Tensor {
  const g = size(checksOf(fn), groups, 'groups');
  atLeast(fn, x, 3, '[N, C, ...] with at least one spatial dimension');
  const channels = x.shape[1]!;
  if (channels % g !== 0)
    throw new ArgumentError(
      `${fn}: groups ${g} does not divide the input's ${channels} channels (shape ${shapeOf(x)})`,
    );
  // reshape and transpose rather than ATen's channel_shuffle, which has no derivative in 1.13
  const rest = x.shape.slice(2);
  return tidy(() =>
    x
      .reshape(x.shape[0]!, g, channels / g, ...rest)
      .transpose(1, 2)
      .reshape(...x.shape),
  );
}

/** What channel dropout of `spatial` spatial dimensions takes: its ranks, and how a rank reads. */
const CHANNEL_DROPOUT: Record<1 | 2 | 3, { batched: number; layout: string }> = {
  1: { batched: 3, layout: '[N, C, L]' },
  // PyTorch 1.13 reads a 3-d input of dropout2d as [N, C, L] (batched), not as [C, H, W]
  2: { batched: 4, layout: '[N, C, H, W], or [N, C, L] read as batched as PyTorch 1.13 does' },
  3: { batched: 5, layout: '[N, C, D, H, W]' },
};

/**
 * Zeroes whole channels (dimension 1 of [N, C, ...], 0 of an unbatched [C, ...]) with probability
 * p when `training` and scales the others by 1 / (1 - p); the identity otherwise.
 */
export function channelDropout(
  fn: string,
  spatial: 1 | 2 | 3,
  x: Tensor,
  p: number,
  training: boolean,
): Tensor {
  checksOf(fn).number(p, 'p', { min: 0, max: 1 });
  if (!(x instanceof Tensor)) checksOf(fn).fail('x', 'a Tensor', x);
  const { batched, layout } = CHANNEL_DROPOUT[spatial];
  if (spatial === 2) {
    if (x.ndim !== 3 && x.ndim !== 4)
      throw new ArgumentError(`${fn}: the input must be 3-d or 4-d (${layout}), got shape ${shapeOf(x)}`);
    return aten.feature_dropout(x, p, training);
  }
  checkRank(fn, x, batched, layout);
  if (x.ndim === batched) return aten.feature_dropout(x, p, training);
  return tidy(() => aten.feature_dropout(x.unsqueeze(0), p, training).squeeze(0));
}

/** Channel dropout of [N, C, L] or [C, L] (F.dropout1d). */
export function dropout1d(x: Tensor, p = 0.5, training = true): Tensor {
  return channelDropout('dropout1d', 1, x, p, training);
}

/** Channel dropout of [N, C, H, W] (F.dropout2d; a 3-d input is read as [N, C, L], as PyTorch 1.13 does). */
export function dropout2d(x: Tensor, p = 0.5, training = true): Tensor {
  return channelDropout('dropout2d', 2, x, p, training);
}

/** Channel dropout of [N, C, D, H, W] or [C, D, H, W] (F.dropout3d). */
export function dropout3d(x: Tensor, p = 0.5, training = true): Tensor {
  return channelDropout('dropout3d', 3, x, p, training);
}
