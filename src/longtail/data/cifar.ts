// Readers for CIFAR-10 and CIFAR-100 in both published layouts:
//   python: cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}, cifar-100-python/{train,test,meta}
//   binary: cifar-10-batches-bin/{data_batch_1..5,test_batch}.bin + batches.meta.txt,
//           cifar-100-binary/{train,test}.bin + fine_label_names.txt
// Each image row is 3072 bytes: the 1024 red, then green, then blue values, row-major, i.e. CHW.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { unpickle, pickleText, PickleError, type PickleValue, type PickledArray } from './pickle.js';
import { DataFormatError, checkLabels, readDataFile, type ImageDataset } from './types.js';

export type CifarVariant = 'cifar10' | 'cifar100';
export type CifarLayout = 'python' | 'binary';
const PIXELS = 3 * 32 * 32;

interface LayoutInfo {
  dir: string;
  layout: CifarLayout;
}

const LAYOUT_DIRS: Record<CifarVariant, Record<CifarLayout, string>> = {
  cifar10: { python: 'cifar-10-batches-py', binary: 'cifar-10-batches-bin' },
  cifar100: { python: 'cifar-100-python', binary: 'cifar-100-binary' },
};

function splitFiles(variant: CifarVariant, layout: CifarLayout, split: 'train' | 'test'): string[] {
  const ext = layout === 'binary' ? '.bin' : '';
  if (variant === 'cifar100') return [`${split}${ext}`];
  if (split === 'test') return [`test_batch${ext}`];
  return [1, 2, 3, 4, 5].map((i) => `data_batch_${i}${ext}`);
}

/** Finds the layout under `root`: the layout directory itself or a directory that contains it. */
export function findCifarLayout(root: string, variant: CifarVariant): LayoutInfo {
  const candidates: LayoutInfo[] = [];
  for (const layout of ['python', 'binary'] as const) {
    candidates.push({ dir: join(root, LAYOUT_DIRS[variant][layout]), layout });
    candidates.push({ dir: root, layout });
  }
  for (const c of candidates) {
    if (existsSync(join(c.dir, splitFiles(variant, c.layout, 'test')[0]!))) return c;
  }
  const names = Object.values(LAYOUT_DIRS[variant]).join(' or ');
  throw new DataFormatError(
    `no ${variant} data found: expected ${names} (python or binary version from the CIFAR web page) in this directory or the directory itself`,
    root,
  );
}

export function readCifar(
  root: string,
  variant: CifarVariant,
  split: 'train' | 'test' = 'train',
): ImageDataset {
  const { dir, layout } = findCifarLayout(root, variant);
  const files = splitFiles(variant, layout, split).map((f) => join(dir, f));
  for (const f of files)
    if (!existsSync(f))
      throw new DataFormatError(`missing ${variant} batch file (the download is incomplete)`, f);
  const parts = files.map((f) =>
    layout === 'python' ? readPythonBatch(f, variant) : readBinaryBatch(f, variant),
  );
  const n = parts.reduce((a, p) => a + p.labels.length, 0);
  const images = new Uint8Array(n * PIXELS);
  const labels = new Int32Array(n);
  let offset = 0;
  for (const p of parts) {
    images.set(p.images, offset * PIXELS);
    labels.set(p.labels, offset);
    offset += p.labels.length;
  }
  const classNames = readCifarClassNames(dir, variant, layout);
  const classes = variant === 'cifar10' ? 10 : 100;
  if (classNames && classNames.length !== classes) {
    throw new DataFormatError(
      `${classNames.length} class names, expected ${classes}`,
      join(dir, layout === 'python' ? 'meta' : 'names'),
    );
  }
  const out: ImageDataset = { images, labels, shape: [3, 32, 32], classes, source: dir };
  if (classNames) out.classNames = classNames;
  return out;
}

interface Batch {
  images: Uint8Array;
  labels: Int32Array;
}

