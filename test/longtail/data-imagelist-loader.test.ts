import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { repoRoot } from '../helpers.js';
import { LazyImageDataset, readImageList } from '../../src/longtail/data/imagelist.js';
import { epochBatches } from '../../src/longtail/data/source.js';
import { cropResize, jpegSize, type ListAugmentSpec } from '../../src/longtail/data/imagelist-augment.js';
import { ImageListLoader, listSource } from '../../src/longtail/data/imagelist-loader.js';
import {
  brightnessBytes,
  bytesToNormalizedChw,
  contrastBytes,
  jitterBytes,
  normalizeTable,
  saturationBytes,
} from '../../src/longtail/data/jitter-bytes.js';
import { Rng } from '../../src/util/rng.js';
import type { Batch } from '../../src/longtail/data/batches.js';
import { synthImageList } from '../../src/longtail/data/synth-images.js';
import { DataFormatError } from '../../src/longtail/data/types.js';
import { tempDir } from './data-fixtures.js';

const TRAIN: ListAugmentSpec = { stage: 'train', kind: 'imagenet', size: 32 };

/**
 * A small synthetic set: by default 3 classes, 12 training images of about 120 x 100 (`size`:
 * 2 classes of `perClass` images of about width x height).
 */
async function smallSet(size?: {
  perClass: number;
  width: number;
  height: number;
}): Promise<{ root: string; train: string }> {
  const root = tempDir('loader');
  const r = await synthImageList({
    out: root,
    classes: size ? 2 : 3,
    imbalance: size ? 1 : 2,
    maxPerClass: size?.perClass ?? 6,
    valPerClass: 0,
    testPerClass: 0,
    width: size?.width ?? 120,
    height: size?.height ?? 100,
    seed: 5,
  });
  return { root, train: r.lists.train };
}

async function collect(loader: ImageListLoader, seed: number, epoch: number): Promise<Batch[]> {
  const out: Batch[] = [];
  for await (const b of loader.epoch({ batchSize: 5, seed, epoch })) out.push(b);
  return out;
}

function sameBatches(a: Batch[], b: Batch[], what: string): void {
  assert.equal(a.length, b.length, what);
  for (let k = 0; k < a.length; k++) {
    assert.deepEqual(a[k]!.indices, b[k]!.indices, `${what}: order of batch ${k}`);
    assert.deepEqual(a[k]!.y, b[k]!.y, `${what}: labels of batch ${k}`);
    assert.ok(
      Buffer.from(a[k]!.x.buffer).equals(Buffer.from(b[k]!.x.buffer)),
      `${what}: pixels of batch ${k}`,
    );
  }
}

test('image-list loader: worker threads give the single-threaded epoch, order and pixels', async () => {
  const { root, train } = await smallSet();
  const source = listSource(readImageList(root, train));
  const single = new ImageListLoader(source, { spec: TRAIN, workers: 0 });
  const parallel = new ImageListLoader(source, { spec: TRAIN, workers: 2, prefetch: 3 });
  try {
    const a = await collect(single, 7, 0);
    assert.deepEqual(
      a.map((b) => b.n),
      [5, 5, 3],
    );
    assert.deepEqual(a[0]!.shape, [3, 32, 32]);
    assert.ok(a.every((b) => b.x.every(Number.isFinite)));
    sameBatches(a, await collect(parallel, 7, 0), 'two workers');
    // resumable: epoch 1 of a fresh loader is epoch 1 of a loader that ran epoch 0
    const e1 = await collect(parallel, 7, 1);
    sameBatches(e1, await collect(new ImageListLoader(source, { spec: TRAIN }), 7, 1), 'epoch 1 alone');
    assert.notDeepEqual(e1[0]!.indices, a[0]!.indices, 'each epoch has its own order');
    const other = await collect(single, 8, 0);
    assert.ok(!Buffer.from(other[0]!.x.buffer).equals(Buffer.from(a[0]!.x.buffer)), 'another seed');
    // the test transform is deterministic: center crops in list order
    const test1 = new ImageListLoader(source, { spec: { ...TRAIN, stage: 'test' }, workers: 2 });
    const t = [];
    for await (const b of test1.epoch({ batchSize: 4, sampler: 'sequential' })) t.push(b);
    assert.deepEqual([...t[0]!.indices], [0, 1, 2, 3]);
    await test1.close();
  } finally {
    await parallel.close();
  }
});

