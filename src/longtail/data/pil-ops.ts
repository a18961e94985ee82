// The 8-bit pixel operations AutoAugment and RandAugment are defined with, computed as Pillow 9.4
// computes them on an RGB image, so that a policy draws the same pixels as the reference's PIL
// pipeline: ImageOps (invert, posterize, solarize, autocontrast, equalize), the solarize-add
// table of the RandAugment reference, and ImageEnhance (a blend with a degenerate image, in
// Pillow's float32 arithmetic with truncation). The geometric operations (Image.transform's
// affine resampling, Image.rotate) are in pil-affine.ts. Checked pixel for pixel against Pillow
// by test/longtail/autoaugment.test.ts and test/longtail/randaugment.test.ts
// (scripts/golden/autoaugment.py, scripts/golden/randaugment.py).

/** An 8-bit RGB image, channel-major (3 x h x w), the form the augmentation policies work on. */
export interface ByteImage {
  data: Uint8Array;
  h: number;
  w: number;
}

const f32 = Math.fround;

/** A blank image of the size of `img`, every pixel `fill` (one value per channel). */
export function blank(img: ByteImage, fill: readonly number[]): ByteImage {
  const out = new Uint8Array(img.data.length);
  const plane = img.h * img.w;
  for (let c = 0; c < 3; c++) out.fill(fill[c]!, c * plane, (c + 1) * plane);
  return { data: out, h: img.h, w: img.w };
}

/** Maps every channel through its own 256-entry table (Image.point). */
function pointPerChannel(img: ByteImage, luts: readonly Uint8Array[]): ByteImage {
  const plane = img.h * img.w;
  // the pixels and the loop's end in locals: V8 then keeps the loop free of property loads
  const src = img.data;
  const out = new Uint8Array(src.length);
  for (let c = 0; c < 3; c++) {
    const lut = luts[c]!;
    const end = (c + 1) * plane;
    for (let p = c * plane; p < end; p++) out[p] = lut[src[p]!]!;
  }
  return { data: out, h: img.h, w: img.w };
}

function point(img: ByteImage, map: (v: number) => number): ByteImage {
  const lut = Uint8Array.from({ length: 256 }, (_, v) => map(v));
  return pointPerChannel(img, [lut, lut, lut]);
}

function histogram(img: ByteImage, c: number): Float64Array {
  const plane = img.h * img.w;
  const src = img.data;
  const h = new Float64Array(256);
  const end = (c + 1) * plane;
  for (let p = c * plane; p < end; p++) h[src[p]!]!++;
  return h;
}

/** ImageOps.invert: 255 - v. */
export function invert(img: ByteImage): ByteImage {
  return point(img, (v) => 255 - v);
}

/** ImageOps.posterize: keeps the top `bits` bits of every value. */
export function posterize(img: ByteImage, bits: number): ByteImage {
  const mask = ~(2 ** (8 - bits) - 1) & 255;
  return point(img, (v) => v & mask);
}

/** ImageOps.solarize: values at or above the threshold are inverted. */
export function solarize(img: ByteImage, threshold: number): ByteImage {
  return point(img, (v) => (v < threshold ? v : 255 - v));
}

/**
 * RandAugment's SolarizeAdd (a table through Image.point, not an ImageOps function): `add` is
 * added to the values below `threshold`, capped at 255; the others are kept.
 */
export function solarizeAdd(img: ByteImage, add: number, threshold = 128): ByteImage {
  return point(img, (v) => (v < threshold ? Math.min(255, v + add) : v));
}

/** ImageOps.autocontrast (no cutoff): each channel's range stretched to 0..255, truncated. */
export function autocontrast(img: ByteImage): ByteImage {
  const luts = [0, 1, 2].map((c) => {
    const h = histogram(img, c);
    let lo = 0;
    while (lo < 255 && !h[lo]) lo++;
    let hi = 255;
    while (hi > 0 && !h[hi]) hi--;
    if (hi <= lo) return Uint8Array.from({ length: 256 }, (_, v) => v);
    const scale = 255 / (hi - lo);
    const offset = -lo * scale;
    return Uint8Array.from({ length: 256 }, (_, v) => Math.min(255, Math.max(0, Math.trunc(v * scale + offset))));
  });
  return pointPerChannel(img, luts);
}

/**
 * ImageOps.equalize: each channel through its cumulative histogram, with Pillow's integer steps
 * (the last occupied level left out of the step; a channel with one level or a zero step kept).
 */
