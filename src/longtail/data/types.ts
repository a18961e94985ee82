// The in-memory and lazily decoded image data sets every reader produces, and the error type
// readers throw when a file is bad (it always names the file, and the line or record if any).
import { InputError } from '../../util/errors.js';
import { readBoundedFile } from '../../util/fs.js';

/** An in-memory image data set: N images of shape [C, H, W], stored CHW per image, uint8. */
export interface ImageDataset {
  /** N x C x H x W bytes, image after image, each image channel-major (CHW). */
  images: Uint8Array;
  labels: Int32Array;
  /** [channels, height, width] of every image. */
  shape: [number, number, number];
  /** Number of classes (labels are in 0..classes-1). */
  classes: number;
  classNames?: string[];
  /** Where the data came from, for messages and run records. */
  source?: string;
}

/** One entry of an image list: a path relative to the root, and its label. */
export interface ImageListEntry {
  path: string;
  label: number;
}

/**
 * A data set file (image list, idx, CIFAR batch) that is malformed or missing; names the file and, where it can, the line.
 */
export class DataFormatError extends InputError {
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
  ) {
    super(line === undefined ? `${file}: ${message}` : `${file}:${line}: ${message}`);
  }
}

export function imageSize(shape: readonly [number, number, number]): number {
  return shape[0] * shape[1] * shape[2];
}

export function datasetLength(ds: { labels: Int32Array }): number {
  return ds.labels.length;
}

/** Per-class image counts of a label array. */
export function classCounts(labels: ArrayLike<number>, classes: number): number[] {
  const counts = new Array<number>(classes).fill(0);
  for (let i = 0; i < labels.length; i++) counts[labels[i]!]!++;
  return counts;
}

/** A new in-memory data set holding the given images of `ds` in the given order. */
export function selectImages(ds: ImageDataset, indices: ArrayLike<number>): ImageDataset {
  const size = imageSize(ds.shape);
  const images = new Uint8Array(indices.length * size);
  const labels = new Int32Array(indices.length);
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    if (!(i >= 0 && i < ds.labels.length))
      throw new RangeError(`selectImages: index ${i} out of range 0..${ds.labels.length - 1}`);
    images.set(ds.images.subarray(i * size, (i + 1) * size), k * size);
    labels[k] = ds.labels[i]!;
  }
  const out: ImageDataset = { images, labels, shape: [...ds.shape], classes: ds.classes };
  if (ds.classNames) out.classNames = ds.classNames;
  if (ds.source) out.source = ds.source;
  return out;
}

/** Checks that every label lies in 0..classes-1; `where(i)` describes record i for the message. */
export function checkLabels(
  labels: ArrayLike<number>,
  classes: number,
  file: string,
  where: (i: number) => number | undefined,
): void {
  for (let i = 0; i < labels.length; i++) {
    const y = labels[i]!;
    if (!(Number.isInteger(y) && y >= 0 && y < classes)) {
      throw new DataFormatError(`label ${y} out of range 0..${classes - 1} (record ${i})`, file, where(i));
    }
  }
}

/** Data files: the largest real one (ImageNet-size idx or pickle) is well below 2 GiB. */
const MAX_DATA_FILE_BYTES = 2 ** 31 - 1;

/** Reads a data file, refusing implausible sizes; errors are DataFormatErrors naming the file. */
export function readDataFile(path: string): Buffer {
  return readBoundedFile(path, MAX_DATA_FILE_BYTES, 'a data file', (m) => {
    const detail = m.startsWith(`${path}: `) ? m.slice(path.length + 2) : m;
    return new DataFormatError(detail, path);
  });
}
