// Device-resident training batches: the training set is uploaded once to the model's device as
// uint8 (N x C x H x W), and every batch is gathered, randomly cropped with zero padding, flipped,
// normalized (and mixed up) there with tensor ops, so that no image crosses the host-device link
// during an epoch and the CPU only issues kernels. The distribution is the host pipeline's
// (fused.ts): crop offsets uniform over the padded range, a flip with probability flipP, the
// normalization computed as the host computes it (float64 multiply-add, one rounding to
// float32, so a batch with the same offsets and flips is bit for bit the host's). The random
// draws come from the device's default generator, which the run seeds (manualSeed) and every
// checkpoint stores (torchRngState, cudaRngStates), so a resumed run continues exactly; the epoch
// order is the host pipeline's own seeded order (epochOrder), uploaded once per epoch.
// Rotation, AutoAugment (BalPoE's long-training CIFAR-100 recipe) and the image-list pipelines
// (RandomResizedCrop, color jitter, decoding) are not drawn here: those runs keep the host pipeline.
import * as torch from '../../torch/index.js';
import { UserError } from '../../util/errors.js';
import type { Rng } from '../../util/rng.js';
import { batchIndices, epochOrder, type BatchOptions } from './batches.js';
import type { FusableTransform, FusedSpec } from './fused.js';
import type { ImageTransform } from './augment.js';
import type { ImageDataset } from './types.js';

/** The training set does not fit the budget for device-resident data (the message names the remedy). */
export class DeviceDataTooLargeError extends UserError {}

/** The training set's pipeline cannot be drawn on the device (the message says why and what to do). */
export class DevicePipelineUnsupportedError extends UserError {}

/** Default budget for the uploaded training set: 4 GiB (CIFAR-100 is 150 MiB, Fashion-MNIST 47 MiB). */
export const DEFAULT_DEVICE_DATA_BYTES = 4 * 1024 ** 3;

/** What the device draws: the fused pipeline's crop, flip and normalization (no rotation). */
export type DeviceAugment = Omit<FusedSpec, 'rotationDegrees'>;

/**
 * The transform's device description, or the reason it has none: only the fused CIFAR /
 * Fashion-MNIST training pipelines without rotation or AutoAugment (and plain normalization) can
 * be drawn on the device.
 */
export function deviceAugmentOf(transform: ImageTransform): DeviceAugment | string {
  const { fused: spec, hostOnly } = transform as FusableTransform;
  if (hostOnly) return hostOnly;
  if (!spec) return 'its augmentation (RandomResizedCrop, color jitter) runs on the host only';
  if (spec.rotationDegrees) return 'random rotation runs on the host only';
  const { crop, flipP, mean, std } = spec;
  return { ...(crop ? { crop } : {}), flipP, mean, std };
}

/** One step's tensors on the device. */
export interface DeviceBatch {
  x: torch.Tensor;
  y: torch.Tensor;
  n: number;
}

/**
 * crop + flip + normalization of uint8 images (n x c x h x w, on any device) with the device's
 * generator: the host pipeline's distribution, the host's arithmetic.
 */
export function augmentOnDevice(images: torch.Tensor, spec: DeviceAugment): torch.Tensor {
  return torch.tidy(() => {
    const [n, c, h, w] = images.shape as [number, number, number, number];
    const device = images.device;
    if (spec.mean.length !== c || spec.std.length !== c)
      throw new RangeError(`normalize has ${spec.mean.length} means for a ${c}-channel image`);
    let src = images;
    let oh = h;
    let ow = w;
    let top: torch.Tensor | null = null;
    let left: torch.Tensor | null = null;
    if (spec.crop) {
      const { height, width, padding: p } = spec.crop;
      if (height > h + 2 * p || width > w + 2 * p)
        throw new RangeError(`randomCrop ${height}x${width} is larger than the padded image`);
      src = torch.aten.constant_pad_nd(images, [p, p, p, p], 0);
      oh = height;
      ow = width;
      // offsets into the padded image, uniform over its whole range (the host's rng.int(h + 2p - oh + 1))
      top = torch.randint(0, h + 2 * p - oh + 1, [n, 1], 'int64', device);
      left = torch.randint(0, w + 2 * p - ow + 1, [n, 1], 'int64', device);
    }
    const sw = src.shape[3]!;
    const ys = torch.arange(0, oh, 1, 'int64', device).view(1, oh);
    const xs = torch.arange(0, ow, 1, 'int64', device).view(1, ow);
    const rows = top ? ys.add(top) : ys.expand(n, oh);
    let cols = left ? xs.add(left) : xs.expand(n, ow);
    if (spec.flipP > 0) {
      const flip = torch.rand([n, 1], 'float32', device).lt(spec.flipP);
      // a flipped row reads its source columns right to left (the host's ow - 1 - x + left)
      const mirrored = xs.flip(1);
      cols = torch.where(flip, left ? mirrored.add(left) : mirrored.expand(n, ow), cols);
    }
    const byRow = src.gather(2, rows.view(n, 1, oh, 1).expand(n, c, oh, sw));
    const cropped = byRow.gather(3, cols.view(n, 1, 1, ow).expand(n, c, oh, ow));
    // (v * scale + bias) in float64, rounded once to float32: the host's arithmetic exactly
    const scale = torch
      .tensor(Float64Array.from(spec.std, (s) => 1 / (255 * s)), { shape: [1, c, 1, 1] })
      .to(device);
    const bias = torch
      .tensor(
        Float64Array.from(spec.mean, (m, k) => -m / spec.std[k]!),
        { shape: [1, c, 1, 1] },
      )
      .to(device);
    return cropped.to('float64').mul(scale).add(bias).to('float32');
  });
}

