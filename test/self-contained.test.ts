// A clone must run on its own: the tests, configs, docs and benchmarks read their data from data/
// and from devDependencies, never from a folder beside the checkout that a user does not have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './helpers.js';
import { readExperimentsFile } from '../src/nmr/data/experiments.js';
import { detectFormat } from '../src/nmr/io/load.js';

// Built from parts so that this file does not match itself: a relative path out of the checkout
// into a sibling folder, written as a path or as path.join arguments.
const up = '..';
const sibling = 'shared';
const forbidden = [`${up}/${sibling}`, `'${up}', '${sibling}'`];

test('no tracked file refers to a folder beside the checkout', (t) => {
  const ls = spawnSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (ls.error || ls.status !== 0) {
    t.skip('not a git checkout');
    return;
  }
  const files = ls.stdout.split('\0').filter(Boolean);
  assert.ok(files.length > 100, `git ls-files listed ${files.length} files`);
  const hits: string[] = [];
  for (const file of files) {
    const path = join(repoRoot, file);
    let isFile = false;
    try {
      isFile = lstatSync(path).isFile();
    } catch {
      // Deleted in the work tree and not yet committed: nothing to read.
    }
    if (!isFile) continue;
    const text = readFileSync(path, 'latin1');
    for (const s of forbidden) if (text.includes(s)) hits.push(`${file}: ${s}`);
  }
  assert.deepEqual(hits, []);
});

test('the experiments files in configs/ name experiments that ship with the repository', () => {
  const configs = join(repoRoot, 'configs');
  const files = readdirSync(configs).filter((f) => f.startsWith('experiments') && f.endsWith('.json'));
  assert.ok(files.length >= 2, `experiments files: ${files.join(', ')}`);
  for (const f of files) {
    for (const sample of readExperimentsFile(join(configs, f)).samples) {
      for (const e of sample.experiments.flat()) {
        assert.ok(e.startsWith(repoRoot), `${f}: ${e} is outside the repository`);
        // Throws, naming the path, when the experiment is missing or unreadable.
        detectFormat(e);
      }
    }
  }
});
