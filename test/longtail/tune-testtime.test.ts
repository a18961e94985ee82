// tune-test-time: the grid, the per-class split of the validation split, the config it writes,
// and a tuning run on Fashion-MNIST that must never read the test set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as torch from '../../src/torch/index.js';
import { loadConfig } from '../../src/longtail/config/config.js';
import { loadTestTimeConfig } from '../../src/longtail/config/testtime.js';
import { buildSession } from '../../src/longtail/config/session.js';
import {
  gridSettings,
  splitPerClass,
  tuneTestTime,
  withTunedSetting,
} from '../../src/longtail/runs/tune-testtime.js';

test('gridSettings: every combination, the first name varying slowest', () => {
  assert.deepEqual(gridSettings({ consistency_weight: [10, 1], epochs: [1, 2, 3] }), [
    { consistency_weight: 10, epochs: 1 },
    { consistency_weight: 10, epochs: 2 },
    { consistency_weight: 10, epochs: 3 },
    { consistency_weight: 1, epochs: 1 },
    { consistency_weight: 1, epochs: 2 },
    { consistency_weight: 1, epochs: 3 },
  ]);
  assert.deepEqual(gridSettings({}), [{}]);
});

test('splitPerClass: disjoint, complete, the fraction per class, one image each side where possible', () => {
  const labels = Int32Array.from([0, 0, 0, 0, 1, 1, 2, 0, 1, 1, 0, 0]);
  const { pool, rest } = splitPerClass(labels, 3, 0.5, 7);
  const all = [...pool, ...rest].sort((a, b) => a - b);
  assert.deepEqual(all, [...labels.keys()]);
  const count = (idx: Int32Array, c: number) => [...idx].filter((i) => labels[i] === c).length;
  assert.deepEqual([count(pool, 0), count(rest, 0)], [4, 3]); // 7 images: round(3.5) = 4
  assert.deepEqual([count(pool, 1), count(rest, 1)], [2, 2]);
  assert.deepEqual([count(pool, 2), count(rest, 2)], [1, 0]); // a single image goes to the pool
  // fractions near the ends still leave one image on each side
  const edge = splitPerClass(Int32Array.from([0, 0, 0]), 1, 0.95, 1);
  assert.deepEqual([edge.pool.length, edge.rest.length], [2, 1]);
  // seeded: the same seed gives the same split, another seed another one
  assert.deepEqual(splitPerClass(labels, 3, 0.5, 7), { pool, rest });
  const other = Array.from({ length: 10 }, (_, s) => splitPerClass(labels, 3, 0.5, s).pool.join());
  assert.ok(new Set(other).size > 1);
});

test('withTunedSetting writes each setting where the test-time config reads it', () => {
  const config = {
    name: 'x',
    optimizer: { type: 'SGD', args: { lr: 0.025, momentum: 0.9 } },
    trainer: { epochs: 5 },
  };
  const out = withTunedSetting(config, {
    consistency_weight: 3,
    preference_lr: 0.03,
    lr: 0.1,
    epochs: 2,
    min_weight: 0.1,
  });
  assert.deepEqual(out, {
    name: 'x',
    optimizer: { type: 'SGD', args: { lr: 0.1, momentum: 0.9 } },
    trainer: { epochs: 2 },
    consistency_weight: 3,
    preference_lr: 0.03,
    min_weight: 0.1,
  });
  assert.equal(config.optimizer.args.lr, 0.025, 'the input is not modified');
});

const fmnist = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

test(
  'tuneTestTime: tunes a PRL search on the validation pool without reading the test set',
  { skip: !fmnist && 'Fashion-MNIST not installed' },
  async () => {
    torch.manualSeed(0);
    const session = buildSession(
      loadConfig('configs/fmnist_lt_ir100_prl.json'),
      'configs/fmnist_lt_ir100_prl.json',
      {
        trainMaxPerClass: 12,
        testPerClass: 4,
      },
    );
    // Any read of the test set fails the test.
    session.data.test = new Proxy(session.data.test, {
      get() {
        throw new Error('the test set was read');
      },
    });
    try {
      const base = loadTestTimeConfig('configs/suites/tiny_test_time.json', true);
      const result = await tuneTestTime(session, base, {
        method: 'preference',
        grid: { consistency_weight: [10, 0] },
        poolFraction: 0.5,
        seed: 0,
      });
      assert.equal(result.rows.length, 2);
      assert.deepEqual(
        result.rows.map((r) => r.setting),
        [{ consistency_weight: 10 }, { consistency_weight: 0 }],
      );
      assert.ok(result.rows.includes(result.best));
      assert.equal(result.best.mean_top1, Math.max(...result.rows.map((r) => r.mean_top1)));
      const val = session.data.val!;
      const valCounts = new Array<number>(val.classes).fill(0);
      for (const y of val.labels) valCounts[y]!++;
      assert.deepEqual(
        result.pool.counts.map((c, k) => c + result.pool.calibration_counts[k]!),
        valCounts,
      );
      for (const r of result.rows) {
        assert.equal(Object.keys(r.per_distribution).length, 11);
        assert.ok(r.mean_top1 >= 0 && r.mean_top1 <= 1);
      }
    } finally {
      for (const m of Object.values(session.system.modules)) m.dispose();
    }
  },
);
