// bench/epoch.ts: the PyTorch side runs with --python (Debian's by default), the JSON names both
// libtorch versions, and a Python that cannot run is a named error rather than a stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';

const python = '/usr/bin/python3';
const torchMissing = !pythonHas(python, 'torch');
const bench = (...args: string[]) =>
  spawnSync(
    process.execPath,
    [join(repoRoot, 'dist', 'bench', 'epoch.js'), '--json', '--max-batches', '1', ...args],
    {
      encoding: 'utf8',
    },
  );

test(
  'bench epoch: --python picks the PyTorch side, and both versions are named',
  { skip: torchMissing ? `${python} lacks torch` : false, timeout: 300_000 },
  () => {
    const run = bench('--configs', 'sade', '--python', python);
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      libtorch: string;
      torch: string;
      ratio: number;
    };
    assert.match(report.libtorch, /^\d+\.\d+/);
    assert.match(report.torch, /^\d+\.\d+/);
    assert.ok(report.ratio > 0);
  },
);

test(
  'bench epoch: a --python that cannot run, or prints no result, is a named error',
  { timeout: 300_000 },
  () => {
    const missing = bench('--configs', 'sade', '--python', '/nonexistent/python3');
    assert.equal(missing.status, 1);
    assert.match(
      missing.stderr,
      /^tailor: bench epoch: cannot run --python '\/nonexistent\/python3' .*give a Python with torch/,
    );
    const silent = bench('--configs', 'sade', '--python', '/bin/true');
    assert.equal(silent.status, 1);
    assert.match(
      silent.stderr,
      /^tailor: bench epoch: the PyTorch side \(--python '\/bin\/true'\) printed no result/,
    );
  },
);
