// torch.data's Subset, randomSplit, ConcatDataset, BatchSampler and SubsetRandomSampler against
// PyTorch 1.13 (scripts/golden/data_utils.py): the same seed gives the same index lists, fractions
// round as PyTorch rounds them; plus a DataLoader with a batchSampler, the named errors, and no
// leaked tensors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { goldenDir } from '../helpers.js';

const {
  BatchSampler,
  ConcatDataset,
  DataLoader,
  SequentialSampler,
  Subset,
  SubsetRandomSampler,
  TensorDataset,
} = torch.data;

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'data_utils.json'), 'utf8')) as {
  randomSplit: {
    n: number;
    lengths: number[];
    seed: number;
    sizes: number[];
    global: number[][][];
    generator: number[][];
    globalAfterGenerator: number[];
  }[];
  subsetRandomSampler: { indices: number[]; seed: number; global: number[][]; generator: number[][] }[];
  batchSampler: { n: number; batchSize: number; dropLast: boolean; length: number; batches: number[][] }[];
};

/** A dataset whose item i is i (no tensors), for checking index lists. */
function range(n: number): torch.data.Dataset<number> {
  return { length: n, get: (i) => i };
}

const splitIndices = (splits: torch.data.Subset<number>[]) => splits.map((s) => [...s.indices]);

test('randomSplit: PyTorch 1.13 index lists for integer lengths and fractions, global generator and a seeded one', () => {
  const before = torch.liveTensors();
  for (const g of golden.randomSplit) {
    const what = `n=${g.n} lengths=[${g.lengths}] seed=${g.seed}`;
    torch.manualSeed(g.seed);
    const first = torch.data.randomSplit(range(g.n), g.lengths);
    assert.deepEqual(
      first.map((s) => s.length),
      g.sizes,
      `sizes, ${what}`,
    );
    assert.deepEqual(splitIndices(first), g.global[0], `global generator, ${what}`);
    assert.deepEqual(
      splitIndices(torch.data.randomSplit(range(g.n), g.lengths)),
      g.global[1],
      `second, ${what}`,
    );

    // A split on a generator of its own (PyTorch's Generator().manual_seed(seed)) leaves the
    // global generator as it was.
    torch.manualSeed(g.seed + 1000);
    assert.deepEqual(
      splitIndices(torch.data.randomSplit(range(g.n), g.lengths, { generator: g.seed })),
      g.generator,
      `own generator, ${what}`,
    );
    const after = torch.rand([3], 'float64');
    assert.deepEqual(after.toNumbers(), g.globalAfterGenerator, `global generator untouched, ${what}`);
    after.dispose();
    // Each split's items come from the dataset through its indices
    first.forEach((s, k) =>
      assert.deepEqual(
        Array.from({ length: s.length }, (_, i) => s.get(i)),
        g.global[0]![k],
      ),
    );
  }
  assert.equal(torch.liveTensors(), before);
});

test('SubsetRandomSampler: PyTorch 1.13 orders epoch after epoch, on the global generator and a seeded one', () => {
  const before = torch.liveTensors();
  for (const g of golden.subsetRandomSampler) {
    const what = `indices=[${g.indices}] seed=${g.seed}`;
    torch.manualSeed(g.seed);
    const sampler = new SubsetRandomSampler(g.indices);
    assert.equal(sampler.length, g.indices.length);
    assert.deepEqual([sampler.indices(), sampler.indices()], g.global, `global generator, ${what}`);
    const own = new SubsetRandomSampler(g.indices, { generator: g.seed });
    torch.manualSeed(g.seed + 7);
    const reference = torch.rand([2], 'float64');
    torch.manualSeed(g.seed + 7);
    assert.deepEqual([own.indices(), own.indices()], g.generator, `own generator, ${what}`);
    const after = torch.rand([2], 'float64');
    assert.deepEqual(after.toNumbers(), reference.toNumbers(), `global generator untouched, ${what}`);
    torch.dispose([reference, after]);
  }
  assert.equal(torch.liveTensors(), before);
});

test('BatchSampler: PyTorch 1.13 batches and lengths, with and without dropLast', () => {
  for (const g of golden.batchSampler) {
    const sampler = new BatchSampler(new SequentialSampler(g.n), g.batchSize, g.dropLast);
    assert.equal(sampler.length, g.length, `length n=${g.n} batchSize=${g.batchSize} dropLast=${g.dropLast}`);
    assert.deepEqual(sampler.batches(0), g.batches);
    const fromList = new BatchSampler(
      Array.from({ length: g.n }, (_, i) => i),
      g.batchSize,
      g.dropLast,
    );
    assert.deepEqual(fromList.batches(0), g.batches, 'an array of indices batches as the sampler does');
  }
});

test('Subset and ConcatDataset: items through the indices, cumulative sizes, negative indices', () => {
  const subset = new Subset(range(10), [7, 2, 5]);
  assert.equal(subset.length, 3);
  assert.deepEqual([subset.get(0), subset.get(2), subset.get(-1), subset.get(-3)], [7, 5, 5, 7]);
  const concat = new ConcatDataset([range(3), range(0), { length: 2, get: (i: number) => 100 + i }, subset]);
  assert.deepEqual(concat.cumulativeSizes, [3, 3, 5, 8]);
  assert.equal(concat.length, 8);
  assert.deepEqual(
    Array.from({ length: 8 }, (_, i) => concat.get(i)),
    [0, 1, 2, 100, 101, 7, 2, 5],
  );
  assert.deepEqual([concat.get(-1), concat.get(-8), concat.get(-5)], [5, 0, 100]);
  assert.throws(() => concat.get(8), /ConcatDataset\.get: index must be an integer in -8\.\.7/);
  assert.throws(() => concat.get(-9), /ConcatDataset\.get: index must be an integer in -8\.\.7/);
  assert.throws(() => subset.get(3), /Subset\.get: index must be an integer in -3\.\.2/);
  assert.throws(() => new ConcatDataset([]), /ConcatDataset: datasets must be a non-empty array of datasets/);
  assert.throws(
    () => new ConcatDataset([range(2), 5 as never]),
    /ConcatDataset: datasets\[1\] must be a Dataset/,
  );
  assert.throws(
    () => new Subset(range(4), [1, 4]),
    /Subset: indices\[1\] must be an integer >= 0 and <= 3, got 4/,
  );
});

