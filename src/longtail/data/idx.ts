// Reader for the idx format of MNIST and Fashion-MNIST (optionally gzip-compressed), and the
// Fashion-MNIST layout: {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] in one directory
// (Debian's dataset-fashion-mnist installs them in /usr/share/datasets/fashion-mnist).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DataFormatError, checkLabels, readDataFile, type ImageDataset } from './types.js';

export const FASHION_MNIST_DEFAULT_ROOT = '/usr/share/datasets/fashion-mnist';
export const FASHION_MNIST_CLASSES = [
  'T-shirt/top',
  'Trouser',
  'Pullover',
  'Dress',
  'Coat',
  'Sandal',
  'Shirt',
  'Sneaker',
  'Bag',
  'Ankle boot',
];

/** Larger than any idx data set (EMNIST by-class images are 547 MB). */
const MAX_IDX_BYTES = 1 << 30;

export interface IdxArray {
  dims: number[];
  data: Uint8Array;
}

/** Reads an idx file of unsigned bytes (type 0x08); gzip is detected from the content. */
export function readIdx(file: string): IdxArray {
  let bytes: Uint8Array = readDataFile(file);
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      // Bounded: a small gzip bomb must not expand into gigabytes.
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_IDX_BYTES });
    } catch (error) {
      throw new DataFormatError(`corrupt or truncated gzip stream (${(error as Error).message})`, file);
    }
  }
  return parseIdx(bytes, file);
}

export function parseIdx(bytes: Uint8Array, file: string): IdxArray {
  if (bytes.length < 4) throw new DataFormatError(`truncated: ${bytes.length} bytes, no idx header`, file);
  if (bytes[0] !== 0 || bytes[1] !== 0)
    throw new DataFormatError('not an idx file (magic must start with two zero bytes)', file);
  if (bytes[2] !== 0x08) {
    throw new DataFormatError(
      `idx element type 0x${bytes[2]!.toString(16)} is not supported (only 0x08, unsigned byte)`,
      file,
    );
  }
  const ndims = bytes[3]!;
  if (ndims < 1 || ndims > 4) throw new DataFormatError(`idx file with ${ndims} dimensions`, file);
  const header = 4 + 4 * ndims;
  if (bytes.length < header)
    throw new DataFormatError(`truncated header (${bytes.length} of ${header} bytes)`, file);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const dims: number[] = [];
  for (let d = 0; d < ndims; d++) dims.push(view.getUint32(4 + 4 * d, false));
  const expected = dims.reduce((a, b) => a * b, 1);
  const have = bytes.length - header;
  if (have < expected) {
    const per = dims.slice(1).reduce((a, b) => a * b, 1);
    throw new DataFormatError(
      `truncated: header says ${dims.join('x')} (${expected} bytes of data), file has ${have} (record ${Math.floor(have / per)} incomplete)`,
      file,
    );
  }
  if (have > expected)
    throw new DataFormatError(`${have - expected} unexpected bytes after the ${dims.join('x')} array`, file);
  // a plain Uint8Array view (not a Buffer) so that callers see one array type everywhere
  return { dims, data: new Uint8Array(bytes.buffer, bytes.byteOffset + header, expected) };
}

function findFile(root: string, stem: string): string {
  for (const name of [`${stem}.gz`, stem, stem.replace(/-idx(\d)-ubyte$/, '.idx$1-ubyte')]) {
    const p = join(root, name);
    if (existsSync(p)) return p;
  }
  throw new DataFormatError(
    `missing ${stem}.gz (or ${stem}); expected the Fashion-MNIST idx files here (install the Debian package dataset-fashion-mnist or pass --root)`,
    root,
  );
}

/** Reads one split of an (Fashion-)MNIST directory. */
export function readFashionMnist(
  root: string = FASHION_MNIST_DEFAULT_ROOT,
  split: 'train' | 'test' = 'train',
): ImageDataset {
  const prefix = split === 'train' ? 'train' : 't10k';
  const imageFile = findFile(root, `${prefix}-images-idx3-ubyte`);
  const labelFile = findFile(root, `${prefix}-labels-idx1-ubyte`);
  const images = readIdx(imageFile);
  const labels = readIdx(labelFile);
  if (images.dims.length !== 3)
    throw new DataFormatError(`image file must have 3 dimensions, has ${images.dims.length}`, imageFile);
  if (labels.dims.length !== 1)
    throw new DataFormatError(`label file must have 1 dimension, has ${labels.dims.length}`, labelFile);
  const [n, h, w] = images.dims as [number, number, number];
  if (n < 1 || h < 1 || w < 1 || h > 4096 || w > 4096)
    throw new DataFormatError(
      `${n} images of ${h}x${w} pixels (expected at least one image of 1..4096 pixels a side)`,
      imageFile,
    );
  if (images.dims[0] !== labels.dims[0]) {
    throw new DataFormatError(
      `${images.dims[0]} images but ${labels.dims[0]} labels in ${labelFile}`,
      imageFile,
    );
  }
  const y = Int32Array.from(labels.data);
  checkLabels(y, 10, labelFile, () => undefined);
  return {
    images: images.data,
    labels: y,
    shape: [1, images.dims[1]!, images.dims[2]!],
    classes: 10,
    classNames: [...FASHION_MNIST_CLASSES],
    source: imageFile,
  };
}
