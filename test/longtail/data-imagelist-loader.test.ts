import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { repoRoot } from '../helpers.js';
import { readImageList } from '../../src/longtail/data/imagelist.js';
import { cropResize, jpegSize, type ListAugmentSpec } from '../../src/longtail/data/imagelist-augment.js';
import { ImageListLoader, listSource } from '../../src/longtail/data/imagelist-loader.js';
import type { Batch } from '../../src/longtail/data/batches.js';
import { synthImageList } from '../../src/longtail/data/synth-images.js';
import { DataFormatError } from '../../src/longtail/data/types.js';
import { tempDir } from './data-fixtures.js';

const TRAIN: ListAugmentSpec = { stage: 'train', kind: 'imagenet', size: 32 };

/** A small synthetic set: 3 classes, 12 training images of about 120 x 100. */
async function smallSet(): Promise<{ root: string; train: string }> {
  const root = tempDir('loader');
  const r = await synthImageList({
    out: root,
    classes: 3,
    imbalance: 2,
    maxPerClass: 6,
    valPerClass: 0,
    testPerClass: 0,
    width: 120,
    height: 100,
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
