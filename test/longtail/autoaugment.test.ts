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
  autoAugmentMagnitude,
  SIGNED_OPS,
  type AutoAugmentOp,
} from '../../src/longtail/data/autoaugment.js';
import type { ByteImage } from '../../src/longtail/data/pil-ops.js';
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
