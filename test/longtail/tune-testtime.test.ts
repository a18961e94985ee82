// tune-test-time: the grid, the per-class split of the validation split, the config it writes,
// and a tuning run on Fashion-MNIST that must never read the test set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import * as torch from '../../src/torch/index.js';
import { loadConfig } from '../../src/longtail/config/config.js';
import { loadTestTimeConfig } from '../../src/longtail/config/testtime.js';
import { buildSession } from '../../src/longtail/config/session.js';
import {
  gridSettings,
  matchedBatchSize,
  splitPerClass,
  tuneTestTime,
  withTunedSetting,
} from '../../src/longtail/workflows/tune-testtime.js';

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
  assert.deepEqual(gridSettings({ aggregation_objective: ['stability', 'consistent'], lr: [0.1] }), [
    { aggregation_objective: 'stability', lr: 0.1 },
    { aggregation_objective: 'consistent', lr: 0.1 },
  ]);
});

test('matchedBatchSize: the pool takes as many steps per epoch as the test set', () => {
  // 300 pool images against 10,000 test images at batch 128: 3.84, so 4 (2,795-image forward50
  // takes 22 steps at 128; its pool draw of about 84 images 21 at 4).
  assert.equal(matchedBatchSize(128, 300, 10000), 4);
  assert.equal(matchedBatchSize(128, 10, 100000), 1, 'at least one image per batch');
  assert.equal(matchedBatchSize(128, 300), 128, 'without the test size, the config batch');
  assert.equal(matchedBatchSize(128, 300, 200), 128, 'never larger than the config batch');
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
    aggregation_objective: 'consistent',
    preference_objective: 'stability',
  });
  assert.deepEqual(out, {
    name: 'x',
    optimizer: { type: 'SGD', args: { lr: 0.1, momentum: 0.9 } },
    trainer: { epochs: 2 },
    consistency_weight: 3,
    preference_lr: 0.03,
    min_weight: 0.1,
    aggregation_objective: 'consistent',
    preference_objective: 'stability',
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
      const progress: string[] = [];
      const result = await tuneTestTime(session, base, {
        method: 'preference',
        grid: { consistency_weight: [10, 0] },
        poolFraction: 0.5,
        seed: 0,
        // A test set ten times the pool: the pool's batch shrinks to keep the steps per epoch.
        testImages: 10 * session.data.val!.labels.length,
        log: (line) => progress.push(line),
      });
      assert.equal(result.rows.length, 2);
      const poolImages = result.pool.counts.reduce((a, b) => a + b, 0);
      assert.equal(
        result.pool.batch_size,
        matchedBatchSize(base.batchSize, poolImages, 10 * session.data.val!.labels.length),
      );
      assert.ok(result.pool.batch_size < base.batchSize, `batch ${result.pool.batch_size}`);
      // The batch line, then one progress line per setting, counting up with an ETA.
      assert.equal(progress.length, 3);
      assert.match(
        progress[0]!,
        new RegExp(`^pool of ${poolImages} images for a test set of \\d+: batch ${result.pool.batch_size} `),
      );
      assert.match(progress[1]!, /^\[1\/2, ETA \d+:\d\d\] consistency_weight=10: mean top-1 /);
      assert.match(progress[2]!, /^\[2\/2, ETA 0:00\] consistency_weight=0: /);
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

test('tailor tune-test-time: bad grids and a missing run are one tailor: line naming the flag', () => {
  const run = (...args: string[]) =>
    spawnSync(join(repoRoot, 'bin', 'tailor'), ['tune-test-time', ...args], {
      encoding: 'utf8',
      cwd: repoRoot,
    });
  const cases: [string[], RegExp][] = [
    [['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x'], /give at least one --grid NAME=V1,V2/],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'alpha=1'],
      /--grid alpha=1: give NAME=V1,V2 with NAME one of consistency_weight/,
    ],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'epochs=1.5'],
      /--grid epochs needs positive integers/,
    ],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'lr=1', '--grid', 'lr=2'],
      /--grid lr is given twice/,
    ],
    [['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'lr=a'], /--grid lr/],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'aggregation_objective=greedy'],
      /--grid aggregation_objective: 'greedy' is not an objective; give stability or consistent/,
    ],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'preference_objective=0.1'],
      /--grid preference_objective: '0.1' is not an objective/,
    ],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'lr=1', '--pool-fraction', '1'],
      /--pool-fraction/,
    ],
    [['-c', 'configs/fmnist_test_time.json', '--grid', 'lr=1'], /give the checkpoint with -r CHECKPOINT/],
    // --set is checked before the run loads (runs/x does not exist)
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', 'runs/x', '--grid', 'lr=1', '--set', 'trainer.epoch=1'],
      /^tailor: configs\/fmnist_test_time\.json \(with --set\): trainer\.epoch: unknown key; did you mean 'epochs'/,
    ],
    [
      ['-c', 'configs/fmnist_test_time.json', '-r', '/nonexistent/run', '--grid', 'lr=1'],
      /^tailor: .*\/nonexistent\/run/m,
    ],
  ];
  for (const [args, message] of cases) {
    const r = run(...args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.trim().split('\n')[0]!.startsWith('tailor: '), true, r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  }
});
