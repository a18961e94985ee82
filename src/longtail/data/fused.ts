// A one-pass kernel for the most common pipelines: uint8 -> optional random crop with zero
// padding -> optional horizontal flip -> optional rotation (nearest) -> normalization, written
// straight into the batch. It draws the same random numbers in the same order as
// compose(randomCrop, horizontalFlip, rotation, normalize), so both give the same batches; it
// only skips the intermediate float images (several times faster).
import type { Rng } from '../../util/rng.js';
import { InverseRotation, type ImageTransform } from './augment.js';

export interface FusedSpec {
  crop?: { height: number; width: number; padding: number };
  /** Flip probability; 0 = no flip and no random draw. */
  flipP: number;
  /** Random rotation range in degrees (nearest neighbour, zero fill); 0 or absent = none. */
  rotationDegrees?: number;
  mean: readonly number[];
  std: readonly number[];
}

/**
 * An ImageTransform that also carries its fused description (batch building prefers it), or the
 * reason it has none and can only be drawn on the host.
 */
export type FusableTransform = ImageTransform & { fused?: FusedSpec; hostOnly?: string };

export function withFused(t: ImageTransform, spec: FusedSpec): FusableTransform {
  return Object.assign(t, { fused: spec });
}

/** Marks a transform as drawn on the host only, with the reason the device pipeline reports. */
export function withHostOnly(t: ImageTransform, reason: string): FusableTransform {
  return Object.assign(t, { hostOnly: reason });
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
    if (oh > h + 2 * pad || ow > w + 2 * pad)
      throw new RangeError(`randomCrop ${oh}x${ow} is larger than the padded image`);
    top = rng.int(h + 2 * pad - oh + 1) - pad;
    left = rng.int(w + 2 * pad - ow + 1) - pad;
  }
  const flip = spec.flipP > 0 && rng.uniform() < spec.flipP;
  if (spec.mean.length !== c || spec.std.length !== c)
    throw new RangeError(`normalize has ${spec.mean.length} means for a ${c}-channel image`);
  if (spec.rotationDegrees) {
    const angle = ((rng.uniform() * 2 - 1) * spec.rotationDegrees * Math.PI) / 180;
    rotatedImage(src, srcOffset, c, h, w, oh, ow, top, left, flip, angle, spec, out, outOffset);
    return { h: oh, w: ow };
  }
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

/** Crop + flip + rotation through one source-index map shared by the channels. */
function rotatedImage(
  src: Uint8Array,
  srcOffset: number,
  c: number,
  h: number,
  w: number,
  oh: number,
  ow: number,
  top: number,
  left: number,
  flip: boolean,
  angle: number,
  spec: FusedSpec,
  out: Float32Array,
  outOffset: number,
): void {
  // the inverse map of rotate() in augment.ts, so the two paths agree pixel for pixel
  const rotation = new InverseRotation(oh, ow, angle);
  const map = new Int32Array(oh * ow);
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      const ix = Math.round(rotation.sourceX(x, y));
      const iy = Math.round(rotation.sourceY(x, y));
      let at = -1;
      if (ix >= 0 && ix < ow && iy >= 0 && iy < oh) {
        const sy = iy + top;
        const sx = (flip ? ow - 1 - ix : ix) + left;
        if (sy >= 0 && sy < h && sx >= 0 && sx < w) at = sy * w + sx;
      }
      map[y * ow + x] = at;
    }
  }
  for (let k = 0; k < c; k++) {
    const scale = 1 / (255 * spec.std[k]!);
    const bias = -spec.mean[k]! / spec.std[k]!;
    const srcPlane = srcOffset + k * h * w;
    const outPlane = outOffset + k * oh * ow;
    for (let p = 0; p < oh * ow; p++) {
      const at = map[p]!;
      out[outPlane + p] = at < 0 ? bias : src[srcPlane + at]! * scale + bias;
    }
  }
}
