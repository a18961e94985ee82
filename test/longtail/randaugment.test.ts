// RandAugment as BalPoE's long-training image-list recipe runs it: every operation against Pillow
// 9.4 (test/golden/longtail/randaugment.json, from scripts/golden/randaugment.py) pixel for pixel,
// at the magnitudes, signs and filters the recipe draws, and the recipe's draws (which operations,
// how often they fire, the clipped magnitude noise, signs and filters) against their distribution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  applyRandAugment,
  applyRandAugmentOp,
  BALPOE_RAND_AUGMENT,
  drawRandAugment,
  RAND_AUGMENT_GEOMETRIC,
  RAND_AUGMENT_OPS,
  RAND_AUGMENT_POINTWISE,
  randAugment,
  randAugmentArg,
  type RandAugmentOp,
} from '../../src/longtail/data/randaugment.js';
import type { Resample } from '../../src/longtail/data/pil-affine.js';
import type { ByteImage } from '../../src/longtail/data/pil-ops.js';
import { Rng } from '../../src/util/rng.js';
import { goldenDir } from '../helpers.js';

interface GoldenCase {
  image: string;
  op: RandAugmentOp;
  magnitude: number;
  arg: number | null;
  sign?: 1 | -1;
  resample?: Resample;
  out?: string;
  sha256?: string;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'longtail', 'randaugment.json'), 'utf8')) as {
  fill: number[];
  images: Record<string, { h: number; w: number; data: string }>;
  cases: GoldenCase[];
};
const images: Record<string, ByteImage> = Object.fromEntries(
  Object.entries(golden.images).map(([name, im]) => [
    name,
    { data: new Uint8Array(Buffer.from(im.data, 'base64')), h: im.h, w: im.w },
  ]),
);

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

const label = (c: GoldenCase) =>
  `${c.op} m ${c.magnitude}${c.sign ? ` sign ${c.sign} ${c.resample}` : ''} on ${c.image}`;

