// Image-list batches augmented while they are decoded, torchvision's way: RandomResizedCrop picks
// its box in the original image (from the JPEG header's size), the addon's libjpeg-turbo (JPEGs;
// src/torch/io.ts) or sharp (the rest) decodes only what the box needs and resizes it straight
// to the output size, then flip, colour jitter (PIL's 8-bit arithmetic, as torchvision on PIL
// images), BalPoE's RandAugment where asked (randaugment.ts, on the 8-bit image after the flip)
// and normalization run on the small result. When the box is at least twice the output
// size, libjpeg decodes at 1/2, 1/4 or 1/8 size (shrink-on-load; through sharp, by resizing the
// whole image first and cutting the box afterwards): a 224 crop of a 2000-pixel photo never
// decodes the full-size pixels.
//
// Every image draws from its own generator, seeded by (seed, epoch, batch, position), so a batch
// is the same whichever thread builds it, in whichever order its images finish decoding.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isMainThread } from 'node:worker_threads';
import { join } from 'node:path';
import type { Sharp } from 'sharp';
import { Rng } from '../../util/rng.js';
import { decodeJpegBox, jpegDecoder } from '../../torch/io.js';
import { randomResizedCropBox } from './augment.js';
import {
  bytesToNormalizedChw,
  interleavedToPlanar,
  jitterBytes,
  normalizeTable,
  planarToNormalized,
} from './jitter-bytes.js';
import { BALPOE_RAND_AUGMENT, applyRandAugment, drawRandAugment } from './randaugment.js';
import type { Batch } from './batches.js';
import { NORMALIZATION } from './pipelines.js';
import { DataFormatError } from './types.js';

/** What the pipeline does to every image of a list. */
export interface ListAugmentSpec {
  /** 'train': RandomResizedCrop + flip + colour jitter; 'test': Resize(resizeSize) + CenterCrop. */
  stage: 'train' | 'test';
  /** Normalization statistics (and the jitter default: 0.4 for imagenet, none for inat but with randAugment). */
  kind: 'imagenet' | 'inat';
  /** Output side (224). */
  size: number;
  /** Test: the shorter side is resized to this before the center crop (default size * 256 / 224). */
  resizeSize?: number;
  /** Train: brightness, contrast and saturation jitter. */
  jitter?: number;
  /** Train: RandomResizedCrop's area range (default [0.08, 1]). */
  scale?: [number, number];
  /**
   * Train: BalPoE's long-training recipe (`randaugm: true`, PaCo's augmentation): after the
   * crop, the flip and the colour jitter (0.4 for iNaturalist too), RandAugment
   * 'rand-n2-m10-mstd0.5' on the 8-bit image (BALPOE_RAND_AUGMENT).
   */
  randAugment?: boolean;
}

/** The images of a list as the pipeline needs them: plain arrays, so worker threads get a copy. */
export interface ListSource {
  root: string;
  listFile: string;
  paths: string[];
  /** 1-based line of each entry in the list file (0: not from a list). */
  lines: Int32Array;
  labels: Int32Array;
}

/** An image that could not be decoded and was left out of its batch (skipCorrupt). */
export interface SkippedImage {
  path: string;
  line: number;
  message: string;
}

export interface ListBatchOptions {
  /** Leave corrupt or truncated images out of their batch (counted) instead of failing. */
  skipCorrupt?: boolean;
  /** Images of one batch decoded at the same time (default 4). */
  concurrency?: number;
  /**
   * Where to write the images (indices.length x imageLength floats; every value is written): a
   * buffer of an earlier batch handed back, so that a batch costs no fresh allocation.
   */
  out?: Float32Array;
}

/**
 * Pixel buffers of consumed batches, handed back to build later batches into (at most `max`
 * kept; a batch takes one of exactly its length, so the shorter last batch allocates its own).
 */
export class SpareBuffers {
  private readonly buffers: Float32Array[] = [];

  constructor(private readonly max: number) {}

  give(x: Float32Array): void {
    if (this.buffers.length < this.max) this.buffers.push(x);
  }

