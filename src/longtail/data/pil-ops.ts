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

/**
 * The buffer an operation writes its result to: `into` when the caller gives one (a buffer it
 * reuses from image to image, so that no 150 kB image is allocated and first written per call),
 * else a new one. `inPlace` says whether `into` may be the image's own pixels.
 */
function target(img: ByteImage, into: Uint8Array | undefined, inPlace: boolean): Uint8Array {
  if (!into) return new Uint8Array(img.data.length);
  if (into.length !== img.data.length)
    throw new RangeError(`the output buffer holds ${into.length} bytes, the image ${img.data.length}`);
  if (!inPlace && into.buffer === img.data.buffer && into.byteOffset === img.data.byteOffset)
    throw new RangeError('this operation reads neighbouring pixels: it cannot write over its input');
  return into;
}

/** A blank image of the size of `img`, every pixel `fill` (one value per channel). */
export function blank(img: ByteImage, fill: readonly number[], into?: Uint8Array): ByteImage {
  const out = target(img, into, false);
  const plane = img.h * img.w;
  for (let c = 0; c < 3; c++) out.fill(fill[c]!, c * plane, (c + 1) * plane);
  return { data: out, h: img.h, w: img.w };
}

/** The image itself, or its copy in `into` (an operation that changes nothing). */
export function unchanged(img: ByteImage, into?: Uint8Array): ByteImage {
  if (!into || into === img.data) return img;
  target(img, into, true).set(img.data);
  return { data: into, h: img.h, w: img.w };
}

/**
 * out[p] = lut[src[p]] for p in start..end. Where both arrays are 4-byte aligned over the range
 * the bytes go four at a time through 32-bit words (V8 checks the bounds of every typed-array
 * access, so a quarter of the accesses is about half the time); each byte keeps its position in
 * the word, so the machine's byte order does not matter.
 */
function mapBytes(src: Uint8Array, out: Uint8Array, lut: Uint8Array, start: number, end: number): void {
  let p = start;
  while (p < end && (src.byteOffset + p) % 4 !== 0) {
    out[p] = lut[src[p]!]!;
    p++;
  }
  if ((out.byteOffset + p) % 4 === 0 && end - p >= 4) {
    const words = (end - p) >> 2;
    const s32 = new Uint32Array(src.buffer, src.byteOffset + p, words);
    const o32 = new Uint32Array(out.buffer, out.byteOffset + p, words);
    for (let i = 0; i < words; i++) {
      const w = s32[i]!;
      o32[i] = lut[w & 255]! | (lut[(w >>> 8) & 255]! << 8) | (lut[(w >>> 16) & 255]! << 16) | (lut[w >>> 24]! << 24);
    }
    p += words * 4;
  }
  for (; p < end; p++) out[p] = lut[src[p]!]!;
}

/** Maps every channel through its own 256-entry table (Image.point); `into` may be img.data. */
function pointPerChannel(img: ByteImage, luts: readonly Uint8Array[], into?: Uint8Array): ByteImage {
  const plane = img.h * img.w;
  const out = target(img, into, true);
  for (let c = 0; c < 3; c++) mapBytes(img.data, out, luts[c]!, c * plane, (c + 1) * plane);
  return { data: out, h: img.h, w: img.w };
}

function table(map: (v: number) => number): Uint8Array {
  const lut = new Uint8Array(256);
  for (let v = 0; v < 256; v++) lut[v] = map(v);
  return lut;
}

function point(img: ByteImage, map: (v: number) => number, into?: Uint8Array): ByteImage {
  const lut = table(map);
  return pointPerChannel(img, [lut, lut, lut], into);
}

