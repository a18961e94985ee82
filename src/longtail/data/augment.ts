// Image augmentation on float CHW images (values in [0, 1] before normalization), the per-image
// building blocks of the training and test pipelines. Every random draw comes from the Rng
// passed in, so a pipeline run with the same seed gives the same batch. Geometric transforms
// follow torchvision's definitions (RandomCrop with padding, RandomHorizontalFlip,
// RandomRotation, RandomResizedCrop).
import type { Rng } from '../../util/rng.js';

/** One image: data is c x h x w, channel-major. */
export interface ImageView {
  data: Float32Array;
  c: number;
  h: number;
  w: number;
}

/** A per-image transform; it may work in place and return its input, or return a new image. */
export type ImageTransform = (img: ImageView, rng: Rng) => ImageView;

export function compose(...transforms: ImageTransform[]): ImageTransform {
  return (img, rng) => transforms.reduce((x, t) => t(x, rng), img);
}

/** Applies `t` with probability p (torchvision RandomApply). */
export function randomApply(t: ImageTransform, p: number): ImageTransform {
  return (img, rng) => (rng.uniform() < p ? t(img, rng) : img);
}

/** torchvision RandomCrop(size, padding): zero-pad by `padding`, then crop at a random offset. */
export function randomCrop(height: number, width: number = height, padding = 0, fill = 0): ImageTransform {
  return (img, rng) => {
    const ph = img.h + 2 * padding;
    const pw = img.w + 2 * padding;
    if (height > ph || width > pw)
      throw new RangeError(`randomCrop ${height}x${width} is larger than the padded image ${ph}x${pw}`);
    const top = rng.int(ph - height + 1) - padding;
    const left = rng.int(pw - width + 1) - padding;
    return cropPadded(img, top, left, height, width, fill);
  };
}

/** The h x w window at (top, left) of img, with `fill` outside the image. */
export function cropPadded(
  img: ImageView,
  top: number,
  left: number,
  height: number,
  width: number,
  fill = 0,
): ImageView {
  const out = new Float32Array(img.c * height * width);
  if (fill !== 0) out.fill(fill);
  const y0 = Math.max(0, -top);
  const y1 = Math.min(height, img.h - top);
  const x0 = Math.max(0, -left);
  const x1 = Math.min(width, img.w - left);
  for (let c = 0; c < img.c; c++) {
    const src = c * img.h * img.w;
    const dst = c * height * width;
    for (let y = y0; y < y1; y++) {
      const s = src + (y + top) * img.w + left;
      out.set(img.data.subarray(s + x0, s + x1), dst + y * width + x0);
    }
  }
  return { data: out, c: img.c, h: height, w: width };
}

/** torchvision RandomHorizontalFlip(p), in place. */
export function horizontalFlip(p = 0.5): ImageTransform {
  return (img, rng) => {
    if (!(rng.uniform() < p)) return img;
    const { data, w } = img;
    for (let row = 0; row < img.c * img.h; row++) {
      const base = row * w;
      for (let x = 0, y = w - 1; x < y; x++, y--) {
        const t = data[base + x]!;
        data[base + x] = data[base + y]!;
        data[base + y] = t;
      }
    }
    return img;
  };
}

/**
 * torchvision RandomRotation(degrees): an angle uniform in [-degrees, degrees], counter-clockwise,
 * about the image center, same size, `fill` outside; nearest (torchvision's default) or bilinear.
 */
export function rotation(
  degrees: number,
  interpolation: 'nearest' | 'bilinear' = 'nearest',
  fill = 0,
): ImageTransform {
  return (img, rng) => {
    const angle = ((rng.uniform() * 2 - 1) * degrees * Math.PI) / 180;
    return rotate(img, angle, interpolation, fill);
  };
}

export function rotate(
  img: ImageView,
  angle: number,
  interpolation: 'nearest' | 'bilinear' = 'nearest',
  fill = 0,
): ImageView {
  const { c, h, w, data } = img;
  const out = new Float32Array(c * h * w);
  const plane = h * w;
  const rotation = new InverseRotation(h, w, angle);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const sx = rotation.sourceX(x, y);
      const sy = rotation.sourceY(x, y);
      const o = y * w + x;
      if (interpolation === 'nearest') {
        const ix = Math.round(sx);
        const iy = Math.round(sy);
        const inside = ix >= 0 && ix < w && iy >= 0 && iy < h;
        for (let k = 0; k < c; k++) out[k * plane + o] = inside ? data[k * plane + iy * w + ix]! : fill;
      } else {
        for (let k = 0; k < c; k++) out[k * plane + o] = sampleBilinear(data, k * plane, h, w, sy, sx, fill);
      }
    }
  }
  return { data: out, c, h, w };
}

/**
 * The inverse map of a rotation by `angle` about the centre of an h x w image: the source
 * position that output pixel (x, y) samples (the content turns counter-clockwise). The fused
 * kernel uses it too, so both paths agree pixel for pixel.
 */
