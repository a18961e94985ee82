// scripts/fmnist-subset.mjs: Fashion-MNIST cut down to a suite's images gives that suite's runs
// the same train, validation and test images as the whole data set, zeroes every other training
// image, and its verify step passes for that suite and names the model of a suite needing more.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/longtail/config/config.js';
import { buildData } from '../../src/longtail/config/experiment.js';
import { readFashionMnist } from '../../src/longtail/data/idx.js';
import type { ImageDataset } from '../../src/longtail/data/types.js';
import { loadSuite } from '../../src/longtail/workflows/benchmark-suite.js';
import { suiteDataOverrides } from '../../src/longtail/workflows/benchmark.js';
import { repoRoot } from '../helpers.js';

const whole = '/usr/share/datasets/fashion-mnist';
const fmnistMissing = !existsSync(join(whole, 'train-images-idx3-ubyte.gz'));
const script = join(repoRoot, 'scripts/fmnist-subset.mjs');
const tiny = join(repoRoot, 'configs/suites/tiny.json');

function run(...args: string[]) {
  return spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });
}

test(
  'fmnist-subset: the cut-down data give the suite the same images; verify names a suite needing more',
  { skip: fmnistMissing && 'Fashion-MNIST not installed', timeout: 120_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-fmnist-subset-'));
    try {
      const out = join(dir, 'fm');
      const written = run('write', out, tiny);
      assert.equal(written.status, 0, written.stderr);
      const marker = JSON.parse(readFileSync(join(out, 'SUBSET.json'), 'utf8')) as {
        kept: number;
        of: number;
      };

      const suite = loadSuite(tiny);
      const config = loadConfig(suite.models[0]!.config);
      const full = buildData(config, suiteDataOverrides(suite));
      const cut = buildData(config, { ...suiteDataOverrides(suite), root: out });
      const pixels = (set: unknown) => (set as ImageDataset).images;
      for (const split of ['train', 'val', 'test'] as const)
        assert.deepEqual(pixels(cut[split]), pixels(full[split]), `${split} images differ`);
      // exactly the suite's training and validation images keep their pixels
      const used = new Set([...full.sourceIndices!.train, ...full.sourceIndices!.val]);
      assert.equal(marker.kept, used.size);
      assert.equal(marker.of, 60000);
      const source = readFashionMnist(out, 'train');
      const original = readFashionMnist(whole, 'train');
      for (let i = 0; i < 60000; i += 97) {
        const image = source.images.subarray(i * 784, (i + 1) * 784);
        if (used.has(i)) assert.deepEqual(image, original.images.subarray(i * 784, (i + 1) * 784));
        else
          assert.ok(
            image.every((v) => v === 0),
            `image ${i} should be zero`,
          );
      }
      assert.deepEqual(source.labels, original.labels);

      const ok = run('verify', out, tiny);
      assert.equal(ok.status, 0, ok.stderr);
      const bigger = run('verify', out, join(repoRoot, 'configs/suites/fmnist_lt_ir100.json'));
      assert.equal(bigger.status, 2);
      assert.match(bigger.stderr, /^fmnist-subset: .* lacks \d+ of the (train|val|test) images model CE of /);
      assert.match(bigger.stderr, /rewrite it with scripts\/fmnist-subset\.mjs write for this suite/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('fmnist-subset: a suite of another data set and a wrong command are refused by name', () => {
  const cifar = run(
    'write',
    join(tmpdir(), 'never-written'),
    join(repoRoot, 'configs/suites/cifar10_lt_ir100.json'),
  );
  assert.equal(cifar.status, 2);
  assert.match(cifar.stderr, /model CE reads ImbalanceCIFAR10DataLoader, not Fashion-MNIST/);
  assert.ok(!existsSync(join(tmpdir(), 'never-written')));
  const usage = run('verify', 'only-one-argument');
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /^fmnist-subset: usage: /);
});
