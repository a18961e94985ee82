import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { hungarian, matchPeaks } from '../../src/nmr/eval/hungarian.js';
import {
  addCounts,
  emptyCounts,
  operatingPoints,
  prAuc,
  recallAtFalseRate,
  sweepSpectrum,
} from '../../src/nmr/eval/operating.js';
import type { MetricContext } from '../../src/nmr/eval/metrics.js';

/** Narrow Lorentzians (FWHM 3 points) on a zero baseline: every line is its own local maximum. */
function lines(n: number, peaks: { at: number; h: number }[]): Float64Array {
  return Float64Array.from({ length: n }, (_, i) =>
    peaks.reduce((a, p) => a + p.h / (1 + ((i - p.at) / 1.5) ** 2), 0),
  );
}

const TRUE_PEAKS = [
  { at: 100, h: 4 },
  { at: 200, h: 8 },
  { at: 300, h: 20 },
  { at: 400, h: 30 },
];
const THRESHOLDS = [1, 3, 5, 7, 10];

function context(truth: Float64Array): MetricContext {
  return { truth, sigmaIn: 1, hzPerPoint: 1, peakMask: [], baselineMask: [], multiplets: [] };
}

test('sweepSpectrum counts true, weak and false peaks at each threshold of a known spectrum', () => {
  const truth = lines(512, TRUE_PEAKS);
  // Two false lines (2 and 6 sigma) far from every true one.
  const y = lines(512, [...TRUE_PEAKS, { at: 40, h: 2 }, { at: 470, h: 6 }]);
  const c = sweepSpectrum(y, context(truth), THRESHOLDS);
  assert.equal(c.nTrue, 4);
  assert.equal(c.nWeak, 1);
  assert.deepEqual(c.tp, [4, 4, 3, 3, 2]);
  assert.deepEqual(c.fp, [2, 1, 1, 0, 0]);
  assert.deepEqual(c.tpWeak, [1, 1, 0, 0, 0]);
  // Average precision, highest threshold first: 0.5 x 1 + 0.25 x 1 + 0.25 x 0.8.
  assert.ok(Math.abs(prAuc(c) - 0.95) < 1e-12);
  // One false peak per spectrum is first reached at 3 sigma, where every true peak is found.
  const at1 = recallAtFalseRate(c, THRESHOLDS, 1);
  assert.deepEqual([at1.recall, at1.recallWeak, at1.threshold, at1.bound], [1, 1, 3, '']);
  // 0.2 lies between 1 (at 5 sigma) and 0 (at 7 sigma): interpolated 80 % of the way.
  const at02 = recallAtFalseRate(c, THRESHOLDS, 0.2);
  assert.ok(Math.abs(at02.threshold - 6.6) < 1e-12);
  assert.equal(at02.recall, 0.75);
  assert.equal(at02.recallWeak, 0);
  // Tuned on itself, the best F1 is at 3 sigma: precision 0.8, recall 1.
  const op = operatingPoints(c, c, THRESHOLDS);
  assert.equal(op.tuned!.threshold, 3);
  assert.ok(Math.abs(op.tuned!.f1 - 8 / 9) < 1e-12);
  assert.deepEqual(op.falsePerSpectrum, [2, 1, 1, 0, 0]);
  assert.deepEqual(op.precision, [4 / 6, 4 / 5, 3 / 4, 1, 1]);
  assert.deepEqual(op.recall, [1, 1, 0.75, 0.75, 0.5]);
});

test('pooled counts give false peaks per spectrum; an output with none is a lower bound', () => {
  const truth = lines(512, TRUE_PEAKS);
  const y = lines(512, [...TRUE_PEAKS, { at: 40, h: 2 }, { at: 470, h: 6 }]);
  const one = sweepSpectrum(y, context(truth), THRESHOLDS);
  const clean = sweepSpectrum(truth, context(truth), THRESHOLDS);
  const pooled = addCounts(addCounts(emptyCounts(THRESHOLDS.length), one), clean);
  assert.equal(pooled.spectra, 2);
  const op = operatingPoints(pooled, null, THRESHOLDS);
  assert.deepEqual(op.falsePerSpectrum, [1, 0.5, 0.5, 0, 0]);
  assert.equal(op.tuned, null);
  // The truth itself picks no false peak even at the lowest threshold.
  const perfect = recallAtFalseRate(clean, THRESHOLDS, 1);
  assert.equal(perfect.bound, '>');
  assert.equal(perfect.recall, 1);
  assert.equal(prAuc(clean), 1);
});

test('matchPeaks by connected groups finds as many pairs as one assignment over all peaks', () => {
  const rng = new Rng(4);
  for (let trial = 0; trial < 200; trial++) {
    const pred = Array.from({ length: 1 + rng.int(30) }, () => rng.uniform() * 100);
    const truth = Array.from({ length: 1 + rng.int(12) }, () => rng.uniform() * 100);
    const tol = truth.map(() => 0.5 + 3 * rng.uniform());
    const BIG = 1e12;
    const cost = pred.map((p) => truth.map((t, j) => (Math.abs(p - t) <= tol[j]! ? Math.abs(p - t) : BIG)));
    const full = hungarian(cost).filter((j, i) => j >= 0 && cost[i]![j]! < BIG).length;
    const pairs = matchPeaks(pred, truth, tol);
    assert.equal(pairs.length, full, `trial ${trial}`);
    assert.equal(new Set(pairs.map((p) => p[1])).size, pairs.length, 'one to one');
    for (const [i, j] of pairs) assert.ok(Math.abs(pred[i]! - truth[j]!) <= tol[j]!);
  }
});