  /** A kept buffer of `length` floats, or undefined. */
  take(length: number): Float32Array | undefined {
    const at = this.buffers.findIndex((x) => x.length === length);
    return at >= 0 ? this.buffers.splice(at, 1)[0] : undefined;
  }
}

/** A built batch and the images left out of it. */
export interface ListBatchResult {
  batch: Batch;
  skipped: SkippedImage[];
}

const MAX_IMAGE_PIXELS = 100_000_000;

let sharpModule: Promise<typeof import('sharp')> | undefined;
const loadSharp = async () => (await (sharpModule ??= import('sharp'))).default;

/** The generator of image k of batch b: independent of the thread and of the decoding order. */
export function imageRng(seed: number, epoch: number, b: number, k: number): Rng {
  return new Rng(
    (seed ^
      Math.imul(epoch + 1, 0x9e3779b9) ^
      Math.imul(b + 2, 0x85ebca6b) ^
      Math.imul(k + 1, 0xc2b2ae35) ^
      0x243f6a88) >>>
      0,
  );
}

interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * Cuts `box` out of an image of w0 x h0 and resizes it to ow x oh. From a box at least twice
 * the output size, the whole image is resized first: sharp can only shrink a JPEG on load when
 * nothing is extracted before the resize.
 */
export function cropResize(img: Sharp, w0: number, h0: number, box: Box, ow: number, oh: number): Sharp {
  const fx = box.width / ow;
  const fy = box.height / oh;
  if (Math.min(fx, fy) >= 2) {
    const rw = Math.max(ow, Math.round(w0 / fx));
    const rh = Math.max(oh, Math.round(h0 / fy));
    const left = Math.max(0, Math.min(rw - ow, Math.round(box.left / fx)));
    const top = Math.max(0, Math.min(rh - oh, Math.round(box.top / fy)));
    return img
      .resize(rw, rh, { fit: 'fill', kernel: 'linear' })
      .extract({ left, top, width: ow, height: oh });
  }
  return img.extract(box).resize(ow, oh, { fit: 'fill', kernel: 'linear' });
}

/** The box of the test transform: Resize(shorter) + CenterCrop(size), in original coordinates. */
function centerBox(w0: number, h0: number, size: number, shorter: number): Box {
  const scale = shorter / Math.min(w0, h0);
  const width = Math.min(w0, Math.max(1, Math.round(size / scale)));
  const height = Math.min(h0, Math.max(1, Math.round(size / scale)));
  return { left: Math.floor((w0 - width) / 2), top: Math.floor((h0 - height) / 2), width, height };
}

/** A spec turned into what every image needs (built once per thread). */
export class ListAugmenter {
  /** Colour jitter strength (0: none). */
  private readonly jitter: number;
  /** Byte -> normalized float per channel. */
  private readonly lut: Float32Array;
  /** RandAugment after the jitter (train only). */
  private readonly randAugment: boolean;
  /** The 8-bit channel-major image RandAugment starts from (allocated at its first use). */
  private planar: Uint8Array | undefined;
  /** The second buffer RandAugment's resampling operations write into. */
  private scratch: Uint8Array | undefined;

  constructor(readonly spec: ListAugmentSpec) {
    if (!(Number.isInteger(spec.size) && spec.size >= 1))
      throw new RangeError(`the output size must be a positive integer, got ${spec.size}`);
    this.randAugment = spec.stage === 'train' && spec.randAugment === true;
    // aug_plus jitters iNaturalist's images as well; SADE's and BalPoE's standard iNaturalist
    // transform does not
    const j = spec.jitter ?? (spec.kind === 'inat' && !this.randAugment ? 0 : 0.4);
    this.jitter = spec.stage === 'train' ? j : 0;
    const norm = NORMALIZATION[spec.kind];
    this.lut = normalizeTable(norm.mean, norm.std);
  }

  get imageLength(): number {
    return 3 * this.spec.size * this.spec.size;
  }

