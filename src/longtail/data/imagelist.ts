// Image lists (a root directory plus a txt file of `relative/path label` lines: ImageNet-LT,
// Places-LT, iNaturalist 2018 or any custom set) and class-per-folder directories, read lazily:
// images are decoded with sharp (libvips) only when a batch needs them.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { Sharp } from 'sharp';
import { DataFormatError, type ImageListEntry } from './types.js';

/** One entry of an image list: path, label and the line it came from. */
export interface ListedImage extends ImageListEntry {
  /** 1-based line in the list file (0 for folder layouts), for error messages. */
  line: number;
}

/** How {@link readImageList} reads a list (the root of the images, warnings). */
export interface ReadListOptions {
  /** Number of classes; labels must be below it. Default: largest label + 1. */
  classes?: number;
  /** What to do when an image file does not exist: 'error' (default), 'skip' (warn and drop), 'ignore' (do not check). */
  missing?: 'error' | 'skip' | 'ignore';
  /** Called with a message for each entry that is skipped. */
  warn?: (message: string) => void;
}

/**
 * An image list as read: the image root, the list file, its entries and the number of classes.
 */
export interface ImageList {
  root: string;
  listFile: string;
  entries: ListedImage[];
  classes: number;
  classNames?: string[];
  /** Lines dropped because their image is missing (missing: 'skip'). */
  skipped: number;
}

/** More classes than any image list has; a label above it is a corrupt line, not a class. */
export const MAX_LIST_CLASSES = 1_000_000;
/** List files are megabytes (iNaturalist 2018's train list is 22 MB); V8 strings stop at 512 MB. */
const MAX_LIST_BYTES = 256 * 1024 * 1024;

/** Parses a list file without touching the images (labels and duplicates are checked). */
export function parseImageList(
  text: string,
  listFile: string,
  classes?: number,
): { entries: ListedImage[]; classes: number } {
  const entries: ListedImage[] = [];
  const firstLine = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  let maxLabel = -1;
  for (let k = 0; k < lines.length; k++) {
    const lineNo = k + 1;
    const line = lines[k]!.trim();
    if (line === '') continue;
    // the label is the last field, so paths may contain spaces
    const m = /^(.*\S)\s+(\S+)$/.exec(line);
    if (!m) throw new DataFormatError(`expected 'relative/path label', got '${line}'`, listFile, lineNo);
    const path = m[1]!;
    const labelText = m[2]!;
    if (!/^\d+$/.test(labelText))
      throw new DataFormatError(`label '${labelText}' is not a non-negative integer`, listFile, lineNo);
    const label = Number(labelText);
    if (label >= MAX_LIST_CLASSES)
      throw new DataFormatError(
        `label ${labelText} is implausible (at most ${MAX_LIST_CLASSES} classes; iNaturalist 2018 has 8142)`,
        listFile,
        lineNo,
      );
    if (classes !== undefined && label >= classes) {
      throw new DataFormatError(`label ${label} out of range 0..${classes - 1}`, listFile, lineNo);
    }
    const previous = firstLine.get(path);
    if (previous !== undefined)
      throw new DataFormatError(`duplicate path '${path}' (first on line ${previous})`, listFile, lineNo);
    firstLine.set(path, lineNo);
    maxLabel = Math.max(maxLabel, label);
    entries.push({ path, label, line: lineNo });
  }
  if (entries.length === 0) throw new DataFormatError('the list has no entries', listFile);
  return { entries, classes: classes ?? maxLabel + 1 };
}