/** Two epochs of a recycling loader, each batch copied before the next is asked for. */
async function collectCopied(
  loader: ImageListLoader,
  seed: number,
): Promise<{ batches: Batch[]; detached: number }> {
  const batches: Batch[] = [];
  let detached = 0;
  for (const epoch of [0, 1]) {
    let previous: Float32Array | null = null;
    for await (const b of loader.epoch({ batchSize: 5, seed, epoch })) {
      // a buffer handed back to a worker thread is detached here
      if (previous && previous.length === 0) detached++;
      batches.push({ ...b, x: b.x.slice(), y: b.y.slice(), indices: b.indices.slice() });
      previous = b.x;
    }
  }
  return { batches, detached };
}

test('image-list loader: recycled pixel buffers give the same epochs, and are reused', async () => {
  const { root, train } = await smallSet();
  const source = listSource(readImageList(root, train));
  const fresh = new ImageListLoader(source, { spec: TRAIN, workers: 0 });
  const expected = [...(await collect(fresh, 3, 0)), ...(await collect(fresh, 3, 1))];
  for (const workers of [0, 2]) {
    const loader = new ImageListLoader(source, { spec: TRAIN, workers, recycleBuffers: true });
    try {
      const { batches, detached } = await collectCopied(loader, 3);
      sameBatches(batches, expected, `recycling, ${workers} workers`);
      // epoch 1 builds into the buffers epoch 0 handed back (the last, shorter batch has its own)
      assert.ok(
        loader.reusedBuffers >= 2,
        `${workers} workers: ${loader.reusedBuffers} batches reused a buffer`,
      );
      if (workers > 0) assert.ok(detached > 0, 'a buffer handed to a worker is no longer readable here');
    } finally {
      await loader.close();
    }
  }
  assert.equal(fresh.reusedBuffers, 0, 'without recycleBuffers every batch has a buffer of its own');
});

test('training from an image list (epochBatches with a pipeline) recycles the pixel buffers', async () => {
  const { root, train } = await smallSet();
  const ds = new LazyImageDataset(readImageList(root, train), { height: 32, width: 32, mode: 'stretch' });
  for (const workers of [0, 1]) {
    const xs: Float32Array[] = [];
    for await (const b of epochBatches(ds, { batchSize: 2, seed: 1, epoch: 0 }, { spec: TRAIN, workers }))
      xs.push(b.x);
    // A buffer handed back is built into again: the same array in-process, or moved to the
    // worker (detached here); without recycling every batch keeps its own.
    const handedBack = xs.filter((x, i) => x.buffer.byteLength === 0 || xs.indexOf(x) !== i).length;
    assert.ok(handedBack > 0, `${workers} workers: no batch buffer of ${xs.length} was recycled`);
  }
});

test('image-list loader: num_workers is capped to the cores', () => {
  const source = {
    root: '/',
    listFile: 'l',
    paths: ['a'],
    lines: Int32Array.of(1),
    labels: Int32Array.of(0),
  };
  const loader = new ImageListLoader(source, { spec: TRAIN, workers: 10_000 });
  assert.equal(loader.workers, availableParallelism());
  assert.throws(() => new ImageListLoader(source, { spec: TRAIN, workers: -1 }), /num_workers/);
  return loader.close();
});

test('image-list loader: a corrupt or truncated JPEG is named with its list line, or skipped and counted', async () => {
  const { root, train } = await smallSet();
  const list = readImageList(root, train);
  const truncated = join(root, list.entries[3]!.path);
  writeFileSync(truncated, readFileSync(truncated).subarray(0, 600));
  writeFileSync(join(root, list.entries[8]!.path), 'not a JPEG at all');
  const source = listSource(list);
  for (const workers of [0, 2]) {
    const loader = new ImageListLoader(source, { spec: TRAIN, workers });
    await assert.rejects(
      async () => {
        for await (const b of loader.epoch({ batchSize: 4, sampler: 'sequential' })) void b;
      },
      (e: unknown) => {
        assert.ok(e instanceof DataFormatError, String(e));
        assert.equal(e.file, train);
        assert.equal(e.line, 4);
        assert.match(e.message, /:4: cannot decode image 'train\/n00000000\/n00000000_3\.JPEG'/);
        assert.match(e.message, /skip-corrupt/);
        return true;
      },
    );
    assert.ok(loader.isClosed, 'an error ends the workers');
    const warnings: string[] = [];
    const skipping = new ImageListLoader(source, {
      spec: TRAIN,
      workers,
      skipCorrupt: true,
      warn: (m) => warnings.push(m),
    });
    let seen = 0;
    const indices: number[] = [];
    for await (const b of skipping.epoch({ batchSize: 4, sampler: 'sequential' })) {
      seen += b.n;
      indices.push(...b.indices);
      assert.equal(b.x.length, b.n * 3 * 32 * 32);
    }
    await skipping.close();
    assert.equal(seen, list.entries.length - 2);
    assert.ok(!indices.includes(3) && !indices.includes(8));
    assert.deepEqual(
      skipping.skipped.map((s) => s.line),
      [4, 9],
    );
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /:4: skipping unreadable image/);
  }
});

