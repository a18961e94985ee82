// native/resolve-jpeg.mjs: which libjpeg the addon's JPEG decoder builds against, if any.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';

const script = join(repoRoot, 'native', 'resolve-jpeg.mjs');
const field = (name: string, env: Record<string, string>) =>
  execFileSync(process.execPath, [script, name], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  }).trim();

test('resolve-jpeg: TAILOR_JPEG=0 builds without the decoder; a TAILOR_JPEG_DIR is used whole or not at all', () => {
  for (const name of ['defines', 'cflags', 'include_dirs', 'libraries'])
    assert.equal(field(name, { TAILOR_JPEG: '0' }), '', name);
  const dir = mkdtempSync(join(tmpdir(), 'tailor-jpeg-dir-'));
  try {
    mkdirSync(join(dir, 'include'));
    writeFileSync(join(dir, 'include', 'jpeglib.h'), '');
    assert.equal(field('defines', { TAILOR_JPEG_DIR: dir }), '', 'headers without the library: no decoder');
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib', 'libjpeg.so.62'), '');
    assert.equal(field('defines', { TAILOR_JPEG_DIR: dir }), 'TAILOR_JPEG');
    assert.equal(field('cflags', { TAILOR_JPEG_DIR: dir }), `-DTAILOR_JPEG -I${join(dir, 'include')}`);
    const lib = join(dir, 'lib');
    assert.equal(field('libraries', { TAILOR_JPEG_DIR: dir }), `-L${lib} -l:libjpeg.so.62 -Wl,-rpath,${lib}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => field('nonsense', {}), /unknown field 'nonsense'/);
});