/**
 * mixup on the device: lam ~ Beta(alpha, alpha) drawn on the host from the step's generator (a
 * number the loss needs, so no read-back), the partner permutation drawn on the device.
 */
export function mixupOnDevice(
  x: torch.Tensor,
  y: torch.Tensor,
  alpha: number,
  rng: Rng,
): { x: torch.Tensor; yB: torch.Tensor; lam: number } {
  const g1 = rng.gamma(alpha);
  const g2 = rng.gamma(alpha);
  const lam = g1 / (g1 + g2);
  const n = x.shape[0]!;
  const perm = torch.randperm(n, 'int64', x.device);
  const mixed = x.mul(lam).add(x.indexSelect(0, perm).mul(1 - lam));
  return { x: mixed, yB: y.indexSelect(0, perm), lam };
}

export interface DeviceBatchSourceOptions {
  /** Upper bound on the uploaded images in bytes (default DEFAULT_DEVICE_DATA_BYTES). */
  maxBytes?: number;
}

/** A training set held on a device, drawing augmented batches there. */
export class DeviceBatchSource {
  private readonly images: torch.Tensor;
  private readonly labels: torch.Tensor;
  readonly device: torch.Device;

  constructor(
    private readonly ds: ImageDataset,
    readonly augment: DeviceAugment,
    device: torch.DeviceLike,
    options: DeviceBatchSourceOptions = {},
  ) {
    this.device = torch.parseDevice(device);
    const [c, h, w] = ds.shape;
    const n = ds.labels.length;
    const bytes = ds.images.length;
    const limit = options.maxBytes ?? DEFAULT_DEVICE_DATA_BYTES;
    const remedy =
      'train with the host pipeline instead (data_loader.args.on_device: false), or use fewer images (n_max)';
    // bounded before anything is allocated on the device
    if (bytes > limit)
      throw new DeviceDataTooLargeError(
        `the training set (${n} images of ${c}x${h}x${w}, ${mib(bytes)} MiB) exceeds the ${mib(limit)} MiB budget for device-resident data on ${this.device.name}; ${remedy}`,
      );
    try {
      this.images = torch.keep(
        torch.tidy(() =>
          torch
            .tensor(ds.images.subarray(0, n * c * h * w), { shape: [n, c, h, w], dtype: 'uint8' })
            .to(this.device),
        ),
      );
    } catch (error) {
      throw new DeviceDataTooLargeError(
        `the training set (${mib(bytes)} MiB) could not be uploaded to ${this.device.name} (${(error as Error).message.split('\n')[0]}); ${remedy}`,
        { cause: error },
      );
    }
    this.labels = torch.keep(torch.tidy(() => torch.tensor(ds.labels).long().to(this.device)));
  }

  /**
   * One epoch: the host pipeline's seeded order (sampler, shard), uploaded once; each item draws
   * its batch when called (inside the caller's tidy scope, so its tensors are freed with the step).
   */
  *epoch(options: Omit<BatchOptions, 'transform' | 'views' | 'pool'>): Generator<{ n: number; draw: () => DeviceBatch }> {
    const order = epochOrder(this.ds.labels, options);
    const chunks = batchIndices(order, options.batchSize, options.dropLast);
    const orderT = torch.keep(torch.tidy(() => torch.tensor(order).long().to(this.device)));
    try {
      let start = 0;
      for (const chunk of chunks) {
        const at = start;
        const n = chunk.length;
        start += n;
        yield {
          n,
          draw: () => {
            const index = orderT.narrow(0, at, n);
            const x = augmentOnDevice(this.images.indexSelect(0, index), this.augment);
            return { x, y: this.labels.indexSelect(0, index), n };
          },
        };
      }
    } finally {
      orderT.dispose();
    }
  }

  dispose(): void {
    torch.dispose([this.images, this.labels]);
  }
}

function mib(bytes: number): string {
  return (bytes / 1024 ** 2).toFixed(1);
}
