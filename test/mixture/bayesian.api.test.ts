// The variational Gaussian mixture as users meet it: surplus components emptied by the
// Dirichlet-process prior, the lower bound rising every iteration, the saved model giving the
// same predictions, and named errors for options it does not take.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BayesianGaussianMixture,
  GaussianModelError,
  MixtureArgumentError,
  gaussianModelFromJson,
  gaussianModelToJson,
  scoreSummary,
  type DenseMatrix,
} from '../../src/mixture/index.js';
import { Rng } from '../../src/util/rng.js';
import { assertClose } from '../helpers.js';

/** Three well-separated 2-D clusters of 60 points, the true cluster of each row. */
function threeClusters(): { x: DenseMatrix; truth: number[] } {
  const rng = new Rng(3);
  const centres = [
    [0, 0],
    [8, 0],
    [0, 8],
  ];
  const data: number[] = [];
  const truth: number[] = [];
  for (let i = 0; i < 180; i++) {
    const c = i % 3;
    data.push(centres[c]![0]! + rng.normal(), centres[c]![1]! + rng.normal());
    truth.push(c);
  }
  return { x: { rows: 180, cols: 2, data: Float64Array.from(data) }, truth };
}

test('a Dirichlet-process prior empties the surplus components: K = 8 on three clusters leaves three', () => {
  const { x, truth } = threeClusters();
  for (const covarianceType of ['full', 'diag'] as const) {
    const model = new BayesianGaussianMixture({
      nComponents: 8,
      covarianceType,
      weightConcentrationPrior: 0.01,
      maxIter: 500,
      seed: 0,
    }).fit(x);
    const used = Array.from(model.weights).filter((w) => w > 0.05);
    assert.equal(
      used.length,
      3,
      `${covarianceType}: weights ${Array.from(model.weights).map((w) => w.toFixed(3))}`,
    );
    for (const w of used) assert.ok(Math.abs(w - 1 / 3) < 0.02);
    // the labels are the true clusters up to renaming
    const labels = model.predict(x);
    const names = new Map<number, number>();
    labels.forEach((label, i) => {
      if (!names.has(truth[i]!)) names.set(truth[i]!, label);
      assert.equal(label, names.get(truth[i]!), `row ${i}`);
    });
    assert.deepEqual(Array.from(model.fitPredict(x)), Array.from(labels));
  }
});

test('the lower bound never falls between iterations, and a Dirichlet distribution with a large concentration keeps every component', () => {
  const { x } = threeClusters();
  for (const weightConcentrationPriorType of ['dirichlet_process', 'dirichlet_distribution'] as const) {
    const model = new BayesianGaussianMixture({
      nComponents: 5,
      weightConcentrationPriorType,
      weightConcentrationPrior: weightConcentrationPriorType === 'dirichlet_distribution' ? 1000 : undefined,
      initParams: 'random',
      tol: 1e-10,
      maxIter: 300,
      seed: 1,
      onWarning: () => {},
    }).fit(x);
    model.trace.forEach((v, i) => {
      if (i > 0)
        assert.ok(
          v >= model.trace[i - 1]! - 1e-8 * Math.abs(v),
          `iteration ${i}: ${model.trace[i - 1]} -> ${v}`,
        );
    });
    if (weightConcentrationPriorType === 'dirichlet_distribution')
      for (const w of model.weights) assert.ok(w > 0.1, `weights ${Array.from(model.weights)}`);
  }
});

