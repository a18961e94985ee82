// `tailor train --graph auto|on|off` on the CPU: auto and off train eagerly (graphs are CUDA's),
// on is a named error on the CPU or with a CPU libtorch, a bad value names the choices. The capture
// itself: test/longtail/graph-step.test.ts (a stand-in graph) and bench/epoch-gpu.ts --check (CUDA).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import {
  GraphModeUnavailableError,
  parseGraphMode,
  resolveGraphMode,
} from '../../src/longtail/train/graph.js';
import { runTailor } from '../helpers.js';

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

/** `tailor train --graph on` of the SADE config on the CPU, with `extra` flags. */
const trainGraphOnCpu = (...extra: string[]) =>
  runTailor([
    'train',
    '-c',
    'configs/fmnist_lt_ir100_sade.json',
    '--device',
    'cpu',
    '--graph',
    'on',
    ...extra,
    '--out',
    '/nonexistent/x',
  ]);

test('tailor train --graph on on the CPU stops with the named error before training', () => {
  const r = trainGraphOnCpu();
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /--graph on needs a CUDA device and a CUDA libtorch/);
});

test('tailor benchmark takes --graph too, with the same named error on the CPU', () => {
  const r = runTailor([
    'benchmark',
    '-c',
    'configs/suites/tiny.json',
    '--graph',
    'on',
    '--max-runs',
    '0',
    '--out',
    '/nonexistent/x',
  ]);
  assert.equal(r.code, 2, r.err);
  assert.match(r.err, /--graph on needs a CUDA device and a CUDA libtorch/);
});

test('tailor train takes --no-branch-streams (graph mode is still checked first on the CPU)', () => {
  const r = trainGraphOnCpu('--no-branch-streams');
  assert.equal(r.code, 2, r.err);
  assert.doesNotMatch(r.err, /Unknown option/);
  assert.match(r.err, /--graph on needs a CUDA device and a CUDA libtorch/);
});
