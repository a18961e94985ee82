// Photometric augmentation on float CHW images in [0, 1]: torchvision's ColorJitter (brightness,
// contrast, saturation, hue in a random order), RandomGrayscale, a Gaussian blur with a random
// sigma (MoCo / SADE's GaussianBlur([0.1, 2.0])), and per-channel normalization.
import type { ImageTransform, ImageView } from './augment.js';

const clamp01 = (v: number): number => (v < 0 ? 0 : v > 1 ? 1 : v);

/** ITU-R 601 luma, as torchvision's rgb_to_grayscale. */
function luma(img: ImageView, p: number): number {
  const plane = img.h * img.w;
  return 0.299 * img.data[p]! + 0.587 * img.data[plane + p]! + 0.114 * img.data[2 * plane + p]!;
}

export function adjustBrightness(img: ImageView, factor: number): ImageView {
  const d = img.data;
  for (let i = 0; i < d.length; i++) d[i] = clamp01(d[i]! * factor);
  return img;
}

export function adjustContrast(img: ImageView, factor: number): ImageView {
  const plane = img.h * img.w;
  let mean = 0;
  if (img.c === 3) for (let p = 0; p < plane; p++) mean += luma(img, p);
  else for (let p = 0; p < plane; p++) mean += img.data[p]!;
  mean /= plane;
  const d = img.data;
  for (let i = 0; i < d.length; i++) d[i] = clamp01(factor * d[i]! + (1 - factor) * mean);
  return img;
}

export function adjustSaturation(img: ImageView, factor: number): ImageView {
  if (img.c !== 3) return img;
  const plane = img.h * img.w;
  const d = img.data;
  for (let p = 0; p < plane; p++) {
    const g = (1 - factor) * luma(img, p);
    d[p] = clamp01(factor * d[p]! + g);
    d[plane + p] = clamp01(factor * d[plane + p]! + g);
    d[2 * plane + p] = clamp01(factor * d[2 * plane + p]! + g);
  }
  return img;
}

/** Shifts the hue by `shift` (in turns, -0.5..0.5) through HSV, as torchvision's adjust_hue. */
export function adjustHue(img: ImageView, shift: number): ImageView {
  if (img.c !== 3) return img;
  const plane = img.h * img.w;
  const d = img.data;
  for (let p = 0; p < plane; p++) {
    const r = d[p]!;
    const g = d[plane + p]!;
    const b = d[2 * plane + p]!;
    const max = Math.max(r, g, b);
    const min = Math.min(r, g, b);
    const delta = max - min;
    let h = 0;
    if (delta > 0) {
      if (max === r) h = ((g - b) / delta) % 6;
      else if (max === g) h = (b - r) / delta + 2;
      else h = (r - g) / delta + 4;
      h /= 6;
    }
    h = (((h + shift) % 1) + 1) % 1;
    const s = max === 0 ? 0 : delta / max;
    const v = max;
    const i = Math.floor(h * 6);
    const f = h * 6 - i;
    const pp = v * (1 - s);
    const q = v * (1 - s * f);
    const t = v * (1 - s * (1 - f));
    let r2: number, g2: number, b2: number;
    switch (i % 6) {
      case 0:
        r2 = v;
        g2 = t;
        b2 = pp;
        break;
      case 1:
        r2 = q;
        g2 = v;
        b2 = pp;
        break;
      case 2:
        r2 = pp;
        g2 = v;
        b2 = t;
        break;
      case 3:
        r2 = pp;
        g2 = q;
        b2 = v;
        break;
      case 4:
        r2 = t;
        g2 = pp;
        b2 = v;
        break;
      default:
        r2 = v;
        g2 = pp;
        b2 = q;
    }
    d[p] = r2;
    d[plane + p] = g2;
    d[2 * plane + p] = b2;
  }
  return img;
}

/**
 * torchvision ColorJitter(brightness, contrast, saturation, hue): each factor drawn uniformly
 * (brightness/contrast/saturation in [max(0, 1-v), 1+v], hue in [-v, v]), applied in a random order.
 */
