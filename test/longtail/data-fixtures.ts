// Writers for small data files in the exact published layouts, for the reader tests: idx (gz)
// as Fashion-MNIST ships, CIFAR python batches as Python 2's cPickle wrote them (protocol 2:
// SHORT_BINSTRING keys, numpy.core.multiarray._reconstruct + BUILD, BINSTRING pixel data, label
// lists in APPENDS runs of 1000, memo puts on every object) and the CIFAR binary records.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tailor-${prefix}-`));
}

/** Deterministic pixels: image i, byte p gets (i * 31 + p * 7) mod 256. */
export function makeImages(n: number, size: number, salt = 0): Uint8Array {
  const out = new Uint8Array(n * size);
  for (let i = 0; i < n; i++)
    for (let p = 0; p < size; p++) out[i * size + p] = (i * 31 + p * 7 + salt) & 255;
  return out;
}

export function idxBytes(dims: number[], data: Uint8Array): Uint8Array {
  const header = Buffer.alloc(4 + 4 * dims.length);
  header[2] = 0x08;
  header[3] = dims.length;
  dims.forEach((d, k) => header.writeUInt32BE(d, 4 + 4 * k));
  return Buffer.concat([header, data]);
}

export function writeFashionMnist(
  dir: string,
  split: 'train' | 't10k',
  images: Uint8Array,
  labels: Uint8Array,
  h = 28,
  w = 28,
): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${split}-images-idx3-ubyte.gz`),
    gzipSync(idxBytes([labels.length, h, w], images)),
  );
  writeFileSync(join(dir, `${split}-labels-idx1-ubyte.gz`), gzipSync(idxBytes([labels.length], labels)));
}

/** A protocol-2 pickle writer producing the opcode stream of Python 2's cPickle for CIFAR dicts. */
class Py2Pickler {
  private parts: Buffer[] = [];
  private memo = 1;

  private op(...bytes: number[]): void {
    this.parts.push(Buffer.from(bytes));
  }
  private put(): void {
    if (this.memo < 256) this.op(0x71, this.memo);
    else {
      const b = Buffer.alloc(5);
      b[0] = 0x72;
      b.writeInt32LE(this.memo, 1);
      this.parts.push(b);
    }
    this.memo++;
  }
  str(s: string | Uint8Array): void {
    const b = typeof s === 'string' ? Buffer.from(s, 'latin1') : Buffer.from(s);
    if (b.length < 256) this.op(0x55, b.length);
    else {
      const h = Buffer.alloc(5);
      h[0] = 0x54;
      h.writeInt32LE(b.length, 1);
      this.parts.push(h);
    }
    this.parts.push(b);
    this.put();
  }
  int(v: number): void {
    if (v >= 0 && v < 256) this.op(0x4b, v);
    else if (v >= 0 && v < 65536) this.op(0x4d, v & 255, v >> 8);
    else {
      const b = Buffer.alloc(5);
      b[0] = 0x4a;
      b.writeInt32LE(v, 1);
      this.parts.push(b);
    }
  }
  global(module: string, name: string): void {
    this.parts.push(Buffer.from(`c${module}\n${name}\n`, 'latin1'));
    this.put();
  }
  ndarrayU8(shape: number[], data: Uint8Array): void {
    this.global('numpy.core.multiarray', '_reconstruct');
    this.global('numpy', 'ndarray');
    this.int(0);
    this.op(0x85);
    this.put();
    this.str('b');
    this.op(0x87);
    this.put();
    this.op(0x52);
    this.put();
    this.op(0x28);
    this.int(1);
    shape.forEach((d) => this.int(d));
    this.op(shape.length === 1 ? 0x85 : 0x86);
    this.put();
    this.global('numpy', 'dtype');
    this.str('u1');
    this.int(0);
    this.int(1);
    this.op(0x87);
    this.put();
    this.op(0x52);
    this.put();
    this.op(0x28);
    this.int(3);
    this.str('|');
    this.op(0x4e, 0x4e, 0x4e);
    this.int(-1);
    this.int(-1);
    this.int(0);
    this.op(0x74);
    this.put();
    this.op(0x62, 0x89);
    this.str(data);
    this.op(0x74);
    this.put();
    this.op(0x62);
  }
  list<T>(items: T[], each: (v: T) => void): void {
    this.op(0x5d);
    this.put();
    for (let s = 0; s < items.length; s += 1000) {
      this.op(0x28);
      items.slice(s, s + 1000).forEach(each);
      this.op(0x65);
    }
  }
  dict(entries: [string, () => void][]): Buffer {
    this.op(0x80, 0x02, 0x7d);
    this.put();
    this.op(0x28);
    for (const [k, v] of entries) {
      this.str(k);
      v();
    }
    this.op(0x75, 0x2e);
    return Buffer.concat(this.parts);
  }
}

export interface Split {
  images: Uint8Array;
  labels: number[];
  /** Image count written in the array shape (default: the number of labels). */
  shapeN?: number;
  /** cifar-100 coarse labels (default fine % 20). */
  coarse?: number[];
}

export function cifarPythonBatch(variant: 'cifar10' | 'cifar100', split: Split, batchLabel: string): Buffer {
  const p = new Py2Pickler();
  const n = split.shapeN ?? split.labels.length;
  const entries: [string, () => void][] = [['data', () => p.ndarrayU8([n, 3072], split.images)]];
  if (variant === 'cifar10') entries.push(['labels', () => p.list(split.labels, (v) => p.int(v))]);
  else {
    entries.push(['fine_labels', () => p.list(split.labels, (v) => p.int(v))]);
    entries.push([
      'coarse_labels',
      () => p.list(split.coarse ?? split.labels.map((v) => v % 20), (v) => p.int(v)),
    ]);
  }
  entries.push(['batch_label', () => p.str(batchLabel)]);
  entries.push([
    'filenames',
    () =>
      p.list(
        split.labels.map((_, i) => `image_${i}_s_${String(i).padStart(6, '0')}.png`),
        (s) => p.str(s),
      ),
  ]);
  return p.dict(entries);
}

export function cifarMetaPickle(key: string, names: string[], extra: [string, number][] = []): Buffer {
  const p = new Py2Pickler();
  return p.dict([
    [key, () => p.list(names, (s) => p.str(s))],
    ...extra.map(([k, v]): [string, () => void] => [k, () => p.int(v)]),
  ]);
}

export function classNames(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `class_${i}`);
}

/** cifar-10-batches-py or cifar-100-python under root; cifar-10 train is split into 5 batches. */
export function writeCifarPython(
  root: string,
  variant: 'cifar10' | 'cifar100',
  train: Split,
  test: Split,
): string {
  const dir = join(root, variant === 'cifar10' ? 'cifar-10-batches-py' : 'cifar-100-python');
  mkdirSync(dir, { recursive: true });
  if (variant === 'cifar100') {
    writeFileSync(join(dir, 'train'), cifarPythonBatch(variant, train, 'training batch 1 of 1'));
    writeFileSync(join(dir, 'test'), cifarPythonBatch(variant, test, 'testing batch 1 of 1'));
    writeFileSync(join(dir, 'meta'), cifarMetaPickle('fine_label_names', classNames(100)));
  } else {
    for (const [k, part] of splitInFive(train).entries()) {
      writeFileSync(
        join(dir, `data_batch_${k + 1}`),
        cifarPythonBatch(variant, part, `training batch ${k + 1} of 5`),
      );
    }
    writeFileSync(join(dir, 'test_batch'), cifarPythonBatch(variant, test, 'testing batch 1 of 1'));
    writeFileSync(
      join(dir, 'batches.meta'),
      cifarMetaPickle('label_names', classNames(10), [
        ['num_cases_per_batch', 10000],
        ['num_vis', 3072],
      ]),
    );
  }
  return dir;
}

export function splitInFive(s: Split): Split[] {
  const n = s.labels.length;
  return [0, 1, 2, 3, 4].map((k) => {
    const a = Math.floor((k * n) / 5);
    const b = Math.floor(((k + 1) * n) / 5);
    return { images: s.images.subarray(a * 3072, b * 3072), labels: s.labels.slice(a, b) };
  });
}

export function cifarBinaryRecords(variant: 'cifar10' | 'cifar100', s: Split): Buffer {
  const labelBytes = variant === 'cifar10' ? 1 : 2;
  const out = Buffer.alloc(s.labels.length * (labelBytes + 3072));
  s.labels.forEach((y, i) => {
    const base = i * (labelBytes + 3072);
    if (variant === 'cifar100') out[base] = (s.coarse ?? s.labels.map((v) => v % 20))[i]!;
    out[base + labelBytes - 1] = y;
    out.set(s.images.subarray(i * 3072, (i + 1) * 3072), base + labelBytes);
  });
  return out;
}

export function writeCifarBinary(
  root: string,
  variant: 'cifar10' | 'cifar100',
  train: Split,
  test: Split,
): string {
  const dir = join(root, variant === 'cifar10' ? 'cifar-10-batches-bin' : 'cifar-100-binary');
  mkdirSync(dir, { recursive: true });
  if (variant === 'cifar100') {
    writeFileSync(join(dir, 'train.bin'), cifarBinaryRecords(variant, train));
    writeFileSync(join(dir, 'test.bin'), cifarBinaryRecords(variant, test));
    writeFileSync(join(dir, 'fine_label_names.txt'), classNames(100).join('\n') + '\n');
    writeFileSync(join(dir, 'coarse_label_names.txt'), classNames(20).join('\n') + '\n');
  } else {
    for (const [k, part] of splitInFive(train).entries())
      writeFileSync(join(dir, `data_batch_${k + 1}.bin`), cifarBinaryRecords(variant, part));
    writeFileSync(join(dir, 'test_batch.bin'), cifarBinaryRecords(variant, test));
    writeFileSync(join(dir, 'batches.meta.txt'), classNames(10).join('\n') + '\n\n');
  }
  return dir;
}

/** A balanced split: perClass images of each class, labels cycling 0..classes-1. */
export function balancedSplit(classes: number, perClass: number, salt = 0): Split {
  const n = classes * perClass;
  return { images: makeImages(n, 3072, salt), labels: Array.from({ length: n }, (_, i) => i % classes) };
}
