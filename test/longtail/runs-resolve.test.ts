import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { resolveCheckpoint, RunError } from '../../src/longtail/workflows/load.js';

test('resolveCheckpoint prefers a run directory over a same-named config file beside it', () => {
  const root = mkdtempSync(join(tmpdir(), 'tailor-resolve-'));
  try {
    const run = join(root, 'prl');
    mkdirSync(run);
    writeFileSync(`${run}.json`, '{"name": "a training config, not a checkpoint"}');
    writeFileSync(join(run, 'checkpoint-last.json'), '{}');
    writeFileSync(join(run, 'checkpoint-epoch10.json'), '{}');
    assert.equal(resolveCheckpoint(run), resolve(run, 'checkpoint-last.json'));
    assert.equal(resolveCheckpoint(join(run, 'checkpoint-epoch10')), resolve(run, 'checkpoint-epoch10.json'));
    assert.equal(
      resolveCheckpoint(join(run, 'checkpoint-epoch10.safetensors')),
      resolve(run, 'checkpoint-epoch10.json'),
    );
    const empty = join(root, 'empty');
    mkdirSync(empty);
    assert.throws(() => resolveCheckpoint(empty), RunError);
    assert.throws(() => resolveCheckpoint(join(root, 'missing')), /no checkpoint at/);
    // Another trainer's weights file is not a run to resume: the two ways to use it are named.
    writeFileSync(join(root, 'model_best.pth'), '');
    assert.throws(
      () => resolveCheckpoint(join(root, 'model_best.pth')),
      /model_best\.pth is a weights file, not a tailor run: .*-c CONFIG.*arch\.args\.pretrained/,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
