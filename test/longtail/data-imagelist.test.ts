import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import {
  LazyImageDataset,
  decodeImage,
  parseImageList,
  readImageFolder,
  readImageList,
} from '../../src/longtail/data/imagelist.js';
import { iterateBatchesAsync } from '../../src/longtail/data/batches.js';
import { DataFormatError } from '../../src/longtail/data/types.js';
import { tempDir } from './data-fixtures.js';

/** An h x w RGB image whose pixel (y, x) is (10y + x, 100 + y, 200 - x) + shift. */
function rgbPixels(h: number, w: number, shift = 0): Buffer {
  const b = Buffer.alloc(h * w * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const p = (y * w + x) * 3;
      b[p] = (10 * y + x + shift) & 255;
      b[p + 1] = (100 + y + shift) & 255;
      b[p + 2] = (200 - x + shift) & 255;
    }
  return b;
}

async function writePng(file: string, h: number, w: number, shift = 0): Promise<void> {
  await sharp(rgbPixels(h, w, shift), { raw: { width: w, height: h, channels: 3 } })
    .png()
    .toFile(file);
}

function throwsAt(fn: () => unknown, pattern: RegExp, where: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DataFormatError, String(e));
    assert.match(e.message, pattern);
    assert.ok(e.message.includes(where), `'${e.message}' should name ${where}`);
    return true;
  });
}

test('image list lines: labels, duplicates, malformed lines name the file and line', () => {
  const ok = parseImageList('train/a b.jpg 3\n\ntrain/c.jpg 0\r\n', 'L.txt');
  assert.deepEqual(
    ok.entries.map((e) => [e.path, e.label, e.line]),
    [
      ['train/a b.jpg', 3, 1],
      ['train/c.jpg', 0, 3],
    ],
  );
  assert.equal(ok.classes, 4);
  throwsAt(() => parseImageList('a.jpg 1\nb.jpg 7\n', 'L.txt', 5), /label 7 out of range 0\.\.4/, 'L.txt:2');
  throwsAt(
    () => parseImageList('a.jpg 1\nb.jpg x\n', 'L.txt'),
    /label 'x' is not a non-negative integer/,
    'L.txt:2',
  );
  throwsAt(() => parseImageList('a.jpg 1\nb.jpg -1\n', 'L.txt'), /not a non-negative integer/, 'L.txt:2');
  throwsAt(() => parseImageList('a.jpg 1\nlonely\n', 'L.txt'), /expected 'relative\/path label'/, 'L.txt:2');
  throwsAt(
    () => parseImageList('a.jpg 1\nb.jpg 2\na.jpg 1\n', 'L.txt'),
    /duplicate path 'a\.jpg' \(first on line 1\)/,
    'L.txt:3',
  );
  throwsAt(() => parseImageList('\n\n', 'L.txt'), /no entries/, 'L.txt');
});

test('image list: missing images fail with file and line, or are skipped with a warning', async () => {
  const root = tempDir('list');
  mkdirSync(join(root, 'img'));
  await writePng(join(root, 'img', 'a.png'), 4, 5);
  await writePng(join(root, 'img', 'b.png'), 4, 5, 1);
  const list = join(root, 'train.txt');
  writeFileSync(list, 'img/a.png 0\nimg/gone.png 1\nimg/b.png 1\n');
  throwsAt(() => readImageList(root, list), /image 'img\/gone\.png' not found/, `${list}:2`);
  const warnings: string[] = [];
  const read = readImageList(root, list, { missing: 'skip', warn: (m) => warnings.push(m) });
  assert.equal(read.entries.length, 2);
  assert.equal(read.skipped, 1);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /train\.txt:2: skipping missing image 'img\/gone\.png'/);
  throwsAt(() => readImageList(root, join(root, 'nope.txt')), /list file not found/, 'nope.txt');
  rmSync(root, { recursive: true });
});

