// The validation split: balanced, held out of the training pool (images the long-tailed subset
// did not draw first, then images removed from the subset), disjoint from training and test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { holdOutFromList, holdOutValidation } from '../../src/longtail/data/validation.js';
import { longTailSubset } from '../../src/longtail/data/longtail.js';
import { classCounts } from '../../src/longtail/data/types.js';
import { parseConfig } from '../../src/longtail/config/config.js';
import { buildData } from '../../src/longtail/config/experiment.js';
import { repoRoot } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

test('the split takes unused images first, then moves images out of the subset, leaving one per class', () => {
  // 4 classes x 50 images; IR 10 with n_max 50: class 0 keeps all 50, class 3 keeps 5
  const labels = Int32Array.from({ length: 200 }, (_, i) => i % 4);
  const subset = longTailSubset(labels, 4, { imbalance: 10, seed: 1 });
  assert.deepEqual(subset.counts, [50, 23, 10, 5]);
  const v = holdOutValidation(labels, 4, subset.indices, 8, 3);
  assert.deepEqual(v.counts, [8, 8, 8, 8], 'balanced');
  assert.deepEqual(v.fromSubset, [8, 0, 0, 0], 'only the head class had no unused images');
  const train = new Set(v.train);
  assert.equal(train.size, 50 + 23 + 10 + 5 - 8);
  for (const i of v.indices) assert.ok(!train.has(i), `validation image ${i} is also a training image`);
  assert.deepEqual(
    classCounts(
      Array.from(v.indices, (i) => labels[i]!),
      4,
    ),
    [8, 8, 8, 8],
  );
  // seeded: the same call gives the same split, another seed another one
  assert.deepEqual(holdOutValidation(labels, 4, subset.indices, 8, 3).indices, v.indices);
  assert.notDeepEqual(holdOutValidation(labels, 4, subset.indices, 8, 4).indices, v.indices);
  // a class with fewer images than asked keeps at least one for training
  const tiny = holdOutValidation([0, 0, 1, 1, 1], 2, [0, 1, 2, 3, 4], 3, 0);
  assert.deepEqual(tiny.counts, [1, 2]);
  assert.deepEqual(
    classCounts(
      Array.from(tiny.train, (i) => [0, 0, 1, 1, 1][i]!),
      2,
    ),
    [1, 1],
  );
  assert.throws(() => holdOutValidation(labels, 4, subset.indices, -1, 0), /non-negative integer/);
});

test('an image list without a val list of its own gives its validation split from the training list', () => {
  const entries = Array.from({ length: 30 }, (_, i) => ({ path: `img${i}.jpg`, label: i % 3, line: i + 1 }));
  const list = { root: '/', listFile: 'train.txt', entries, classes: 3, skipped: 0 };
  const { train, val } = holdOutFromList(list, 4, 0);
  assert.equal(val.entries.length, 12);
  assert.equal(train.entries.length, 18);
  const paths = new Set(train.entries.map((e) => e.path));
  assert.ok(val.entries.every((e) => !paths.has(e.path)));
});

test(
  'Fashion-MNIST-LT: the validation split is balanced, from the training file, and training loses only what it must',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  () => {
    const c = parseConfig(
      readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_ce.json'), 'utf8'),
      'fmnist_lt_ir100_ce.json',
    );
    // without n_max the head class keeps all 6,000 images: its 20 validation images leave training
    const { n_max: _drop, ...args } = c.data_loader.args as Record<string, unknown>;
    void _drop;
    c.data_loader.args = args;
    const full = buildData(c, { testPerClass: 2 });
    assert.deepEqual(classCounts(full.val.labels, 10), new Array(10).fill(20));
    assert.equal(full.trainCounts[0], 6000 - 20);
    assert.deepEqual(full.trainCounts.slice(1), full.subset.counts.slice(1));
    assert.equal(
      full.train.labels.length,
      full.trainCounts.reduce((a, b) => a + b, 0),
    );
    assert.notEqual(full.val, full.test);
    assert.deepEqual(
      (full.validation as { from_training_subset: number[] }).from_training_subset,
      [20, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    );
    // a capped head class leaves unused images: training is the subset itself
    c.data_loader.args = { ...c.data_loader.args, validation_per_class: 5 };
    const small = buildData(c, { trainMaxPerClass: 12, testPerClass: 2 });
    assert.deepEqual(small.trainCounts, small.subset.counts);
    assert.deepEqual(classCounts(small.val.labels, 10), new Array(10).fill(5));
    // no validation image is a training image (compared by pixels)
    const size = 28 * 28;
    const key = (ds: { images: Uint8Array }, i: number) =>
      Buffer.from(ds.images.subarray(i * size, (i + 1) * size)).toString('base64');
    const trainImages = new Set(Array.from(small.train.labels, (_, i) => key(small.train as never, i)));
    const testImages = new Set(Array.from(small.test.labels, (_, i) => key(small.test as never, i)));
    for (let i = 0; i < small.val.labels.length; i++) {
      assert.ok(!trainImages.has(key(small.val as never, i)), `validation image ${i} is in training`);
      assert.ok(!testImages.has(key(small.val as never, i)), `validation image ${i} is in the test set`);
    }
  },
);
