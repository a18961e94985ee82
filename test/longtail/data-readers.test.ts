import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { FASHION_MNIST_DEFAULT_ROOT, readFashionMnist, readIdx } from '../../src/longtail/data/idx.js';
import { readCifar } from '../../src/longtail/data/cifar.js';
import { unpickle } from '../../src/longtail/data/pickle.js';
import { classCounts, DataFormatError } from '../../src/longtail/data/types.js';
import { goldenDir } from '../helpers.js';
import {
  balancedSplit,
  cifarBinaryRecords,
  cifarPythonBatch,
  idxBytes,
  makeImages,
  tempDir,
  writeCifarBinary,
  writeCifarPython,
  writeFashionMnist,
} from './data-fixtures.js';

function throwsData(fn: () => unknown, pattern: RegExp, file?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof DataFormatError, `expected DataFormatError, got ${String(error)}`);
    assert.match(error.message, pattern);
    if (file) assert.ok(error.message.includes(file), `message '${error.message}' should name ${file}`);
    return true;
  });
}

test('Fashion-MNIST idx (gz): generated files in the Debian layout read back exactly', () => {
  const dir = tempDir('fmnist');
  const labels = Uint8Array.from({ length: 50 }, (_, i) => (i * 3) % 10);
  const images = makeImages(50, 28 * 28);
  writeFashionMnist(dir, 'train', images, labels);
  writeFashionMnist(
    dir,
    't10k',
    makeImages(20, 784, 9),
    Uint8Array.from({ length: 20 }, (_, i) => i % 10),
  );
  const train = readFashionMnist(dir, 'train');
  assert.deepEqual(train.shape, [1, 28, 28]);
  assert.equal(train.classes, 10);
  assert.deepEqual([...train.labels], [...labels]);
  assert.deepEqual(train.images, images);
  assert.equal(readFashionMnist(dir, 'test').labels.length, 20);
  assert.equal(train.classNames?.[9], 'Ankle boot');
  rmSync(dir, { recursive: true });
});

test('Fashion-MNIST idx: truncated, bad magic, label out of range, count mismatch, missing file', () => {
  const dir = tempDir('fmnist-bad');
  const labels = Uint8Array.from({ length: 10 }, (_, i) => i);
  writeFashionMnist(dir, 'train', makeImages(10, 784), labels);
  const imageFile = join(dir, 'train-images-idx3-ubyte.gz');
  const full = idxBytes([10, 28, 28], makeImages(10, 784));
  writeFileSync(imageFile, gzipSync(full.subarray(0, full.length - 100)));
  throwsData(() => readFashionMnist(dir), /truncated.*record 9 incomplete/, imageFile);
  writeFileSync(imageFile, gzipSync(Buffer.concat([Buffer.from([1, 2, 8, 3]), full.subarray(4)])));
  throwsData(() => readFashionMnist(dir), /not an idx file/, imageFile);
  writeFileSync(imageFile, gzipSync(full).subarray(0, 200));
  throwsData(() => readFashionMnist(dir), /corrupt or truncated gzip/, imageFile);
  writeFileSync(imageFile, gzipSync(full));
  const labelFile = join(dir, 'train-labels-idx1-ubyte.gz');
  writeFileSync(labelFile, gzipSync(idxBytes([10], Uint8Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 10]))));
  throwsData(() => readFashionMnist(dir), /label 10 out of range 0\.\.9 \(record 9\)/, labelFile);
  writeFileSync(labelFile, gzipSync(idxBytes([9], labels.subarray(0, 9))));
  throwsData(() => readFashionMnist(dir), /10 images but 9 labels/, imageFile);
  rmSync(labelFile);
  throwsData(() => readFashionMnist(dir), /missing train-labels-idx1-ubyte/, dir);
  rmSync(dir, { recursive: true });
});