test('image-list loader: an abort stops the prefetching and ends the workers', async () => {
  const { root, train } = await smallSet();
  const loader = new ImageListLoader(listSource(readImageList(root, train)), { spec: TRAIN, workers: 2 });
  const ac = new AbortController();
  let batches = 0;
  await assert.rejects(async () => {
    for await (const b of loader.epoch({ batchSize: 2, seed: 1, signal: ac.signal })) {
      void b;
      batches++;
      ac.abort();
    }
  }, /abort/i);
  assert.equal(batches, 1);
  assert.ok(loader.isClosed);
});

test('image-list loader: Ctrl-C during prefetching ends the process promptly', async () => {
  const { root, train } = await smallSet();
  const mod = (p: string) => pathToFileURL(join(repoRoot, 'dist', 'src', 'longtail', 'data', p)).href;
  const script = `
    import { readImageList } from '${mod('imagelist.js')}';
    import { ImageListLoader, listSource } from '${mod('imagelist-loader.js')}';
    const loader = new ImageListLoader(listSource(readImageList(${JSON.stringify(root)}, ${JSON.stringify(train)})),
      { spec: { stage: 'train', kind: 'imagenet', size: 64 }, workers: 2, prefetch: 4 });
    for (let e = 0; ; e++) for await (const b of loader.epoch({ batchSize: 2, epoch: e })) console.log('batch', b.n);`;
  // a file, not --eval: worker threads inherit the parent's flags, and --input-type needs --eval
  const file = join(root, 'loop.mjs');
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const started = Date.now();
  child.kill('SIGINT');
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  assert.ok(signal === 'SIGINT' || code === 130, `exit ${code} ${signal}`);
  assert.ok(Date.now() - started < 5000, 'the workers do not keep the process alive');
});

test('image-list loader: ending workers in the middle of a decode never aborts the process', async () => {
  // photo-sized JPEGs, so that a worker is often inside the addon's decoder when it is ended
  const { root, train } = await smallSet({ perClass: 24, width: 400, height: 350 });
  const mod = (p: string) => pathToFileURL(join(repoRoot, 'dist', 'src', 'longtail', 'data', p)).href;
  const script = `
    import { readImageList } from '${mod('imagelist.js')}';
    import { ImageListLoader, listSource } from '${mod('imagelist-loader.js')}';
    const source = listSource(readImageList(${JSON.stringify(root)}, ${JSON.stringify(train)}));
    for (let i = 0; i < 60; i++) {
      const loader = new ImageListLoader(source, { spec: { stage: 'train', kind: 'imagenet', size: 224 }, workers: 2 });
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('stop')), (i * 7) % 40);
      try {
        for await (const b of loader.epoch({ batchSize: 4, seed: i, signal: ac.signal })) void b;
      } catch (e) {
        if (e.message !== 'stop') throw e;
      }
      await loader.close();
    }
    console.log('ended 60 loaders');`;
  const file = join(root, 'terminate.mjs');
  writeFileSync(file, script);
  const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
    child.on('exit', (c, s) => resolve([c, s])),
  );
  // before the addon swallowed the exception an ending environment cannot throw, this was SIGABRT
  // ("terminate called after throwing an instance of 'Napi::Error'")
  assert.equal(signal, null, `killed by ${signal}: ${err}`);
  assert.equal(code, 0, err);
  assert.match(out, /ended 60 loaders/);
});

test('image lists: a path outside the image root is refused, naming the line', () => {
  const root = tempDir('outside');
  const list = join(root, 'list.txt');
  for (const bad of ['../secret.jpg', '/etc/passwd', 'a/../../b.jpg']) {
    writeFileSync(list, `ok.jpg 0\n${bad} 1\n`);
    assert.throws(
      () => readImageList(root, list, { missing: 'ignore' }),
      (e: unknown) =>
        e instanceof DataFormatError && e.line === 2 && /points outside the image root/.test(e.message),
      bad,
    );
  }
  writeFileSync(list, 'a/../ok.jpg 0\n..hidden.jpg 1\n');
  assert.equal(readImageList(root, list, { missing: 'ignore' }).entries.length, 2);
});