export class InverseRotation {
  private readonly cos: number;
  private readonly sin: number;
  private readonly cx: number;
  private readonly cy: number;

  constructor(h: number, w: number, angle: number) {
    this.cos = Math.cos(angle);
    this.sin = Math.sin(angle);
    this.cy = (h - 1) / 2;
    this.cx = (w - 1) / 2;
  }

  sourceX(x: number, y: number): number {
    return this.cx + (x - this.cx) * this.cos - (y - this.cy) * this.sin;
  }

  sourceY(x: number, y: number): number {
    return this.cy + (x - this.cx) * this.sin + (y - this.cy) * this.cos;
  }
}

function sampleBilinear(
  data: Float32Array,
  base: number,
  h: number,
  w: number,
  y: number,
  x: number,
  fill: number,
): number {
  const x0 = Math.floor(x);
  const y0 = Math.floor(y);
  const fx = x - x0;
  const fy = y - y0;
  const at = (yy: number, xx: number): number =>
    yy >= 0 && yy < h && xx >= 0 && xx < w ? data[base + yy * w + xx]! : fill;
  return (
    (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x0 + 1)) +
    fy * ((1 - fx) * at(y0 + 1, x0) + fx * at(y0 + 1, x0 + 1))
  );
}

/** Bilinear resize of the (top, left, height, width) region to outH x outW (align_corners = false). */
export function resizedCrop(
  img: ImageView,
  top: number,
  left: number,
  height: number,
  width: number,
  outH: number,
  outW: number,
): ImageView {
  const out = new Float32Array(img.c * outH * outW);
  const sy = height / outH;
  const sx = width / outW;
  const plane = img.h * img.w;
  for (let y = 0; y < outH; y++) {
    const fyAbs = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), height - 1);
    const y0 = Math.floor(fyAbs);
    const y1 = Math.min(y0 + 1, height - 1);
    const fy = fyAbs - y0;
    for (let x = 0; x < outW; x++) {
      const fxAbs = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), width - 1);
      const x0 = Math.floor(fxAbs);
      const x1 = Math.min(x0 + 1, width - 1);
      const fx = fxAbs - x0;
      for (let k = 0; k < img.c; k++) {
        const b = k * plane;
        const r0 = b + (top + y0) * img.w + left;
        const r1 = b + (top + y1) * img.w + left;
        const v =
          (1 - fy) * ((1 - fx) * img.data[r0 + x0]! + fx * img.data[r0 + x1]!) +
          fy * ((1 - fx) * img.data[r1 + x0]! + fx * img.data[r1 + x1]!);
        out[k * outH * outW + y * outW + x] = v;
      }
    }
  }
  return { data: out, c: img.c, h: outH, w: outW };
}

/** torchvision RandomResizedCrop.get_params: 10 tries at a random area and aspect, then a central fallback. */
export function randomResizedCropBox(
  h: number,
  w: number,
  rng: Rng,
  scale: [number, number] = [0.08, 1],
  ratio: [number, number] = [3 / 4, 4 / 3],
): { top: number; left: number; height: number; width: number } {
  const area = h * w;
  const logRatio = [Math.log(ratio[0]), Math.log(ratio[1])] as const;
  for (let attempt = 0; attempt < 10; attempt++) {
    const target = area * (scale[0] + rng.uniform() * (scale[1] - scale[0]));
    const aspect = Math.exp(logRatio[0] + rng.uniform() * (logRatio[1] - logRatio[0]));
    const cw = Math.round(Math.sqrt(target * aspect));
    const ch = Math.round(Math.sqrt(target / aspect));
    if (cw > 0 && cw <= w && ch > 0 && ch <= h) {
      return { top: rng.int(h - ch + 1), left: rng.int(w - cw + 1), height: ch, width: cw };
    }
  }
  const inRatio = w / h;
  let cw = w;
  let ch = h;
  if (inRatio < Math.min(...ratio)) ch = Math.round(cw / Math.min(...ratio));
  else if (inRatio > Math.max(...ratio)) cw = Math.round(ch * Math.max(...ratio));
  return { top: Math.floor((h - ch) / 2), left: Math.floor((w - cw) / 2), height: ch, width: cw };
}

export function randomResizedCrop(
  height: number,
  width: number = height,
  scale: [number, number] = [0.08, 1],
  ratio: [number, number] = [3 / 4, 4 / 3],
): ImageTransform {
  return (img, rng) => {
    const box = randomResizedCropBox(img.h, img.w, rng, scale, ratio);
    return resizedCrop(img, box.top, box.left, box.height, box.width, height, width);
  };
}

/** Center crop (test transform), zero-padded if the image is smaller. */
export function centerCrop(height: number, width: number = height): ImageTransform {
  return (img) =>
    cropPadded(img, Math.floor((img.h - height) / 2), Math.floor((img.w - width) / 2), height, width);
}
