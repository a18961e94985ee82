// `tailor train --graph auto|on|off`: auto and off train eagerly (the capture is not yet bound),
// on is a named error on the CPU or with a CPU libtorch, a bad value names the choices.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import {
  GraphModeUnavailableError,
  parseGraphMode,
  resolveGraphMode,
} from '../../src/longtail/train/graph.js';
import { repoRoot } from '../helpers.js';

test('--graph auto and off train eagerly; on needs a CUDA device and a CUDA libtorch', () => {
  const cpu = torch.parseDevice('cpu');
  assert.equal(parseGraphMode(undefined), 'auto');
  assert.equal(resolveGraphMode('auto', cpu), 'eager');
  assert.equal(resolveGraphMode('off', cpu), 'eager');
  assert.throws(
    () => resolveGraphMode('on', cpu),
    (e: Error) =>
      e instanceof GraphModeUnavailableError && /needs a CUDA device and a CUDA libtorch/.test(e.message),
  );
  assert.throws(() => parseGraphMode('yes'), /--graph must be auto, on or off/);
});

test('tailor train --graph on on the CPU stops with the named error before training', () => {
  const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'train',
      '-c',
      'configs/fmnist_lt_ir100_sade.json',
      '--device',
      'cpu',
      '--graph',
      'on',
      '--out',
      '/nonexistent/x',
    ],
    { encoding: 'utf8', cwd: repoRoot },
  );
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--graph on needs a CUDA device and a CUDA libtorch/);
});

test('tailor benchmark takes --graph too, with the same named error on the CPU', () => {
  const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'benchmark',
      '-c',
      'configs/suites/tiny.json',
      '--graph',
      'on',
      '--max-runs',
      '0',
      '--out',
      '/nonexistent/x',
    ],
    { encoding: 'utf8', cwd: repoRoot },
  );
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--graph on needs a CUDA device and a CUDA libtorch/);
});
