// A one-pass kernel for the most common pipelines: uint8 -> optional random crop with zero
// padding -> optional horizontal flip -> normalization, written straight into the batch. It draws
// the same random numbers in the same order as compose(randomCrop, horizontalFlip, normalize), so
// both give identical batches; it only skips the intermediate float images (about 4x faster).
import type { Rng } from '../../torch/rng.js';
import type { ImageTransform } from './augment.js';

export interface FusedSpec {
  crop?: { height: number; width: number; padding: number };
  /** Flip probability; 0 = no flip and no random draw. */
  flipP: number;
  mean: readonly number[];
  std: readonly number[];
}

/** An ImageTransform that also carries its fused description; batch building prefers the latter. */
export type FusableTransform = ImageTransform & { fused?: FusedSpec };

export function withFused(t: ImageTransform, spec: FusedSpec): FusableTransform {
  return Object.assign(t, { fused: spec });
}

/** Writes the transformed image `src` (c x h x w uint8 at `srcOffset`) into `out` at `outOffset`. */
export function fusedImage(
  src: Uint8Array,
  srcOffset: number,
  c: number,
  h: number,
  w: number,
  spec: FusedSpec,
  rng: Rng,
  out: Float32Array,
  outOffset: number,
): { h: number; w: number } {
  const oh = spec.crop ? spec.crop.height : h;
  const ow = spec.crop ? spec.crop.width : w;
  let top = 0;
  let left = 0;
  if (spec.crop) {
    const pad = spec.crop.padding;
    if (oh > h + 2 * pad || ow > w + 2 * pad) throw new RangeError(`randomCrop ${oh}x${ow} is larger than the padded image`);
    top = rng.int(h + 2 * pad - oh + 1) - pad;
    left = rng.int(w + 2 * pad - ow + 1) - pad;
  }
  const flip = spec.flipP > 0 && rng.uniform() < spec.flipP;
  if (spec.mean.length !== c || spec.std.length !== c) throw new RangeError(`normalize has ${spec.mean.length} means for a ${c}-channel image`);
  for (let k = 0; k < c; k++) {
    const scale = 1 / (255 * spec.std[k]!);
    const bias = -spec.mean[k]! / spec.std[k]!;
    const srcPlane = srcOffset + k * h * w;
    const outPlane = outOffset + k * oh * ow;
    for (let y = 0; y < oh; y++) {
      const sy = y + top;
      const row = outPlane + y * ow;
      if (sy < 0 || sy >= h) {
        out.fill(bias, row, row + ow);
        continue;
      }
      const srcRow = srcPlane + sy * w;
      if (!flip) {
        for (let x = 0; x < ow; x++) {
          const sx = x + left;
          out[row + x] = sx >= 0 && sx < w ? src[srcRow + sx]! * scale + bias : bias;
        }
      } else {
        for (let x = 0; x < ow; x++) {
          const sx = ow - 1 - x + left;
          out[row + x] = sx >= 0 && sx < w ? src[srcRow + sx]! * scale + bias : bias;
        }
      }
    }
  }
  return { h: oh, w: ow };
}