/** The counts of channel c's values, read four bytes at a time where aligned (as mapBytes). */
function histogram(img: ByteImage, c: number): Int32Array {
  const plane = img.h * img.w;
  const src = img.data;
  const h = new Int32Array(256);
  const end = (c + 1) * plane;
  let p = c * plane;
  while (p < end && (src.byteOffset + p) % 4 !== 0) h[src[p++]!]!++;
  const words = (end - p) >> 2;
  const s32 = new Uint32Array(src.buffer, src.byteOffset + p, words);
  for (let i = 0; i < words; i++) {
    const w = s32[i]!;
    h[w & 255]!++;
    h[(w >>> 8) & 255]!++;
    h[(w >>> 16) & 255]!++;
    h[w >>> 24]!++;
  }
  for (p += words * 4; p < end; p++) h[src[p]!]!++;
  return h;
}

/** ImageOps.invert: 255 - v. */
export function invert(img: ByteImage, into?: Uint8Array): ByteImage {
  return point(img, (v) => 255 - v, into);
}

/** ImageOps.posterize: keeps the top `bits` bits of every value. */
export function posterize(img: ByteImage, bits: number, into?: Uint8Array): ByteImage {
  const mask = ~(2 ** (8 - bits) - 1) & 255;
  return point(img, (v) => v & mask, into);
}

/** ImageOps.solarize: values at or above the threshold are inverted. */
export function solarize(img: ByteImage, threshold: number, into?: Uint8Array): ByteImage {
  return point(img, (v) => (v < threshold ? v : 255 - v), into);
}

/**
 * RandAugment's SolarizeAdd (a table through Image.point, not an ImageOps function): `add` is
 * added to the values below `threshold`, capped at 255; the others are kept.
 */
export function solarizeAdd(img: ByteImage, add: number, threshold = 128, into?: Uint8Array): ByteImage {
  return point(img, (v) => (v < threshold ? Math.min(255, v + add) : v), into);
}

/** ImageOps.autocontrast (no cutoff): each channel's range stretched to 0..255, truncated. */
export function autocontrast(img: ByteImage, into?: Uint8Array): ByteImage {
  const luts = [0, 1, 2].map((c) => {
    const h = histogram(img, c);
    let lo = 0;
    while (lo < 255 && !h[lo]) lo++;
    let hi = 255;
    while (hi > 0 && !h[hi]) hi--;
    if (hi <= lo) return table((v) => v);
    const scale = 255 / (hi - lo);
    const offset = -lo * scale;
    return table((v) => Math.min(255, Math.max(0, Math.trunc(v * scale + offset))));
  });
  return pointPerChannel(img, luts, into);
}

/**
 * ImageOps.equalize: each channel through its cumulative histogram, with Pillow's integer steps
 * (the last occupied level left out of the step; a channel with one level or a zero step kept).
 */
