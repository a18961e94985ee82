// A synthetic ImageNet-LT-shaped data set: JPEG files of photo-like sizes and quality under
// train/, val/ and test/, with the three lists in the official `relative/path label` format, so
// that the whole image-list path (list reading, decoding, augmentation, batching) can be
// benchmarked and tested without the real data. The training counts are long-tailed (the
// exponential profile of the references), val and test are balanced, as in ImageNet-LT.
import { join } from 'node:path';
import { Rng } from '../../util/rng.js';
import { writeFileAtomic } from '../../util/fs.js';
import { longTailCounts } from './longtail.js';

/** What {@link synthImageList} writes. */
export interface SynthImagesOptions {
  /** Output directory (the image root; the lists are written into it). */
  out: string;
  /** Number of classes. */
  classes: number;
  /** Imbalance ratio n_max / n_min of the training split (1: balanced). */
  imbalance: number;
  /** Training images of the largest class. */
  maxPerClass: number;
  valPerClass: number;
  testPerClass: number;
  /** Nominal image size; each image's width and height vary within +-25% of it, like photos. */
  width: number;
  height: number;
  /** JPEG quality (ImageNet's photos are mostly 75..95). */
  quality?: number;
  seed?: number;
  /** File name prefix of the lists: PREFIX_train.txt, PREFIX_val.txt, PREFIX_test.txt. */
  prefix?: string;
}

/** What was written: the list files and the images per split. */
export interface SynthImagesResult {
  lists: { train: string; val: string; test: string };
  counts: { train: number[]; val: number; test: number };
  images: number;
  bytes: number;
}

/** The largest image the generator draws: far more would only be a slow way to fill a disk. */
const MAX_SIDE = 4096;

/** The WordNet-like folder name of class c (n00000000, n00000001, ...). */
export function synthClassFolder(c: number): string {
  return `n${String(c).padStart(8, '0')}`;
}

/**
 * Writes the data set. The same options (seed included) give byte-identical files: every image
 * draws from its own generator, seeded by the seed, the split and its index.
 */
export async function synthImageList(o: SynthImagesOptions): Promise<SynthImagesResult> {
  for (const [name, v, min] of [
    ['classes', o.classes, 1],
    ['maxPerClass', o.maxPerClass, 1],
    ['valPerClass', o.valPerClass, 0],
    ['testPerClass', o.testPerClass, 0],
    ['width', o.width, 8],
    ['height', o.height, 8],
  ] as const) {
    if (!(Number.isInteger(v) && v >= min)) throw new RangeError(`${name} must be an integer >= ${min}, got ${v}`);
  }
  if (o.width > MAX_SIDE || o.height > MAX_SIDE)
    throw new RangeError(`image size ${o.width}x${o.height} is above ${MAX_SIDE}x${MAX_SIDE}`);
  const quality = o.quality ?? 90;
  if (!(Number.isInteger(quality) && quality >= 1 && quality <= 100))
    throw new RangeError(`JPEG quality must be an integer in 1..100, got ${quality}`);
  const seed = o.seed ?? 0;
  const prefix = o.prefix ?? 'ImageNet_LT';
  const trainCounts = longTailCounts(o.classes, o.maxPerClass, o.imbalance, 'exp');
  const sharp = (await import('sharp')).default;
  let images = 0;
  let bytes = 0;
  const writeSplit = async (split: 'train' | 'val' | 'test', perClass: (c: number) => number) => {
    const lines: string[] = [];
    let index = 0;
    for (let c = 0; c < o.classes; c++) {
      const folder = synthClassFolder(c);
      for (let k = 0; k < perClass(c); k++, index++) {
        const name =
          split === 'train'
            ? `${folder}_${k}.JPEG`
            : `ILSVRC2012_${split}_${String(index + 1).padStart(8, '0')}.JPEG`;
        const rel = `${split}/${folder}/${name}`;
        const rng = new Rng(imageSeed(seed, split, index));
        const { data, width, height } = synthPhoto(rng, c, o.classes, o.width, o.height);
        const jpeg = await sharp(data, { raw: { width, height, channels: 3 } })
          .jpeg({ quality, chromaSubsampling: '4:2:0' })
          .toBuffer();
        writeFileAtomic(join(o.out, rel), jpeg);
        lines.push(`${rel} ${c}`);
        images++;
        bytes += jpeg.length;
      }
    }
    const list = join(o.out, `${prefix}_${split}.txt`);
    writeFileAtomic(list, lines.join('\n') + '\n');
    return list;
  };
  const train = await writeSplit('train', (c) => trainCounts[c]!);
  const val = await writeSplit('val', () => o.valPerClass);
  const test = await writeSplit('test', () => o.testPerClass);
  return {
    lists: { train, val, test },
    counts: { train: trainCounts, val: o.valPerClass * o.classes, test: o.testPerClass * o.classes },
    images,
    bytes,
  };
}

