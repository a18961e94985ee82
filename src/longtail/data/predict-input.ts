// The unlabeled images `tailor predict` classifies: a folder of PNG/JPEG files (recursive), an
// image list in the official txt format (`path label` lines, paths relative to the list's folder
// or a given root), an idx file of images, or a CIFAR batch file (binary or python). Each becomes
// a uint8 set of the run's image shape, with label 0 for every image (the input has no labels;
// nothing reads them as truth). A decoded pool that fits the memory budget is held in memory (the
// test-time searches iterate over it epoch after epoch); a larger one is streamed from its files.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { InputError } from '../../util/errors.js';
import { readIdx } from './idx.js';
import { readBinaryBatch, readPythonBatch } from './cifar.js';
import { LazyImageDataset, decodeImage, readImageList, type DecodeOptions } from './imagelist.js';
import { DataFormatError, type ImageDataset } from './types.js';
import { checksOf } from '../../util/arguments.js';

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
  /**
   * Decoded pools up to this many bytes are held in memory (default {@link DEFAULT_POOL_BYTES});
   * larger ones are streamed: decoded again, a batch at a time, on every pass over them.
   */
  poolBytes?: number;
  /** Called as images are read (done of total). */
  progress?: (done: number, total: number) => void;
}

/** Decoded pools up to 1 GiB are held in memory; larger ones are streamed. */
export const DEFAULT_POOL_BYTES = 1024 ** 3;

/** The images `tailor predict` classifies, in a fixed order, with where each came from. */
export interface PredictInput {
  /** In memory, or (a pool over {@link PredictInputOptions.poolBytes}) decoded a batch at a time. */
  images: ImageDataset | LazyImageDataset;
  /** The pool is decoded on every pass instead of held in memory. */
  streamed: boolean;
  /** Rows whose image failed while streamed (with skipBad): zeros to the model, left out of the output. */
  failed: ReadonlySet<number>;
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
 * ```ts
 * import { readPredictInput } from 'tailor/longtail';
 * const input = await readPredictInput('photos/', { shape: [1, 28, 28], classes: 10 });
 * console.log(`${input.paths.length} images, ${input.converted} converted`);
 * ```
 */
export async function readPredictInput(path: string, o: PredictInputOptions): Promise<PredictInput> {
  checkPredictInputArguments(path, o);
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

function checkPredictInputArguments(path: unknown, options: unknown): void {
  const c = checksOf('readPredictInput');
  c.string(path, 'path');
  const o = c.object(options, 'options');
  c.array(o.shape, 'options.shape');
  if ((o.shape as unknown[]).length !== 3) c.fail('options.shape', '[channels, height, width]', o.shape);
  (o.shape as unknown[]).forEach((v, i) => c.integer(v, `options.shape[${i}]`, { min: 1, max: 65_536 }));
  c.integer(o.classes, 'options.classes', { min: 1 });
  if (o.poolBytes !== undefined) c.integer(o.poolBytes, 'options.poolBytes', { min: 0 });
  if (o.listRoot !== undefined) c.string(o.listRoot, 'options.listRoot');
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
    streamed: false,
    failed: new Set(),
  };
}

/** How one image file becomes the model's [channels, height, width] uint8 array. */
function fileDecoder(o: PredictInputOptions): (file: string) => Promise<Uint8Array> {
  const [channels, height, width] = o.shape;
  if (o.decode) {
    const decode: DecodeOptions = { ...o.decode, channels: channels === 1 ? 1 : 3 };
    return (file) => decodeImage(file, decode);
  }
  return async (file) => decodeStretched((await import('sharp')).default, file, channels, height, width);
}

/** Runs `one` over 0..count-1, `concurrency` at a time, reporting progress every 256 images. */
async function forEachConcurrently(
  count: number,
  one: (k: number) => Promise<void>,
  progress?: (done: number, total: number) => void,
  concurrency = 4,
): Promise<void> {
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      await one(next++);
      done++;
      if (done % 256 === 0 || done === count) progress?.(done, count);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

async function decodeFiles(
  root: string,
  paths: string[],
  kind: 'folder' | 'list',
  o: PredictInputOptions,
): Promise<PredictInput> {
  const [channels, height, width] = o.shape;
  const size = channels * height * width;
  const streamed = paths.length * size > (o.poolBytes ?? DEFAULT_POOL_BYTES);
  const decode = fileDecoder(o);
  const decoded: (Uint8Array | null)[] = new Array<Uint8Array | null>(paths.length).fill(null);
  const readable = new Array<boolean>(paths.length).fill(false);
  const skipped: PredictInput['skipped'] = [];
  let converted = 0;
  const sharp = (await import('sharp')).default;
  const bad = (file: string, reason: string) => {
    if (!o.skipBad) throw new UnreadableImageError(file, reason);
    skipped.push({ file, reason });
  };
  // The header of every image is read first (sizes and channels: the converted count, --strict);
  // a pool held in memory is decoded in the same pass, a streamed one on every pass over it.
  await forEachConcurrently(
    paths.length,
    async (k) => {
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
      if (streamed) {
        readable[k] = true;
        return;
      }
      try {
        decoded[k] = await decode(file);
        readable[k] = true;
      } catch (error) {
        return bad(file, (error as Error).message);
      }
    },
    o.progress,
  );
  const kept = readable.flatMap((ok, k) => (ok ? [k] : []));
  if (kept.length === 0) throw new EmptyInputError(`no readable images (${skipped.length} skipped)`);
  const keptPaths = kept.map((k) => paths[k]!);
  const base = { paths: keptPaths, kind, converted, skipped };
  if (streamed) {
    const stream = new StreamedImages(root, keptPaths, o, decode, skipped);
    return { ...base, images: stream, streamed: true, failed: stream.failed };
  }
  const images = new Uint8Array(kept.length * size);
  kept.forEach((k, i) => images.set(decoded[k]!, i * size));
  return {
    ...base,
    images: { images, labels: new Int32Array(kept.length), shape: o.shape, classes: o.classes },
    streamed: false,
    failed: new Set(),
  };
}

/**
 * A pool too large to hold decoded: the files are decoded again on every pass (the adaptation's
 * epochs), a batch at a time. An image whose header read but whose pixels do not decode fails
 * the pass (named), or with --skip-bad reads as zeros and is left out of the output.
 */
class StreamedImages extends LazyImageDataset {
  /** Rows whose image failed to decode (with --skip-bad), left out of the output. */
  readonly failed = new Set<number>();

  constructor(
    root: string,
    private readonly files: string[],
    private readonly o: PredictInputOptions,
    private readonly decodeFile: (file: string) => Promise<Uint8Array>,
    private readonly skipped: PredictInput['skipped'],
  ) {
    super(
      {
        root,
        listFile: root,
        entries: files.map((path) => ({ path, label: 0, line: 0 })),
        classes: o.classes,
        skipped: 0,
      },
      { height: o.shape[1], width: o.shape[2], channels: o.shape[0] === 1 ? 1 : 3 },
    );
  }

  override async loadImage(index: number): Promise<Uint8Array> {
    const file = join(this.list.root, this.files[index]!);
    try {
      return await this.decodeFile(file);
    } catch (error) {
      if (!this.o.skipBad) throw new UnreadableImageError(file, (error as Error).message);
      if (!this.failed.has(index)) {
        this.failed.add(index);
        this.skipped.push({ file, reason: (error as Error).message });
      }
      return new Uint8Array(this.o.shape[0] * this.o.shape[1] * this.o.shape[2]);
    }
  }
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

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...walk(p));
    else if (d.isFile()) out.push(p);
  }
  return out;
}