test('the saved model predicts, scores and samples as the fitted one; it has no BIC or AIC', () => {
  const { x } = threeClusters();
  for (const covarianceType of ['full', 'tied', 'diag', 'spherical'] as const) {
    const model = new BayesianGaussianMixture({ nComponents: 4, covarianceType, seed: 2 }).fit(x);
    const json = JSON.parse(JSON.stringify(gaussianModelToJson(model, x, { columns: ['a', 'b'] })));
    assert.equal(json.bic, null);
    assert.equal(json.nParameters, null);
    assert.equal(json.bayesian.weightConcentrationPriorType, 'dirichlet_process');
    assert.equal(json.bayesian.weightConcentration.length, 8);
    assert.equal(json.bayesian.degreesOfFreedom.length, covarianceType === 'tied' ? 1 : 4);
    const loaded = gaussianModelFromJson(json, 'model.json').model;
    assert.ok(loaded instanceof BayesianGaussianMixture);
    assertClose(
      loaded.predictProba(x),
      model.predictProba(x),
      1e-12,
      1e-12,
      `${covarianceType}: probabilities`,
    );
    assertClose(loaded.scoreSamples(x), model.scoreSamples(x), 1e-10, 1e-12, `${covarianceType}: densities`);
    assertClose(loaded.weights, model.weights, 1e-15, 0, `${covarianceType}: weights`);
    assert.equal(loaded.sample(5, new Rng(1)).x.rows, 5);
    // a loaded model saves again (without the priors of a fit it did not run)
    const again = JSON.parse(JSON.stringify(gaussianModelToJson(loaded, x)));
    assert.equal(again.bayesian.priors, undefined);
    assert.deepEqual(again.bayesian.weightConcentration, json.bayesian.weightConcentration);
    assert.deepEqual(scoreSummary(loaded, x).bic, null);
    assert.throws(() => model.bic(x), /bic: BIC and AIC count the parameters .* compare its lowerBound/);
    assert.throws(() => model.criteria(x), MixtureArgumentError);
    assert.throws(() => model.setFitted(2, [1], [0, 0], [1, 0, 0, 1]), /setFitted: .* use setVariational/);
  }
  const model = new BayesianGaussianMixture({ nComponents: 2, seed: 2 }).fit(x);
  const json = JSON.parse(JSON.stringify(gaussianModelToJson(model, x)));
  json.bayesian.degreesOfFreedom = [0.5, 3];
  assert.throws(
    () => gaussianModelFromJson(json, 'm.json'),
    (e: Error) =>
      e instanceof GaussianModelError && /^m\.json: degreesOfFreedom\[0\] must be > 1/.test(e.message),
  );
  json.bayesian = { weightConcentrationPriorType: 'pitman_yor' };
  assert.throws(
    () => gaussianModelFromJson(json, 'm.json'),
    /field 'bayesian.weightConcentrationPriorType' is invalid/,
  );
});

test('warm start continues from the fitted posterior', () => {
  const { x } = threeClusters();
  const model = new BayesianGaussianMixture({
    nComponents: 3,
    warmStart: true,
    tol: 1e-6,
    maxIter: 500,
    seed: 0,
  });
  model.fit(x);
  const first = model.lowerBound;
  model.fit(x);
  assert.ok(model.nIter <= 2, `a converged fit continues for ${model.nIter} iterations`);
  assert.ok(Math.abs(model.lowerBound - first) < 1e-4 * Math.abs(first));
});

test('options it does not take, and priors out of range, are named errors', () => {
  const { x } = threeClusters();
  const bad = (options: object, pattern: RegExp, fit = false) =>
    assert.throws(
      () => {
        const m = new BayesianGaussianMixture({ nComponents: 2, ...options });
        if (fit) m.fit(x);
      },
      (e: Error) => e instanceof MixtureArgumentError && pattern.test(e.message),
      JSON.stringify(options),
    );
  bad({ weightsInit: [0.5, 0.5] }, /weightsInit is not an option of BayesianGaussianMixture/);
  bad(
    { weightConcentrationPriorType: 'beta' },
    /weightConcentrationPriorType must be one of dirichlet_process, dirichlet_distribution, got 'beta'/,
  );
  bad({ weightConcentrationPrior: 0 }, /weightConcentrationPrior must be a finite number > 0, got 0/);
  bad({ meanPrecisionPrior: -1 }, /meanPrecisionPrior must be a finite number > 0/);
  bad({ degreesOfFreedomPrior: 0.5 }, /degreesOfFreedomPrior must be > 1 \(features - 1\), got 0.5/, true);
  bad({ meanPrior: [1, 2, 3] }, /meanPrior has 3 values, the data 2 columns/, true);
  bad(
    {
      covariancePrior: [
        [1, 0],
        [0.5, 1],
      ],
    },
    /covariancePrior is not symmetric/,
    true,
  );
  bad(
    {
      covariancePrior: [
        [1, 2],
        [2, 1],
      ],
    },
    /covariancePrior is not positive definite/,
    true,
  );
  bad({ covariancePrior: [1, 2] }, /covariancePrior for 'full' covariances needs 2x2 values, got 2/, true);
  bad(
    { covarianceType: 'diag', covariancePrior: [1, -2] },
    /covariancePrior\[1\] = -2 must be positive/,
    true,
  );
  bad(
    { covarianceType: 'spherical', covariancePrior: [NaN] },
    /covariancePrior holds NaN, not a finite number/,
    true,
  );
});
