import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  INATURALIST_TEST_DISTRIBUTIONS,
  TEST_DISTRIBUTIONS,
  describeSubset,
  longTailCounts,
  longTailSubset,
  parseTestDistribution,
  rankByFrequency,
  testDistributionCounts,
  testDistributionSubset,
} from '../../src/longtail/data/longtail.js';
import { NumpyLegacyRandom } from '../../src/longtail/data/numpy-random.js';
import { classCounts } from '../../src/longtail/data/types.js';
import { goldenDir } from '../helpers.js';

const sum = (v: readonly number[]): number => v.reduce((a, b) => a + b, 0);
const golden = JSON.parse(readFileSync(join(goldenDir, 'longtail', 'numpy_shuffle.json'), 'utf8')) as {
  shuffle10_seed0: number[];
  shuffle1000_seed12345_head: number[];
  cifar_lt_counts: number[];
  cifar_lt_selected: number[];
};

test('CIFAR-100-LT totals: 10,847 / 12,608 / 19,573 at imbalance 100 / 50 / 10', () => {
  const ir100 = longTailCounts(100, 500, 100);
  assert.equal(sum(ir100), 10847);
  assert.equal(ir100[0], 500);
  assert.equal(ir100[99], 5);
  assert.equal(sum(longTailCounts(100, 500, 50)), 12608);
  assert.equal(sum(longTailCounts(100, 500, 10)), 19573);
  // non-increasing
  for (let i = 1; i < 100; i++) assert.ok(ir100[i]! <= ir100[i - 1]!);
});

test('step profile and reverse', () => {
  const step = longTailCounts(10, 500, 100, 'step');
  assert.deepEqual(step, [500, 500, 500, 500, 500, 5, 5, 5, 5, 5]);
  assert.deepEqual(longTailCounts(4, 100, 10, 'exp', true), [...longTailCounts(4, 100, 10, 'exp')].reverse());
  assert.deepEqual(longTailCounts(3, 7, 100, 'none'), [7, 7, 7]);
  assert.throws(() => longTailCounts(10, 500, 0.5), /imbalance ratio must be >= 1/);
});

test('the eleven test distributions have the reference CIFAR-100 sizes', () => {
  const train = longTailCounts(100, 500, 100);
  const expected: Record<string, number> = {
    forward50: 2486,
    forward25: 2956,
    forward10: 3876,
    forward5: 4932,
    forward2: 7166,
    uniform: 10000,
    backward2: 7166,
    backward5: 4932,
    backward10: 3876,
    backward25: 2956,
    backward50: 2486,
  };
  assert.deepEqual([...TEST_DISTRIBUTIONS], Object.keys(expected));
  for (const name of TEST_DISTRIBUTIONS)
    assert.equal(sum(testDistributionCounts(name, 100, train)), expected[name], name);
  const f50 = testDistributionCounts('forward50', 100, train);
  const b50 = testDistributionCounts('backward50', 100, train);
  assert.equal(f50[0], 100);
  assert.equal(f50[99], 2);
  assert.deepEqual(b50, [...f50].reverse());
  assert.deepEqual(
    [...INATURALIST_TEST_DISTRIBUTIONS],
    ['forward3', 'forward2', 'uniform', 'backward2', 'backward3'],
  );
  assert.deepEqual(testDistributionCounts('forward3', 3, [5, 4, 3]), [3, 1, 1]);
});

test('test distributions rank classes by training frequency, not by label', () => {
  const train = [5, 50, 20, 500];
  assert.deepEqual(rankByFrequency(train), [3, 1, 2, 0]);
  const counts = testDistributionCounts('forward10', 100, train);
  // class 3 is the head: it keeps all 100 test images; class 0, the tail, keeps 10
  assert.equal(counts[3], 100);
  assert.equal(counts[0], 10);
  assert.ok(counts[1]! > counts[2]!);
  assert.equal(testDistributionCounts('backward10', 100, train)[0], 100);
  assert.throws(() => parseTestDistribution('sideways5'), /unknown test distribution 'sideways5'/);
  assert.deepEqual(parseTestDistribution('backward25'), {
    name: 'backward25',
    direction: 'backward',
    ratio: 25,
  });
});