export function readBinaryBatch(file: string, variant: CifarVariant): Batch {
  const bytes: Uint8Array = readDataFile(file);
  const labelBytes = variant === 'cifar10' ? 1 : 2;
  const record = labelBytes + PIXELS;
  if (bytes.length === 0) throw new DataFormatError('empty file', file);
  if (bytes.length % record !== 0) {
    const n = Math.floor(bytes.length / record);
    throw new DataFormatError(
      `truncated: ${bytes.length} bytes is not a whole number of ${record}-byte records (record ${n} incomplete)`,
      file,
    );
  }
  const n = bytes.length / record;
  const images = new Uint8Array(n * PIXELS);
  const labels = new Int32Array(n);
  const classes = variant === 'cifar10' ? 10 : 100;
  for (let i = 0; i < n; i++) {
    const base = i * record;
    // cifar-100 records start with the coarse label, then the fine label
    labels[i] = bytes[base + labelBytes - 1]!;
    if (variant === 'cifar100' && bytes[base]! >= 20) {
      throw new DataFormatError(`coarse label ${bytes[base]} out of range 0..19 (record ${i})`, file);
    }
    images.set(bytes.subarray(base + labelBytes, base + record), i * PIXELS);
  }
  checkLabels(labels, classes, file, () => undefined);
  return { images, labels };
}

function readPickleDict(file: string): Map<string, PickleValue> {
  let value: PickleValue;
  try {
    value = unpickle(readDataFile(file), file);
  } catch (error) {
    if (error instanceof PickleError) throw new DataFormatError(error.message.replace(`${file}: `, ''), file);
    throw error;
  }
  if (!(value instanceof Map))
    throw new DataFormatError('the pickle does not hold a dict (not a CIFAR python batch)', file);
  return value;
}

export function readPythonBatch(file: string, variant: CifarVariant): Batch {
  const dict = readPickleDict(file);
  const labelKey = variant === 'cifar10' ? 'labels' : 'fine_labels';
  const data = dict.get('data');
  const rawLabels = dict.get(labelKey);
  if (!data || typeof data !== 'object' || !('kind' in data)) {
    throw new DataFormatError(`no 'data' array (keys: ${[...dict.keys()].join(', ')})`, file);
  }
  const array = data as PickledArray;
  if (array.dtype !== '|u1' || array.shape.length !== 2 || array.shape[1] !== PIXELS || array.fortranOrder) {
    throw new DataFormatError(
      `'data' is ${array.dtype} ${array.shape.join('x')}, expected uint8 Nx${PIXELS} (C order)`,
      file,
    );
  }
  const n = array.shape[0]!;
  if (array.data.length !== n * PIXELS) {
    throw new DataFormatError(
      `truncated 'data': ${array.data.length} bytes for ${n} images of ${PIXELS}`,
      file,
    );
  }
  if (!Array.isArray(rawLabels))
    throw new DataFormatError(`no '${labelKey}' list (keys: ${[...dict.keys()].join(', ')})`, file);
  if (rawLabels.length !== n)
    throw new DataFormatError(`${rawLabels.length} labels in '${labelKey}' for ${n} images`, file);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const y = rawLabels[i];
    if (typeof y !== 'number') throw new DataFormatError(`'${labelKey}'[${i}] is not an integer`, file);
    labels[i] = y;
  }
  // validate before the Int32Array could hide a non-integer
  checkLabels(
    rawLabels.map((y) => y as number),
    variant === 'cifar10' ? 10 : 100,
    file,
    () => undefined,
  );
  return { images: array.data, labels };
}

function readCifarClassNames(dir: string, variant: CifarVariant, layout: CifarLayout): string[] | undefined {
  if (layout === 'python') {
    const meta = join(dir, variant === 'cifar10' ? 'batches.meta' : 'meta');
    if (!existsSync(meta)) return undefined;
    const names = readPickleDict(meta).get(variant === 'cifar10' ? 'label_names' : 'fine_label_names');
    if (!Array.isArray(names)) throw new DataFormatError('no label name list in the meta file', meta);
    return names.map((v, i) => {
      const s = pickleText(v);
      if (s === undefined) throw new DataFormatError(`label name ${i} is not a string`, meta);
      return s;
    });
  }
  const file = join(dir, variant === 'cifar10' ? 'batches.meta.txt' : 'fine_label_names.txt');
  if (!existsSync(file)) return undefined;
  return readDataFile(file)
    .toString('utf8')
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