  /** Decodes and augments one image file into out[at .. at + imageLength). */
  async image(file: string, rng: Rng, out: Float32Array, at: number): Promise<void> {
    const size = this.spec.size;
    // a loader worker thread has nothing else to do meanwhile: a plain read saves the round trip
    // through libuv's pool; the main thread (num_workers 0) keeps reading asynchronously
    const bytes = isMainThread ? await readFile(file) : readFileSync(file);
    // a JPEG's size is read from its frame header here: asking libvips costs as much as a resize
    const header = jpegSize(bytes);
    const dims = header ?? (await (await loadSharp())(bytes, SHARP_INPUT).metadata());
    const w0 = dims.width;
    const h0 = dims.height;
    if (!w0 || !h0) throw new Error('no image dimensions');
    let box: Box;
    let flip = false;
    if (this.spec.stage === 'train') {
      const b = randomResizedCropBox(h0, w0, rng, this.spec.scale ?? [0.08, 1]);
      box = { left: b.left, top: b.top, width: b.width, height: b.height };
      flip = rng.uniform() < 0.5;
    } else {
      box = centerBox(w0, h0, size, this.spec.resizeSize ?? Math.round((size * 256) / 224));
    }
    // JPEGs through the addon's libjpeg-turbo where it has one (CMYK ones, and everything else,
    // through sharp); no EXIF auto-rotation either way: PIL's loader in the reference code does
    // not rotate either
    const fromJpeg = header && useNativeJpeg() ? decodeJpegBox(bytes, box, size, size, MAX_IMAGE_PIXELS) : null;
    let data: Uint8Array;
    let channels: number;
    if (fromJpeg) {
      data = fromJpeg;
      channels = 3;
    } else {
      const decoded = await cropResize((await loadSharp())(bytes, SHARP_INPUT), w0, h0, box, size, size)
        .removeAlpha()
        .toColourspace('srgb')
        .raw()
        .toBuffer({ resolveWithObject: true });
      if (decoded.info.width !== size || decoded.info.height !== size)
        throw new Error(`decoded to ${decoded.info.width}x${decoded.info.height}, expected ${size}x${size}`);
      data = decoded.data;
      channels = decoded.info.channels;
    }
    const target = out.subarray(at, at + this.imageLength);
    if (this.randAugment) {
      // RandAugment follows the flip and does not commute with it: the flipped 8-bit image is
      // built first (jitter and flip commute, so the jitter still runs on the decoded bytes)
      const rgb = channels === 3 ? data : toRgb(data, channels, size * size);
      const byteMap = this.jitter > 0 ? jitterBytes(rgb, this.jitter, rng) : null;
      const draws = drawRandAugment(rng);
      if (draws.some((d) => d.fired)) {
        // the thread's own two 8-bit images, reused: the operations write into them and nothing
        // between here and the normalization below awaits
        this.planar ??= new Uint8Array(this.imageLength);
        this.scratch ??= new Uint8Array(this.imageLength);
        const img = { data: interleavedToPlanar(rgb, size, flip, byteMap, this.planar), h: size, w: size };
        planarToNormalized(applyRandAugment(img, draws, BALPOE_RAND_AUGMENT, this.scratch).data, this.lut, target);
      } else {
        // a quarter of the images, where neither operation fires: the standard path's single
        // pass, the same floats without the 8-bit image in between
        bytesToNormalizedChw(rgb, 3, size, flip, this.lut, target, byteMap);
      }
      return;
    }
    let rgb: Uint8Array = data;
    let byteMap: Uint8Array | null = null;
    if (this.jitter > 0) {
      if (channels !== 3) {
        rgb = toRgb(data, channels, size * size);
        channels = 3;
      }
      // flip and jitter commute (the jitter's statistics are over the whole image); a trailing
      // brightness / contrast map is folded into the normalization's table
      byteMap = jitterBytes(rgb, this.jitter, rng);
    }
    bytesToNormalizedChw(rgb, channels, size, flip, this.lut, target, byteMap);
  }
}

// failOn 'error' also refuses truncated files; limitInputPixels stops decompression bombs
const SHARP_INPUT = { failOn: 'error', limitInputPixels: MAX_IMAGE_PIXELS } as const;

