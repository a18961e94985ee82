// Label-shift pieces of test-time prior matching: the EM prior estimate, the simplex projection,
// the weights fitted to a log prior, and the offsets read from the losses' logit biases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../../src/util/rng.js';
import {
  balancedScores,
  estimateTestPrior,
  expertPriorOffsets,
  familyPriorByLikelihood,
  matchPriorWeights,
  projectToSimplex,
} from '../../src/longtail/adapt/prior-shift.js';
import { oracle, priorMatched } from '../../src/longtail/adapt/prior.js';
import { TestTimeMethodError, runTestTime } from '../../src/longtail/adapt/testtime.js';
import { adaptInput, sessionFromConfigFile } from '../../src/longtail/config/session.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import { diverseExpertLoss } from '../../src/longtail/losses/experts.js';
import { logPrior } from '../../src/longtail/losses/priors.js';
import { CrossEntropyLoss, LDAMLoss, LogitAdjustLoss } from '../../src/longtail/losses/single.js';
import { PreferenceLoss } from '../../src/longtail/losses/prl.js';

const close = (a: number[], b: number[], tol: number, what: string) =>
  a.forEach((v, i) => assert.ok(Math.abs(v - b[i]!) <= tol, `${what}[${i}]: ${v} vs ${b[i]}`));

/**
 * Three 1-d Gaussian classes (means -2, 0, 2, unit variance) drawn with a given prior; the
 * balanced score of class c is its exact log density, so EM's answer is the data's true prior.
 */
function gaussianClasses(prior: number[], n: number, seed: number) {
  const rng = new Rng(seed);
  const means = [-2, 0, 2];
  const scores: number[] = [];
  const counts = [0, 0, 0];
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let u = rng.uniform();
    let y = 0;
    while (y < 2 && u >= prior[y]!) u -= prior[y++]!;
    counts[y]!++;
    labels[i] = y;
    const x = means[y]! + rng.normal();
    for (const m of means) scores.push(-0.5 * (x - m) ** 2);
  }
  return { scores, labels, empirical: counts.map((c) => c / n) };
}

test('EM recovers the prior of a shifted test set from balanced scores', () => {
  for (const prior of [
    [0.7, 0.2, 0.1],
    [1 / 3, 1 / 3, 1 / 3],
    [0.05, 0.15, 0.8],
  ]) {
    const { scores, empirical } = gaussianClasses(prior, 20000, 7);
    const estimate = estimateTestPrior(scores, 3);
    assert.ok(estimate.converged, 'converged');
    assert.ok(Math.abs(estimate.prior.reduce((a, b) => a + b, 0) - 1) < 1e-9);
    close(estimate.prior, empirical, 0.02, `prior ${prior.join('/')}`);
  }
  assert.throws(() => estimateTestPrior([1, 2, 3, 4], 3), /4 scores for 3 classes/);
});

test('projection onto the simplex', () => {
  close(projectToSimplex([0.2, 0.3, 0.5]), [0.2, 0.3, 0.5], 1e-12, 'inside');
  close(projectToSimplex([2, 0, 0]), [1, 0, 0], 1e-12, 'beyond a corner');
  close(projectToSimplex([0.5, 0.5, 0.5]), [1 / 3, 1 / 3, 1 / 3], 1e-12, 'shifted');
  close(projectToSimplex([1, 0.5, -3]), [0.75, 0.25, 0], 1e-12, 'onto an edge');
});

test('prior matching picks the most even weights whose offset is the target log prior', () => {
  // Forward (log pi), uniform (0) and backward (-log pi) experts of a geometric prior.
  const counts = [100, 46, 22, 10, 5, 2, 1];
  const lp = logPrior(counts, 1, 0);
  const offsets = [lp, lp.map(() => 0), lp.map((v) => -v)];
  const scaled = (lambda: number) => lp.map((v) => lambda * v + 3);
  // w1 - w3 = lambda; the pull towards uniform splits the rest evenly.
  close(matchPriorWeights(offsets, scaled(0)), [1 / 3, 1 / 3, 1 / 3], 1e-6, 'uniform');
  close(matchPriorWeights(offsets, scaled(0.5)), [1 / 3 + 0.25, 1 / 3, 1 / 3 - 0.25], 1e-3, 'half forward');
  close(matchPriorWeights(offsets, scaled(-0.9)), [0, 0.1, 0.9], 2e-3, 'mostly backward');
  close(matchPriorWeights(offsets, scaled(3)), [1, 0, 0], 1e-6, 'beyond the forward corner');
});

