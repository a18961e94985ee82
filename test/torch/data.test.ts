import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import {
  ArrayDataset,
  ClassBalancedSampler,
  DataLoader,
  RandomSampler,
  SequentialSampler,
  WeightedRandomSampler,
  batchToTensors,
  classBalancedWeights,
  collate,
  type HostBatch,
} from '../../src/torch/data/index.js';
import { makeDataset } from './data_fixture.js';

const fixture = fileURLToPath(new URL('./data_fixture.js', import.meta.url));

function counts(indices: Int32Array, n: number): number[] {
  const c = new Array<number>(n).fill(0);
  for (const i of indices) c[i]!++;
  return c;
}

async function collect(loader: DataLoader, epoch: number, startBatch = 0): Promise<HostBatch[]> {
  const out: HostBatch[] = [];
  for await (const b of loader.epoch(epoch, { startBatch })) out.push(b);
  return out;
}

test('sequential and random samplers: permutations that depend only on (seed, epoch)', () => {
  assert.deepEqual([...new SequentialSampler(4).indices()], [0, 1, 2, 3]);
  const s = new RandomSampler(50, { seed: 7 });
  const e0 = s.indices(0);
  assert.deepEqual(
    [...e0].sort((a, b) => a - b),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.deepEqual(e0, new RandomSampler(50, { seed: 7 }).indices(0), 'same seed and epoch, same order');
  assert.notDeepEqual(e0, s.indices(1), 'a new order each epoch');
  assert.notDeepEqual(e0, new RandomSampler(50, { seed: 8 }).indices(0), 'a new order for another seed');
  const long = new RandomSampler(10, { seed: 1, numSamples: 25 }).indices(0);
  assert.equal(long.length, 25);
  assert.deepEqual(
    counts(long.subarray(0, 20), 10),
    new Array(10).fill(2),
    'whole permutations concatenated',
  );
  const rep = new RandomSampler(5, { seed: 1, replacement: true, numSamples: 1000 }).indices(3);
  assert.ok(counts(rep, 5).every((c) => c > 150 && c < 250));
  assert.throws(() => new RandomSampler(-1), /non-negative integer/);
});

test('weighted sampler draws in proportion to the weights; without replacement gives distinct indices', () => {
  const weights = [1, 2, 0, 7];
  const n = 200_000;
  const c = counts(new WeightedRandomSampler(weights, n, { seed: 3 }).indices(0), 4);
  assert.equal(c[2], 0, 'zero weight never drawn');
  weights.forEach((w, i) => {
    const expected = (n * w) / 10;
    // 5 standard deviations of a binomial count.
    assert.ok(
      Math.abs(c[i]! - expected) <= 5 * Math.sqrt(expected * (1 - w / 10)) + 1e-9,
      `index ${i}: ${c[i]} vs ${expected}`,
    );
  });
  const noRep = new WeightedRandomSampler([5, 1, 1, 0, 3], 4, { replacement: false, seed: 2 }).indices(0);
  assert.deepEqual([...noRep].sort(), [0, 1, 2, 4]);
  // The heaviest index comes first most of the time (sequential weighted sampling).
  let firstIsHeaviest = 0;
  for (let e = 0; e < 2000; e++)
    if (new WeightedRandomSampler([8, 1, 1], 3, { replacement: false, seed: 5 }).indices(e)[0] === 0)
      firstIsHeaviest++;
  assert.ok(Math.abs(firstIsHeaviest / 2000 - 0.8) < 0.04, `P(first = heaviest) = ${firstIsHeaviest / 2000}`);
  assert.throws(() => new WeightedRandomSampler([1, -1], 3), /weight 1 is -1/);
  assert.throws(() => new WeightedRandomSampler([0, 0], 3), /all weights are zero/);
  assert.throws(() => new WeightedRandomSampler([1, 0], 2, { replacement: false }), /only 1 weights are > 0/);
});

test('class-balanced sampling evens out a long-tailed label distribution', () => {
  const labels = [...new Array(1000).fill(0), ...new Array(100).fill(1), ...new Array(10).fill(2)];
  const sampler = new ClassBalancedSampler(labels, { seed: 11, numSamples: 30_000 });
  const perClass = [0, 0, 0];
  for (const i of sampler.indices(0)) perClass[labels[i]!]!++;
  for (const c of perClass) assert.ok(Math.abs(c - 10_000) < 500, `class counts ${perClass}`);
  const sqrtW = classBalancedWeights(labels, 0.5);
  assert.ok(Math.abs(sqrtW[0]! - 1000 ** -0.5) < 1e-15 && Math.abs(sqrtW[1105]! - 10 ** -0.5) < 1e-15);
  assert.deepEqual([...classBalancedWeights([4, 4, 9], 1)], [1, 1, 1]);
  assert.throws(() => classBalancedWeights([0, 1.5]), /label 1 is 1.5/);
});

test('collate and ArrayDataset build batches with shapes and dtypes; bad samples name the field', () => {
  const b = collate(
    [
      { x: Float32Array.of(1, 2, 3, 4), y: 1, w: 0.5 },
      { x: Float32Array.of(5, 6, 7, 8), y: 2, w: 1 },
    ],
    Int32Array.of(3, 9),
    { x: [2, 2] },
  );
  assert.deepEqual(b.fields.x!.shape, [2, 2, 2]);
  assert.deepEqual([...b.fields.x!.data], [1, 2, 3, 4, 5, 6, 7, 8]);
  assert.ok(b.fields.y!.data instanceof Int32Array);
  assert.ok(b.fields.w!.data instanceof Float32Array);
  assert.throws(
    () => collate([{ x: Float32Array.of(1) }, { x: Float32Array.of(1, 2) }], Int32Array.of(0, 1)),
    /field 'x' of sample 1/,
  );
  const ds = new ArrayDataset({
    x: { data: Float32Array.from({ length: 12 }, (_, i) => i), shape: [4, 3] },
    y: { data: Int32Array.of(0, 1, 0, 1), shape: [4] },
  });
  const batch = ds.getBatch(Int32Array.of(2, 0));
  assert.deepEqual([...batch.fields.x!.data], [6, 7, 8, 0, 1, 2]);
  assert.deepEqual(batch.fields.x!.shape, [2, 3]);
  assert.deepEqual([...batch.fields.y!.data], [0, 0]);
  assert.deepEqual(ds.get(1), { x: Float32Array.of(3, 4, 5), y: 1 });
  assert.throws(() => ds.get(4), /index 4 out of range/);
  assert.throws(() => new ArrayDataset({ x: { data: new Float32Array(5), shape: [2, 3] } }), /needs 6/);
});

test('DataLoader: each epoch covers the data once in sampler order; dropLast; resume mid-epoch', async () => {
  const ds = new ArrayDataset({
    v: { data: Int32Array.from({ length: 10 }, (_, i) => i * 10), shape: [10] },
  });
  const loader = new DataLoader(ds, { batchSize: 4, shuffle: true, seed: 5 });
  assert.equal(loader.length, 3);
  const e1 = await collect(loader, 1);
  assert.deepEqual(
    e1.map((b) => b.indices.length),
    [4, 4, 2],
  );
  const order = e1.flatMap((b) => [...b.indices]);
  assert.deepEqual(order, [...loader.sampler.indices(1)]);
  assert.deepEqual(
    e1.flatMap((b) => [...b.fields.v!.data]),
    order.map((i) => i * 10),
  );
  const resumed = await collect(loader, 1, 1);
  assert.deepEqual(
    resumed.map((b) => [...b.indices]),
    e1.slice(1).map((b) => [...b.indices]),
  );
  const dropped = new DataLoader(ds, { batchSize: 4, dropLast: true });
  assert.equal(dropped.length, 2);
  assert.deepEqual(
    (await collect(dropped, 0)).map((b) => [...b.indices]),
    [
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ],
  );
  let epochs = 0;
  for (let e = 0; e < 2; e++) for await (const _ of loader) epochs += _.indices.length > 0 ? 1 : 0;
  assert.equal(epochs, 6);
});

test('DataLoader with worker threads gives the same batches (augmentation seeds included) as in-process', async () => {
  const args = { length: 23 };
  const inProcess = new DataLoader(makeDataset(args), { batchSize: 5, shuffle: true, seed: 9 });
  const threaded = new DataLoader(
    { module: fixture, exportName: 'makeDataset', args, length: 23 },
    {
      batchSize: 5,
      shuffle: true,
      seed: 9,
      workers: 2,
    },
  );
  try {
    for (const epoch of [0, 3]) {
      const a = await collect(inProcess, epoch);
      const b = await collect(threaded, epoch);
      assert.equal(b.length, 5);
      assert.deepEqual(
        b.map((x) => [...x.indices]),
        a.map((x) => [...x.indices]),
      );
      b.forEach((x, i) => {
        assert.deepEqual(x.fields.image!.shape, [x.indices.length, 2, 4]);
        assert.deepEqual(x.fields.image!.data, a[i]!.fields.image!.data);
        assert.deepEqual(x.fields.label!.data, a[i]!.fields.label!.data);
      });
    }
  } finally {
    await threaded.close();
  }
});

test('errors in a dataset reach the training loop with the failing index (in-process and in workers)', async () => {
  const inProcess = new DataLoader(makeDataset({ length: 10, failAt: 6 }), { batchSize: 4 });
  await assert.rejects(collect(inProcess, 0), /dataset\.get\(6\) failed: sample 6 is corrupt/);
  const threaded = new DataLoader(
    { module: fixture, args: { length: 10, failAt: 6 }, length: 10 },
    { batchSize: 4, workers: 1 },
  );
  try {
    await assert.rejects(
      collect(threaded, 0),
      /DataLoader worker .*dataset\.get\(6\) failed: sample 6 is corrupt/,
    );
  } finally {
    await threaded.close();
  }
  const wrongLength = new DataLoader({ module: fixture, args: { length: 10 }, length: 12 }, { batchSize: 4 });
  await assert.rejects(collect(wrongLength, 0), /built a dataset of length 10, the loader was told 12/);
  await wrongLength.close();
  const missing = new DataLoader(
    { module: fixture, exportName: 'nope', args: {}, length: 1 },
    { batchSize: 1 },
  );
  await assert.rejects(collect(missing, 0), /has no export 'nope'/);
  await missing.close();
  assert.throws(
    () => new DataLoader(makeDataset({ length: 3 }), { batchSize: 1, workers: 2 }),
    /workers need a WorkerDataset/,
  );
});

test('workers prepare the next batches while the main thread is blocked (prefetch runs off the main thread)', async () => {
  // The fixture counts produced samples in shared memory. While the main thread is blocked in
  // Atomics.wait (no event loop, like a long training step), the count can only grow if the
  // batches already requested are being built on another thread.
  const progress = new Int32Array(new SharedArrayBuffer(4));
  const batchSize = 5;
  const loader = new DataLoader(
    { module: fixture, args: { length: 40, busyMs: 2, progress: progress.buffer }, length: 40 },
    { batchSize, workers: 1, prefetch: 3 },
  );
  try {
    let first = true;
    let seen = 0;
    for await (const batch of loader.epoch(0)) {
      seen += batch.indices.length;
      if (!first) continue;
      first = false;
      const target = batchSize * 4; // batch 0 plus the three prefetched ones
      const deadline = Date.now() + 20_000;
      let value = Atomics.load(progress, 0);
      while (value < target && Date.now() < deadline) {
        Atomics.wait(progress, 0, value, 1000);
        value = Atomics.load(progress, 0);
      }
      assert.ok(
        value >= target,
        `only ${value} samples were built while the main thread was blocked (expected ${target})`,
      );
    }
    assert.equal(seen, 40);
  } finally {
    await loader.close();
  }
});

test('batchToTensors makes tensors with the batch shapes and requested dtypes, and leaks nothing', async () => {
  const before = torch.liveTensors();
  const loader = new DataLoader(makeDataset({ length: 6 }), { batchSize: 4 });
  for await (const batch of loader.epoch(0)) {
    torch.tidy(() => {
      const t = batchToTensors(batch, { label: 'int64' });
      assert.deepEqual(t.image!.shape, [batch.indices.length, 2, 4]);
      assert.equal(t.image!.dtype, 'float32');
      assert.equal(t.label!.dtype, 'int64');
      assert.deepEqual(
        t.label!.toNumbers(),
        [...batch.indices].map((i) => i % 3),
      );
    });
  }
  assert.equal(torch.liveTensors(), before);
});
