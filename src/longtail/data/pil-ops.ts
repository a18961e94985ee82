// The 8-bit image operations AutoAugment is defined with, computed as Pillow 9.4 computes them on
// an RGB image, so that a policy draws the same pixels as the reference's PIL pipeline:
// ImageOps (invert, posterize, solarize, autocontrast, equalize), ImageEnhance (a blend with a
// degenerate image, in Pillow's float32 arithmetic with truncation), and Image.transform's affine
// resampling (NEAREST in Pillow's scale, 16.16 fixed-point and float paths, BICUBIC with a = -1)
// with its pixel-centre coordinates and fill. Checked pixel for pixel against Pillow by
// test/longtail/autoaugment.test.ts (scripts/golden/autoaugment.py).

/** An 8-bit RGB image, channel-major (3 x h x w), the form AutoAugment's operations work on. */
export interface ByteImage {
  data: Uint8Array;
  h: number;
  w: number;
}

const f32 = Math.fround;

/** A blank image of the size of `img`, every pixel `fill` (one value per channel). */
function blank(img: ByteImage, fill: readonly number[]): ByteImage {
  const out = new Uint8Array(img.data.length);
  const plane = img.h * img.w;
  for (let c = 0; c < 3; c++) out.fill(fill[c]!, c * plane, (c + 1) * plane);
  return { data: out, h: img.h, w: img.w };
}

/** Maps every channel through its own 256-entry table (Image.point). */
function pointPerChannel(img: ByteImage, luts: readonly Uint8Array[]): ByteImage {
  const plane = img.h * img.w;
  const out = new Uint8Array(img.data.length);
  for (let c = 0; c < 3; c++) {
    const lut = luts[c]!;
    for (let p = c * plane; p < (c + 1) * plane; p++) out[p] = lut[img.data[p]!]!;
  }
  return { data: out, h: img.h, w: img.w };
}

function point(img: ByteImage, map: (v: number) => number): ByteImage {
  const lut = Uint8Array.from({ length: 256 }, (_, v) => map(v));
  return pointPerChannel(img, [lut, lut, lut]);
}

