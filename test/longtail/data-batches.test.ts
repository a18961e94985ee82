import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import {
  BatchBufferPool,
  batchIndices,
  epochOrder,
  iterateBatches,
  mixup,
  type Batch,
} from '../../src/longtail/data/batches.js';
import { ParallelBatchLoader } from '../../src/longtail/data/parallel.js';
import { longTailSubset } from '../../src/longtail/data/longtail.js';
import {
  NORMALIZATION,
  makeTransform,
  testTransform,
  trainTransform,
  type PipelineSpec,
} from '../../src/longtail/data/pipelines.js';
import { compose, horizontalFlip, randomCrop, rotation } from '../../src/longtail/data/augment.js';
import { normalize } from '../../src/longtail/data/augment-color.js';
import { assertClose } from '../helpers.js';
import { classCounts, selectImages, type ImageDataset } from '../../src/longtail/data/types.js';
import { makeImages } from './data-fixtures.js';

function cifarLike(n: number, classes: number): ImageDataset {
  return {
    images: makeImages(n, 3072),
    labels: Int32Array.from({ length: n }, (_, i) => i % classes),
    shape: [3, 32, 32],
    classes,
  };
}

test('an epoch visits every image once, in a seeded order that changes with the epoch', () => {
  const ds = cifarLike(300, 10);
  const seen: number[] = [];
  let batches = 0;
  for (const b of iterateBatches(ds, { batchSize: 128, seed: 4 })) {
    batches++;
    assert.equal(b.x.length, b.n * 3072);
    for (let k = 0; k < b.n; k++) {
      seen.push(b.indices[k]!);
      assert.equal(b.y[k], ds.labels[b.indices[k]!]);
      // no transform: plain [0, 1] floats of the stored bytes
      assert.ok(Math.abs(b.x[k * 3072 + 5]! - ds.images[b.indices[k]! * 3072 + 5]! / 255) < 1e-7);
    }
  }
  assert.equal(batches, 3);
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: 300 }, (_, i) => i),
  );
  const o1 = epochOrder(ds.labels, { batchSize: 1, seed: 4, epoch: 0 });
  assert.deepEqual(o1, epochOrder(ds.labels, { batchSize: 1, seed: 4, epoch: 0 }));
  assert.notDeepEqual(o1, epochOrder(ds.labels, { batchSize: 1, seed: 4, epoch: 1 }));
  assert.deepEqual(
    [...epochOrder(ds.labels, { batchSize: 1, sampler: 'sequential' })].slice(0, 3),
    [0, 1, 2],
  );
});

test('drop_last drops the incomplete batch; indices restrict the epoch to a subset', () => {
  const order = Int32Array.from({ length: 300 }, (_, i) => i);
  assert.deepEqual(
    batchIndices(order, 128).map((b) => b.length),
    [128, 128, 44],
  );
  assert.deepEqual(
    batchIndices(order, 128, true).map((b) => b.length),
    [128, 128],
  );
  const ds = cifarLike(300, 10);
  const subset = [5, 17, 42, 99];
  const got = [...iterateBatches(ds, { batchSize: 3, indices: subset })].flatMap((b) => [...b.indices]);
  assert.deepEqual(
    got.sort((a, b) => a - b),
    subset,
  );
  assert.throws(() => batchIndices(order, 0), /batch size/);
});

test('class-balanced sampler draws classes about equally from a long-tailed set', () => {
  const ds = cifarLike(2000, 10);
  const lt = longTailSubset(ds.labels, 10, { imbalance: 100 });
  const order = epochOrder(ds.labels, {
    batchSize: 64,
    sampler: 'class-balanced',
    indices: lt.indices,
    seed: 2,
  });
  assert.equal(order.length, lt.indices.length);
  const allowed = new Set(lt.indices);
  for (const i of order) assert.ok(allowed.has(i));
  const counts = classCounts(
    [...order].map((i) => ds.labels[i]!),
    10,
  );
  const expected = order.length / 10;
  for (const c of counts)
    assert.ok(Math.abs(c - expected) < 0.35 * expected, `class count ${c} vs ${expected}`);
  // the plain shuffle keeps the imbalance
  const plain = classCounts(
    [...epochOrder(ds.labels, { batchSize: 64, indices: lt.indices })].map((i) => ds.labels[i]!),
    10,
  );
  assert.deepEqual(plain, lt.counts);
});

