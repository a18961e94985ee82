// torch.data: TensorDataset, DataLoader and the samplers. Every epoch covers the data once (or
// draws by weight), orders depend only on the seed and the epoch, class-balanced weights balance
// the classes within statistical bounds, and no tensor leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

const {
  TensorDataset,
  DataLoader,
  RandomSampler,
  SequentialSampler,
  WeightedRandomSampler,
  classBalancedWeights,
} = torch.data;

test('DataLoader: batches in order, shuffled per epoch by the seed, the last batch kept or dropped', () => {
  const before = torch.liveTensors();
  const { x, y } = torch.tidy(() => ({
    x: torch.arange(0, 10).float().reshape(10, 1),
    y: torch.arange(0, 10).mul(10),
  }));
  const dataset = new TensorDataset(x, y);
  const epoch = (loader: torch.data.DataLoader) => {
    const rows: number[][] = [];
    for (const batch of loader) {
      const [xb, yb] = batch;
      rows.push(Array.from(xb!.toFloat32Array()));
      assert.deepEqual(
        yb!.toNumbers(),
        rows[rows.length - 1]!.map((v) => v * 10),
        'rows of every tensor stay together',
      );
      torch.dispose(batch);
    }
    return rows;
  };
  const ordered = new DataLoader(dataset, { batchSize: 4 });
  assert.equal(ordered.length, 3);
  assert.deepEqual(epoch(ordered), [
    [0, 1, 2, 3],
    [4, 5, 6, 7],
    [8, 9],
  ]);
  const dropped = new DataLoader(dataset, { batchSize: 4, dropLast: true });
  assert.equal(dropped.length, 2);
  assert.equal(epoch(dropped).length, 2);

  const shuffled = new DataLoader(dataset, { batchSize: 3, shuffle: true, seed: 7 });
  const first = epoch(shuffled).flat();
  const second = epoch(shuffled).flat();
  assert.deepEqual(
    [...first].sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    'each epoch covers every row once',
  );
  assert.notDeepEqual(first, second, 'epochs differ');
  assert.deepEqual(
    epoch(new DataLoader(dataset, { batchSize: 3, shuffle: true, seed: 7 })).flat(),
    first,
    'the seed decides',
  );
  // breaking out of an epoch frees its batch index
  for (const batch of shuffled) {
    torch.dispose(batch);
    break;
  }
  torch.dispose([x, y]);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('class-balanced weights draw every class about equally often (binomial bounds), with or without replacement', () => {
  const labels = Array.from({ length: 1000 }, (_, i) => (i < 900 ? 0 : i < 980 ? 1 : 2));
  const weights = classBalancedWeights(labels);
  assert.equal(weights[0], 1 / 900);
  assert.equal(weights[999], 1 / 20);
  const draws = 30000;
  const sampler = new WeightedRandomSampler(weights, draws, { seed: 3 });
  const counts = [0, 0, 0];
  for (const i of sampler.indices(0)) counts[labels[i]!]!++;
  // each class p = 1/3: 5 standard deviations of the binomial count
  const sd = Math.sqrt(draws * (1 / 3) * (2 / 3));
  for (const c of counts) assert.ok(Math.abs(c - draws / 3) < 5 * sd, `counts ${counts}`);
  assert.deepEqual(sampler.indices(1).slice(0, 20).length, 20);
  assert.notDeepEqual(sampler.indices(0).slice(0, 50), sampler.indices(1).slice(0, 50));
  assert.deepEqual(
    new WeightedRandomSampler(weights, 100, { seed: 3 }).indices(0),
    new WeightedRandomSampler(weights, 100, { seed: 3 }).indices(0),
  );
  // a zero weight is never drawn
  const zero = new WeightedRandomSampler([0, 1, 0, 2], 1000, { seed: 1 }).indices(0);
  assert.ok(zero.every((i) => i === 1 || i === 3));
  // without replacement: distinct indices, heavier ones first more often
  const once = new WeightedRandomSampler([1, 1, 100, 0], 3, { replacement: false, seed: 2 }).indices(0);
  assert.deepEqual([...once].sort(), [0, 1, 2]);
  let heavyFirst = 0;
  for (let e = 0; e < 200; e++)
    if (new WeightedRandomSampler([1, 1, 100], 3, { replacement: false, seed: 5 }).indices(e)[0] === 2)
      heavyFirst++;
  assert.ok(heavyFirst > 180, `the weight-100 index came first in ${heavyFirst} of 200 epochs`);
  assert.deepEqual(new SequentialSampler(3).indices(), [0, 1, 2]);
  assert.deepEqual([...new RandomSampler(5, 1).indices(0)].sort(), [0, 1, 2, 3, 4]);
});

test('bad datasets, samplers and options are named errors', () => {
  torch.tidy(() => {
    assert.throws(
      () => new TensorDataset(torch.zeros([4, 2]), torch.zeros([5])),
      /TensorDataset: tensors\[1\] has 5 rows and tensors\[0\] 4; every tensor needs one row per sample/,
    );
    assert.throws(() => new TensorDataset(), /TensorDataset: tensors must be one or more tensors/);
    const dataset = new TensorDataset(torch.zeros([4, 2]));
    assert.throws(
      () => new DataLoader(dataset, { batchSize: 0 }),
      /DataLoader: options.batchSize must be an integer >= 1, got 0/,
    );
    assert.throws(() => new WeightedRandomSampler([0, 0], 3), /weights must be at least one positive weight/);
    assert.throws(
      () => new WeightedRandomSampler([1, -1], 3),
      /weights\[1\] must be a finite number >= 0, got -1/,
    );
    assert.throws(
      () => new WeightedRandomSampler([1, 0, 2], 3, { replacement: false }),
      /numSamples must be at most 2 \(the positive weights\) without replacement, got 3/,
    );
    const outside = new DataLoader(dataset, { sampler: { length: 1, indices: () => [7] } });
    assert.throws(() => [...outside], /the sampler gave index 7, outside the dataset's 0..3/);
  });
});
