import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { dataDir } from '../helpers.js';
import { Rng } from '../../src/util/rng.js';
import { savitzkyGolay } from '../../src/nmr/pipeline/savgol.js';
import { fourierShift, linearShift, warp } from '../../src/nmr/pipeline/shift.js';
import { alignStack, estimateShift, localShifts, shiftField } from '../../src/nmr/pipeline/align.js';
import { dilate, erode, peakBaselineMasks } from '../../src/nmr/pipeline/masks.js';
import { estimateT, robustSigma, robustSnr } from '../../src/nmr/pipeline/noise.js';
import { scaleFactor } from '../../src/nmr/pipeline/rescale.js';
import { fusionWeights, inverseVarianceFusion, weightedFusion } from '../../src/nmr/pipeline/fusion.js';
import { preprocessStack } from '../../src/nmr/pipeline/preprocess.js';
import { simulateSample } from '../../src/nmr/data/simulate.js';
import { readPipe } from '../../src/nmr/io/nmrpipe.js';
import { processFid } from '../../src/nmr/process.js';
import type { Fid } from '../../src/nmr/types.js';

/** Lorentzian lines (height h, FWHM w points) at fractional positions. */
function lines(n: number, peaks: { at: number; h: number; w: number }[]): Float64Array {
  const x = new Float64Array(n);
  for (const p of peaks) for (let i = 0; i < n; i++) x[i]! += p.h / (1 + ((i - p.at) / (p.w / 2)) ** 2);
  return x;
}

function noisy(x: Float64Array, sigma: number, rng: Rng): Float64Array {
  return x.map((v) => v + sigma * rng.normal());
}

const PEAKS = [
  { at: 300.2, h: 1, w: 4 },
  { at: 611.7, h: 0.6, w: 3 },
  { at: 640.1, h: 0.4, w: 5 },
  { at: 1203.4, h: 0.8, w: 4 },
  { at: 1600.9, h: 0.3, w: 6 },
];

test('Savitzky-Golay: the classic 5-point quadratic kernel, polynomials kept exactly', () => {
  const impulse = new Float64Array(21);
  impulse[10] = 35;
  const out = savitzkyGolay(impulse, 5, 2);
  assert.deepEqual(
    Array.from(out.subarray(8, 13)).map((v) => Math.round(v * 1e9) / 1e9),
    [-3, 12, 17, 12, -3],
  );
  const cubic = Float64Array.from({ length: 50 }, (_, i) => 0.01 * i ** 3 - i ** 2 + 3);
  const smooth = savitzkyGolay(cubic, 11, 3);
  for (let i = 0; i < 50; i++)
    assert.ok(Math.abs(smooth[i]! - cubic[i]!) < 1e-7, `point ${i} (edges included)`);
  assert.throws(() => savitzkyGolay(cubic, 4, 2), /window must be odd/);
});

test('fractional shifts: Fourier shift is accurate (Lorentzians alias by ~1 %) and reversible', () => {
  const x = lines(2048, PEAKS);
  const y = fourierShift(x, 2.37);
  const expected = lines(
    2048,
    PEAKS.map((p) => ({ ...p, at: p.at + 2.37 })),
  );
  let err = 0;
  for (let i = 100; i < 1900; i++) err = Math.max(err, Math.abs(y[i]! - expected[i]!));
  assert.ok(err < 1.5e-2, `max error ${err}`);
  const back = fourierShift(y, -2.37);
  let backErr = 0;
  for (let i = 100; i < 1900; i++) backErr = Math.max(backErr, Math.abs(back[i]! - x[i]!));
  assert.ok(backErr < 2e-3, `round trip error ${backErr}`);
  const lin = linearShift(x, 0.5);
  assert.ok(Math.abs(lin[301]! - 0.5 * (x[300]! + x[301]!)) < 1e-12);
});