test('numpy legacy generator reproduces np.random.seed + np.random.shuffle', () => {
  // the MT19937 reference value: first output for init_genrand(5489)
  assert.equal(new NumpyLegacyRandom(5489).nextUint32(), 3499211612);
  const a = Array.from({ length: 10 }, (_, i) => i);
  new NumpyLegacyRandom(0).shuffle(a);
  assert.deepEqual(a, golden.shuffle10_seed0);
  const b = Array.from({ length: 1000 }, (_, i) => i);
  new NumpyLegacyRandom(12345).shuffle(b);
  assert.deepEqual(b.slice(0, 20), golden.shuffle1000_seed12345_head);
});

test('long-tailed subset: the reference recipe selects exactly the images numpy selects', () => {
  const labels = Int32Array.from({ length: 200 }, (_, i) => i % 10);
  const subset = longTailSubset(labels, 10, { imbalance: 10, seed: 0 });
  assert.deepEqual(subset.counts, golden.cifar_lt_counts);
  assert.deepEqual([...subset.indices], golden.cifar_lt_selected);
  assert.equal(subset.nMax, 20);
  assert.equal(subset.sampler, 'numpy');
  const record = describeSubset(subset);
  assert.equal(record.total, 78);
  assert.deepEqual(record.class_order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.equal(record.seed, 0);
});

test('long-tailed subset: seeded, reproducible, counts respected for both samplers', () => {
  const labels = Int32Array.from({ length: 5000 }, (_, i) => (i * 7) % 100);
  for (const sampler of ['numpy', 'tailor'] as const) {
    const a = longTailSubset(labels, 100, { imbalance: 100, seed: 3, sampler, nMax: 50 });
    const b = longTailSubset(labels, 100, { imbalance: 100, seed: 3, sampler, nMax: 50 });
    const c = longTailSubset(labels, 100, { imbalance: 100, seed: 4, sampler, nMax: 50 });
    assert.deepEqual(a.indices, b.indices);
    assert.notDeepEqual(a.indices, c.indices);
    assert.deepEqual(
      classCounts(
        [...a.indices].map((i) => labels[i]!),
        100,
      ),
      longTailCounts(100, 50, 100),
    );
    assert.equal(new Set(a.indices).size, a.indices.length, 'no image twice');
  }
  const random = longTailSubset(labels, 100, { imbalance: 100, classOrder: 'random', seed: 1 });
  assert.notDeepEqual(
    random.classOrder,
    Array.from({ length: 100 }, (_, i) => i),
  );
  assert.equal(random.counts[random.classOrder[0]!], 50);
  assert.throws(
    () => longTailSubset(labels, 100, { imbalance: 10, nMax: 60 }),
    /class 0 has 50 images, the profile asks for 60/,
  );
  assert.throws(() => longTailSubset(labels, 100, { imbalance: 10, classOrder: [0, 1] }), /permutation/);
});

test('test distribution subsets come from the balanced test set, per class and seeded', () => {
  const testLabels = Int32Array.from({ length: 10000 }, (_, i) => i % 100);
  const train = longTailCounts(100, 500, 100);
  const f10 = testDistributionSubset(testLabels, 'forward10', { trainCounts: train });
  assert.equal(f10.indices.length, 3876);
  assert.deepEqual(
    classCounts(
      [...f10.indices].map((i) => testLabels[i]!),
      100,
    ),
    f10.counts,
  );
  const uniform = testDistributionSubset(testLabels, 'uniform', { trainCounts: train });
  assert.deepEqual(
    [...uniform.indices].sort((a, b) => a - b),
    Array.from({ length: 10000 }, (_, i) => i),
  );
});
