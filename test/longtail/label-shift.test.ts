// Calibration and the label-shift estimators on synthetic cases with known answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import { applyCalibration, fitCalibration } from '../../src/longtail/adapt/calibration.js';
import {
  argmaxRows,
  bbsePrior,
  conditionalConfusion,
  emPrior,
  priorError,
  shiftScores,
} from '../../src/longtail/adapt/label-shift.js';

/** Three 1-d Gaussian classes (means -2, 0, 2); exact log densities as balanced scores. */
function gaussians(prior: number[], n: number, seed: number) {
  const rng = new Rng(seed);
  const means = [-2, 0, 2];
  const scores: number[] = [];
  const labels = new Int32Array(n);
  const counts = [0, 0, 0];
  for (let i = 0; i < n; i++) {
    let u = rng.uniform();
    let y = 0;
    while (y < 2 && u >= prior[y]!) u -= prior[y++]!;
    labels[i] = y;
    counts[y]!++;
    const x = means[y]! + rng.normal();
    for (const m of means) scores.push(-0.5 * (x - m) ** 2);
  }
  return { scores, labels, empirical: counts.map((c) => c / n) };
}

test('EM recovers a shifted prior, from a uniform or a long-tailed source prior', () => {
  const target = [0.1, 0.2, 0.7];
  const { scores, empirical } = gaussians(target, 20000, 3);
  const uniform = emPrior(scores, 3, [1 / 3, 1 / 3, 1 / 3]);
  assert.ok(uniform.converged);
  assert.ok(priorError(uniform.prior, empirical).l1 < 0.03, `${uniform.prior}`);
  // the same data scored by a model trained on source prior [0.6, 0.3, 0.1]
  const source = [0.6, 0.3, 0.1];
  const skewed = scores.map((s, k) => s + Math.log(source[k % 3]!));
  const fromSkewed = emPrior(skewed, 3, source);
  assert.ok(priorError(fromSkewed.prior, empirical).l1 < 0.03, `${fromSkewed.prior}`);
  // and the shift puts the scores back on the balanced ones plus log q
  const shifted = shiftScores(skewed, fromSkewed.prior, source);
  const direct = shiftScores(scores, fromSkewed.prior, [1 / 3, 1 / 3, 1 / 3]);
  for (let i = 0; i < 30; i += 3) {
    const d = shifted[i + 1]! - shifted[i]! - (direct[i + 1]! - direct[i]!);
    assert.ok(Math.abs(d) < 1e-4);
  }
});

test('temperature scaling and BCTS reduce the NLL of miscalibrated validation scores', () => {
  const { scores, labels } = gaussians([1 / 3, 1 / 3, 1 / 3], 6000, 5);
  // overconfident (x4) and biased towards class 0 by 3 nats
  const bad = scores.map((s, k) => 4 * s + (k % 3 === 0 ? 3 : 0));
  const ts = fitCalibration(bad, labels, 3, 'temperature');
  const bcts = fitCalibration(bad, labels, 3, 'bcts');
  assert.ok(ts.nll_after < ts.nll_before - 0.1, `TS ${ts.nll_before} -> ${ts.nll_after}`);
  assert.ok(bcts.nll_after < ts.nll_after - 0.01, `BCTS ${bcts.nll_after} vs TS ${ts.nll_after}`);
  assert.ok(Math.abs(bcts.temperature - 4) < 0.4, `temperature ${bcts.temperature}`);
  // the bias towards class 0 is undone: b0 - b1 ~ -3 / 4 after the temperature
  const gap = bcts.biases[0]! - bcts.biases[1]!;
  assert.ok(Math.abs(gap + 3 / bcts.temperature) < 0.15, `bias gap ${gap}`);
  assert.ok(Math.abs(bcts.biases.reduce((a, b) => a + b, 0)) < 1e-9, 'biases have mean zero');
  // EM on BCTS-calibrated scores finds a shifted prior that the raw scores miss
  const shifted = gaussians([0.1, 0.2, 0.7], 20000, 9);
  const badShifted = shifted.scores.map((s, k) => 4 * s + (k % 3 === 0 ? 3 : 0));
  const uniform = [1 / 3, 1 / 3, 1 / 3];
  const raw = priorError(emPrior(badShifted, 3, uniform).prior, shifted.empirical).l1;
  const calibrated = priorError(
    emPrior(applyCalibration(badShifted, bcts), 3, uniform).prior,
    shifted.empirical,
  ).l1;
  assert.ok(calibrated < 0.05 && calibrated < raw, `EM L1: raw ${raw}, BCTS ${calibrated}`);
});

test('BBSE recovers the prior from a known confusion matrix', () => {
  const confusion = [
    [0.8, 0.1, 0.2],
    [0.15, 0.7, 0.1],
    [0.05, 0.2, 0.7],
  ];
  const q = [0.5, 0.1, 0.4];
  // predictions whose histogram is exactly confusion q
  const histogram = confusion.map((row) => row.reduce((s, v, j) => s + v * q[j]!, 0));
  const predicted: number[] = [];
  histogram.forEach((h, i) => predicted.push(...new Array<number>(Math.round(h * 10000)).fill(i)));
  const estimate = bbsePrior(confusion, predicted, 3);
  assert.ok(priorError(estimate, q).l1 < 1e-3, `${estimate}`);
  // and end to end from labelled validation predictions
  const val = gaussians([1 / 3, 1 / 3, 1 / 3], 30000, 11);
  const test_ = gaussians([0.1, 0.2, 0.7], 30000, 12);
  const c = conditionalConfusion(argmaxRows(val.scores, 3), val.labels, 3);
  const fromData = bbsePrior(c, argmaxRows(test_.scores, 3), 3);
  assert.ok(priorError(fromData, test_.empirical).l1 < 0.04, `${fromData}`);
});

test('prior error: L1 and KL are zero for the truth and grow with the distance', () => {
  const p = [0.2, 0.3, 0.5];
  assert.deepEqual(priorError(p, p), { l1: 0, kl: 0 });
  const e = priorError([0.3, 0.3, 0.4], p);
  assert.ok(Math.abs(e.l1 - 0.2) < 1e-12 && e.kl > 0);
});
