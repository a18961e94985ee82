import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { repoRoot } from '../helpers.js';
import { readImageList } from '../../src/longtail/data/imagelist.js';
import { classCounts } from '../../src/longtail/data/types.js';
import { tempDir } from './data-fixtures.js';

const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');

function synth(out: string, ...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [cli, 'data', 'synth-images', '--out', out, ...args], {
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

function filesOf(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(p.slice(dir.length), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

test('tailor data synth-images: long-tailed official-format lists of JPEGs, identical per seed', async () => {
  const dir = tempDir('synth');
  const args = ['--classes', '4', '--imbalance', '5', '--max-per-class', '5', '--size', '64x48'];
  const a = synth(join(dir, 'a'), ...args, '--seed', '3', '--json');
  assert.equal(a.code, 0, a.err);
  const result = JSON.parse(a.out) as {
    counts: { train: number[]; val: number; test: number };
    images: number;
  };
  assert.deepEqual(result.counts.train, [5, 2, 1, 1]);
  assert.equal(result.images, 9 + 8 + 8);

  const root = join(dir, 'a');
  const train = readImageList(root, join(root, 'ImageNet_LT_train.txt'));
  assert.deepEqual(
    classCounts(
      train.entries.map((e) => e.label),
      4,
    ),
    [5, 2, 1, 1],
  );
  assert.match(train.entries[0]!.path, /^train\/n00000000\/n00000000_0\.JPEG$/);
  const val = readImageList(root, join(root, 'ImageNet_LT_val.txt'));
  assert.deepEqual(
    classCounts(
      val.entries.map((e) => e.label),
      4,
    ),
    [2, 2, 2, 2],
  );
  readImageList(root, join(root, 'ImageNet_LT_test.txt'));

  // real JPEGs whose sizes vary around the nominal size
  const sizes = new Set<string>();
  for (const e of train.entries) {
    const meta = await sharp(join(root, e.path)).metadata();
    assert.equal(meta.format, 'jpeg');
    assert.ok(meta.width! >= 48 && meta.width! <= 80, `width ${meta.width}`);
    assert.ok(meta.height! >= 36 && meta.height! <= 60, `height ${meta.height}`);
    sizes.add(`${meta.width}x${meta.height}`);
  }
  assert.ok(sizes.size > 3, 'image sizes vary');

  // the same seed gives the same bytes; another seed other images
  assert.equal(synth(join(dir, 'b'), ...args, '--seed', '3').code, 0);
  assert.equal(synth(join(dir, 'c'), ...args, '--seed', '4').code, 0);
  const fa = filesOf(join(dir, 'a'));
  const fb = filesOf(join(dir, 'b'));
  const fc = filesOf(join(dir, 'c'));
  assert.deepEqual([...fa.keys()].sort(), [...fb.keys()].sort());
  for (const [k, v] of fa) assert.ok(v.equals(fb.get(k)!), `${k} differs between two runs with one seed`);
  const jpeg = '/train/n00000000/n00000000_0.JPEG';
  assert.ok(!fa.get(jpeg)!.equals(fc.get(jpeg)!), 'another seed draws other images');
});

test('tailor data synth-images: bad arguments are named', () => {
  const dir = tempDir('synth-bad');
  assert.match(synth(dir, '--size', '64').err, /--size needs WIDTHxHEIGHT/);
  assert.match(synth(dir, '--imbalance', '0.5').err, /--imbalance/);
  assert.match(synth(dir, '--quality', '101').err, /--quality/);
  const none = spawnSync(process.execPath, [cli, 'data', 'synth-images'], { encoding: 'utf8' });
  assert.match(none.stderr, /--out DIR is required/);
});