test(
  'Fashion-MNIST from the Debian package dataset-fashion-mnist',
  { skip: !existsSync(FASHION_MNIST_DEFAULT_ROOT) },
  () => {
    const train = readFashionMnist();
    const testSet = readFashionMnist(undefined, 'test');
    assert.equal(train.labels.length, 60000);
    assert.equal(testSet.labels.length, 10000);
    assert.equal(train.images.length, 60000 * 784);
    assert.deepEqual(classCounts(train.labels, 10), new Array(10).fill(6000));
    assert.deepEqual(classCounts(testSet.labels, 10), new Array(10).fill(1000));
    // the first training image is an ankle boot (label 9), as in the published file
    assert.equal(train.labels[0], 9);
    const raw = readIdx(join(FASHION_MNIST_DEFAULT_ROOT, 't10k-labels-idx1-ubyte.gz'));
    assert.deepEqual(raw.dims, [10000]);
  },
);

for (const variant of ['cifar10', 'cifar100'] as const) {
  test(`${variant}: python pickle batches and binary records give the same data`, () => {
    const root = tempDir(`${variant}-layouts`);
    const classes = variant === 'cifar10' ? 10 : 100;
    const train = balancedSplit(classes, variant === 'cifar10' ? 6 : 3);
    const testSplit = balancedSplit(classes, 2, 77);
    writeCifarPython(join(root, 'py'), variant, train, testSplit);
    writeCifarBinary(join(root, 'bin'), variant, train, testSplit);
    for (const layout of ['py', 'bin']) {
      const ds = readCifar(join(root, layout), variant, 'train');
      assert.deepEqual(ds.shape, [3, 32, 32]);
      assert.equal(ds.classes, classes);
      assert.deepEqual([...ds.labels], train.labels, layout);
      assert.deepEqual(ds.images, train.images, layout);
      assert.equal(ds.classNames?.length, classes);
      assert.equal(ds.classNames?.[3], 'class_3');
      const t = readCifar(join(root, layout), variant, 'test');
      assert.deepEqual([...t.labels], testSplit.labels);
      assert.deepEqual(t.images, testSplit.images);
    }
    // the layout directory itself works as the root too
    const direct = readCifar(
      join(root, 'py', variant === 'cifar10' ? 'cifar-10-batches-py' : 'cifar-100-python'),
      variant,
      'test',
    );
    assert.equal(direct.labels.length, classes * 2);
    rmSync(root, { recursive: true });
  });
}

test('CIFAR-100 pickles re-saved by Python 3 (protocol 2 with _codecs.encode) read too', () => {
  const ds = readCifar(join(goldenDir, 'longtail', 'cifar100_py3_protocol2'), 'cifar100', 'test');
  assert.equal(ds.labels.length, 100);
  assert.deepEqual(
    [...ds.labels],
    Array.from({ length: 100 }, (_, i) => i),
  );
  for (const [i, p] of [
    [0, 0],
    [5, 100],
    [99, 3071],
  ] as const) {
    assert.equal(ds.images[i * 3072 + p], (i * 31 + p * 7) % 128);
  }
  assert.equal(ds.classNames?.[42], 'class_42');
});

test('CIFAR binary: truncated file, label out of range, missing batch', () => {
  const root = tempDir('cifar-bin-bad');
  const train = balancedSplit(10, 5);
  const dir = writeCifarBinary(root, 'cifar10', train, balancedSplit(10, 1));
  const f = join(dir, 'data_batch_3.bin');
  const good = readFileSync(f);
  writeFileSync(f, good.subarray(0, good.length - 10));
  throwsData(() => readCifar(root, 'cifar10'), /truncated.*record 9 incomplete/, f);
  const bad = Buffer.from(good);
  bad[3073 * 4] = 10;
  writeFileSync(f, bad);
  throwsData(() => readCifar(root, 'cifar10'), /label 10 out of range 0\.\.9 \(record 4\)/, f);
  rmSync(f);
  throwsData(() => readCifar(root, 'cifar10'), /missing cifar10 batch file/, f);
  const root100 = tempDir('cifar100-bin-bad');
  const d100 = writeCifarBinary(root100, 'cifar100', balancedSplit(100, 1), balancedSplit(100, 1));
  const records = cifarBinaryRecords('cifar100', { images: makeImages(2, 3072), labels: [3, 100] });
  writeFileSync(join(d100, 'train.bin'), records);
  throwsData(
    () => readCifar(root100, 'cifar100'),
    /label 100 out of range 0\.\.99 \(record 1\)/,
    'train.bin',
  );
  const empty = tempDir('empty');
  throwsData(() => readCifar(empty, 'cifar100'), /no cifar100 data found/);
  rmSync(empty, { recursive: true });
  rmSync(root, { recursive: true });
  rmSync(root100, { recursive: true });
});