test('global shift estimation: known sub-point shifts, clean and noisy, both methods', () => {
  const rng = new Rng(3);
  const x = lines(4096, PEAKS);
  for (const d of [-7.3, -0.42, 0.13, 3.77]) {
    const y = fourierShift(x, d);
    for (const subpixel of ['fourier', 'parabolic'] as const) {
      const e = estimateShift(x, y, { subpixel });
      assert.ok(
        Math.abs(e.shift - d) < (subpixel === 'fourier' ? 0.01 : 0.15),
        `${subpixel}: ${e.shift} vs ${d}`,
      );
    }
    const phase = estimateShift(x, y, { method: 'phase', smooth: 0 });
    assert.ok(Math.abs(phase.shift - d) < 0.05, `phase correlation: ${phase.shift} vs ${d}`);
    const n = estimateShift(noisy(x, 0.02, rng), noisy(y, 0.05, rng));
    // About twice the Cramer-Rao bound at this SNR (std ~0.08 points).
    assert.ok(Math.abs(n.shift - d) < 0.25, `noisy: ${n.shift} vs ${d}`);
    assert.ok(n.quality > 0.5);
  }
  // Pure noise has no reliable shift: 0 is returned.
  const e = estimateShift(noisy(new Float64Array(4096), 1, rng), noisy(new Float64Array(4096), 1, rng));
  assert.equal(e.shift, 0);
});

test('local alignment: a drift that differs between anchor windows is measured and undone', () => {
  const ref = lines(
    4096,
    PEAKS.concat([
      { at: 2500, h: 0.9, w: 4 },
      { at: 3300, h: 0.7, w: 4 },
    ]),
  );
  // x is ref warped by a field rising linearly from -1 to +1.5 points across the spectrum.
  const field = Float64Array.from({ length: 4096 }, (_, i) => -1 + (2.5 * i) / 4095);
  const x = warp(ref, field);
  const anchors = localShifts(ref, x, { anchors: 7, halfWidth: 40 });
  assert.ok(anchors.length >= 5, `${anchors.length} anchors`);
  for (const a of anchors)
    assert.ok(
      Math.abs(a.shift - field[a.center]!) < 0.1,
      `anchor at ${a.center}: ${a.shift} vs ${field[a.center]}`,
    );
  const f = shiftField(4096, anchors);
  const fixed = warp(
    x,
    f.map((v) => -v),
  );
  const errBefore = ref.reduce((s, v, i) => s + (v - x[i]!) ** 2, 0);
  const errAfter = ref.reduce((s, v, i) => s + (v - fixed[i]!) ** 2, 0);
  assert.ok(errAfter < 0.02 * errBefore, `residual ${errAfter} vs ${errBefore}`);
  const stack = alignStack([x, ref], 1, { local: { anchors: 7, halfWidth: 40 } });
  assert.ok(stack.anchors[0]!.length >= 5);
});