export function equalize(img: ByteImage, into?: Uint8Array): ByteImage {
  const luts = [0, 1, 2].map((c) => {
    const h = histogram(img, c);
    const used = Array.from(h).filter((n) => n > 0);
    const identity = table((v) => v);
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
  return pointPerChannel(img, luts, into);
}

/** Image.convert('L'): ITU-R 601-2 luma in Pillow's 16-bit fixed point. */
function luma(r: number, g: number, b: number): number {
  return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16;
}

/**
 * One value of Image.blend(degenerate, img, factor), ImageEnhance's formula: degenerate + alpha
 * x (value - degenerate) in float32, truncated to 8 bits and clipped to 0..255 (which only an
 * alpha outside 0..1 can reach).
 */
function blendValue(degenerate: number, value: number, alpha: number): number {
  const v = f32(degenerate + f32(alpha * (value - degenerate)));
  return v <= 0 ? 0 : v >= 255 ? 255 : Math.trunc(v);
}

/**
 * Image.blend with a degenerate image of one grey level: every output value depends on its input
 * value alone, so the blend is a 256-entry table, the same floats as the blend pixel by pixel.
 */
function blendLevel(img: ByteImage, level: number, factor: number, into?: Uint8Array): ByteImage {
  const alpha = f32(factor);
  return point(img, (v) => blendValue(level, v, alpha), into);
}

/** ImageEnhance.Color: a blend with the image's grey version (`into` may be img.data). */
export function color(img: ByteImage, factor: number, into?: Uint8Array): ByteImage {
  const alpha = f32(factor);
  const plane = img.h * img.w;
  const src = img.data;
  const out = target(img, into, true);
  for (let p = 0; p < plane; p++) {
    const r = src[p]!;
    const g = src[plane + p]!;
    const b = src[2 * plane + p]!;
    const l = luma(r, g, b);
    out[p] = blendValue(l, r, alpha);
    out[plane + p] = blendValue(l, g, alpha);
    out[2 * plane + p] = blendValue(l, b, alpha);
  }
  return { data: out, h: img.h, w: img.w };
}

/** ImageEnhance.Contrast: a blend with a flat image at the rounded mean grey level. */
export function contrast(img: ByteImage, factor: number, into?: Uint8Array): ByteImage {
  const plane = img.h * img.w;
  const src = img.data;
  let sum = 0;
  for (let p = 0; p < plane; p++) sum += luma(src[p]!, src[plane + p]!, src[2 * plane + p]!);
  const mean = Math.trunc(sum / plane + 0.5);
  return blendLevel(img, mean, factor, into);
}

/** ImageEnhance.Brightness: a blend with black. */
export function brightness(img: ByteImage, factor: number, into?: Uint8Array): ByteImage {
  return blendLevel(img, 0, factor, into);
}

/**
 * ImageEnhance.Sharpness: a blend with ImageFilter.SMOOTH of the image (3x3 kernel 1 1 1 / 1 5 1 /
 * 1 1 1, divided by 13), in one pass. The filter runs as Pillow's 3x3 filter runs it: float32
 * kernel and sums, rows y+1, y, y-1 in that order, 0.5 added for rounding and truncated; its
 * border rows and columns are the image's, so the blend gives them back unchanged. `into` must
 * not be img.data (the filter reads the neighbours).
 */
export function sharpness(img: ByteImage, factor: number, into?: Uint8Array): ByteImage {
  const { h, w } = img;
  const src = img.data;
  const out = target(img, into, false);
  out.set(src);
  if (h < 3 || w < 3) return { data: out, h, w };
  const alpha = f32(factor);
  // the kernel's float32 products of every byte value, the same floats as multiplying each time
  const k1 = f32(1 / 13);
  const k5 = f32(5 / 13);
  const m1 = new Float32Array(256);
  const m5 = new Float32Array(256);
  for (let v = 0; v < 256; v++) {
    m1[v] = f32(v * k1);
    m5[v] = f32(v * k5);
  }
  // the blend of every (smoothed, original) pair: fewer evaluations than the image has values
  const blend = new Uint8Array(65536);
  for (let smoothed = 0; smoothed < 256; smoothed++)
    for (let v = 0; v < 256; v++) blend[(smoothed << 8) | v] = blendValue(smoothed, v, alpha);
  // a row's sums with the outer kernel row serve the pixels above and below it: one plane of them
  const outer = new Float32Array(h * w);
  for (let c = 0; c < 3; c++) {
    const base = c * h * w;
    for (let y = 0; y < h; y++) {
      const row = base + y * w;
      let left = m1[src[row]!]!;
      let centre = m1[src[row + 1]!]!;
      for (let x = 1; x < w - 1; x++) {
        const right = m1[src[row + x + 1]!]!;
        outer[y * w + x] = f32(f32(left + centre) + right);
        left = centre;
        centre = right;
      }
    }
    for (let y = 1; y < h - 1; y++) {
      const row = base + y * w;
      let left = src[row]!;
      let centre = src[row + 1]!;
      for (let x = 1; x < w - 1; x++) {
        const right = src[row + x + 1]!;
        const middle = f32(f32(m1[left]! + m5[centre]!) + m1[right]!);
        let ss = f32(0.5);
        ss = f32(ss + outer[(y + 1) * w + x]!);
        ss = f32(ss + middle);
        ss = f32(ss + outer[(y - 1) * w + x]!);
        const smoothed = ss <= 0 ? 0 : ss >= 255 ? 255 : Math.trunc(ss);
        out[row + x] = blend[(smoothed << 8) | centre]!;
        left = centre;
        centre = right;
      }
    }
  }
  return { data: out, h, w };
}
