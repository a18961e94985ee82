import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { npmDataDir } from '../helpers.js';
import { Rng } from '../../src/util/rng.js';
import { hungarian, matchPeaks } from '../../src/nmr/eval/hungarian.js';
import { fwhmAt, integral, pickPeaks } from '../../src/nmr/eval/peaks.js';
import { computeMetrics, type MetricContext } from '../../src/nmr/eval/metrics.js';
import { dwtStep, idwtStep, lowPass, waveletDenoise } from '../../src/nmr/eval/wavelet.js';
import { lorentzianSmooth, matchedFilter } from '../../src/nmr/eval/baselines.js';
import { savitzkyGolay } from '../../src/nmr/pipeline/savgol.js';

function lorentz(n: number, peaks: { at: number; h: number; w: number }[]): Float64Array {
  const x = new Float64Array(n);
  for (const p of peaks) for (let i = 0; i < n; i++) x[i]! += p.h / (1 + ((i - p.at) / (p.w / 2)) ** 2);
  return x;
}

function bruteForce(cost: number[][]): number {
  const rows = cost.length;
  const cols = cost[0]!.length;
  let best = Infinity;
  const used = new Array<boolean>(cols).fill(false);
  const go = (i: number, acc: number, assigned: number): void => {
    if (i === rows) {
      if (assigned === Math.min(rows, cols)) best = Math.min(best, acc);
      return;
    }
    if (rows > cols) go(i + 1, acc, assigned); // row i left out
    for (let j = 0; j < cols; j++) {
      if (used[j]) continue;
      used[j] = true;
      go(i + 1, acc + cost[i]![j]!, assigned + 1);
      used[j] = false;
    }
  };
  go(0, 0, 0);
  return best;
}

test('Hungarian assignment equals brute force on random square and rectangular matrices', () => {
  const rng = new Rng(1);
  for (const [r, c] of [
    [4, 4],
    [3, 6],
    [6, 3],
    [5, 5],
  ] as const) {
    for (let t = 0; t < 10; t++) {
      const cost = Array.from({ length: r }, () =>
        Array.from({ length: c }, () => Math.round(rng.uniform() * 100)),
      );
      const a = hungarian(cost);
      const total = a.reduce((s, j, i) => s + (j >= 0 ? cost[i]![j]! : 0), 0);
      assert.equal(new Set(a.filter((j) => j >= 0)).size, Math.min(r, c), 'one to one');
      assert.equal(total, bruteForce(cost), `matrix ${r}x${c} #${t}`);
    }
  }
});

test('peak matching respects the tolerance and prefers the globally best pairing', () => {
  // Greedy nearest-first would pair pred 10.4 with true 10 and leave pred 9.3 unmatched.
  const pairs = matchPeaks([9.3, 10.4], [10, 11], [1, 1]);
  assert.equal(pairs.length, 2);
  assert.deepEqual(matchPeaks([0, 50], [10], [2]), []);
});

test('peak picking, FWHM and integral of Lorentzian lines', () => {
  const x = lorentz(2000, [
    { at: 500.3, h: 1, w: 8 },
    { at: 1400.7, h: 0.5, w: 20 },
  ]);
  const peaks = pickPeaks(x, 0.1);
  assert.equal(peaks.length, 2);
  assert.ok(Math.abs(peaks[0]!.index - 500.3) < 0.05);
  assert.ok(Math.abs(peaks[1]!.index - 1400.7) < 0.05);
  // Linear interpolation of the half-height crossing reads ~1 % wide for 8-point lines.
  assert.ok(Math.abs(fwhmAt(x, 500) - 8) < 0.15);
  assert.ok(Math.abs(fwhmAt(x, 1401) - 20) < 0.15);
  // Area of a Lorentzian h * pi * w / 2 (the window misses the far tails).
  assert.ok(Math.abs(integral(x, 0, 999) - (Math.PI * 8) / 2) < 0.05);
});

function context(truth: Float64Array, sigmaIn: number): MetricContext {
  const peakMask = truth.map((v) => (v > 0.02 ? 1 : 0));
  return {
    truth,
    sigmaIn,
    hzPerPoint: 0.5,
    peakMask,
    baselineMask: peakMask.map((v) => 1 - v),
    multiplets: [{ from: 480, to: 520 }],
  };
}

