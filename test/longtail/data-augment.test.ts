import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import {
  centerCrop,
  compose,
  cropPadded,
  horizontalFlip,
  randomCrop,
  randomResizedCrop,
  randomResizedCropBox,
  resizedCrop,
  rotate,
  rotation,
  type ImageView,
} from '../../src/longtail/data/augment.js';
import {
  adjustHue,
  blur,
  colorJitter,
  gaussianBlur,
  grayscale,
  normalize,
} from '../../src/longtail/data/augment-color.js';
import { testTimeViewTransform, testTransform, trainTransform } from '../../src/longtail/data/pipelines.js';
import { assertClose } from '../helpers.js';

function image(
  c: number,
  h: number,
  w: number,
  f = (k: number, y: number, x: number) => (k * 100 + y * 10 + x) / 1000,
): ImageView {
  const data = new Float32Array(c * h * w);
  for (let k = 0; k < c; k++)
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data[k * h * w + y * w + x] = f(k, y, x);
  return { data, c, h, w };
}
const at = (img: ImageView, k: number, y: number, x: number): number =>
  img.data[k * img.h * img.w + y * img.w + x]!;
const copy = (img: ImageView): ImageView => ({ ...img, data: Float32Array.from(img.data) });

test('random crop with padding is a shifted window with zeros outside', () => {
  const img = image(3, 8, 8);
  const shifted = cropPadded(img, -2, 3, 8, 8);
  assert.equal(at(shifted, 0, 0, 0), 0);
  assert.equal(at(shifted, 1, 2, 0), at(img, 1, 0, 3));
  assert.equal(at(shifted, 2, 7, 4), at(img, 2, 5, 7));
  assert.equal(at(shifted, 2, 7, 5), 0);
  const rng = new Rng(1);
  const offsets = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const out = randomCrop(8, 8, 4)(copy(img), rng);
    assert.equal(out.data.length, 192);
    // locate the shift from where pixel (0,0) value landed (or infer from zeros)
    let found = '';
    for (let y = 0; y < 8 && !found; y++)
      for (let x = 0; x < 8; x++) if (at(out, 1, y, x) === at(img, 1, 0, 0)) found = `${y},${x}`;
    offsets.add(found);
  }
  // all 9 x 9 offsets of a 4-pixel padding occur; 25 of them keep pixel (0,0) inside the crop
  assert.ok(offsets.size >= 25, `only ${offsets.size} distinct placements`);
});

test('horizontal flip mirrors every row; p = 0 leaves the image alone', () => {
  const img = image(2, 3, 5);
  const flipped = horizontalFlip(1)(copy(img), new Rng(0));
  for (let y = 0; y < 3; y++)
    for (let x = 0; x < 5; x++) assert.equal(at(flipped, 1, y, x), at(img, 1, y, 4 - x));
  assert.deepEqual(horizontalFlip(0)(copy(img), new Rng(0)).data, img.data);
});

test('rotation: 0 degrees is the identity, 90 degrees maps rows to columns, corners fill', () => {
  const img = image(1, 5, 5);
  assertClose(rotate(img, 0).data, img.data, 0);
  const r = rotate(img, Math.PI / 2);
  // counter-clockwise: the top row ends up as the left column, read bottom to top
  for (let x = 0; x < 5; x++) assert.ok(Math.abs(at(r, 0, 4 - x, 0) - at(img, 0, 0, x)) < 1e-6);
  const r45 = rotate(
    image(1, 9, 9, () => 1),
    Math.PI / 4,
    'bilinear',
  );
  assert.equal(at(r45, 0, 0, 0), 0);
  assert.equal(at(r45, 0, 4, 4), 1);
  const out = rotation(15)(copy(img), new Rng(3));
  assert.equal(out.data.length, 25);
});

test('RandomResizedCrop: boxes inside the image with area and aspect in range; full box is the identity', () => {
  const rng = new Rng(5);
  for (let i = 0; i < 200; i++) {
    const b = randomResizedCropBox(32, 48, rng);
    assert.ok(b.top >= 0 && b.left >= 0 && b.top + b.height <= 32 && b.left + b.width <= 48);
    assert.ok(b.height * b.width >= 0.08 * 32 * 48 * 0.8);
  }
  const img = image(3, 6, 6);
  assertClose(resizedCrop(img, 0, 0, 6, 6, 6, 6).data, img.data, 1e-6);
  const up = resizedCrop(
    image(1, 2, 2, (_, y, x) => y * 2 + x),
    0,
    0,
    2,
    2,
    4,
    4,
  );
  assert.deepEqual([...up.data.subarray(0, 4)], [0, 0.25, 0.75, 1]);
  const out = randomResizedCrop(10)(image(3, 20, 30), new Rng(2));
  assert.deepEqual([out.c, out.h, out.w], [3, 10, 10]);
  // a 10:1 strip cannot meet the aspect range: the central fallback crop
  const strip = randomResizedCropBox(2, 200, new Rng(1), [0.99, 1], [3 / 4, 4 / 3]);
  assert.deepEqual(strip, { top: 0, left: 98, height: 2, width: 3 });
  assert.deepEqual(centerCrop(4)(image(1, 6, 6), new Rng(0)).data[0], at(image(1, 6, 6), 0, 1, 1));
});

