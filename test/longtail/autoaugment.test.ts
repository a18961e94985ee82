// AutoAugment's operations against Pillow 9.4 (test/golden/longtail/autoaugment.json, from
// scripts/golden/autoaugment.py): every operation of the reference's SubPolicy at several levels
// and both signs, pixel for pixel, and the CIFAR-10 policy's draws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  applyAutoAugmentOp,
  applyPolicy,
  autoAugmentMagnitude,
  CIFAR10_POLICY,
  cifar10Policy,
  SIGNED_OPS,
  type AutoAugmentOp,
} from '../../src/longtail/data/autoaugment.js';
import type { ImageView } from '../../src/longtail/data/augment.js';
import type { ByteImage } from '../../src/longtail/data/pil-ops.js';
import { Rng } from '../../src/util/rng.js';
import { goldenDir } from '../helpers.js';

interface GoldenCase {
  image: string;
  op: AutoAugmentOp;
  level: number | null;
  magnitude: number;
  sign?: 1 | -1;
  out?: string;
  sha256?: string;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'longtail', 'autoaugment.json'), 'utf8')) as {
  images: Record<string, { h: number; w: number; data: string }>;
  cases: GoldenCase[];
};
const images: Record<string, ByteImage> = Object.fromEntries(
  Object.entries(golden.images).map(([name, im]) => [
    name,
    { data: new Uint8Array(Buffer.from(im.data, 'base64')), h: im.h, w: im.w },
  ]),
);

function label(c: GoldenCase): string {
  return `${c.op} ${c.level === null ? `${c.magnitude} deg` : `level ${c.level}`}${c.sign ? ` sign ${c.sign}` : ''} on ${c.image}`;
}

test('AutoAugment golden: every operation equals Pillow pixel for pixel', () => {
  const failures: string[] = [];
  for (const c of golden.cases) {
    if (c.level !== null)
      assert.equal(autoAugmentMagnitude(c.op, c.level), c.magnitude, `${label(c)}: magnitude`);
    assert.equal(SIGNED_OPS.has(c.op), c.sign !== undefined, `${label(c)}: signed`);
    const out = applyAutoAugmentOp(images[c.image]!, c.op, c.magnitude, c.sign ?? 1);
    if (c.sha256) {
      const digest = createHash('sha256').update(out.data).digest('hex');
      if (digest !== c.sha256) failures.push(`${label(c)}: digest differs`);
      continue;
    }
    const want = Buffer.from(c.out!, 'base64');
    let diff = 0;
    let max = 0;
    for (let p = 0; p < want.length; p++) {
      const d = Math.abs(want[p]! - out.data[p]!);
      if (d) diff++;
      max = Math.max(max, d);
    }
    if (diff) failures.push(`${label(c)}: ${diff} of ${want.length} values differ, by up to ${max}`);
  }
  assert.deepEqual(failures, []);
});

/** A small noise image (the policy's statistics do not depend on the size). */
function noise(h: number, w: number, seed: number): ByteImage {
  const rng = new Rng(seed);
  return { data: Uint8Array.from({ length: 3 * h * w }, () => rng.int(256)), h, w };
}

test('CIFAR-10 policy draws: each sub-policy about 1/25 of the time, each operation with its probability, signs even', () => {
  const n = 20000;
  const rng = new Rng(11);
  const img = noise(8, 8, 1);
  const chosen = new Array<number>(25).fill(0);
  const fired = CIFAR10_POLICY.map(() => [0, 0]);
  let signed = 0;
  let negative = 0;
  for (let k = 0; k < n; k++) {
    const { draw } = applyPolicy(img, rng);
    chosen[draw.index]!++;
    for (const j of [0, 1] as const) {
      if (draw.fired[j]) fired[draw.index]![j]!++;
      if (draw.signs[j] !== 0) {
        signed++;
        if (draw.signs[j] === -1) negative++;
      }
    }
  }
  // five standard deviations: a fair implementation fails one of these ~1e-5 of the time, a wrong
  // probability (1 - p, a fixed sub-policy, a sign always +) fails them all the time
  const p = 1 / 25;
  const sdCount = Math.sqrt(n * p * (1 - p));
  chosen.forEach((count, i) =>
    assert.ok(Math.abs(count - n * p) < 5 * sdCount, `sub-policy ${i}: ${count} of ${n}`),
  );
  CIFAR10_POLICY.forEach((s, i) => {
    const m = chosen[i]!;
    [s.p1, s.p2].forEach((prob, j) => {
      const rate = fired[i]![j]! / m;
      const bound = 5 * Math.sqrt((prob * (1 - prob)) / m) + 1e-12;
      assert.ok(
        Math.abs(rate - prob) <= bound,
        `sub-policy ${i} op ${j + 1}: fired ${rate.toFixed(3)}, p ${prob}`,
      );
    });
  });
  assert.ok(
    Math.abs(negative / signed - 0.5) < 5 * Math.sqrt(0.25 / signed),
    `${negative} of ${signed} signs negative`,
  );
});

test('CIFAR-10 policy: a draw is the recorded operations applied in order; the same seed gives the same images, and a restored generator state continues them', () => {
  const img = noise(32, 32, 2);
  const rng = new Rng(5);
  for (let k = 0; k < 200; k++) {
    const { img: out, draw } = applyPolicy(img, rng);
    const s = CIFAR10_POLICY[draw.index]!;
    let want = img;
    const ops = [
      [s.op1, s.level1],
      [s.op2, s.level2],
    ] as const;
    ops.forEach(([op, level], j) => {
      if (draw.fired[j])
        want = applyAutoAugmentOp(want, op, autoAugmentMagnitude(op, level), draw.signs[j] === -1 ? -1 : 1);
    });
    assert.deepEqual(out.data, want.data, `draw ${k}`);
  }
  const float: ImageView = { data: Float32Array.from(img.data, (v) => v * (1 / 255)), c: 3, h: 32, w: 32 };
  const run = (r: Rng, count: number) =>
    Array.from({ length: count }, () => cifar10Policy()({ ...float, data: float.data.slice() }, r).data);
  const a = new Rng(9);
  const first = run(a, 40);
  const state = a.state();
  const rest = run(a, 40);
  assert.deepEqual(run(new Rng(9), 40), first);
  assert.deepEqual(run(new Rng(state), 40), rest);
  const other = run(new Rng(10), 40);
  assert.ok(
    other.some((x, i) => !x.every((v, p) => v === first[i]![p])),
    'another seed gives other images',
  );
  // every output is an 8-bit image again, converted as the batch builder converts bytes
  for (const x of [...first, ...rest])
    assert.ok(x.every((v) => Math.fround(Math.round(v * 255) * (1 / 255)) === v));
});
