// Colour jitter on decoded bytes, the way the reference pipelines jitter: torchvision's ColorJitter
// on a PIL image calls PIL's ImageEnhance (Brightness, Contrast, Color), which blends the image
// with a "degenerate" one (black, its mean grey, its greyscale) in 8-bit, truncating after each
// step. Working on the interleaved RGB bytes sharp returns costs a fraction of the float version,
// and the ToTensor + Normalize that follow become one table lookup per byte.
import type { Rng } from '../../util/rng.js';

/** PIL's ImagingBlend: degenerate + alpha * (image - degenerate) in C float, clipped, truncated. */
function blend(degenerate: number, v: number, alpha: number): number {
  const t = Math.fround(degenerate + Math.fround(alpha * (v - degenerate)));
  return t <= 0 ? 0 : t >= 255 ? 255 : Math.trunc(t);
}

/** PIL's RGB -> L (ITU-R 601-2 luma in 16.16 fixed point). */
function luma(r: number, g: number, b: number): number {
  return (r * 19595 + g * 38470 + b * 7471 + 0x8000) >>> 16;
}

/** `lut[v]` for every byte v: a blend whose result depends on the byte alone. */
function applyTable(d: Uint8Array, lut: Uint8Array): void {
  for (let i = 0; i < d.length; i++) d[i] = lut[d[i]!]!;
}

function blendTable(degenerate: number, alpha: number): Uint8Array {
  const lut = new Uint8Array(256);
  for (let v = 0; v < 256; v++) lut[v] = blend(degenerate, v, alpha);
  return lut;
}

/** ImageEnhance.Brightness(img).enhance(factor) on interleaved RGB bytes, in place. */
export function brightnessBytes(d: Uint8Array, factor: number): void {
  applyTable(d, blendTable(0, Math.fround(factor)));
}

/** The mean luma of the image, as ImageEnhance.Contrast rounds it, of `table`-mapped bytes if given. */
function meanLuma(d: Uint8Array, table: Uint8Array | null): number {
  let sum = 0;
  if (table) for (let i = 0; i < d.length; i += 3) sum += luma(table[d[i]!]!, table[d[i + 1]!]!, table[d[i + 2]!]!);
  else for (let i = 0; i < d.length; i += 3) sum += luma(d[i]!, d[i + 1]!, d[i + 2]!);
  return Math.trunc(sum / (d.length / 3) + 0.5);
}

/** ImageEnhance.Contrast: blend with the image's mean luma, rounded to a byte. */
export function contrastBytes(d: Uint8Array, factor: number): void {
  applyTable(d, blendTable(meanLuma(d, null), Math.fround(factor)));
}

/**
 * ImageEnhance.Color (saturation): blend every pixel with its own luma. `table`, if given, maps
 * the bytes first (a byte map not yet applied), in the same pass.
 */
export function saturationBytes(d: Uint8Array, factor: number, table: Uint8Array | null = null): void {
  const a = Math.fround(factor);
  // blend(l, v) = l + f32(a (v - l)): the scaled difference depends on v - l alone, so its 511
  // values are tabulated once and each byte costs an addition, a rounding and a clip
  const scaled = new Float64Array(511);
  for (let k = -255; k <= 255; k++) scaled[k + 255] = Math.fround(a * k);
  const map = table ?? IDENTITY;
  for (let i = 0; i < d.length; i += 3) {
    const r = map[d[i]!]!;
    const g = map[d[i + 1]!]!;
    const b = map[d[i + 2]!]!;
    const l = luma(r, g, b);
    const offset = 255 - l;
    let t = Math.fround(l + scaled[r + offset]!);
    d[i] = t <= 0 ? 0 : t >= 255 ? 255 : Math.trunc(t);
    t = Math.fround(l + scaled[g + offset]!);
    d[i + 1] = t <= 0 ? 0 : t >= 255 ? 255 : Math.trunc(t);
    t = Math.fround(l + scaled[b + offset]!);
    d[i + 2] = t <= 0 ? 0 : t >= 255 ? 255 : Math.trunc(t);
  }
}

const IDENTITY = Uint8Array.from({ length: 256 }, (_, v) => v);

/** `first` then `then`, as one byte map (first null: `then` alone). */
function compose(first: Uint8Array | null, then: Uint8Array): Uint8Array {
  if (!first) return then;
  const out = new Uint8Array(256);
  for (let v = 0; v < 256; v++) out[v] = then[first[v]!]!;
  return out;
}