test('randomSplit: named errors for lengths that do not sum to the size and fractions that do not sum to 1', () => {
  const before = torch.liveTensors();
  assert.throws(
    () => torch.data.randomSplit(range(10), [3, 6]),
    /randomSplit: lengths must sum to the dataset's length 10 \(or be fractions summing to 1\), got \[3, 6\] summing to 9/,
  );
  assert.throws(
    () => torch.data.randomSplit(range(10), [0.5, 0.4]),
    /randomSplit: lengths\[0\] must be a non-negative integer \(or every length a fraction, the fractions summing to 1\), got 0\.5/,
  );
  assert.throws(
    () => torch.data.randomSplit(range(10), [1.5, -0.5]),
    /randomSplit: lengths\[0\] must be a fraction between 0 and 1, got 1\.5/,
  );
  assert.throws(
    () => torch.data.randomSplit(range(10), [-2, 12]),
    /randomSplit: lengths\[0\] must be a non-negative integer/,
  );
  assert.throws(() => torch.data.randomSplit(range(10), []), /randomSplit: lengths must be at least 1 long/);
  assert.throws(() => torch.data.randomSplit({} as never, [1]), /randomSplit: dataset must be a Dataset/);
  assert.throws(
    () => torch.data.randomSplit(range(10), [5, 5], { generator: 0.5 }),
    /randomSplit: options\.generator must be an integer >= 0, got 0\.5/,
  );
  assert.throws(
    () => new SubsetRandomSampler([1, -1]),
    /SubsetRandomSampler: indices\[1\] must be an integer >= 0/,
  );
  assert.throws(
    () => new BatchSampler(new SequentialSampler(4), 0, false),
    /BatchSampler: batchSize must be an integer >= 1, got 0/,
  );
  assert.throws(() => new BatchSampler(5 as never, 2, false), /BatchSampler: sampler must be a Sampler/);
  assert.equal(torch.liveTensors(), before);
});

test('DataLoader with a batchSampler: its batches, fast path and general path, and its exclusive options', async () => {
  const before = torch.liveTensors();
  const x = torch.tidy(() => torch.arange(0, 10).float().reshape(10, 1));
  const tensors = new TensorDataset(x);
  const batchSampler = new BatchSampler(new SubsetRandomSampler([9, 1, 4, 6, 0], { generator: 3 }), 2, false);
  const expected = new BatchSampler(new SubsetRandomSampler([9, 1, 4, 6, 0], { generator: 3 }), 2, false);
  const loader = new DataLoader(tensors, { batchSampler });
  assert.equal(loader.length, 3);
  assert.equal(loader.batchSize, null);
  const epoch: number[][] = [];
  for (const batch of loader) {
    epoch.push(Array.from(batch[0]!.toFloat32Array()));
    torch.dispose(batch);
  }
  assert.deepEqual(epoch, expected.batches(0));

  // A general dataset, for await: batches of varying size in the batch sampler's order
  const items: torch.data.Dataset<{ v: torch.Tensor }> = {
    length: 6,
    get: async (i) => ({ v: torch.full([1], i) }),
  };
  const fixed = { length: 3, batches: () => [[5], [0, 2, 4], [1, 1]] };
  const seen: number[][] = [];
  for await (const batch of new DataLoader(items, { batchSampler: fixed, prefetch: 1 })) {
    seen.push(Array.from(batch.v.toFloat32Array()));
    torch.dispose(batch);
  }
  assert.deepEqual(seen, [[5], [0, 2, 4], [1, 1]]);

  const message =
    /DataLoader: options\.batchSampler is mutually exclusive with batchSize, shuffle, sampler and dropLast/;
  assert.throws(() => new DataLoader(tensors, { batchSampler, batchSize: 4 }), message);
  assert.throws(() => new DataLoader(tensors, { batchSampler, shuffle: true }), message);
  assert.throws(() => new DataLoader(tensors, { batchSampler, sampler: new SequentialSampler(10) }), message);
  assert.throws(() => new DataLoader(tensors, { batchSampler, dropLast: true }), message);
  assert.doesNotThrow(
    () => new DataLoader(tensors, { batchSampler, batchSize: 1 }),
    'batch_size=1 is allowed, as in PyTorch',
  );
  assert.throws(
    () => new DataLoader(tensors, { batchSampler: { length: 1 } as never }),
    /DataLoader: options\.batchSampler must be a BatchSampler \(a batches\(epoch\) method\)/,
  );
  const outside = new DataLoader(tensors, { batchSampler: { length: 1, batches: () => [[3, 10]] } });
  assert.throws(
    () => [...outside],
    /DataLoader: the batch sampler gave index 10, outside the dataset's 0\.\.9/,
  );
  x.dispose();
  assert.equal(torch.liveTensors(), before);
});