test('shrink-on-load: a crop much larger than the output gives the pixels of extract-then-resize', async () => {
  const w0 = 1600;
  const h0 = 1200;
  const raw = Buffer.alloc(w0 * h0 * 3);
  for (let y = 0; y < h0; y++)
    for (let x = 0; x < w0; x++) {
      const p = (y * w0 + x) * 3;
      raw[p] = (x * 255) / w0;
      raw[p + 1] = (y * 255) / h0;
      raw[p + 2] = 128 + 100 * Math.sin(x / 90) * Math.cos(y / 70);
    }
  const jpeg = await sharp(raw, { raw: { width: w0, height: h0, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
  const box = { left: 200, top: 100, width: 1000, height: 900 };
  const fast = await cropResize(sharp(jpeg), w0, h0, box, 64, 64).raw().toBuffer();
  const slow = await sharp(jpeg)
    .extract(box)
    .resize(64, 64, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  assert.equal(fast.length, slow.length);
  let diff = 0;
  for (let i = 0; i < fast.length; i++) diff += Math.abs(fast[i]! - slow[i]!);
  assert.ok(diff / fast.length < 4, `mean absolute difference ${diff / fast.length}`);
});

test('jpegSize reads baseline and progressive frame headers as libvips does; other files give undefined', async () => {
  const raw = Buffer.alloc(37 * 23 * 3, 90);
  const img = () => sharp(raw, { raw: { width: 37, height: 23, channels: 3 } });
  for (const jpeg of [
    await img().jpeg().toBuffer(),
    await img().jpeg({ progressive: true }).toBuffer(),
    await img().withMetadata().jpeg({ quality: 50 }).toBuffer(),
  ])
    assert.deepEqual(jpegSize(jpeg), { width: 37, height: 23 });
  assert.equal(jpegSize(await img().png().toBuffer()), undefined);
  assert.equal(jpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00])), undefined);
  assert.equal(jpegSize(Buffer.alloc(0)), undefined);
});

test('colour jitter on bytes is PIL ImageEnhance (Brightness, Contrast, Color) exactly', () => {
  // expected bytes: Pillow 9.4's ImageEnhance on this 6 x 4 RGB image (torchvision's ColorJitter on PIL images)
  const input = Uint8Array.from([
    220, 4, 101, 170, 31, 173, 29, 90, 218, 229, 172, 27, 30, 95, 19, 112, 121, 108, 253, 16, 255, 25, 175,
    96, 29, 4, 172, 180, 29, 2, 43, 70, 120, 115, 58, 242, 223, 95, 174, 183, 8, 89, 209, 238, 57, 16, 203,
    72, 149, 181, 204, 137, 41, 17, 255, 6, 182, 98, 46, 223, 60, 249, 53, 253, 75, 148, 40, 202, 9, 124, 68,
    179,
  ]);
  const ops = { brightness: brightnessBytes, contrast: contrastBytes, saturation: saturationBytes };
  const cases: [keyof typeof ops, number, number[]][] = [
    [
      'brightness',
      0.6,
      [
        132, 2, 60, 102, 18, 103, 17, 54, 130, 137, 103, 16, 18, 57, 11, 67, 72, 64, 151, 9, 153, 15, 105, 57,
        17, 2, 103, 108, 17, 1, 25, 42, 72, 69, 34, 145, 133, 57, 104, 109, 4, 53, 125, 142, 34, 9, 121, 43,
        89, 108, 122, 82, 24, 10, 153, 3, 109, 58, 27, 133, 36, 149, 31, 151, 45, 88, 24, 121, 5, 74, 40, 107,
      ],
    ],
    [
      'brightness',
      1.4,
      [
        255, 5, 141, 238, 43, 242, 40, 126, 255, 255, 240, 37, 42, 133, 26, 156, 169, 151, 255, 22, 255, 35,
        245, 134, 40, 5, 240, 252, 40, 2, 60, 98, 168, 161, 81, 255, 255, 133, 243, 255, 11, 124, 255, 255,
        79, 22, 255, 100, 208, 253, 255, 191, 57, 23, 255, 8, 254, 137, 64, 255, 84, 255, 74, 255, 105, 207,
        56, 255, 12, 173, 95, 250,
      ],
    ],
    [
      'contrast',
      0.6,
      [
        175, 45, 104, 145, 62, 147, 61, 97, 174, 181, 146, 59, 61, 100, 54, 110, 116, 108, 195, 53, 196, 58,
        148, 101, 61, 45, 146, 151, 61, 44, 69, 85, 115, 112, 78, 188, 177, 100, 148, 153, 48, 97, 169, 186,
        77, 53, 165, 86, 133, 152, 166, 125, 68, 53, 196, 47, 152, 102, 71, 177, 79, 193, 75, 195, 88, 132,
        67, 164, 48, 118, 84, 151,
      ],
    ],
    [
      'contrast',
      1.4,
      [
        255, 0, 97, 194, 0, 198, 0, 82, 255, 255, 197, 0, 0, 89, 0, 113, 125, 107, 255, 0, 255, 0, 201, 90, 0,
        0, 197, 208, 0, 0, 16, 54, 124, 117, 37, 255, 255, 89, 200, 212, 0, 81, 249, 255, 36, 0, 240, 57, 165,
        209, 242, 148, 13, 0, 255, 0, 211, 93, 20, 255, 40, 255, 30, 255, 61, 163, 12, 239, 0, 130, 51, 207,
      ],
    ],
    [
      'saturation',
      0.6,
      [
        164, 34, 92, 137, 54, 139, 51, 88, 165, 206, 172, 85, 44, 83, 38, 114, 119, 111, 197, 55, 198, 63,
        153, 106, 29, 14, 115, 136, 45, 29, 53, 69, 99, 107, 73, 183, 190, 113, 161, 137, 32, 81, 209, 226,
        117, 62, 174, 96, 159, 178, 192, 109, 51, 37, 193, 43, 149, 91, 60, 166, 104, 217, 99, 206, 99, 143,
        76, 174, 58, 113, 79, 146,
      ],
    ],
    [
      'saturation',
      1.4,
      [
        255, 0, 109, 202, 7, 206, 6, 91, 255, 251, 171, 0, 15, 106, 0, 110, 122, 104, 255, 0, 255, 0, 196, 86,
        28, 0, 228, 223, 12, 0, 33, 70, 140, 122, 42, 255, 255, 76, 186, 228, 0, 96, 209, 249, 0, 0, 231, 48,
        139, 183, 216, 165, 30, 0, 255, 0, 214, 104, 31, 255, 16, 255, 6, 255, 50, 152, 3, 230, 0, 134, 56,
        211,
      ],
    ],
  ];
  for (const [op, factor, expected] of cases) {
    const d = input.slice();
    ops[op](d, factor);
    assert.deepEqual([...d], expected, `${op} ${factor}`);
  }
  // ToTensor + Normalize in float32, as torch computes them
  const lut = normalizeTable([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);
  assert.equal(lut[0], Math.fround(Math.fround(0 - Math.fround(0.485)) / Math.fround(0.229)));
  assert.equal(lut[512 + 255], Math.fround(Math.fround(1 - Math.fround(0.406)) / Math.fround(0.225)));
});

test('colour jitter with its byte maps composed and folded into the normalization gives the same floats', () => {
  // the operations one by one, in the drawn order, each applied to the bytes (the reference)
  const reference = (d: Uint8Array, strength: number, rng: Rng) => {
    const order = rng.permutation(4);
    const lo = Math.max(0, 1 - strength);
    const [b, c, s] = [0, 1, 2].map(() => lo + rng.uniform() * (1 + strength - lo));
    for (const k of order) {
      if (k === 0) brightnessBytes(d, b!);
      else if (k === 1) contrastBytes(d, c!);
      else if (k === 2) saturationBytes(d, s!);
    }
  };
  const size = 12;
  const lut = normalizeTable([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]);
  const pixels = new Rng(5);
  let folded = 0;
  for (let trial = 0; trial < 300; trial++) {
    const img = Uint8Array.from({ length: size * size * 3 }, () => Math.floor(pixels.uniform() * 256));
    const strength = [0.4, 0.9, 1.5][trial % 3]!;
    const want = img.slice();
    reference(want, strength, new Rng(trial));
    const deferred = img.slice();
    const rest = jitterBytes(deferred, strength, new Rng(trial));
    if (rest) folded++;
    const applied = deferred.map((v) => (rest ? rest[v]! : v));
    assert.deepEqual(applied, want, `the bytes with the returned map applied, trial ${trial}`);
    const a = new Float32Array(3 * size * size);
    const b = new Float32Array(3 * size * size);
    bytesToNormalizedChw(want, 3, size, trial % 2 === 0, lut, a);
    bytesToNormalizedChw(deferred, 3, size, trial % 2 === 0, lut, b, rest);
    assert.deepEqual(b, a, `deferred + folded normalization, trial ${trial}`);
  }
  assert.ok(folded > 100 && folded < 300, `a trailing byte map in some trials only: ${folded}`);
});
