// scripts/gpu-check.sh: --prepare refuses an unknown option before it touches .gpu/, and the GPU build
// compiles the addon as binding.gyp does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

// The GPU machine has no node-gyp: gpu-check.sh compiles the addon with g++ directly, so the
// defines binding.gyp sets must be repeated there (a missing NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS
// brings back the loader's abort when workers end mid-decode).
test("gpu-check.sh compiles the addon with binding.gyp's own defines, on every compile line", () => {
  const gyp = readFileSync(join(repoRoot, 'native/binding.gyp'), 'utf8');
  const definesList = /"defines":\s*\[([^\]]*)\]/.exec(gyp);
  assert.ok(definesList, 'binding.gyp has a defines list');
  const literal = [...definesList[1].matchAll(/"([^"]+)"/g)]
    .map((m) => m[1])
    .filter((d) => !d.startsWith('<!'));
  assert.ok(literal.includes('NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS'));
  const script = readFileSync(join(repoRoot, 'scripts/gpu-check.sh'), 'utf8');
  const assigned = /^\s*addon_defines="([^"]*)"/m.exec(script);
  assert.ok(assigned, 'gpu-check.sh sets addon_defines');
  assert.deepEqual(assigned[1].split(/\s+/).sort(), literal.map((d) => `-D${d}`).sort());
  const compileLines = script.split('\n').filter((l) => /\bg\+\+ -c\b/.test(l));
  assert.ok(compileLines.length >= 4, 'the source files and the fallbacks are compiled');
  for (const line of compileLines) assert.match(line, /\$addon_defines/, line.trim());
});

test('gpu-check.sh names a GPU_CHECKS entry that is no check, and an unknown argument, before it builds', () => {
  const script = join(repoRoot, 'scripts/gpu-check.sh');
  const typo = spawnSync('sh', [script], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, GPU_CHECKS: 'version,images_pipline' },
  });
  assert.equal(typo.status, 2);
  assert.match(typo.stderr, /^gpu-check: GPU_CHECKS names 'images_pipline', which is not a check \(all, or/);
  assert.equal(typo.stdout, '', 'nothing was built or run');
  const unknown = spawnSync('sh', [script, '--prepar'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /^gpu-check: unknown argument '--prepar'/);
  // the list it checks against is every check the script runs
  const text = readFileSync(script, 'utf8');
  const listed = /^checks="([^"]*)"/m.exec(text)![1]!.split(' ').sort();
  const run = [...new Set([...text.matchAll(/\bwant ([a-z0-9_]+)/g)].map((m) => m[1]!))].sort();
  assert.deepEqual(listed, run);
});