test('color: zero jitter is the identity, grayscale equalizes channels, hue 1/3 turns red into green', () => {
  const img = image(3, 4, 4, (k, y, x) => 0.1 + 0.2 * k + 0.01 * (y + x));
  assertClose(colorJitter()(copy(img), new Rng(1)).data, img.data, 0);
  const j = colorJitter(0.4, 0.4, 0.4, 0.1)(copy(img), new Rng(1));
  assert.notDeepEqual(j.data, img.data);
  for (const v of j.data) assert.ok(v >= 0 && v <= 1);
  const g = grayscale(1)(copy(img), new Rng(0));
  assert.equal(at(g, 0, 1, 2), at(g, 2, 1, 2));
  assert.ok(Math.abs(at(g, 1, 0, 0) - (0.299 * 0.1 + 0.587 * 0.3 + 0.114 * 0.5)) < 1e-6);
  const red = image(3, 1, 1, (k) => (k === 0 ? 1 : 0));
  adjustHue(red, 1 / 3);
  assertClose(red.data, [0, 1, 0], 1e-6);
});

test('gaussian blur keeps constants and mass; normalize standardizes', () => {
  const flat = image(3, 8, 8, () => 0.5);
  assertClose(gaussianBlur()(flat, new Rng(0)).data, new Float32Array(192).fill(0.5), 1e-6);
  const dot = image(1, 15, 15, (_, y, x) => (y === 7 && x === 7 ? 1 : 0));
  const b = blur(dot, 1);
  assert.ok(Math.abs(b.data.reduce((s, v) => s + v, 0) - 1) < 1e-5);
  assert.ok(at(b, 0, 7, 7) < 0.2 && at(b, 0, 7, 8) > 0.05);
  const n = normalize([0.5, 0.25, 0], [0.5, 0.25, 2])(
    image(3, 1, 1, () => 1),
    new Rng(0),
  );
  assertClose(n.data, [1, 3, 0.5], 1e-6);
  assert.throws(() => normalize([0], [1])(image(3, 1, 1), new Rng(0)), /1 means/);
});

test('pipelines are seeded; the test transform has no randomness', () => {
  const img = image(3, 32, 32, (k, y, x) => ((k * 7 + y * 3 + x) % 17) / 17);
  const t = trainTransform('cifar', { rotationDegrees: 15 });
  assert.deepEqual(t(copy(img), new Rng(9)).data, t(copy(img), new Rng(9)).data);
  assert.notDeepEqual(t(copy(img), new Rng(9)).data, t(copy(img), new Rng(10)).data);
  const test = testTransform('cifar');
  assert.deepEqual(test(copy(img), new Rng(1)).data, test(copy(img), new Rng(2)).data);
  assert.ok(Math.abs(test(copy(img), new Rng(1)).data[0]! - (0 - 0.4914) / 0.2023) < 1e-6);
  const v = testTimeViewTransform('cifar');
  assert.notDeepEqual(v(copy(img), new Rng(1)).data, v(copy(img), new Rng(2)).data);
  const big = trainTransform('imagenet', { size: 16 })(image(3, 24, 24), new Rng(0));
  assert.deepEqual([big.c, big.h, big.w], [3, 16, 16]);
  assert.equal(compose()(img, new Rng(0)), img);
});

test('gaussian blur matches a direct 2-D convolution with reflected edges', () => {
  const rng = new Rng(4);
  const img = image(2, 5, 7, () => rng.uniform());
  const sigma = 1.3;
  const radius = Math.ceil(3 * sigma);
  const g = (k: number): number => Math.exp((-k * k) / (2 * sigma * sigma));
  let norm = 0;
  for (let k = -radius; k <= radius; k++) norm += g(k);
  const refl = (i: number, n: number): number => {
    while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
    return i;
  };
  const expected: number[] = [];
  for (let c = 0; c < 2; c++)
    for (let y = 0; y < 5; y++)
      for (let x = 0; x < 7; x++) {
        let v = 0;
        for (let a = -radius; a <= radius; a++)
          for (let b = -radius; b <= radius; b++)
            v += (g(a) * g(b) * at(img, c, refl(y + a, 5), refl(x + b, 7))) / (norm * norm);
        expected.push(v);
      }
  assertClose(blur(copy(img), sigma).data, expected, 1e-5);
});
