// The variational Gaussian mixture against scikit-learn's BayesianGaussianMixture
// (test/golden/mixture/bayesian.json, scripts/golden/mixture_bayesian.py) with the fixed-init
// protocol of the Gaussian mixture's cases: every covariance type, both weight priors, and every
// prior given. The lower bound after every iteration, the posterior hyperparameters, the weights,
// the score and the labels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, goldenDir, assertClose } from '../helpers.js';
import { BayesianGaussianMixture } from '../../src/mixture/bayesian.js';
import { readLabelsFile, readMatrixCsv } from '../../src/mixture/csv.js';
import type { CovarianceType } from '../../src/mixture/gaussian-params.js';
import type { WeightConcentrationPriorType } from '../../src/mixture/bayesian-options.js';

interface Case {
  data: string;
  k: number;
  options: {
    covariance_type: CovarianceType;
    weight_concentration_prior_type: WeightConcentrationPriorType;
    weight_concentration_prior?: number;
    mean_precision_prior?: number;
    mean_prior?: number[];
    degrees_of_freedom_prior?: number;
    covariance_prior?: number | number[] | number[][];
  };
  trace: number[];
  n_iter: number;
  converged: boolean;
  lower_bound: number;
  weight_concentration: number[];
  mean_precision: number[];
  means: number[];
  degrees_of_freedom: number[];
  covariances: number[];
  precisions_cholesky: number[];
  weights: number[];
  score: number;
  labels: number[];
  proba_first_rows: number[];
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'mixture', 'bayesian.json'), 'utf8')) as {
  sklearn: string;
  cases: Case[];
};

/** Relative to the array's largest magnitude, so that near-zero entries are judged fairly. */
function closeRelative(actual: ArrayLike<number>, expected: number[], rtol: number, what: string): void {
  const scale = Math.max(1e-300, ...expected.map(Math.abs));
  assertClose(actual, expected, rtol * scale, rtol, what);
}

for (const c of golden.cases) {
  const o = c.options;
  const given = o.weight_concentration_prior !== undefined ? ', every prior given' : '';
  test(`BayesianGaussianMixture matches scikit-learn ${golden.sklearn}: ${c.data} ${o.covariance_type} ${o.weight_concentration_prior_type}${given}`, () => {
    const dir = join(dataDir, 'mixture/gmm', c.data);
    const x = readMatrixCsv(join(dir, 'data.csv'));
    const model = new BayesianGaussianMixture({
      nComponents: c.k,
      covarianceType: o.covariance_type,
      weightConcentrationPriorType: o.weight_concentration_prior_type,
      weightConcentrationPrior: o.weight_concentration_prior,
      meanPrecisionPrior: o.mean_precision_prior,
      meanPrior: o.mean_prior,
      degreesOfFreedomPrior: o.degrees_of_freedom_prior,
      covariancePrior: o.covariance_prior,
      initLabels: readLabelsFile(join(dir, 'init_labels.csv'), x.rows, c.k),
      tol: 1e-8,
      maxIter: 500,
      onWarning: () => {},
    }).fit(x);
    const what = `${c.data} ${o.covariance_type} ${o.weight_concentration_prior_type}`;
    assert.equal(model.nIter, c.n_iter, `${what}: iterations`);
    assert.equal(model.converged, c.converged);
    closeRelative(model.trace, c.trace, 1e-9, `${what}: lower bound trace`);
    closeRelative([model.lowerBound], [c.lower_bound], 1e-9, `${what}: lower bound`);
    closeRelative(model.weightConcentration, c.weight_concentration, 1e-7, `${what}: weight concentration`);
    closeRelative(model.meanPrecision, c.mean_precision, 1e-7, `${what}: mean precision`);
    closeRelative(model.means, c.means, 1e-7, `${what}: means`);
    closeRelative(model.degreesOfFreedom, c.degrees_of_freedom, 1e-7, `${what}: degrees of freedom`);
    closeRelative(model.covariances, c.covariances, 1e-7, `${what}: covariances`);
    closeRelative(model.precisionsCholesky, c.precisions_cholesky, 1e-7, `${what}: precision factors`);
    closeRelative(model.weights, c.weights, 1e-7, `${what}: weights`);
    closeRelative([model.score(x)], [c.score], 1e-9, `${what}: score`);
    assert.deepEqual(Array.from(model.predict(x)), c.labels, `${what}: labels`);
    const firstRows = { rows: 5, cols: x.cols, data: x.data.subarray(0, 5 * x.cols) };
    assertClose(model.predictProba(firstRows), c.proba_first_rows, 1e-7, 0, `${what}: probabilities`);
  });
}
