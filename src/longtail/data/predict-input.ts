// The unlabeled images `tailor predict` classifies: a folder of PNG/JPEG files (recursive), an
// image list in the official txt format (`path label` lines, paths relative to the list's folder
// or a given root), an idx file of images, or a CIFAR batch file (binary or python). Each becomes
// an in-memory uint8 set of the run's image shape (one byte per pixel value: the decoded pool is
// what the test-time searches iterate over, epoch after epoch), with label 0 for every image
// (the input has no labels; nothing reads them as truth).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { InputError } from '../../util/errors.js';
import { readIdx } from './idx.js';
import { readBinaryBatch, readPythonBatch } from './cifar.js';
import { decodeImage, readImageList, type DecodeOptions } from './imagelist.js';
import { DataFormatError, type ImageDataset } from './types.js';

/** The input has no images. */
export class EmptyInputError extends InputError {
}

/** An image file that cannot be decoded (named), unless --skip-bad. */
export class UnreadableImageError extends InputError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`cannot read image '${file}': ${reason} (use --skip-bad to skip unreadable images)`);
  }
}

/** An image of another size or channel count than the model's, with --strict. */
export class ImageShapeError extends InputError {
}

/** How {@link readPredictInput} reads the images: the model's shape and how to treat misfits. */
export interface PredictInputOptions {
  /** The model's image shape [channels, height, width]. */
  shape: [number, number, number];
  /** The model's number of classes (every image's label is 0: the input has no labels). */
  classes: number;
  /** The run's decoding of image files (image-list runs: resize and center crop); else stretched. */
  decode?: DecodeOptions;
  /** Refuse images of another size or channel count instead of converting them. */
  strict?: boolean;
  /** Skip (and count) unreadable images instead of failing. */
  skipBad?: boolean;
  /** Root of an image list's paths (default: the list's folder). */
  listRoot?: string;
  /** Called as images are decoded (done of total). */
  progress?: (done: number, total: number) => void;
}

/** The images `tailor predict` classifies, in a fixed order, with where each came from. */
export interface PredictInput {
  images: ImageDataset;
  /** Per image: its path (relative to the input folder or list root), or null for idx/CIFAR. */
  paths: (string | null)[];
  kind: 'folder' | 'list' | 'idx' | 'cifar';
  /** Images converted to the model's size or channel count. */
  converted: number;
  skipped: { file: string; reason: string }[];
}

const IMAGE_FILES = /\.(png|jpe?g)$/i;

/**
 * Reads unlabeled images for prediction: a folder of PNG/JPEG files (recursive, sorted), an image
 * list (.txt), an idx file or a CIFAR batch file. Images of another size or channel count are
 * converted to the model's (or refused with `strict`); unreadable ones are an
 * {@link UnreadableImageError} (or skipped with `skipBad`); an empty input is an
 * {@link EmptyInputError}.
 *
 * @example
 * const input = await readPredictInput('photos/', { shape: [1, 28, 28], classes: 10 });
 */
export async function readPredictInput(path: string, o: PredictInputOptions): Promise<PredictInput> {
  if (!existsSync(path)) throw new InputError(`${path}: no such file or folder`);
  if (statSync(path).isDirectory()) {
    const files = walk(path)
      .filter((f) => IMAGE_FILES.test(f))
      .sort();
    if (files.length === 0) throw new EmptyInputError(`${path}: no PNG or JPEG images in this folder`);
    return decodeFiles(
      path,
      files.map((f) => relative(path, f)),
      'folder',
      o,
    );
  }
  if (/\.txt$/i.test(path)) {
    const root = o.listRoot ?? dirname(path);
    const list = readImageList(root, path, { missing: 'error' });
    if (list.entries.length === 0) throw new EmptyInputError(`${path}: the list has no images`);
    return decodeFiles(
      root,
      list.entries.map((e) => e.path),
      'list',
      o,
    );
  }
  if (/ubyte(\.gz)?$|\.idx\d?(\.gz)?$/i.test(path)) return fromArray(readIdxImages(path, o.shape), 'idx', o);
  if (/data_batch|test_batch|^train$|^test$|\.bin$/i.test(basename(path))) {
    const variant = /\.bin$/i.test(path) && !/100/.test(path) ? 'cifar10' : 'cifar100';
    const batch = /\.bin$/i.test(path) ? readBinaryBatch(path, variant) : readPythonBatch(path, variant);
    return fromArray({ data: batch.images, n: batch.labels.length, shape: [3, 32, 32] }, 'cifar', o);
  }
  throw new InputError(
    `${path}: not a folder of images, an image list (.txt), an idx file (*-ubyte[.gz]) or a CIFAR batch file`,
  );
}

