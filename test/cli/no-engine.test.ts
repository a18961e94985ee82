// The commands that never touch a tensor run without libtorch: TAILOR_NO_ENGINE=1 makes any load
// of the native addon fail, so each of these would fail if its import graph or its work loaded it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

const tailor = join(repoRoot, 'bin/tailor');
const env = { ...process.env, TAILOR_NO_ENGINE: '1' };
const run = (args: string[]) => spawnSync(tailor, args, { encoding: 'utf8', env, cwd: repoRoot });

test('--help, version, gmm, subgroup, NMR simulate/process/stack and reports run without libtorch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-no-engine-'));
  try {
    const iris = join(repoRoot, 'examples/iris.csv');
    const model = join(dir, 'gmm', 'results.json');
    const nmrData = join(dir, 'nmr-data');
    const commands: string[][] = [
      ['--help'],
      ['version'],
      ['gmm', '--help'],
      ['gmm', 'fit', '--data', iris, '--k', '3', '--out', model],
      ['gmm', 'predict', '--model', model, '--data', iris],
      ['gmm', 'select', '--data', iris, '--k', '1..3'],
      ['report', '--run', join(dir, 'gmm')],
      [
        'subgroup',
        'fit',
        '--data',
        join(repoRoot, 'examples/subgroup_s1.csv'),
        '--fixed',
        'W1,W2,W3',
        '--membership',
        'U1,U2',
        '--k',
        '2',
      ],
      ['nmr', 'simulate', '--samples', '2', '--levels', '3', '--points', '1024', '--out', nmrData],
      ['nmr', 'evaluate', '--data', nmrData],
      ['train', '--help'],
      ['serve', '--help'],
    ];
    for (const args of commands) {
      const r = run(args);
      assert.equal(r.status, 0, `tailor ${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /TAILOR_NO_ENGINE/, `tailor ${args.join(' ')} loaded libtorch`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a command that needs tensors says that the engine is disabled, without a stack trace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-no-engine-'));
  try {
    const engine = run(['version', '--engine']);
    assert.match(engine.stdout, /libtorch engine not available: .*TAILOR_NO_ENGINE/);
    const train = run([
      'train',
      '-c',
      'configs/fmnist_lt_ir100_ce.json',
      '--epochs',
      '1',
      '--train-max-per-class',
      '5',
      '--test-per-class',
      '1',
      '--out',
      join(dir, 'run'),
    ]);
    assert.equal(train.status, 2, train.stderr);
    assert.match(train.stderr, /^tailor: .*TAILOR_NO_ENGINE/m);
    assert.doesNotMatch(train.stderr, /\n\s+at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