function histogram(img: ByteImage, c: number): Float64Array {
  const plane = img.h * img.w;
  const h = new Float64Array(256);
  for (let p = c * plane; p < (c + 1) * plane; p++) h[img.data[p]!]!++;
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
  const out = new Uint8Array(b.length);
  const interpolate = alpha >= 0 && alpha <= 1;
  for (let p = 0; p < b.length; p++) {
    const v = f32(a[p]! + f32(alpha * (b[p]! - a[p]!)));
    out[p] = interpolate ? Math.trunc(v) : v <= 0 ? 0 : v >= 255 ? 255 : Math.trunc(v);
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

/** Pillow's COORD: -1 for a negative coordinate, else the truncated one. */
function coord(v: number): number {
  return v < 0 ? -1 : Math.trunc(v);
}

/**
 * Image.transform(size, AFFINE, a, NEAREST) on an image of the same size, pixels outside the
 * source set to `fill`: output pixel (x, y) takes the source pixel at a applied to its centre
 * (x + 0.5, y + 0.5), through the same one of Pillow's three code paths (a pure scale or
 * translation; 16.16 fixed point; float) with its arithmetic.
 */
export function affineNearest(img: ByteImage, a: readonly number[], fill: readonly number[]): ByteImage {
  const { h, w } = img;
  const out = blank(img, fill);
  const plane = h * w;
  const copy = (x: number, y: number, sx: number, sy: number) => {
    for (let c = 0; c < 3; c++) out.data[c * plane + y * w + x] = img.data[c * plane + sy * w + sx]!;
  };
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  if (a1 === 0 && a3 === 0) {
    // ImagingScaleAffine: the source column of every output column tabulated once
    const xin = new Int32Array(w);
    let xmin = w;
    let xmax = 0;
    let xo = a2 + a0 * 0.5;
    for (let x = 0; x < w; x++) {
      const sx = coord(xo);
      if (sx >= 0 && sx < w) {
        xmax = x + 1;
        if (x < xmin) xmin = x;
        xin[x] = sx;
      }
      xo += a0;
    }
    let yo = a5 + a4 * 0.5;
    for (let y = 0; y < h; y++) {
      const sy = coord(yo);
      if (sy >= 0 && sy < h) for (let x = xmin; x < xmax; x++) copy(x, y, xin[x]!, sy);
      yo += a4;
    }
    return out;
  }
  const fits = (x: number, y: number) => Math.abs(x * a0 + y * a1 + a2) < 32768 && Math.abs(x * a3 + y * a4 + a5) < 32768;
  if (fits(0, 0) && fits(w, h) && fits(0, h) && fits(w, 0)) {
    const fix = (v: number) => Math.floor(v * 65536 + 0.5);
    const f0 = fix(a0);
    const f1 = fix(a1);
    const f3 = fix(a3);
    const f4 = fix(a4);
    let f2 = fix(a2 + a0 * 0.5 + a1 * 0.5);
    let f5 = fix(a5 + a3 * 0.5 + a4 * 0.5);
    for (let y = 0; y < h; y++) {
      let xx = f2;
      let yy = f5;
      for (let x = 0; x < w; x++) {
        const sx = xx >> 16;
        const sy = yy >> 16;
        if (sx >= 0 && sx < w && sy >= 0 && sy < h) copy(x, y, sx, sy);
        xx += f0;
        yy += f3;
      }
      f2 += f1;
      f5 += f4;
    }
    return out;
  }
  let xo = a2 + a1 * 0.5 + a0 * 0.5;
  let yo = a5 + a4 * 0.5 + a3 * 0.5;
  for (let y = 0; y < h; y++) {
    let xx = xo;
    let yy = yo;
    for (let x = 0; x < w; x++) {
      const sx = coord(xx);
      const sy = coord(yy);
      if (sx >= 0 && sx < w && sy >= 0 && sy < h) copy(x, y, sx, sy);
      xx += a0;
      yy += a3;
    }
    xo += a1;
    yo += a4;
  }
  return out;
}

/** Pillow's cubic convolution (a = -1) through v1..v4 at d in [0, 1). */
function cubic(v1: number, v2: number, v3: number, v4: number, d: number): number {
  const p1 = v2;
  const p2 = -v1 + v3;
  const p3 = 2 * (v1 - v2) + v3 - v4;
  const p4 = -v1 + v2 - v3 + v4;
  return p1 + d * (p2 + d * (p3 + d * p4));
}

/**
 * Image.transform(size, AFFINE, a, BICUBIC) on an image of the same size, pixels whose source
 * lies outside the image set to `fill`: Pillow's generic transform with its bicubic filter
 * (edge rows and columns repeated, truncated to 8 bits).
 */
export function affineBicubic(img: ByteImage, a: readonly number[], fill: readonly number[]): ByteImage {
  const { h, w } = img;
  const out = blank(img, fill);
  const plane = h * w;
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const clipX = (x: number) => (x < 0 ? 0 : x < w ? x : w - 1);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let xin = a0 * (x + 0.5) + a1 * (y + 0.5) + a2;
      let yin = a3 * (x + 0.5) + a4 * (y + 0.5) + a5;
      if (xin < 0 || xin >= w || yin < 0 || yin >= h) continue;
      xin -= 0.5;
      yin -= 0.5;
      const fx = Math.floor(xin);
      const fy = Math.floor(yin);
      const dx = xin - fx;
      const dy = yin - fy;
      const x0 = clipX(fx - 1);
      const x1 = clipX(fx);
      const x2 = clipX(fx + 1);
      const x3 = clipX(fx + 2);
      const top = fy - 1;
      for (let c = 0; c < 3; c++) {
        const rowAt = (r: number) => {
          const base = c * plane + r * w;
          const d = img.data;
          return cubic(d[base + x0]!, d[base + x1]!, d[base + x2]!, d[base + x3]!, dx);
        };
        // the first row is clamped into the image; a later row outside it repeats the previous one
        const v1 = rowAt(top < 0 ? 0 : top < h ? top : h - 1);
        const v2 = top + 1 >= 0 && top + 1 < h ? rowAt(top + 1) : v1;
        const v3 = top + 2 >= 0 && top + 2 < h ? rowAt(top + 2) : v2;
        const v4 = top + 3 >= 0 && top + 3 < h ? rowAt(top + 3) : v3;
        const v = cubic(v1, v2, v3, v4, dy);
        out.data[c * plane + y * w + x] = v <= 0 ? 0 : v >= 255 ? 255 : Math.trunc(v);
      }
    }
  }
  return out;
}

/** Python's round(v, 15), as Image.rotate rounds its matrix. */
function round15(v: number): number {
  return Number(v.toFixed(15));
}

/**
 * Image.rotate(degrees) (counter-clockwise about the centre, NEAREST, same size) with the area
 * outside the rotated image set to `fill`: what the reference's RGBA-composite rotation gives.
 * Multiples of 90 degrees take Pillow's transpose shortcuts.
 */
export function rotate(img: ByteImage, degrees: number, fill: readonly number[]): ByteImage {
  let angle = degrees % 360;
  if (angle < 0) angle += 360;
  const { h, w } = img;
  if (angle === 0) return { data: img.data.slice(), h, w };
  if (angle === 180 || ((angle === 90 || angle === 270) && w === h)) {
    const out = new Uint8Array(img.data.length);
    const plane = h * w;
    for (let c = 0; c < 3; c++) {
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const [sx, sy] = angle === 180 ? [w - 1 - x, h - 1 - y] : angle === 90 ? [w - 1 - y, x] : [y, h - 1 - x];
          out[c * plane + y * w + x] = img.data[c * plane + sy * w + sx]!;
        }
      }
    }
    return { data: out, h, w };
  }
  const radians = -(angle * (Math.PI / 180));
  const cos = round15(Math.cos(radians));
  const sin = round15(Math.sin(radians));
  const cx = w / 2;
  const cy = h / 2;
  const a = [cos, sin, 0, round15(-Math.sin(radians)), cos, 0];
  a[2] = a[0]! * -cx + a[1]! * -cy + 0 + cx;
  a[5] = a[3]! * -cx + a[4]! * -cy + 0 + cy;
  return affineNearest(img, a, fill);
}
