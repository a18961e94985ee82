// Training end to end on a tiny Fashion-MNIST-LT: resume gives exactly the uninterrupted run,
// a diverging run stops with a message naming the epoch and step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { buildData } from '../../src/longtail/config/experiment.js';
import { NonFiniteLossError } from '../../src/longtail/train/trainer.js';
import { trainRun as baseTrainRun } from './train-run.js';
import { repoRoot } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const overrides = { trainMaxPerClass: 12, testPerClass: 4 };

function config(name: string, patch: (c: TrainConfig) => void = () => {}): TrainConfig {
  const c = parseConfig(readFileSync(join(repoRoot, 'configs', name), 'utf8'), name);
  c.data_loader.args = { ...c.data_loader.args, batch_size: 16 };
  c.trainer.epochs = 2;
  patch(c);
  return c;
}

const trainRun = (c: TrainConfig, runDir: string, epochs: number, resumeFrom?: string) =>
  baseTrainRun(c, runDir, epochs, { overrides, ...(resumeFrom ? { resumeFrom } : {}) });

test(
  'an interrupted and resumed run ends exactly where an uninterrupted one does (SADE, mixup)',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-resume-'));
    try {
      const c = () => config('fmnist_lt_ir100_sade.json', (x) => (x.mixup = { alpha: 0.4 }));
      const straight = await trainRun(c(), join(dir, 'a'), 2);
      await trainRun(c(), join(dir, 'b'), 1);
      // A metrics line whose checkpoint never made it (the order before metrics followed checkpoints):
      // resume must drop it, not keep a second epoch-2 line.
      appendFileSync(join(dir, 'b', 'metrics.jsonl'), JSON.stringify({ epoch: 2, stray: true }) + '\n');
      const resumed = await trainRun(c(), join(dir, 'b'), 2, join(dir, 'b', 'checkpoint-last.json'));
      assert.equal(resumed.result.history.length, 2);
      for (const [k, v] of Object.entries(straight.weights)) {
        assert.deepEqual(resumed.weights[k], v, `weight ${k} differs after resume`);
      }
      const lines = readFileSync(join(dir, 'a', 'metrics.jsonl'), 'utf8')
        .trim()
        .split('\n');
      assert.equal(lines.length, 2);
      assert.ok(existsSync(join(dir, 'a', 'model_best.safetensors')));
      const epochs = (run: string) =>
        readFileSync(join(dir, run, 'metrics.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { epoch: number; train_loss: number; stray?: boolean });
      assert.deepEqual(
        epochs('b').map((e) => [e.epoch, e.train_loss, e.stray]),
        epochs('a').map((e) => [e.epoch, e.train_loss, e.stray]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'PRL trains and the resumed run matches too (shipped config, and the Tchebycheff running ideal point)',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-prl-'));
    const variants: [string, (c: TrainConfig) => void][] = [
      ['shipped', () => {}],
      ['stch-running-min', (c) => (c.prl = { ...c.prl, scalarization: 'stch', z: 'running_min' })],
    ];
    try {
      for (const [name, patch] of variants) {
        const c = config('fmnist_lt_ir100_prl.json', patch);
        const straight = await trainRun(c, join(dir, name, 'a'), 2);
        await trainRun(c, join(dir, name, 'b'), 1);
        const resumed = await trainRun(
          c,
          join(dir, name, 'b'),
          2,
          join(dir, name, 'b', 'checkpoint-last.json'),
        );
        assert.ok(Object.keys(straight.weights).some((k) => k.startsWith('hyper.')));
        if (name === 'stch-running-min')
          assert.ok(Object.keys(straight.weights).some((k) => k.startsWith('ideal.')));
        for (const [k, v] of Object.entries(straight.weights))
          assert.deepEqual(resumed.weights[k], v, `${name}: weight ${k} differs after resume`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a diverging run stops with a message naming the epoch and step',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-nan-'));
    try {
      const c = config('fmnist_lt_ir100_sade.json', (x) => {
        x.optimizer.args = { ...x.optimizer.args, lr: 1e30 };
        delete x.lr_scheduler;
      });
      await assert.rejects(
        () => trainRun(c, dir, 2),
        (e: Error) => e instanceof NonFiniteLossError && /at epoch \d+, step \d+/.test(e.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a config caps the head class and the test set (n_max, test_per_class); the command line wins',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  () => {
    const c = config('fmnist_lt_ir100_sade.json');
    const d = buildData(c);
    assert.equal(d.trainCounts[0], 1000);
    assert.equal(d.train.labels.length, 2478);
    assert.equal(d.test.labels.length, 3000);
    const small = buildData(c, { trainMaxPerClass: 100, testPerClass: 5 });
    assert.equal(small.trainCounts[0], 100);
    assert.equal(small.test.labels.length, 50);
  },
);