function imageSeed(seed: number, split: string, index: number): number {
  const s = split === 'train' ? 1 : split === 'val' ? 2 : 3;
  return (seed ^ Math.imul(s, 0x9e3779b9) ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0;
}

/**
 * One photo-like RGB image (interleaved): a smooth two-colour gradient in the class's hue, a few
 * soft blobs, and fine noise, so that JPEG encodes it to photo-like sizes (neither the tiny files
 * of flat colour nor the huge ones of white noise) and a model can tell the classes apart.
 */
export function synthPhoto(
  rng: Rng,
  label: number,
  classes: number,
  nominalWidth: number,
  nominalHeight: number,
): { data: Buffer; width: number; height: number } {
  const width = Math.max(8, Math.round(nominalWidth * (0.75 + 0.5 * rng.uniform())));
  const height = Math.max(8, Math.round(nominalHeight * (0.75 + 0.5 * rng.uniform())));
  const hue = label / classes;
  const base = hsv(hue, 0.6, 0.8);
  const other = hsv((hue + 0.3 + 0.2 * rng.uniform()) % 1, 0.5, 0.4 + 0.4 * rng.uniform());
  const angle = rng.uniform() * Math.PI * 2;
  const gx = Math.cos(angle) / width;
  const gy = Math.sin(angle) / height;
  const blobs = Array.from({ length: 3 + rng.int(4) }, () => ({
    x: rng.uniform() * width,
    y: rng.uniform() * height,
    r2: (0.05 + 0.2 * rng.uniform()) ** 2 * width * height,
    colour: hsv(rng.uniform(), 0.7, 0.3 + 0.7 * rng.uniform()),
  }));
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const t = Math.min(1, Math.max(0, 0.5 + (x - width / 2) * gx + (y - height / 2) * gy));
      let r = base[0] * (1 - t) + other[0] * t;
      let g = base[1] * (1 - t) + other[1] * t;
      let b = base[2] * (1 - t) + other[2] * t;
      for (const blob of blobs) {
        const d2 = (x - blob.x) ** 2 + (y - blob.y) ** 2;
        const w = Math.exp(-d2 / blob.r2);
        r += (blob.colour[0] - r) * w;
        g += (blob.colour[1] - g) * w;
        b += (blob.colour[2] - b) * w;
      }
      const noise = (rng.uniform() - 0.5) * 48;
      const o = (y * width + x) * 3;
      data[o] = clampByte(r + noise);
      data[o + 1] = clampByte(g + noise);
      data[o + 2] = clampByte(b + noise);
    }
  }
  return { data, width, height };
}

function clampByte(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : Math.round(v);
}

function hsv(h: number, s: number, v: number): [number, number, number] {
  const i = Math.floor(h * 6);
  const f = h * 6 - i;
  const p = v * (1 - s);
  const q = v * (1 - f * s);
  const t = v * (1 - (1 - f) * s);
  const rgb = [
    [v, t, p],
    [q, v, p],
    [p, v, t],
    [p, q, v],
    [t, p, v],
    [v, p, q],
  ][i % 6]!;
  return [rgb[0]! * 255, rgb[1]! * 255, rgb[2]! * 255];
}