let nativeJpeg: boolean | undefined;
/**
 * Whether JPEGs go through the addon's decoder: where it was built with libjpeg, unless
 * TAILOR_JPEG=0 (sharp for every image, as before the decoder; the benchmark's comparison).
 */
function useNativeJpeg(): boolean {
  nativeJpeg ??= process.env.TAILOR_JPEG !== '0' && jpegDecoder().available;
  return nativeJpeg;
}

/** Interleaved bytes of 1, 2 or 4+ channels as RGB (grey repeated; alpha dropped). */
function toRgb(data: Uint8Array, channels: number, pixels: number): Uint8Array {
  const out = new Uint8Array(pixels * 3);
  const step = channels >= 3 ? 1 : 0;
  for (let p = 0; p < pixels; p++) {
    out[3 * p] = data[p * channels]!;
    out[3 * p + 1] = data[p * channels + step]!;
    out[3 * p + 2] = data[p * channels + 2 * step]!;
  }
  return out;
}

/**
 * Width and height from a JPEG's start-of-frame segment, or undefined for anything else (the
 * caller then asks libvips). A malformed header also gives undefined: the decoder names the error.
 */
export function jpegSize(b: Uint8Array): { width: number; height: number } | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    // markers without a length: TEM, RSTn, SOI
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      i += 2;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) return undefined; // EOI or SOS before any frame header
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    const sof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (sof) {
      if (i + 8 >= b.length) return undefined;
      const height = (b[i + 5]! << 8) | b[i + 6]!;
      const width = (b[i + 7]! << 8) | b[i + 8]!;
      return width > 0 && height > 0 ? { width, height } : undefined;
    }
    if (length < 2) return undefined;
    i += 2 + length;
  }
  return undefined;
}

/**
 * Batch `b` of an epoch: the images at `indices`, decoded and augmented a few at a time. A file
 * that cannot be decoded is a DataFormatError naming the list file, its line and the image, or,
 * with skipCorrupt, left out of the batch and reported in `skipped`.
 */
export async function buildListBatch(
  source: ListSource,
  augmenter: ListAugmenter,
  indices: Int32Array,
  seed: number,
  epoch: number,
  b: number,
  options: ListBatchOptions = {},
): Promise<ListBatchResult> {
  const n = indices.length;
  const length = augmenter.imageLength;
  const x = options.out?.length === n * length ? options.out : new Float32Array(n * length);
  const failed: (SkippedImage | undefined)[] = new Array<SkippedImage | undefined>(n);
  let next = 0;
  const run = async (): Promise<void> => {
    while (next < n) {
      const k = next++;
      const i = indices[k]!;
      const path = source.paths[i];
      if (path === undefined) throw new RangeError(`image index ${i} out of range 0..${source.paths.length - 1}`);
      const line = source.lines[i]!;
      try {
        await augmenter.image(join(source.root, path), imageRng(seed, epoch, b, k), x, k * length);
      } catch (error) {
        const message = `cannot decode image '${path}': ${(error as Error).message}`;
        if (!options.skipCorrupt)
          throw new DataFormatError(
            `${message} (fix or remove the file, drop the line, or skip unreadable images with the skip-corrupt option)`,
            source.listFile,
            line || undefined,
          );
        failed[k] = { path, line, message };
      }
    }
  };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 4, n));
  await Promise.all(Array.from({ length: concurrency }, run));
  const skipped = failed.filter((f): f is SkippedImage => f !== undefined);
  const kept = skipped.length === 0 ? indices : indices.filter((_, k) => failed[k] === undefined);
  let data = x;
  if (skipped.length > 0) {
    // close the gaps the skipped images left, keeping the batch order
    let to = 0;
    for (let k = 0; k < n; k++) {
      if (failed[k] !== undefined) continue;
      if (to !== k) x.copyWithin(to * length, k * length, (k + 1) * length);
      to++;
    }
    data = x.slice(0, to * length);
  }
  const y = Int32Array.from(kept, (i) => source.labels[i]!);
  const size = augmenter.spec.size;
  return {
    batch: { x: data, y, n: kept.length, shape: [3, size, size], indices: Int32Array.from(kept) },
    skipped,
  };
}