export function colorJitter(brightness = 0, contrast = 0, saturation = 0, hue = 0): ImageTransform {
  if (hue < 0 || hue > 0.5) throw new RangeError(`colorJitter hue must be in [0, 0.5], got ${hue}`);
  return (img, rng) => {
    const order = rng.permutation(4);
    const factor = (v: number): number => Math.max(0, 1 - v) + rng.uniform() * (1 + v - Math.max(0, 1 - v));
    const b = brightness > 0 ? factor(brightness) : undefined;
    const c = contrast > 0 ? factor(contrast) : undefined;
    const s = saturation > 0 ? factor(saturation) : undefined;
    const h = hue > 0 ? (rng.uniform() * 2 - 1) * hue : undefined;
    for (const k of order) {
      if (k === 0 && b !== undefined) adjustBrightness(img, b);
      else if (k === 1 && c !== undefined) adjustContrast(img, c);
      else if (k === 2 && s !== undefined) adjustSaturation(img, s);
      else if (k === 3 && h !== undefined) adjustHue(img, h);
    }
    return img;
  };
}

/** torchvision RandomGrayscale(p) with 3 output channels (the image keeps its shape). */
export function grayscale(p = 1): ImageTransform {
  return (img, rng) => {
    if (img.c !== 3 || !(rng.uniform() < p)) return img;
    const plane = img.h * img.w;
    for (let q = 0; q < plane; q++) {
      const g = luma(img, q);
      img.data[q] = g;
      img.data[plane + q] = g;
      img.data[2 * plane + q] = g;
    }
    return img;
  };
}

/** Gaussian blur with sigma uniform in [sigmaMin, sigmaMax]; kernel radius ceil(3 sigma), edges reflected. */
export function gaussianBlur(sigmaMin = 0.1, sigmaMax = 2.0): ImageTransform {
  return (img, rng) => blur(img, sigmaMin + rng.uniform() * (sigmaMax - sigmaMin));
}

export function blur(img: ImageView, sigma: number): ImageView {
  const radius = Math.max(1, Math.ceil(3 * sigma));
  const kernel = new Float32Array(2 * radius + 1);
  let sum = 0;
  for (let k = -radius; k <= radius; k++)
    sum += kernel[k + radius] = Math.exp((-k * k) / (2 * sigma * sigma));
  for (let k = 0; k < kernel.length; k++) kernel[k]! /= sum;
  const { h, w } = img;
  // reflected coordinates precomputed once: xs[x + k + radius] is the source column of x + k
  const reflect = (i: number, n: number): number => {
    if (n === 1) return 0;
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  };
  const xs = Int32Array.from({ length: w + 2 * radius }, (_, i) => reflect(i - radius, w));
  const ys = Int32Array.from({ length: h + 2 * radius }, (_, i) => reflect(i - radius, h) * w);
  const taps = kernel.length;
  const tmp = new Float32Array(h * w);
  for (let c = 0; c < img.c; c++) {
    const plane = img.data.subarray(c * h * w, (c + 1) * h * w);
    for (let y = 0; y < h; y++) {
      const row = y * w;
      for (let x = 0; x < w; x++) {
        let v = 0;
        for (let k = 0; k < taps; k++) v += kernel[k]! * plane[row + xs[x + k]!]!;
        tmp[row + x] = v;
      }
    }
    for (let y = 0; y < h; y++) {
      for (let x = 0; x < w; x++) {
        let v = 0;
        for (let k = 0; k < taps; k++) v += kernel[k]! * tmp[ys[y + k]! + x]!;
        plane[y * w + x] = v;
      }
    }
  }
  return img;
}

/** (x - mean[c]) / std[c] per channel (torchvision Normalize), in place. */
export function normalize(mean: readonly number[], std: readonly number[]): ImageTransform {
  return (img) => {
    if (mean.length !== img.c || std.length !== img.c) {
      throw new RangeError(
        `normalize has ${mean.length} means / ${std.length} stds for a ${img.c}-channel image`,
      );
    }
    const plane = img.h * img.w;
    for (let c = 0; c < img.c; c++) {
      const m = mean[c]!;
      const s = 1 / std[c]!;
      for (let p = c * plane; p < (c + 1) * plane; p++) img.data[p] = (img.data[p]! - m) * s;
    }
    return img;
  };
}