test('augmented batches are reproducible; two views differ; test batches are deterministic', () => {
  const ds = selectImages(
    cifarLike(64, 10),
    Array.from({ length: 40 }, (_, i) => i),
  );
  const opts = { batchSize: 16, seed: 7, transform: trainTransform('cifar') };
  const a = [...iterateBatches(ds, opts)];
  const b = [...iterateBatches(ds, opts)];
  assert.deepEqual(a[0]!.x, b[0]!.x);
  assert.notDeepEqual(a[0]!.x, [...iterateBatches(ds, { ...opts, seed: 8 })][0]!.x);
  const two = [...iterateBatches(ds, { ...opts, views: 2 })][0]!;
  assert.ok(two.x2);
  assert.equal(two.x2.length, two.x.length);
  assert.notDeepEqual(two.x, two.x2);
  const t1 = [
    ...iterateBatches(ds, {
      batchSize: 16,
      sampler: 'sequential',
      transform: testTransform('cifar'),
      seed: 1,
    }),
  ];
  const t2 = [
    ...iterateBatches(ds, {
      batchSize: 16,
      sampler: 'sequential',
      transform: testTransform('cifar'),
      seed: 2,
    }),
  ];
  assert.deepEqual(t1[1]!.x, t2[1]!.x);
});

test('mixup mixes pairs with one lambda and returns both targets', () => {
  const x = Float32Array.from({ length: 12 }, (_, i) => i);
  const y = Int32Array.from([0, 1, 2]);
  const m = mixup({ x, y, n: 3 }, 0.4, new Rng(3));
  assert.ok(m.lam > 0 && m.lam < 1);
  // every mixed image is lam * own + (1 - lam) * partner, partner label in yB
  for (let k = 0; k < 3; k++) {
    const j = m.yB[k]!;
    for (let p = 0; p < 4; p++)
      assert.ok(Math.abs(m.x[k * 4 + p]! - (m.lam * x[k * 4 + p]! + (1 - m.lam) * x[j * 4 + p]!)) < 1e-5);
  }
  assert.deepEqual([...m.yA], [0, 1, 2]);
  assert.deepEqual([...m.yB].sort(), [0, 1, 2]);
  assert.equal(mixup({ x, y, n: 3 }, 0, new Rng(3)).lam, 1);
  const lams = Array.from({ length: 2000 }, (_, i) => mixup({ x, y, n: 3 }, 0.4, new Rng(i)).lam);
  const mean = lams.reduce((s, v) => s + v, 0) / lams.length;
  assert.ok(Math.abs(mean - 0.5) < 0.03, `Beta(0.4, 0.4) mean ${mean}`);
});