test('CIFAR python: truncated pickle, wrong keys, label out of range, count mismatch, foreign pickles', () => {
  const root = tempDir('cifar-py-bad');
  const dir = writeCifarPython(root, 'cifar100', balancedSplit(100, 2), balancedSplit(100, 1));
  const f = join(dir, 'train');
  const good = cifarPythonBatch('cifar100', balancedSplit(100, 2), 'x');
  writeFileSync(f, good.subarray(0, 5000));
  throwsData(() => readCifar(root, 'cifar100'), /truncated pickle/, f);
  const labels = balancedSplit(100, 2).labels;
  labels[7] = 100;
  writeFileSync(f, cifarPythonBatch('cifar100', { images: makeImages(200, 3072), labels }, 'x'));
  throwsData(() => readCifar(root, 'cifar100'), /label 100 out of range 0\.\.99 \(record 7\)/, f);
  writeFileSync(
    f,
    cifarPythonBatch(
      'cifar100',
      { images: makeImages(200, 3072), labels: labels.slice(0, 199), shapeN: 200 },
      'x',
    ),
  );
  throwsData(() => readCifar(root, 'cifar100'), /199 labels in 'fine_labels' for 200 images/, f);
  writeFileSync(
    f,
    cifarPythonBatch(
      'cifar100',
      { images: makeImages(199, 3072), labels: labels.slice(0, 200), shapeN: 200 },
      'x',
    ),
  );
  throwsData(() => readCifar(root, 'cifar100'), /truncated 'data': 611328 bytes for 200 images/, f);
  // a CIFAR-10 batch where a CIFAR-100 one is expected: no fine_labels
  writeFileSync(f, cifarPythonBatch('cifar10', balancedSplit(10, 2), 'x'));
  throwsData(() => readCifar(root, 'cifar100'), /no 'fine_labels' list/, f);
  // protocol 3/4 pickles and arbitrary globals are refused, nothing is executed
  writeFileSync(f, Buffer.from([0x80, 0x04, 0x95, 0, 0, 0, 0, 0, 0, 0, 0, 0x7d, 0x2e]));
  throwsData(() => readCifar(root, 'cifar100'), /pickle protocol 4; only protocol 2/, f);
  writeFileSync(f, Buffer.concat([Buffer.from([0x80, 0x02]), Buffer.from('cos\nsystem\n', 'latin1')]));
  throwsData(() => readCifar(root, 'cifar100'), /global 'os\.system' is not allowed/, f);
  writeFileSync(f, Buffer.from([0x80, 0x02, 0x7d, 0x47, 0x2e]));
  throwsData(() => readCifar(root, 'cifar100'), /unsupported pickle opcode 0x47/, f);
  rmSync(root, { recursive: true });
});

test('unpickle: memo, LONG_BINPUT past 255 entries, APPENDS runs', () => {
  const batch = cifarPythonBatch('cifar10', balancedSplit(10, 130), 'training batch 1 of 5');
  const d = unpickle(batch, 'mem') as Map<string, unknown>;
  assert.deepEqual([...d.keys()], ['data', 'labels', 'batch_label', 'filenames']);
  assert.equal((d.get('filenames') as string[])[1299], 'image_1299_s_001299.png');
  assert.equal((d.get('labels') as number[]).length, 1300);
  assert.equal(d.get('batch_label'), 'training batch 1 of 5');
});
