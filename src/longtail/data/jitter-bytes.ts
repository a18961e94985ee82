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

/** ImageEnhance.Contrast: blend with the image's mean luma, rounded to a byte. */
export function contrastBytes(d: Uint8Array, factor: number): void {
  let sum = 0;
  for (let i = 0; i < d.length; i += 3) sum += luma(d[i]!, d[i + 1]!, d[i + 2]!);
  const mean = Math.trunc(sum / (d.length / 3) + 0.5);
  applyTable(d, blendTable(mean, Math.fround(factor)));
}

/** ImageEnhance.Color (saturation): blend every pixel with its own luma. */
export function saturationBytes(d: Uint8Array, factor: number): void {
  const a = Math.fround(factor);
  // the blend of (luma l, value v) for every pair that can occur, looked up as table[l * 256 + v]
  const table = new Uint8Array(256 * 256);
  const done = new Uint8Array(256);
  for (let i = 0; i < d.length; i += 3) {
    const l = luma(d[i]!, d[i + 1]!, d[i + 2]!);
    const row = l << 8;
    if (done[l] === 0) {
      for (let v = 0; v < 256; v++) table[row + v] = blend(l, v, a);
      done[l] = 1;
    }
    d[i] = table[row + d[i]!]!;
    d[i + 1] = table[row + d[i + 1]!]!;
    d[i + 2] = table[row + d[i + 2]!]!;
  }
}

/**
 * ColorJitter(v, v, v, 0) on interleaved RGB bytes, in place: the draws of tailor's float
 * colorJitter (an order of the four operations, then the brightness, contrast and saturation
 * factors, each uniform in [max(0, 1 - v), 1 + v]), PIL's arithmetic.
 */
export function jitterBytes(d: Uint8Array, strength: number, rng: Rng): void {
  const order = rng.permutation(4);
  const lo = Math.max(0, 1 - strength);
  const factor = (): number => lo + rng.uniform() * (1 + strength - lo);
  const b = factor();
  const c = factor();
  const s = factor();
  for (const k of order) {
    if (k === 0) brightnessBytes(d, b);
    else if (k === 1) contrastBytes(d, c);
    else if (k === 2) saturationBytes(d, s);
  }
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

/** Interleaved bytes (1 or 3+ channels) -> normalized CHW floats through `lut`, mirrored when `flip`. */
export function bytesToNormalizedChw(
  data: Uint8Array,
  channels: number,
  size: number,
  flip: boolean,
  lut: Float32Array,
  out: Float32Array,
): void {
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