function readIdxImages(file: string, modelShape: [number, number, number]) {
  const { dims, data } = readIdx(file);
  if (dims.length === 3) return { data, n: dims[0]!, shape: [1, dims[1]!, dims[2]!] as const };
  if (dims.length === 4) return { data, n: dims[0]!, shape: [dims[1]!, dims[2]!, dims[3]!] as const };
  throw new DataFormatError(
    `expected images (N x H x W or N x C x H x W), found ${dims.join('x')} (model: ${modelShape.join('x')})`,
    file,
  );
}

/** idx/CIFAR arrays: accepted as they are when their shape is the model's, else refused. */
function fromArray(
  a: { data: Uint8Array; n: number; shape: readonly [number, number, number] },
  kind: 'idx' | 'cifar',
  o: PredictInputOptions,
): PredictInput {
  if (a.n === 0) throw new EmptyInputError(`the ${kind} file has no images`);
  if (a.shape.join('x') !== o.shape.join('x'))
    throw new ImageShapeError(
      `the ${kind} images are ${a.shape.join('x')}, the model takes ${o.shape.join('x')}; write them out as image files to have them converted`,
    );
  return {
    images: { images: a.data, labels: new Int32Array(a.n), shape: o.shape, classes: o.classes },
    paths: new Array<null>(a.n).fill(null),
    kind,
    converted: 0,
    skipped: [],
  };
}

async function decodeFiles(
  root: string,
  paths: string[],
  kind: 'folder' | 'list',
  o: PredictInputOptions,
): Promise<PredictInput> {
  const [channels, height, width] = o.shape;
  const size = channels * height * width;
  const decoded: (Uint8Array | null)[] = new Array<Uint8Array | null>(paths.length).fill(null);
  const skipped: PredictInput['skipped'] = [];
  let converted = 0;
  let next = 0;
  let done = 0;
  const sharp = (await import('sharp')).default;
  const one = async (k: number) => {
    const file = join(root, paths[k]!);
    let meta;
    try {
      meta = await sharp(file, { failOn: 'error' }).metadata();
      if (!meta.width || !meta.height) throw new Error('no image dimensions');
    } catch (error) {
      return bad(file, (error as Error).message);
    }
    const metaChannels = (meta.channels ?? 3) - (meta.hasAlpha ? 1 : 0);
    // Image-list runs resize every photo (their test transform); only the channel count differs.
    const differs =
      metaChannels !== channels || (!o.decode && (meta.width !== width || meta.height !== height));
    if (differs) {
      if (o.strict)
        throw new ImageShapeError(
          `${file}: ${meta.width}x${meta.height} with ${metaChannels} channel(s), the model takes ${width}x${height} with ${channels} (--strict)`,
        );
      converted++;
    }
    try {
      decoded[k] = o.decode
        ? toChannels(await decodeImage(file, o.decode), channels, height * width)
        : await decodeStretched(sharp, file, channels, height, width);
    } catch (error) {
      return bad(file, (error as Error).message);
    }
  };
  const bad = (file: string, reason: string) => {
    if (!o.skipBad) throw new UnreadableImageError(file, reason);
    skipped.push({ file, reason });
  };
  const worker = async () => {
    while (next < paths.length) {
      await one(next++);
      done++;
      if (done % 256 === 0 || done === paths.length) o.progress?.(done, paths.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, paths.length) }, worker));
  const kept = decoded.flatMap((d, k) => (d ? [k] : []));
  if (kept.length === 0) throw new EmptyInputError(`no readable images (${skipped.length} skipped)`);
  const images = new Uint8Array(kept.length * size);
  kept.forEach((k, i) => images.set(decoded[k]!, i * size));
  return {
    images: { images, labels: new Int32Array(kept.length), shape: o.shape, classes: o.classes },
    paths: kept.map((k) => paths[k]!),
    kind,
    converted,
    skipped,
  };
}

/** Resized to exactly height x width (the in-memory sets' images all have the model's size). */
async function decodeStretched(
  sharp: (typeof import('sharp'))['default'],
  file: string,
  channels: number,
  height: number,
  width: number,
): Promise<Uint8Array> {
  let pipeline = sharp(file, { failOn: 'error' }).resize(width, height, { fit: 'fill', kernel: 'linear' });
  pipeline = channels === 1 ? pipeline.removeAlpha().greyscale() : pipeline.removeAlpha().toColourspace('srgb');
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  const plane = height * width;
  const out = new Uint8Array(channels * plane);
  for (let p = 0; p < plane; p++)
    for (let c = 0; c < channels; c++) out[c * plane + p] = data[p * info.channels + Math.min(c, info.channels - 1)]!;
  return out;
}

/** A decoded RGB CHW image with the model's channel count (1: the mean of R, G and B). */
function toChannels(rgb: Uint8Array, channels: number, plane: number): Uint8Array {
  if (channels === 3) return rgb;
  const out = new Uint8Array(plane);
  for (let p = 0; p < plane; p++) out[p] = Math.round((rgb[p]! + rgb[plane + p]! + rgb[2 * plane + p]!) / 3);
  return out;
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...walk(p));
    else if (d.isFile()) out.push(p);
  }
  return out;
}