/** Reads `listFile` and checks its images exist under `root`. */
export function readImageList(root: string, listFile: string, options: ReadListOptions = {}): ImageList {
  if (!existsSync(listFile)) throw new DataFormatError('list file not found', listFile);
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new DataFormatError(`image root '${root}' is not a directory`, listFile);
  const size = statSync(listFile).size;
  if (size > MAX_LIST_BYTES)
    throw new DataFormatError(`${size} bytes is far too large for an image list`, listFile);
  const parsed = parseImageList(readFileSync(listFile, 'utf8'), listFile, options.classes);
  refuseOutsideRoot(root, listFile, parsed.entries);
  const missing = options.missing ?? 'error';
  let entries = parsed.entries;
  let skipped = 0;
  if (missing !== 'ignore') {
    entries = [];
    for (const e of parsed.entries) {
      if (existsSync(join(root, e.path))) {
        entries.push(e);
        continue;
      }
      if (missing === 'error') {
        throw new DataFormatError(
          `image '${e.path}' not found under ${root} (use the skip option to drop missing images)`,
          listFile,
          e.line,
        );
      }
      skipped++;
      (options.warn ?? console.warn)(`${listFile}:${e.line}: skipping missing image '${e.path}'`);
    }
    if (entries.length === 0)
      throw new DataFormatError(`none of the listed images exist under ${root}`, listFile);
  }
  return { root, listFile, entries, classes: parsed.classes, skipped };
}

/**
 * A list names images under its root: an absolute path or one that climbs out with '..' would
 * let a downloaded list read any file the user can read, so it is refused, naming the line.
 */
function refuseOutsideRoot(root: string, listFile: string, entries: ListedImage[]): void {
  const base = resolve(root);
  for (const e of entries) {
    const rel = relative(base, resolve(base, e.path));
    if (isAbsolute(e.path) || rel === '' || rel === '..' || rel.startsWith('../') || isAbsolute(rel))
      throw new DataFormatError(
        `path '${e.path}' points outside the image root ${root} (list paths are relative to the root, without '..')`,
        listFile,
        e.line,
      );
  }
}

/**
 * The ready-made list of test distribution `name` (e.g. forward50) in `dir`: NAME.txt or a file
 * ending in _NAME.txt (ImageNet_LT_forward50.txt, iNaturalist18_backward3.txt, ...).
 */
export function findDistributionList(dir: string, name: string): string {
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new DataFormatError('the directory of test lists does not exist', dir);
  const files = readdirSync(dir).filter((f) => f === `${name}.txt` || f.endsWith(`_${name}.txt`));
  if (files.length === 0)
    throw new DataFormatError(`no list for '${name}' (expected a file named *_${name}.txt)`, dir);
  if (files.length > 1) throw new DataFormatError(`several lists for '${name}': ${files.join(', ')}`, dir);
  return join(dir, files[0]!);
}

const IMAGE_EXTENSIONS = /\.(jpe?g|png|webp|bmp|tiff?)$/i;

/** A class-per-folder layout: root/<class name>/<image>; classes sorted by name (as torchvision). */
export function readImageFolder(root: string): ImageList {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new DataFormatError('not a directory', root);
  const classNames = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  if (classNames.length === 0)
    throw new DataFormatError('no class folders (expected root/<class>/<image files>)', root);
  const entries: ListedImage[] = [];
  classNames.forEach((name, label) => {
    const files = walk(join(root, name)).filter((f) => IMAGE_EXTENSIONS.test(f));
    if (files.length === 0)
      throw new DataFormatError(`class folder '${name}' has no images`, join(root, name));
    for (const f of files.sort()) entries.push({ path: relative(root, f), label, line: 0 });
  });
  return { root, listFile: root, entries, classes: classNames.length, classNames, skipped: 0 };
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, d.name);
    if (d.isDirectory()) out.push(...walk(p));
    else out.push(p);
  }
  return out;
}

/**
 * How an image becomes a [3, height, width] array. 'resize-crop': scale the shorter side to
 * `resizeShorter` (default: the crop's larger side) then take the center crop, i.e. torchvision's
 * Resize + CenterCrop (test transform); 'stretch': scale to exactly height x width.
 */
export interface DecodeOptions {
  height: number;
  width: number;
  mode?: 'resize-crop' | 'stretch';
  resizeShorter?: number;
  /** Channels of the decoded image: 3 (RGB, the default) or 1 (the mean of R, G and B). */
  channels?: 1 | 3;
}

const MAX_IMAGE_PIXELS = 100_000_000;

// sharp (libvips) is loaded on the first decode: the idx and CIFAR data sets, the mixtures and NMR
// never need it, and a machine without its native library still runs them.
let sharpModule: Promise<typeof import('sharp')> | undefined;
const loadSharp = async () => (await (sharpModule ??= import('sharp'))).default;