/**
 * ColorJitter(v, v, v, 0) on interleaved RGB bytes, in place, but for its trailing byte maps: the
 * draws of tailor's float colorJitter (an order of the four operations, then the brightness,
 * contrast and saturation factors, each uniform in [max(0, 1 - v), 1 + v]), PIL's arithmetic.
 * Brightness and contrast map each byte on its own, so a run of them composes into one table
 * (contrast's mean taken through the table), applied by the next saturation in its own pass, or
 * returned (null: none) for the caller to apply, as bytesToNormalizedChw's `byteMap` does. The
 * bytes that result are those of each operation applied in turn, exactly.
 */
export function jitterBytes(d: Uint8Array, strength: number, rng: Rng): Uint8Array | null {
  const order = rng.permutation(4);
  const lo = Math.max(0, 1 - strength);
  const factor = (): number => lo + rng.uniform() * (1 + strength - lo);
  const b = factor();
  const c = factor();
  const s = factor();
  let pending: Uint8Array | null = null;
  for (const k of order) {
    if (k === 0) pending = compose(pending, blendTable(0, Math.fround(b)));
    else if (k === 1) pending = compose(pending, blendTable(meanLuma(d, pending), Math.fround(c)));
    else if (k === 2) {
      saturationBytes(d, s, pending);
      pending = null;
    }
  }
  return pending;
}

/**
 * Byte -> normalized float for each channel: ToTensor's x / 255 then Normalize's (x - mean) / std,
 * in float32 as torch computes them.
 */
export function normalizeTable(mean: readonly number[], std: readonly number[]): Float32Array {
  const lut = new Float32Array(3 * 256);
  for (let c = 0; c < 3; c++) {
    const m = Math.fround(mean[c]!);
    const s = Math.fround(std[c]!);
    for (let v = 0; v < 256; v++) lut[c * 256 + v] = Math.fround(Math.fround(Math.fround(v / 255) - m) / s);
  }
  return lut;
}

/**
 * Interleaved bytes (1 or 3+ channels) -> normalized CHW floats through `lut`, mirrored when
 * `flip`; `byteMap` (jitterBytesDeferred's rest) maps each byte first.
 */
export function bytesToNormalizedChw(
  data: Uint8Array,
  channels: number,
  size: number,
  flip: boolean,
  lut: Float32Array,
  out: Float32Array,
  byteMap: Uint8Array | null = null,
): void {
  if (byteMap) {
    // the bytes' pending map folded into the table: one lookup per byte still
    const folded = new Float32Array(3 * 256);
    for (let c = 0; c < 3; c++) for (let v = 0; v < 256; v++) folded[c * 256 + v] = lut[c * 256 + byteMap[v]!]!;
    lut = folded;
  }
  const plane = size * size;
  const step = channels >= 3 ? 1 : 0;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const s = (y * size + (flip ? size - 1 - x : x)) * channels;
      const d = y * size + x;
      out[d] = lut[data[s]!]!;
      out[plane + d] = lut[256 + data[s + step]!]!;
      out[2 * plane + d] = lut[512 + data[s + 2 * step]!]!;
    }
  }
}

/**
 * Interleaved RGB bytes (size x size) -> channel-major bytes, mirrored when `flip`, each byte
 * through `byteMap` (jitterBytes's rest) if given: the 8-bit image RandAugment works on. Written
 * into `out` where given (3 x size x size bytes).
 */
export function interleavedToPlanar(
  data: Uint8Array,
  size: number,
  flip: boolean,
  byteMap: Uint8Array | null = null,
  out: Uint8Array = new Uint8Array(3 * size * size),
): Uint8Array {
  const plane = size * size;
  const map = byteMap ?? IDENTITY;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const s = (y * size + (flip ? size - 1 - x : x)) * 3;
      const d = y * size + x;
      out[d] = map[data[s]!]!;
      out[plane + d] = map[data[s + 1]!]!;
      out[2 * plane + d] = map[data[s + 2]!]!;
    }
  }
  return out;
}

/** Channel-major RGB bytes -> normalized CHW floats through `lut` (normalizeTable's). */
export function planarToNormalized(data: Uint8Array, lut: Float32Array, out: Float32Array): void {
  // an integer (length / 3 is a double to V8), so that the indices below stay small integers
  const plane = (data.length / 3) | 0;
  for (let c = 0; c < 3; c++) {
    const base = c * plane;
    const table = c * 256;
    for (let p = 0; p < plane; p++) out[base + p] = lut[table + data[base + p]!]!;
  }
}
