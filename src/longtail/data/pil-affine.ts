// The geometric 8-bit operations of AutoAugment and RandAugment as Pillow 9.4 computes them on an
// RGB image of the same size: Image.transform(size, AFFINE, a, resample, fillcolor=fill) with its
// pixel-centre coordinates (output pixel (x, y) samples the source at a applied to (x + 0.5,
// y + 0.5)), NEAREST through Pillow's three code paths (a pure scale or translation; 16.16 fixed
// point; float), BILINEAR and BICUBIC (a = -1) through its generic transform with edge pixels
// repeated and 8-bit truncation, and Image.rotate (its rounded matrix about the centre and its
// transpose shortcuts). Checked pixel for pixel against Pillow by test/longtail/autoaugment.test.ts
// and test/longtail/randaugment.test.ts.
import { blank, type ByteImage } from './pil-ops.js';

// Every operation writes into `into` when given (a buffer the caller reuses; never the image's own
// pixels, which the resampling reads), else into a new image.

/** Image.transform's resampling filters. */
export type Resample = 'nearest' | 'bilinear' | 'bicubic';

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
export function affineNearest(
  img: ByteImage,
  a: readonly number[],
  fill: readonly number[],
  into?: Uint8Array,
): ByteImage {
  const { h, w } = img;
  const out = blank(img, fill, into);
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

const clip = (v: number, n: number): number => (v < 0 ? 0 : v < n ? v : n - 1);

/**
 * Image.transform(size, AFFINE, a, BILINEAR) on an image of the same size, pixels whose source
 * lies outside the image set to `fill`: Pillow's generic transform with its bilinear filter (the
 * two columns clamped into the image, the second row replaced by the first outside it, in double
 * precision, truncated to 8 bits).
 */
export function affineBilinear(
  img: ByteImage,
  a: readonly number[],
  fill: readonly number[],
  into?: Uint8Array,
): ByteImage {
  const { h, w } = img;
  const out = blank(img, fill, into);
  const dst = out.data;
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const plane = h * w;
  const src = img.data;
  for (let y = 0; y < h; y++) {
    // the row's term of the matrix product, hoisted: the sums are added in Pillow's order still
    const yTermX = a1 * (y + 0.5);
    const yTermY = a4 * (y + 0.5);
    for (let x = 0; x < w; x++) {
      // Pillow's affine_transform: the matrix applied to the pixel's centre
      let xin = a0 * (x + 0.5) + yTermX + a2;
      let yin = a3 * (x + 0.5) + yTermY + a5;
      if (xin < 0 || xin >= w || yin < 0 || yin >= h) continue;
      xin -= 0.5;
      yin -= 0.5;
      const fx = Math.floor(xin);
      const fy = Math.floor(yin);
      const dx = xin - fx;
      const dy = yin - fy;
      const x0 = clip(fx, w);
      const x1 = clip(fx + 1, w);
      const r0 = clip(fy, h) * w;
      const second = fy + 1 >= 0 && fy + 1 < h;
      const r1 = (fy + 1) * w;
      for (let c = 0; c < 3; c++) {
        const base = c * plane;
        const p0 = src[base + r0 + x0]!;
        const v1 = p0 + (src[base + r0 + x1]! - p0) * dx;
        let v2 = v1;
        if (second) {
          const q0 = src[base + r1 + x0]!;
          v2 = q0 + (src[base + r1 + x1]! - q0) * dx;
        }
        dst[base + y * w + x] = Math.trunc(v1 + (v2 - v1) * dy);
      }
    }
  }
  return out;
}

/**
 * Image.transform(size, AFFINE, a, BICUBIC) on an image of the same size, pixels whose source
 * lies outside the image set to `fill`: Pillow's generic transform with its bicubic filter
 * (edge columns repeated; the first row clamped into the image, a later row outside it repeating
 * the previous one; clipped and truncated to 8 bits).
 */
export function affineBicubic(
  img: ByteImage,
  a: readonly number[],
  fill: readonly number[],
  into?: Uint8Array,
): ByteImage {
  const { h, w } = img;
  const out = blank(img, fill, into);
  const dst = out.data;
  const [a0, a1, a2, a3, a4, a5] = a as [number, number, number, number, number, number];
  const plane = h * w;
  const d = img.data;
  for (let y = 0; y < h; y++) {
    // the row's term of the matrix product, hoisted: the sums are added in Pillow's order still
    const yTermX = a1 * (y + 0.5);
    const yTermY = a4 * (y + 0.5);
    for (let x = 0; x < w; x++) {
      // Pillow's affine_transform: the matrix applied to the pixel's centre
      let xin = a0 * (x + 0.5) + yTermX + a2;
      let yin = a3 * (x + 0.5) + yTermY + a5;
      if (xin < 0 || xin >= w || yin < 0 || yin >= h) continue;
      xin -= 0.5;
      yin -= 0.5;
      const fx = Math.floor(xin);
      const fy = Math.floor(yin);
      const dx = xin - fx;
      const dy = yin - fy;
      const x0 = clip(fx - 1, w);
      const x1 = clip(fx, w);
      const x2 = clip(fx + 1, w);
      const x3 = clip(fx + 2, w);
      const top = fy - 1;
      // the offset of the row each of v1..v4 reads (-1: repeat the previous value)
      const r0 = clip(top, h) * w;
      const r1 = top + 1 >= 0 && top + 1 < h ? (top + 1) * w : -1;
      const r2 = top + 2 >= 0 && top + 2 < h ? (top + 2) * w : -1;
      const r3 = top + 3 >= 0 && top + 3 < h ? (top + 3) * w : -1;
      const at = y * w + x;
      for (let c = 0; c < 3; c++) {
        const cb = c * plane;
        let b = cb + r0;
        const v1 = cubic(d[b + x0]!, d[b + x1]!, d[b + x2]!, d[b + x3]!, dx);
        let v2 = v1;
        if (r1 >= 0) {
          b = cb + r1;
          v2 = cubic(d[b + x0]!, d[b + x1]!, d[b + x2]!, d[b + x3]!, dx);
        }
        let v3 = v2;
        if (r2 >= 0) {
          b = cb + r2;
          v3 = cubic(d[b + x0]!, d[b + x1]!, d[b + x2]!, d[b + x3]!, dx);
        }
        let v4 = v3;
        if (r3 >= 0) {
          b = cb + r3;
          v4 = cubic(d[b + x0]!, d[b + x1]!, d[b + x2]!, d[b + x3]!, dx);
        }
        const v = cubic(v1, v2, v3, v4, dy);
        dst[cb + at] = v <= 0 ? 0 : v >= 255 ? 255 : Math.trunc(v);
      }
    }
  }
  return out;
}

/** Image.transform(size, AFFINE, a, resample, fillcolor=fill) on an image of the same size. */
export function affine(
  img: ByteImage,
  a: readonly number[],
  fill: readonly number[],
  resample: Resample,
  into?: Uint8Array,
): ByteImage {
  switch (resample) {
    case 'nearest':
      return affineNearest(img, a, fill, into);
    case 'bilinear':
      return affineBilinear(img, a, fill, into);
    case 'bicubic':
      return affineBicubic(img, a, fill, into);
  }
}

/** Python's round(v, 15), as Image.rotate rounds its matrix. */
function round15(v: number): number {
  return Number(v.toFixed(15));
}

/**
 * Image.rotate(degrees, resample, fillcolor=fill) (counter-clockwise about the centre, same size):
 * the area outside the rotated image set to `fill`. With NEAREST (the default) this is also what
 * AutoAugment's RGBA-composite rotation gives. Multiples of 90 degrees take Pillow's transpose
 * shortcuts, whatever the filter.
 */
export function rotate(
  img: ByteImage,
  degrees: number,
  fill: readonly number[],
  resample: Resample = 'nearest',
  into?: Uint8Array,
): ByteImage {
  let angle = degrees % 360;
  if (angle < 0) angle += 360;
  const { h, w } = img;
  if (angle === 0) {
    const out = blank(img, [0, 0, 0], into);
    out.data.set(img.data);
    return out;
  }
  if (angle === 180 || ((angle === 90 || angle === 270) && w === h)) {
    const out = blank(img, [0, 0, 0], into).data;
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
  return affine(img, a, fill, resample, into);
}