test('metrics: a perfect output, a noisy output and a hallucinated peak', () => {
  const truth = lorentz(4096, [
    { at: 500, h: 1, w: 6 },
    { at: 1000, h: 0.5, w: 6 },
    { at: 2000, h: 0.2, w: 6 },
  ]);
  const perfect = computeMetrics(truth, context(truth, 0.01));
  assert.equal(perfect.peak_f1, 1);
  assert.equal(perfect.energy_snr_db, Infinity);
  assert.equal(perfect.integral_rel_error, 0);
  assert.equal(perfect.fwhm_rel_error, 0);
  const rng = new Rng(3);
  const noisy = truth.map((v) => v + 0.01 * rng.normal());
  const m = computeMetrics(noisy, context(truth, 0.01));
  const expectedSnr = 10 * Math.log10(truth.reduce((a, v) => a + v * v, 0) / (4096 * 1e-4));
  assert.ok(Math.abs(m.energy_snr_db - expectedSnr) < 0.3, `${m.energy_snr_db} vs ${expectedSnr}`);
  assert.ok(Math.abs(m.l2 - 0.01) < 0.001);
  assert.ok(m.peak_recall === 1);
  const fake = truth.slice();
  for (let i = 3000; i < 3010; i++) fake[i]! += 0.5 * Math.exp(-((i - 3005) ** 2));
  const f = computeMetrics(fake, context(truth, 0.01));
  assert.equal(f.hallucinated, 1);
  assert.ok(Math.abs(f.peak_precision - 0.75) < 1e-12);
  assert.ok(Math.abs(f.peak_f1 - (2 * 0.75) / 1.75) < 1e-12);
  const shifted = lorentz(4096, [
    { at: 501, h: 1, w: 6 },
    { at: 1000, h: 0.5, w: 6 },
    { at: 2000, h: 0.2, w: 6 },
  ]);
  const s = computeMetrics(shifted, context(truth, 0.01));
  assert.ok(Math.abs(s.position_error_hz - 0.5 / 3) < 0.02, `mean position error ${s.position_error_hz}`);
});

test('metrics on the clean reference spectrum with 8 singlets (nmr-xy-testdata): all 8 found at 1..8 ppm', () => {
  const d = JSON.parse(
    readFileSync(join(npmDataDir('nmr-xy-testdata'), 'data/pure/d1-2-3-4-5-6-7-8.json'), 'utf8'),
  ) as { x: number[]; y: number[] };
  const y = Float64Array.from(d.y);
  let max = 0;
  for (const v of y) max = Math.max(max, v);
  const peaks = pickPeaks(y, 0.05 * max);
  const ppm = peaks.map((p) => d.x[0]! + (p.index * (d.x[d.x.length - 1]! - d.x[0]!)) / (d.x.length - 1));
  assert.deepEqual(
    ppm.map((v) => Math.round(v * 100) / 100),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  const m = computeMetrics(y, { ...context(y, 0.001 * max), multiplets: [] });
  assert.equal(m.peak_f1, 1);
});

test('wavelets: the periodic DWT reconstructs exactly; cycle-spinning shrinkage removes noise', () => {
  const rng = new Rng(9);
  for (const name of ['haar', 'db4'] as const) {
    const h = lowPass(name);
    assert.ok(Math.abs(h.reduce((a, v) => a + v * v, 0) - 1) < 1e-12, 'orthonormal filter');
    const x = Float64Array.from({ length: 64 }, () => rng.normal());
    const { a, d } = dwtStep(x, h);
    const back = idwtStep(a, d, h);
    // db4's published coefficients are orthogonal to ~1e-13.
    for (let i = 0; i < 64; i++) assert.ok(Math.abs(back[i]! - x[i]!) < 1e-10);
  }
  const clean = lorentz(4096, [
    { at: 800, h: 1, w: 12 },
    { at: 2400, h: 0.6, w: 20 },
  ]);
  const noisy = clean.map((v) => v + 0.05 * rng.normal());
  const err = (y: Float64Array): number => y.reduce((s, v, i) => s + (v - clean[i]!) ** 2, 0);
  const one = waveletDenoise(noisy, { shifts: 1 });
  const spun = waveletDenoise(noisy, { shifts: 16 });
  assert.ok(err(one) < 0.25 * err(noisy), `${err(one)} vs ${err(noisy)}`);
  assert.ok(err(spun) < err(one), 'cycle spinning helps');
});

test('matched filter: unit-area Lorentzian smoothing, width found from the data', () => {
  const x = lorentz(4096, [{ at: 2000, h: 1, w: 10 }]);
  const y = lorentzianSmooth(x, 10);
  const sum = (a: Float64Array): number => a.reduce((s, v) => s + v, 0);
  assert.ok(Math.abs(sum(y) / sum(x) - 1) < 1e-3, 'area kept');
  assert.ok(Math.abs(fwhmAt(y, 2000) - 20) < 0.2, 'Lorentzian widths add');
  const rng = new Rng(2);
  const noisy = x.map((v) => v + 0.05 * rng.normal());
  const { width, output } = matchedFilter(noisy);
  assert.ok(Math.abs(width - 10) < 2, `estimated width ${width}`);
  const err = (a: Float64Array): number => a.reduce((s, v, i) => s + (v - x[i]!) ** 2, 0);
  assert.ok(err(output) < 0.3 * err(noisy));
  assert.ok(err(savitzkyGolay(noisy, 11, 2)) < err(noisy));
});