export function equalize(img: ByteImage): ByteImage {
  const luts = [0, 1, 2].map((c) => {
    const h = histogram(img, c);
    const used = Array.from(h).filter((n) => n > 0);
    const identity = Uint8Array.from({ length: 256 }, (_, v) => v);
    if (used.length <= 1) return identity;
    const total = used.reduce((a, b) => a + b, 0);
    const step = Math.floor((total - used[used.length - 1]!) / 255);
    if (!step) return identity;
    const lut = new Uint8Array(256);
    let n = Math.floor(step / 2);
    for (let v = 0; v < 256; v++) {
      // Image.point clips the table to 0..255 (the levels above the last occupied one overflow)
      lut[v] = Math.min(255, Math.floor(n / step));
      n += h[v]!;
    }
    return lut;
  });
  return pointPerChannel(img, luts);
}

/** Image.convert('L'): ITU-R 601-2 luma in Pillow's 16-bit fixed point. */
function luma(r: number, g: number, b: number): number {
  return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16;
}

/**
 * Image.blend(degenerate, img, factor), ImageEnhance's formula: degenerate + factor * (img -
 * degenerate) in float32, truncated to 8 bits; clipped to 0..255 when extrapolating.
 */
function blend(degenerate: ByteImage, img: ByteImage, factor: number): ByteImage {
  const alpha = f32(factor);
  if (alpha === 0) return { ...degenerate, data: degenerate.data.slice() };
  if (alpha === 1) return { ...img, data: img.data.slice() };
  const a = degenerate.data;
  const b = img.data;
  const n = b.length;
  const out = new Uint8Array(n);
  // one loop per case, so that neither tests the case per byte
  if (alpha >= 0 && alpha <= 1) {
    for (let p = 0; p < n; p++) out[p] = Math.trunc(f32(a[p]! + f32(alpha * (b[p]! - a[p]!))));
  } else {
    for (let p = 0; p < n; p++) {
      const v = f32(a[p]! + f32(alpha * (b[p]! - a[p]!)));
      out[p] = v <= 0 ? 0 : v >= 255 ? 255 : Math.trunc(v);
    }
  }
  return { data: out, h: img.h, w: img.w };
}

/** ImageEnhance.Color: a blend with the image's grey version. */
export function color(img: ByteImage, factor: number): ByteImage {
  const plane = img.h * img.w;
  const grey = new Uint8Array(img.data.length);
  for (let p = 0; p < plane; p++) {
    const l = luma(img.data[p]!, img.data[plane + p]!, img.data[2 * plane + p]!);
    grey[p] = grey[plane + p] = grey[2 * plane + p] = l;
  }
  return blend({ data: grey, h: img.h, w: img.w }, img, factor);
}

/** ImageEnhance.Contrast: a blend with a flat image at the rounded mean grey level. */
export function contrast(img: ByteImage, factor: number): ByteImage {
  const plane = img.h * img.w;
  let sum = 0;
  for (let p = 0; p < plane; p++)
    sum += luma(img.data[p]!, img.data[plane + p]!, img.data[2 * plane + p]!);
  const mean = Math.trunc(sum / plane + 0.5);
  return blend(blank(img, [mean, mean, mean]), img, factor);
}

/** ImageEnhance.Brightness: a blend with black. */
export function brightness(img: ByteImage, factor: number): ByteImage {
  return blend(blank(img, [0, 0, 0]), img, factor);
}

/** ImageEnhance.Sharpness: a blend with ImageFilter.SMOOTH of the image. */
export function sharpness(img: ByteImage, factor: number): ByteImage {
  return blend(smooth(img), img, factor);
}

/**
 * ImageFilter.SMOOTH (3x3 kernel 1 1 1 / 1 5 1 / 1 1 1, divided by 13) as Pillow's 3x3 filter
 * runs it: float32 kernel and sums, rows y+1, y, y-1 in that order, 0.5 added for rounding and
 * truncated; the border rows and columns are copied.
 */
function smooth(img: ByteImage): ByteImage {
  const { h, w } = img;
  const out = img.data.slice();
  if (h < 3 || w < 3) return { data: out, h, w };
  const k1 = f32(1 / 13);
  const k5 = f32(5 / 13);
  const src = img.data;
  const row = (at: number, k: number) => f32(f32(f32(src[at - 1]! * k1) + f32(src[at]! * k)) + f32(src[at + 1]! * k1));
  for (let c = 0; c < 3; c++) {
    const base = c * h * w;
    for (let y = 1; y < h - 1; y++) {
      for (let x = 1; x < w - 1; x++) {
        const at = base + y * w + x;
        let ss = f32(0.5);
        ss = f32(ss + row(at + w, k1));
        ss = f32(ss + row(at, k5));
        ss = f32(ss + row(at - w, k1));
        out[at] = ss <= 0 ? 0 : ss >= 255 ? 255 : Math.trunc(ss);
      }
    }
  }
  return { data: out, h, w };
}