test("the most likely prior of the experts' family recovers a shifted prior and stops at its edge", () => {
  // Forward (log pi), uniform (0) and backward (-log pi) experts: the family is pi^t, t in [-1, 1].
  const counts = [100, 30, 5];
  const lp = logPrior(counts, 1, 0);
  const offsets = [lp, [0, 0, 0], lp.map((v) => -v)];
  const power = (t: number) => {
    const q = lp.map((v) => Math.exp(t * v));
    return q.map((v) => v / q.reduce((a, b) => a + b, 0));
  };
  for (const t of [0.7, 0, -0.8, -1]) {
    const { scores } = gaussianClasses(power(t), 20000, 11);
    const fitted = familyPriorByLikelihood(offsets, scores, 3);
    close(fitted, power(t), 0.015, `t = ${t}`);
    // The family's weights for it: w1 - w3 = t.
    const w = matchPriorWeights(offsets, fitted.map(Math.log));
    assert.ok(Math.abs(w[0]! - w[2]! - t) < 0.05, `t = ${t}: w1 - w3 = ${w[0]! - w[2]!}`);
  }
  // A prior beyond the family's reach ends at its edge (the backward corner), not outside.
  const { scores } = gaussianClasses(power(-2), 20000, 12);
  close(familyPriorByLikelihood(offsets, scores, 3), power(-1), 1e-3, 'beyond the backward corner');
  assert.throws(() => familyPriorByLikelihood(offsets, [1, 2], 3), /2 scores for 3 classes/);
});

test('expert offsets from the losses, and balanced scores undo them', () => {
  const counts = [500, 100, 20];
  const lp = logPrior(counts, 1);
  // SADE: forward carries log pi, uniform nothing, backward (tau 2) 2 log pi_bar.
  const sade = expertPriorOffsets(diverseExpertLoss(counts, 3, 2).logitBiases, lp);
  close(sade[0]!, lp, 1e-12, 'forward');
  close(sade[1]!, [0, 0, 0], 1e-12, 'uniform');
  close(sade[2]!, [2 * lp[2]!, 2 * lp[1]!, 2 * lp[0]!], 1e-9, 'backward');
  const prl = new PreferenceLoss(counts, 3, {
    expertLosses: [{ type: 'forward' }, { type: 'uniform' }, { type: 'backward', tau: 1 }],
  });
  close(expertPriorOffsets(prl.logitBiases, lp)[2]!, [lp[2]!, lp[1]!, lp[0]!], 1e-9, 'PRL backward tau 1');
  close(
    expertPriorOffsets(new LogitAdjustLoss(counts, 0.5).logitBiases, lp)[0]!,
    lp.map((v) => 0.5 * v),
    1e-12,
    'LA',
  );
  assert.deepEqual(new CrossEntropyLoss(counts).logitBiases, [null]);
  // Losses that are not a logit-adjusted CE leave the offsets unknown.
  assert.equal(new CrossEntropyLoss(counts, { reweightEpoch: 2 }).logitBiases, undefined);
  assert.equal((new LDAMLoss(counts) as { logitBiases?: unknown }).logitBiases, undefined);

  const n = 2;
  const balanced = [0.1, 0.2, 0.3, -1, 0, 1];
  const expertLogits = sade.flatMap((o) => balanced.map((v, k) => v + o[k % 3]!));
  close([...balancedScores(expertLogits, { experts: 3, n, classes: 3 }, sade)], balanced, 1e-9, 'balanced');
  close([...balancedScores(expertLogits, { experts: 3, n, classes: 3 }, sade, [1])], [-1, 0, 1], 1e-9, 'row');
});

