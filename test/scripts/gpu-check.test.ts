// scripts/gpu-check.sh --prepare refuses an unknown option after it before it touches .gpu/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

test('gpu-check.sh --prepare names an unknown data option and stops', () => {
  const r = spawnSync('sh', [join(repoRoot, 'scripts/gpu-check.sh'), '--prepare', '--with-dat'], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--prepare takes --with-data or --with-data=full after it, got '--with-dat'/);
  assert.equal(r.stdout, '', 'nothing was prepared');
});