test('masks: dilation/erosion semantics and peak/baseline masks of a noisy stack', () => {
  const m = Uint8Array.from([0, 0, 0, 1, 1, 0, 0, 0, 0, 0]);
  assert.deepEqual(Array.from(dilate(m, 2)), [0, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
  assert.deepEqual(
    Array.from(erode(Uint8Array.from([1, 1, 1, 1, 0, 1, 1, 1, 1, 1]), 1)),
    [1, 1, 1, 0, 0, 0, 1, 1, 1, 1],
  );
  const rng = new Rng(5);
  const clean = lines(4096, PEAKS);
  const stack = [noisy(clean, 0.05, rng), noisy(clean, 0.025, rng), noisy(clean, 0.0125, rng)];
  const masks = peakBaselineMasks(stack, { alpha: 4, dilate: 6, erode: 2 });
  for (const p of PEAKS) assert.equal(masks.peak[Math.round(p.at)], 1, `peak at ${p.at} in M`);
  for (let i = 0; i < 4096; i++) {
    assert.ok(!(masks.peak[i] && masks.baseline[i]), 'M and B are disjoint');
    // Peak tops (well above the threshold) never fall into B, and a gap of 2 separates them.
    if (
      masks.peak[i] &&
      (masks.baseline[i - 1] || masks.baseline[i + 1] || masks.baseline[i - 2] || masks.baseline[i + 2])
    )
      assert.fail(`no erosion gap at ${i}`);
  }
  const fraction = masks.peak.reduce((a, b) => a + b, 0) / 4096;
  assert.ok(fraction > 0.01 && fraction < 0.2, `peak fraction ${fraction}`);
});

test('robust sigma, SNR and T from a known noise ladder', () => {
  const rng = new Rng(7);
  const clean = lines(8192, PEAKS);
  const sigmas = [0.08, 0.04, 0.02];
  const stack = sigmas.map((s) => noisy(clean, s, rng));
  const masks = peakBaselineMasks(stack);
  const est = stack.map((x) => robustSigma(x, masks.baseline));
  est.forEach((e, k) => assert.ok(Math.abs(e / sigmas[k]! - 1) < 0.05, `sigma ${e} vs ${sigmas[k]}`));
  const diff = stack.map((x) => robustSigma(x, masks.baseline, 'diff'));
  diff.forEach((e, k) => assert.ok(Math.abs(e / sigmas[k]! - 1) < 0.06, `diff sigma ${e} vs ${sigmas[k]}`));
  assert.ok(Math.abs(estimateT(est) - 2) < 0.1);
  assert.ok(Math.abs(estimateT([0.27, 0.09, 0.03], 'loglinear') - 3) < 1e-9);
  // P95 over the dilated mask of a sparse spectrum sits on the peak skirts (plus noise), so the
  // SNR is modest and grows less than 1 / sigma; it must still rise with the level.
  const snr = robustSnr(stack[2]!, masks.peak, masks.baseline);
  const ratio = snr / robustSnr(stack[0]!, masks.peak, masks.baseline);
  assert.ok(snr > 2, `SNR ${snr}`);
  assert.ok(ratio > 1.2 && ratio < 4.5, `SNR ratio ${ratio} for a sigma ratio of 4`);
});

test('rescaling: known scales are recovered; the noise correction removes the attenuation bias', () => {
  const rng = new Rng(11);
  const clean = lines(8192, PEAKS);
  const ref = noisy(clean, 0.01, rng);
  const mask = peakBaselineMasks([ref]).peak;
  const trueScale = 37.5; // ref = 37.5 * x
  const x = noisy(clean, 0.12, rng).map((v) => v / trueScale);
  const sx = 0.12 / trueScale;
  const seed = scaleFactor(x, ref, mask, 'seed');
  assert.ok(seed < 0.85 * trueScale, `plain least squares ('seed') is biased low here: ${seed}`);
  // Single draws scatter by ~5 % at this noise level; the uncorrected bias is ~25 %.
  for (const method of ['seed', 'inverse', 'huber'] as const) {
    const s = scaleFactor(x, ref, mask, method, { sigmaX: sx, sigmaRef: 0.01 });
    assert.ok(Math.abs(s / trueScale - 1) < 0.12, `${method}: ${s}`);
  }
  // Huber resists one peak whose relative intensity differs (another pulse sequence).
  const odd = clean.map((v, i) => (Math.abs(i - 1203) < 12 ? 4 * v : v));
  const y = noisy(odd, 0.01, rng).map((v) => v / trueScale);
  const plain = scaleFactor(y, ref, mask, 'inverse');
  const robust = scaleFactor(y, ref, mask, 'huber');
  assert.ok(
    Math.abs(robust / trueScale - 1) < Math.abs(plain / trueScale - 1),
    `huber ${robust} vs inverse ${plain}`,
  );
});

test('fusion weights: SNR^gamma, T^k, cap with redistribution, exclusion', () => {
  const w = fusionWeights([2, 4, 8], { gamma: 1 });
  assert.deepEqual(
    w.map((v) => Math.round(v * 1e12) / 1e12),
    [2 / 14, 4 / 14, 8 / 14].map((v) => Math.round(v * 1e12) / 1e12),
  );
  const capped = fusionWeights([1, 2, 100], { gamma: 1.5, wMax: 0.5 });
  assert.ok(Math.abs(capped[2]! - 0.5) < 1e-12);
  assert.ok(Math.abs(capped.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  assert.ok(capped[1]! > capped[0]!);
  const t = fusionWeights([0, 0, 0], { scheme: 'T', T: 2 });
  assert.ok(Math.abs(t[2]! - 4 / 7) < 1e-12);
  const ex = fusionWeights([5, 5, 5], { exclude: [0] });
  assert.equal(ex[0], 0);
  assert.throws(() => fusionWeights([1, 1], { exclude: [0, 1] }), /every weight is zero/);
  const f = weightedFusion([Float64Array.from([1, 2]), Float64Array.from([3, 4])], [0.25, 0.75]);
  assert.deepEqual(Array.from(f), [2.5, 3.5]);
  const iv = inverseVarianceFusion([Float64Array.from([0]), Float64Array.from([1])], [2, 1]);
  assert.ok(Math.abs(iv[0]! - 0.8) < 1e-12);
});

test('the whole preprocessing on simulated samples: shifts, scales and T close to the truth', () => {
  const rng = new Rng(21);
  let shiftErr = 0;
  let scaleErr = 0;
  let tErr = 0;
  const count = 6;
  for (let s = 0; s < count; s++) {
    const sample = simulateSample(rng, { points: 8192, levels: 3, ratio: 2, snrRange: [15, 40] });
    const pre = preprocessStack(sample.spectra);
    const cK = sample.levels[2]!.scale;
    for (let k = 0; k < 2; k++) {
      shiftErr += Math.abs(pre.shifts[k]! - sample.levels[k]!.shift) / (2 * count);
      scaleErr += Math.abs(pre.scales[k]! / (cK / sample.levels[k]!.scale) - 1) / (2 * count);
    }
    tErr += Math.abs(pre.tHat - 2) / count;
    assert.ok(Math.abs(pre.weights.reduce((a, b) => a + b, 0) - 1) < 1e-12);
    assert.equal(pre.pseudoTruth.length, 8192);
  }
  assert.ok(shiftErr < 0.15, `mean shift error ${shiftErr} points`);
  assert.ok(scaleErr < 0.05, `mean scale error ${scaleErr}`);
  assert.ok(tErr < 0.2, `mean T error ${tErr}`);
});

test('real repeated scans (nmrglue 13C co-add): averages of 1, 2 and 4 runs give T close to sqrt 2', () => {
  const dir = join(dataDir, 'nmr', 'multi_snr', 'nmrglue_coadd_13C');
  const fids = [1, 2, 3, 4].map((i) => {
    const d = readPipe(join(dir, `test-run0${i}.fid`));
    if (d.kind !== 'fid') throw new Error('expected a FID');
    return d.fid;
  });
  const average = (list: Fid[]): Fid => ({
    ...list[0]!,
    re: list[0]!.re.map((_, j) => list.reduce((a, f) => a + f.re[j]!, 0) / list.length),
    im: list[0]!.im.map((_, j) => list.reduce((a, f) => a + f.im[j]!, 0) / list.length),
  });
  const levels = [average([fids[1]!]), average([fids[1]!, fids[2]!]), average(fids)];
  const phase = processFid(levels[2]!, { size: 2048, phase: 'auto', apodization: { kind: 'none' } }).phase;
  const spectra = levels.map((f) => processFid(f, { size: 2048, phase, apodization: { kind: 'none' } }).real);
  // Broad lines fill the window, so the plain MAD reads signal; the difference estimator does not.
  const pre = preprocessStack(spectra, { noise: 'diff' });
  assert.ok(Math.abs(pre.tHat - Math.SQRT2) < 0.15, `T estimate ${pre.tHat}`);
  for (const s of pre.scales) assert.ok(Math.abs(s - 1) < 0.05, `scales ${pre.scales}`);
  for (const d of pre.shifts) assert.ok(Math.abs(d) < 0.2, `shifts ${pre.shifts}`);
});