test('prior matching and the oracle on a shifted set of three experts', () => {
  // Balanced scores are exact Gaussian log densities; expert e adds its offset o_e, as a model
  // trained with CE(z_e + b_e) would. The test prior is the training prior to the power 0.6.
  const counts = [100, 10, 1];
  const lp = logPrior(counts, 1, 0);
  const offsets = [lp, [0, 0, 0], lp.map((v) => -v)];
  const shifted = lp.map((v) => Math.exp(0.6 * v));
  const testPrior = shifted.map((v) => v / shifted.reduce((a, b) => a + b, 0));
  const n = 6000;
  const { scores, labels, empirical } = gaussianClasses(testPrior, n, 3);
  const expertLogits = new Float32Array(3 * n * 3);
  offsets.forEach((o, e) => {
    for (let k = 0; k < n * 3; k++) expertLogits[e * n * 3 + k] = scores[k]! + o[k % 3]!;
  });
  const mean = (w: number[]) => {
    const out = new Float32Array(n * 3);
    for (let k = 0; k < n * 3; k++) out[k] = w.reduce((s, we, e) => s + we * expertLogits[e * n * 3 + k]!, 0);
    return out;
  };
  const p = { n, classes: 3, experts: 3, logits: mean([1 / 3, 1 / 3, 1 / 3]), expertLogits, labels };
  const accuracy = (logits: ArrayLike<number>) => {
    let right = 0;
    for (let i = 0; i < n; i++) {
      const row = [0, 1, 2].map((c) => logits[i * 3 + c]!);
      if (row.indexOf(Math.max(...row)) === labels[i]) right++;
    }
    return { top1: right / n, many: null, medium: null, few: null };
  };
  const balanced = balancedScores(expertLogits, p, offsets);
  const matched = priorMatched(p, offsets, balanced, accuracy, mean, false);
  close(matched.estimated_prior, empirical, 0.02, 'estimated prior');
  const w = matched.weights!;
  assert.ok(Math.abs(w[0]! - w[2]! - 0.6) < 0.05, `w1 - w3 = ${w[0]! - w[2]!}, expected about 0.6`);
  assert.equal(matched.fit, 'likelihood');
  close(matched.family_prior!, testPrior, 0.02, 'family prior');
  // Session 4's fit: the family member nearest the EM estimate; here it agrees.
  const nearest = priorMatched(p, offsets, balanced, accuracy, mean, false, 'least_squares');
  assert.equal(nearest.family_prior, undefined);
  const wn = nearest.weights!;
  assert.ok(Math.abs(wn[0]! - wn[2]! - 0.6) < 0.05, `least squares: w1 - w3 = ${wn[0]! - wn[2]!}`);
  const before = accuracy(p.logits).top1;
  const bayes = accuracy(Float32Array.from(scores, (s, k) => s + Math.log(testPrior[k % 3]!))).top1;
  assert.ok(matched.top1! > before + 0.02, `prior matching ${matched.top1} vs balanced ${before}`);
  assert.ok(
    Math.abs(matched.adjusted.top1! - bayes) < 0.01,
    `adjusted ${matched.adjusted.top1} vs Bayes ${bayes}`,
  );
  // The oracle adds the true log prior to the balanced scores: the Bayes rule here.
  const testCounts = testPrior.map((q) => q * n);
  assert.ok(Math.abs(oracle(p, testCounts, accuracy, balanced).top1! - bayes) < 1e-9);
  // Without balanced scores it falls back to the model output plus the log prior.
  const plain = accuracy(Float32Array.from(p.logits, (v, k) => v + Math.log(testPrior[k % 3]!))).top1;
  assert.ok(Math.abs(oracle(p, testCounts, accuracy, null).top1! - plain) < 1e-9);
});

test(
  "test-time 'prior' alone on an LDAM model is an error naming the loss; with other methods it is skipped",
  {
    skip:
      !existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz') &&
      'Fashion-MNIST not installed',
  },
  async () => {
    const session = sessionFromConfigFile(join(repoRoot, 'configs', 'fmnist_lt_ir100_ldam_drw.json'), {
      // LDAM's margins need an image in every class: the tail gets one at IR 100.
      trainMaxPerClass: 100,
      testPerClass: 4,
    });
    const options = {
      epochs: 1,
      batchSize: 16,
      lr: 0.025,
      momentum: 0.9,
      weightDecay: 5e-4,
      nesterov: true,
      minWeight: 0.05,
      preferenceLr: 0.01,
      seed: 0,
      distributions: ['uniform'],
      quiet: true,
    };
    await assert.rejects(
      runTestTime(adaptInput(session), { ...options, methods: ['prior'] }, () => {}),
      (e: unknown) =>
        e instanceof TestTimeMethodError &&
        /test-time method 'prior': LDAMLoss \(as configured\) is not a logit-adjusted cross-entropy/.test(
          e.message,
        ),
    );
    const lines: string[] = [];
    const { results } = await runTestTime(
      adaptInput(session),
      { ...options, methods: ['aggregation', 'prior'] },
      (s) => lines.push(s),
    );
    assert.ok(lines.some((l) => l.startsWith('prior matching skipped: LDAMLoss')));
    assert.equal(results.uniform!.prior, undefined);
    assert.ok(results.uniform!.aggregation);
  },
);
