import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import { FASHION_MNIST_DEFAULT_ROOT } from '../../src/longtail/data/idx.js';
import { balancedSplit, tempDir, writeCifarBinary, writeCifarPython } from './data-fixtures.js';

const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');

function tailor(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

interface SummaryJson {
  train_counts: number[];
  train_total: number;
  groups: { many: number; medium: number; few: number };
  test_sets: Record<string, number>;
  class_order: number[];
  seed: number;
}

function summary(...args: string[]): SummaryJson {
  const r = tailor('data', 'summary', ...args, '--json');
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out) as SummaryJson;
}

test('tailor data summary --dataset cifar100: the reference totals, groups and test-set sizes', () => {
  const expectedTotals: Record<string, number> = { '100': 10847, '50': 12608, '10': 19573 };
  for (const [r, total] of Object.entries(expectedTotals)) {
    const s = summary('--dataset', 'cifar100', '--imbalance', r, '--profile', 'exp');
    assert.equal(s.train_counts.length, 100);
    assert.equal(s.train_total, total);
    assert.equal(
      s.train_counts.reduce((a, b) => a + b, 0),
      total,
    );
    assert.deepEqual(s.test_sets, {
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
    });
    if (r === '100') assert.deepEqual(s.groups, { many: 35, medium: 35, few: 30 });
    if (r === '10') assert.equal(s.groups.few, 0);
  }
  const text = tailor('data', 'summary', '--dataset', 'cifar100');
  assert.equal(text.code, 0);
  assert.match(text.out, /training images: 10847/);
  assert.match(text.out, /forward50\s+2486/);
});

test('tailor data summary reads CIFAR files when --root is given (python and binary layouts)', () => {
  const root = tempDir('cli-cifar');
  writeCifarPython(join(root, 'py'), 'cifar10', balancedSplit(10, 40), balancedSplit(10, 20));
  writeCifarBinary(join(root, 'bin'), 'cifar10', balancedSplit(10, 40), balancedSplit(10, 20));
  for (const layout of ['py', 'bin']) {
    const s = summary('--dataset', 'cifar10', '--imbalance', '10', '--root', join(root, layout));
    assert.deepEqual(s.train_counts, [40, 30, 23, 18, 14, 11, 8, 6, 5, 4]);
    assert.equal(s.test_sets.uniform, 200);
    assert.equal(
      s.test_sets.forward2,
      [20, 18, 17, 15, 14, 13, 12, 11, 10, 10].reduce((a, b) => a + b, 0),
    );
  }
  const step = summary(
    '--dataset',
    'cifar10',
    '--imbalance',
    '10',
    '--profile',
    'step',
    '--root',
    join(root, 'py'),
  );
  assert.deepEqual(step.train_counts, [40, 40, 40, 40, 40, 4, 4, 4, 4, 4]);
  const missing = tailor('data', 'summary', '--dataset', 'cifar100', '--root', join(root, 'py'));
  assert.equal(missing.code, 2);
  assert.match(missing.err, /no cifar100 data found/);
  rmSync(root, { recursive: true });
});

test('tailor data summary --dataset list: training list as given, ready-made test lists used as they are', () => {
  const root = tempDir('cli-list');
  mkdirSync(join(root, 'img'));
  const lines = (counts: number[], prefix: string): string =>
    counts
      .flatMap((n, c) => Array.from({ length: n }, (_, i) => `img/${prefix}_${c}_${i}.jpg ${c}`))
      .join('\n') + '\n';
  writeFileSync(join(root, 'train.txt'), lines([30, 12, 3], 'tr'));
  writeFileSync(join(root, 'test.txt'), lines([10, 10, 10], 'te'));
  const lists = join(root, 'lists');
  mkdirSync(lists);
  for (const name of ['forward3', 'forward2', 'uniform', 'backward2', 'backward3']) {
    writeFileSync(join(lists, `iNaturalist18_${name}.txt`), lines([name.length, 1, 1], name));
  }
  // images are not on disk: --skip-missing would drop them all, so create the training ones
  for (const l of lines([30, 12, 3], 'tr').trim().split('\n'))
    writeFileSync(join(root, l.split(' ')[0]!), '');
  for (const l of lines([10, 10, 10], 'te').trim().split('\n'))
    writeFileSync(join(root, l.split(' ')[0]!), '');
  const s = summary(
    '--dataset',
    'list',
    '--root',
    root,
    '--train-list',
    join(root, 'train.txt'),
    '--test-list',
    join(root, 'test.txt'),
  );
  assert.deepEqual(s.train_counts, [30, 12, 3]);
  assert.deepEqual(s.groups, { many: 0, medium: 1, few: 2 });
  assert.equal(s.test_sets.uniform, 30);
  assert.equal(s.test_sets.forward50, 10 + 1 + 0);
  const given = summary(
    '--dataset',
    'list',
    '--root',
    root,
    '--train-list',
    join(root, 'train.txt'),
    '--lists',
    lists,
    '--distributions',
    'inat',
  );
  assert.deepEqual(given.test_sets, { forward3: 10, forward2: 10, uniform: 9, backward2: 11, backward3: 11 });
  writeFileSync(join(root, 'bad.txt'), 'img/tr_0_0.jpg 0\nimg/tr_0_1.jpg 7\n');
  const bad = tailor(
    'data',
    'summary',
    '--dataset',
    'list',
    '--root',
    root,
    '--train-list',
    join(root, 'bad.txt'),
    '--classes',
    '3',
    '--lists',
    lists,
  );
  assert.equal(bad.code, 2);
  assert.match(bad.err, /bad\.txt:2: label 7 out of range 0\.\.2/);
  rmSync(join(lists, 'iNaturalist18_backward3.txt'));
  const noList = tailor(
    'data',
    'summary',
    '--dataset',
    'list',
    '--root',
    root,
    '--train-list',
    join(root, 'train.txt'),
    '--lists',
    lists,
    '--distributions',
    'inat',
  );
  assert.equal(noList.code, 2);
  assert.match(noList.err, /no list for 'backward3' \(expected a file named \*_backward3\.txt\)/);
  rmSync(root, { recursive: true });
});

test('tailor data: bad options are user errors with a remedy', () => {
  const profile = tailor('data', 'summary', '--dataset', 'cifar100', '--profile', 'linear');
  assert.equal(profile.code, 2);
  assert.match(profile.err, /--profile must be exp or step/);
  const dataset = tailor('data', 'summary', '--dataset', 'mnist');
  assert.equal(dataset.code, 2);
  assert.match(dataset.err, /--dataset must be one of fmnist, cifar10, cifar100, list/);
  assert.match(
    tailor('data', 'summary', '--imbalance', 'lots').err,
    /--imbalance needs a non-negative number/,
  );
  assert.match(tailor('data', 'summary', '--dataset', 'list').err, /needs --train-list/);
  assert.match(tailor('data', 'frobnicate').err, /unknown data subcommand/);
  const help = tailor('data', 'summary', '--help');
  assert.equal(help.code, 0);
  assert.match(help.out, /--imbalance R/);
});

test('tailor data summary on Debian Fashion-MNIST', { skip: !existsSync(FASHION_MNIST_DEFAULT_ROOT) }, () => {
  const s = summary('--dataset', 'fmnist', '--imbalance', '100');
  assert.deepEqual(s.train_counts, [6000, 3596, 2156, 1292, 774, 464, 278, 166, 100, 60]);
  assert.equal(s.train_total, 14886);
  assert.equal(s.test_sets.uniform, 10000);
  assert.equal(s.test_sets.forward50, 2795);
  assert.deepEqual(s.groups, { many: 8, medium: 2, few: 0 });
});