test('RandAugment golden: every operation at the recipe magnitudes, signs and filters equals Pillow pixel for pixel', () => {
  assert.deepEqual([...BALPOE_RAND_AUGMENT.fill], golden.fill);
  const seen = new Set<string>();
  const failures: string[] = [];
  for (const c of golden.cases) {
    seen.add(`${c.op} ${c.resample ?? ''}`);
    assert.equal(randAugmentArg(c.op, c.magnitude, c.sign ?? 1), c.arg ?? 0, `${label(c)}: argument`);
    const draw = {
      op: c.op,
      fired: true,
      magnitude: c.magnitude,
      ...(c.sign ? { sign: c.sign, resample: c.resample! } : {}),
    };
    const img = images[c.image]!;
    const before = img.data.slice();
    const out = applyRandAugmentOp(img, draw);
    assert.deepEqual(img.data, before, `${label(c)}: the input is left alone`);
    assert.equal(out.h, img.h);
    assert.equal(out.w, img.w);
    // the image-list loader's way: into a reused buffer holding another image's bytes, and for
    // the pointwise operations over the input itself
    const reused = new Uint8Array(img.data.length).fill(77);
    assert.equal(applyRandAugmentOp(img, draw, BALPOE_RAND_AUGMENT, reused).data, reused);
    if (!sameBytes(reused, out.data)) failures.push(`${label(c)}: into a reused buffer differs`);
    const own = img.data.slice();
    if (RAND_AUGMENT_POINTWISE.has(c.op)) {
      applyRandAugmentOp({ data: own, h: img.h, w: img.w }, draw, BALPOE_RAND_AUGMENT, own);
      if (!sameBytes(own, out.data)) failures.push(`${label(c)}: in place differs`);
    } else
      assert.throws(
        () => applyRandAugmentOp({ data: own, h: img.h, w: img.w }, draw, BALPOE_RAND_AUGMENT, own),
        /cannot write over its input/,
      );
    if (c.sha256) {
      if (createHash('sha256').update(out.data).digest('hex') !== c.sha256)
        failures.push(`${label(c)}: digest differs`);
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
  // every operation, and both filters of every geometric one, was checked
  for (const op of RAND_AUGMENT_OPS) {
    if (RAND_AUGMENT_GEOMETRIC.has(op))
      for (const r of ['bilinear', 'bicubic']) assert.ok(seen.has(`${op} ${r}`), op);
    else assert.ok(seen.has(`${op} `), op);
  }
});

/** Standard normal CDF (Abramowitz-Stegun 7.1.26 erf, |error| < 1.5e-7). */
function phi(z: number): number {
  const t = 1 / (1 + 0.3275911 * (Math.abs(z) / Math.SQRT2));
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(z * z) / 2);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

test('RandAugment draws: two operations uniformly with replacement, each applied half the time, magnitude N(10, 0.5) clipped at 10, even signs and filters', () => {
  const n = 30000;
  const rng = new Rng(17);
  const K = RAND_AUGMENT_OPS.length;
  const chosen = new Map<RandAugmentOp, number>(RAND_AUGMENT_OPS.map((op) => [op, 0]));
  let ops = 0;
  let fired = 0;
  let repeated = 0;
  let atMax = 0;
  let below = 0;
  let belowSum = 0;
  let belowSq = 0;
  let under9 = 0;
  let geometric = 0;
  let negative = 0;
  let bicubic = 0;
  for (let k = 0; k < n; k++) {
    const draws = drawRandAugment(rng);
    assert.equal(draws.length, 2);
    if (draws[0]!.op === draws[1]!.op) repeated++;
    for (const d of draws) {
      ops++;
      chosen.set(d.op, chosen.get(d.op)! + 1);
      const isGeometric = RAND_AUGMENT_GEOMETRIC.has(d.op);
      if (!d.fired) {
        assert.equal(d.magnitude, undefined);
        assert.equal(d.sign, undefined);
        continue;
      }
      fired++;
      const m = d.magnitude!;
      assert.ok(m >= 0 && m <= 10, `magnitude ${m}`);
      if (m === 10) atMax++;
      else {
        below++;
        belowSum += m;
        belowSq += m * m;
        if (m < 9) under9++;
      }
      assert.equal(d.sign !== undefined, isGeometric, d.op);
      assert.equal(d.resample !== undefined, isGeometric, d.op);
      if (isGeometric) {
        geometric++;
        if (d.sign === -1) negative++;
        if (d.resample === 'bicubic') bicubic++;
      }
    }
  }
  // five standard deviations: a fair implementation fails one of these ~1e-5 of the time; a
  // weighted choice, one without replacement, a firing probability other than 0.5, no noise or
  // no clipping, a one-sided sign or a single filter fails
  const within = (count: number, trials: number, p: number, what: string) =>
    assert.ok(
      Math.abs(count - trials * p) < 5 * Math.sqrt(trials * p * (1 - p)),
      `${what}: ${count} of ${trials}, expected p ${p.toFixed(4)}`,
    );
  for (const [op, count] of chosen) within(count, ops, 1 / K, op);
  within(repeated, n, 1 / K, 'the same operation twice');
  within(fired, ops, 0.5, 'fired');
  within(atMax, fired, 0.5, 'magnitude clipped to 10');
  within(under9, below, 2 * phi(-2), 'magnitude below 9 (2 sd) among those below 10');
  // below 10: the lower half of N(10, 0.5), mean 10 - 0.5 sqrt(2 / pi), sd 0.5 sqrt(1 - 2 / pi)
  const mean = belowSum / below;
  const sd = Math.sqrt(belowSq / below - mean * mean);
  const wantMean = 10 - 0.5 * Math.sqrt(2 / Math.PI);
  const wantSd = 0.5 * Math.sqrt(1 - 2 / Math.PI);
  assert.ok(Math.abs(mean - wantMean) < 5 * (wantSd / Math.sqrt(below)), `mean below 10 ${mean}`);
  assert.ok(Math.abs(sd - wantSd) < 0.01, `sd below 10 ${sd}`);
  within(negative, geometric, 0.5, 'negative signs');
  within(bicubic, geometric, 0.5, 'bicubic filters');
});

/** A small noise image. */
function noise(h: number, w: number, seed: number): ByteImage {
  const rng = new Rng(seed);
  return { data: Uint8Array.from({ length: 3 * h * w }, () => rng.int(256)), h, w };
}

test('RandAugment: an image is its draws applied in order; the same seed gives the same images and a restored generator state continues them', () => {
  const img = noise(24, 20, 3);
  const rng = new Rng(4);
  let changed = 0;
  for (let k = 0; k < 60; k++) {
    const { img: out, draws } = randAugment(img, rng);
    let want = img;
    for (const d of draws) want = applyRandAugmentOp(want, d);
    assert.deepEqual(out.data, want.data, `draw ${k}`);
    assert.deepEqual(applyRandAugment(img, draws).data, want.data);
    // with a scratch buffer: both buffers overwritten, the same pixels in one of them
    const own = { data: img.data.slice(), h: img.h, w: img.w };
    const scratch = new Uint8Array(img.data.length).fill(3);
    const viaScratch = applyRandAugment(own, draws, BALPOE_RAND_AUGMENT, scratch);
    assert.ok(viaScratch.data === own.data || viaScratch.data === scratch);
    assert.deepEqual(viaScratch.data, want.data, `draw ${k} with a scratch buffer`);
    if (draws.some((d) => d.fired)) changed++;
    else assert.equal(out, img, 'nothing fired: the image itself');
  }
  // P(neither fires) = 1/4
  assert.ok(changed > 30 && changed < 58, `${changed} of 60 changed`);
  const run = (r: Rng, count: number) => Array.from({ length: count }, () => randAugment(img, r).img.data);
  const a = new Rng(9);
  const first = run(a, 20);
  const state = a.state();
  const rest = run(a, 20);
  assert.deepEqual(run(new Rng(9), 20), first);
  assert.deepEqual(run(new Rng(state), 20), rest);
  const other = run(new Rng(10), 20);
  assert.ok(
    other.some((x, i) => !x.every((v, p) => v === first[i]![p])),
    'another seed gives other images',
  );
});

test('RandAugment: the table operations give the same pixels from and into arrays at any byte offset', () => {
  const base = noise(9, 13, 5);
  const n = base.data.length;
  for (const op of RAND_AUGMENT_POINTWISE) {
    const draw = { op, fired: true, magnitude: 7 };
    const want = applyRandAugmentOp(base, draw).data;
    for (let from = 0; from < 4; from++)
      for (let to = 0; to < 4; to++) {
        const data = new Uint8Array(n + 4).subarray(from, from + n);
        data.set(base.data);
        const into = new Uint8Array(n + 4).subarray(to, to + n);
        const out = applyRandAugmentOp({ data, h: base.h, w: base.w }, draw, BALPOE_RAND_AUGMENT, into);
        assert.deepEqual(out.data, want, `${op} from offset ${from} into offset ${to}`);
      }
  }
});