test('decoding: PNG pixels arrive exactly, CHW; grayscale becomes 3 channels; center crop', async () => {
  const root = tempDir('decode');
  const file = join(root, 'x.png');
  await writePng(file, 6, 8);
  const chw = await decodeImage(file, { height: 6, width: 8, mode: 'stretch' });
  const src = rgbPixels(6, 8);
  for (let y = 0; y < 6; y++)
    for (let x = 0; x < 8; x++)
      for (let c = 0; c < 3; c++)
        assert.equal(chw[c * 48 + y * 8 + x], src[(y * 8 + x) * 3 + c], `${c},${y},${x}`);
  // Resize(shorter 6) + CenterCrop(4, 4): columns 2..5 of the original, rows 1..4
  const crop = await decodeImage(file, { height: 4, width: 4, resizeShorter: 6 });
  assert.equal(crop[0], src[(1 * 8 + 2) * 3]);
  assert.equal(crop[15], src[(4 * 8 + 5) * 3]);
  const gray = join(root, 'g.png');
  await sharp(Buffer.from([0, 50, 100, 150]), { raw: { width: 2, height: 2, channels: 1 } })
    .png()
    .toFile(gray);
  const g = await decodeImage(gray, { height: 2, width: 2, mode: 'stretch' });
  assert.deepEqual([...g], [0, 50, 100, 150, 0, 50, 100, 150, 0, 50, 100, 150]);
  const jpeg = join(root, 'j.jpg');
  await sharp(rgbPixels(16, 16), { raw: { width: 16, height: 16, channels: 3 } })
    .jpeg({ quality: 95 })
    .toFile(jpeg);
  const j = await decodeImage(jpeg, { height: 16, width: 16, mode: 'stretch' });
  assert.ok(Math.abs(j[16 * 16 + 5]! - 100) <= 6, `green of row 0 is about 100, got ${j[16 * 16 + 5]}`);
  writeFileSync(join(root, 'bad.jpg'), Buffer.from('not an image at all'));
  await assert.rejects(
    decodeImage(join(root, 'bad.jpg'), { height: 2, width: 2 }, 'list.txt', 7),
    (e: unknown) => {
      assert.ok(e instanceof DataFormatError);
      assert.match(e.message, /^list\.txt:7: cannot decode image/);
      return true;
    },
  );
  rmSync(root, { recursive: true });
});

test('class-per-folder layout and lazy batches decode the right images', async () => {
  const root = tempDir('folder');
  for (const [k, cls] of ['zebra', 'ant', 'mole'].entries()) {
    mkdirSync(join(root, cls));
    for (let i = 0; i < 3; i++) await writePng(join(root, cls, `${i}.png`), 4, 4, 40 * k + i);
  }
  writeFileSync(join(root, 'ant', 'notes.txt'), 'not an image');
  const list = readImageFolder(root);
  assert.deepEqual(list.classNames, ['ant', 'mole', 'zebra']);
  assert.equal(list.entries.length, 9);
  assert.deepEqual(
    list.entries.map((e) => e.label),
    [0, 0, 0, 1, 1, 1, 2, 2, 2],
  );
  const ds = new LazyImageDataset(list, { height: 4, width: 4, mode: 'stretch' });
  const seen: number[] = [];
  for await (const batch of iterateBatchesAsync(ds, { batchSize: 4, seed: 1 })) {
    assert.deepEqual(batch.shape, [3, 4, 4]);
    for (let k = 0; k < batch.n; k++) {
      const i = batch.indices[k]!;
      seen.push(i);
      assert.equal(batch.y[k], ds.labels[i]);
      // pixel (0,0) red = shift = 40 * (folder index in ['zebra','ant','mole']) + file index
      const e = list.entries[i]!;
      const shift =
        40 * ['zebra', 'ant', 'mole'].indexOf(e.path.split('/')[0]!) + Number(e.path.split('/')[1]![0]);
      assert.ok(Math.abs(batch.x[k * 48]! - shift / 255) < 1e-6);
    }
  }
  assert.deepEqual(
    seen.sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8],
  );
  mkdirSync(join(root, 'empty'));
  throwsAt(() => readImageFolder(root), /class folder 'empty' has no images/, 'empty');
  rmSync(root, { recursive: true });
});
