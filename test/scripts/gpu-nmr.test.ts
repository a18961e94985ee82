// scripts/gpu-nmr.sh names missing arguments and a SECONDS it cannot use before it simulates or
// trains anything.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

test('gpu-nmr.sh names missing arguments and a SECONDS that is not a whole number or leaves no time to train', () => {
  const cases: [string[], RegExp][] = [
    [[], /^gpu-nmr: usage: scripts\/gpu-nmr\.sh OUTDIR SECONDS$/],
    [['/tmp/unused', '10m'], /^gpu-nmr: SECONDS needs a positive whole number, got '10m'/],
    [['/tmp/unused', '100'], /^gpu-nmr: SECONDS 100 leaves no time to train \(YARDSTICK_SECONDS=150/],
  ];
  for (const [args, message] of cases) {
    const run = spawnSync('sh', [join(repoRoot, 'scripts/gpu-nmr.sh'), ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr.trim(), message);
    assert.equal(run.stdout, '');
  }
});