/** Decodes one image file to CHW uint8 RGB of the requested size. */
export async function decodeImage(
  file: string,
  options: DecodeOptions,
  where = file,
  line?: number,
): Promise<Uint8Array> {
  const { height, width } = options;
  const sharp = await loadSharp();
  let pipeline: Sharp;
  try {
    // limitInputPixels: no photo of a data set comes near 100 megapixels; a decompression bomb does.
    const input = sharp(file, { failOn: 'error', limitInputPixels: MAX_IMAGE_PIXELS });
    const meta = await input.metadata();
    const w0 = meta.width;
    const h0 = meta.height;
    if (!w0 || !h0) throw new Error('no image dimensions');
    // no EXIF auto-rotation: PIL's loader in the reference code does not rotate either
    pipeline = input;
    if ((options.mode ?? 'resize-crop') === 'resize-crop') {
      // crop in original coordinates the region that Resize(shorter) + CenterCrop(h, w) keeps
      const shorter = options.resizeShorter ?? Math.max(height, width);
      const scale = shorter / Math.min(w0, h0);
      const cw = Math.min(w0, Math.max(1, Math.round(width / scale)));
      const ch = Math.min(h0, Math.max(1, Math.round(height / scale)));
      pipeline = input.extract({
        left: Math.floor((w0 - cw) / 2),
        top: Math.floor((h0 - ch) / 2),
        width: cw,
        height: ch,
      });
    }
    const { data, info } = await pipeline
      .resize(width, height, { fit: 'fill', kernel: 'linear' })
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.width !== width || info.height !== height)
      throw new Error(`decoded to ${info.width}x${info.height}`);
    const rgb = interleavedToChw(data, height, width, info.channels);
    return options.channels === 1 ? rgbToGrey(rgb, height * width) : rgb;
  } catch (error) {
    if (error instanceof DataFormatError) throw error;
    throw new DataFormatError(`cannot decode image '${file}': ${(error as Error).message}`, where, line);
  }
}

function interleavedToChw(data: Uint8Array, height: number, width: number, channels: number): Uint8Array {
  const plane = height * width;
  const out = new Uint8Array(3 * plane);
  for (let p = 0; p < plane; p++) {
    for (let c = 0; c < 3; c++) out[c * plane + p] = data[p * channels + (channels >= 3 ? c : 0)]!;
  }
  return out;
}

/** One channel from a CHW RGB image: the mean of R, G and B, rounded. */
function rgbToGrey(rgb: Uint8Array, plane: number): Uint8Array {
  const out = new Uint8Array(plane);
  for (let p = 0; p < plane; p++) out[p] = Math.round((rgb[p]! + rgb[plane + p]! + rgb[2 * plane + p]!) / 3);
  return out;
}

/** A lazily decoded image set: the list is in memory, pixels are decoded per batch. */
export class LazyImageDataset {
  readonly labels: Int32Array;
  readonly shape: [number, number, number];

  constructor(
    readonly list: ImageList,
    readonly decode: DecodeOptions,
  ) {
    this.labels = Int32Array.from(list.entries, (e) => e.label);
    this.shape = [decode.channels ?? 3, decode.height, decode.width];
  }

  get classes(): number {
    return this.list.classes;
  }
  get length(): number {
    return this.labels.length;
  }

  /** Decodes image `index` of the list to [channels, height, width] uint8 (a DataFormatError names its file and line). */
  async loadImage(index: number): Promise<Uint8Array> {
    const e = this.list.entries[index];
    if (!e) throw new RangeError(`image index ${index} out of range 0..${this.length - 1}`);
    return decodeImage(join(this.list.root, e.path), this.decode, this.list.listFile, e.line || undefined);
  }

  /** Decodes the given images into one N x 3 x H x W array (sharp decodes them in parallel). */
  async loadImages(indices: ArrayLike<number>): Promise<Uint8Array> {
    const size = this.shape[0] * this.shape[1] * this.shape[2];
    const out = new Uint8Array(indices.length * size);
    const concurrency = 8;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < indices.length) {
        const k = next++;
        out.set(await this.loadImage(indices[k]!), k * size);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, indices.length) }, worker));
    return out;
  }
}