test('the fused crop/flip/normalize kernel gives the same batches as the composed transforms', () => {
  const ds = cifarLike(50, 10);
  const fused = trainTransform('cifar');
  assert.ok((fused as { fused?: unknown }).fused, 'the CIFAR training pipeline is fused');
  const norm = NORMALIZATION.cifar;
  const composed = compose(randomCrop(32, 32, 4), horizontalFlip(), normalize(norm.mean, norm.std));
  const rotated = trainTransform('cifar', { rotationDegrees: 15 });
  const rotatedComposed = compose(
    randomCrop(32, 32, 4),
    horizontalFlip(),
    rotation(15),
    normalize(norm.mean, norm.std),
  );
  const r1 = [...iterateBatches(ds, { batchSize: 50, seed: 5, transform: rotated })][0]!;
  const r2 = [...iterateBatches(ds, { batchSize: 50, seed: 5, transform: rotatedComposed })][0]!;
  assertClose(r1.x, r2.x, 2e-5, 0, 'crop + flip + rotation');
  for (const views of [1, 2] as const) {
    const a = [...iterateBatches(ds, { batchSize: 20, seed: 3, transform: fused, views })];
    const b = [...iterateBatches(ds, { batchSize: 20, seed: 3, transform: composed, views })];
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i++) {
      assert.deepEqual(a[i]!.indices, b[i]!.indices);
      assert.deepEqual(a[i]!.shape, b[i]!.shape);
      assertClose(a[i]!.x, b[i]!.x, 2e-5, 0, `batch ${i} view 1`);
      if (views === 2) assertClose(a[i]!.x2!, b[i]!.x2!, 2e-5, 0, `batch ${i} view 2`);
    }
  }
  const testFused = [
    ...iterateBatches(ds, { batchSize: 50, transform: testTransform('cifar'), sampler: 'sequential' }),
  ][0]!;
  const testPlain = [
    ...iterateBatches(ds, {
      batchSize: 50,
      transform: normalize(norm.mean, norm.std),
      sampler: 'sequential',
    }),
  ][0]!;
  assertClose(testFused.x, testPlain.x, 2e-5);
});

test('worker-thread batches are identical to the single-threaded ones', async () => {
  const ds = cifarLike(200, 10);
  const loader = new ParallelBatchLoader(ds, 2);
  try {
    const cases: { pipeline: PipelineSpec; views: 1 | 2 }[] = [
      { pipeline: { stage: 'train', kind: 'cifar' }, views: 1 },
      { pipeline: { stage: 'train', kind: 'cifar', options: { rotationDegrees: 15 } }, views: 1 },
      { pipeline: { stage: 'test-time-views', kind: 'cifar' }, views: 2 },
    ];
    for (const { pipeline, views } of cases) {
      const options = { batchSize: 48, seed: 11, epoch: 2, views, dropLast: true };
      const serial = [...iterateBatches(ds, { ...options, transform: makeTransform(pipeline) })];
      const parallel: Batch[] = [];
      for await (const b of loader.epoch({ ...options, pipeline })) parallel.push(b);
      assert.equal(parallel.length, 4);
      assert.equal(serial.length, 4);
      for (let i = 0; i < 4; i++) {
        assert.deepEqual(parallel[i]!.indices, serial[i]!.indices);
        assert.deepEqual(parallel[i]!.y, serial[i]!.y);
        assert.deepEqual(parallel[i]!.x, serial[i]!.x, `${pipeline.stage} batch ${i}`);
        if (views === 2) assert.deepEqual(parallel[i]!.x2, serial[i]!.x2);
      }
      // released arrays go back to the workers and are reused: same batches again
      for (const b of parallel) loader.release(b);
      let i = 0;
      for await (const b of loader.epoch({ ...options, pipeline })) assert.deepEqual(b.x, serial[i++]!.x);
    }
  } finally {
    await loader.close();
  }
});

test('a buffer pool recycles released batch arrays without changing the batches', () => {
  const ds = cifarLike(100, 10);
  const pool = new BatchBufferPool();
  const transform = trainTransform('cifar');
  const fresh = [...iterateBatches(ds, { batchSize: 25, seed: 1, transform })].map((b) =>
    Float32Array.from(b.x),
  );
  const arrays = new Set<Float32Array>();
  let i = 0;
  for (const b of iterateBatches(ds, { batchSize: 25, seed: 1, transform, pool })) {
    assert.deepEqual(b.x, fresh[i++]);
    arrays.add(b.x);
    pool.release(b);
  }
  assert.equal(i, 4);
  assert.equal(arrays.size, 1, 'one array serves every batch');
});
