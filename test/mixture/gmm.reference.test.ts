// The Gaussian mixture against scikit-learn 1.2.1 on the reference cases of
// data/mixture/gmm with the fixed-init protocol: one-hot labels -> one M step -> EM.
// Tolerances from data/README.md: lower-bound trace 1e-9 absolute, parameters 1e-6 relative,
// labels exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, assertClose } from '../helpers.js';
import { GaussianMixture } from '../../src/mixture/gaussian.js';
import { readLabelsFile, readMatrixCsv } from '../../src/mixture/csv.js';
import { COVARIANCE_TYPES, type CovarianceType } from '../../src/mixture/gaussian-params.js';

interface FitReference {
  params: { weights: number[]; means: number[][]; covariances: unknown; precisions_cholesky: unknown };
  n_iter: number;
  converged: boolean;
  lower_bound: number;
  score: number;
  bic: number;
  aic: number;
  n_parameters: number;
  init_params: { weights: number[]; means: number[][]; covariances: unknown };
  trace_lower_bound: number[];
  default_tol_from_same_init: {
    score: number;
    n_iter: number;
    lower_bound: number;
    converged: boolean;
    bic: number;
  };
}

const flat = (v: unknown): number[] => (Array.isArray(v) ? v.flatMap(flat) : [v as number]);

function closeRelative(actual: ArrayLike<number>, expected: number[], rtol: number, what: string): void {
  // Relative to the array's scale, so that near-zero off-diagonal terms are judged fairly.
  const scale = Math.max(...expected.map(Math.abs));
  assertClose(actual, expected, rtol * scale, rtol, what);
}

for (const name of ['iris', 'synthetic3']) {
  const dir = join(dataDir, 'mixture/gmm', name);
  const reference = JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as {
    K: number;
    fixed_init: Record<CovarianceType, FitReference>;
  };
  const x = readMatrixCsv(join(dir, 'data.csv'));
  const labels = readLabelsFile(join(dir, 'init_labels.csv'), x.rows, reference.K);

  for (const type of COVARIANCE_TYPES) {
    const ref = reference.fixed_init[type];
    const make = (tol: number, maxIter: number) =>
      new GaussianMixture({
        nComponents: reference.K,
        covarianceType: type,
        initLabels: labels,
        tol,
        maxIter,
        onWarning: () => {},
      });

    test(`${name} ${type}: theta0 from one M step of the init labels`, () => {
      const gm = make(1e-12, 0).fit(x);
      closeRelative(gm.weights, ref.init_params.weights, 1e-12, 'weights');
      closeRelative(gm.means, flat(ref.init_params.means), 1e-12, 'means');
      closeRelative(gm.covariances, flat(ref.init_params.covariances), 1e-10, 'covariances');
    });

    test(`${name} ${type}: lower-bound trace, parameters and scores at tol 1e-12`, () => {
      // The reference trace runs 25 iterations past convergence: tol 0 never stops early.
      const traced = make(0, ref.trace_lower_bound.length).fit(x);
      assert.equal(traced.converged, false);
      assertClose(traced.trace, ref.trace_lower_bound, 1e-9, 0, 'trace');
      const gm = make(1e-12, 100000).fit(x);
      assert.ok(gm.converged);
      assert.ok(Math.abs(gm.nIter - ref.n_iter) <= 1, `nIter ${gm.nIter} vs ${ref.n_iter}`);
      // EM never decreases the likelihood, up to the reg_covar added to the diagonal (the M step is then
      // not an exact maximiser: iris tied dips by 5e-12 near convergence, with either tied formula).
      for (let j = 1; j < gm.trace.length; j++)
        assert.ok(
          gm.trace[j]! >= gm.trace[j - 1]! - 1e-10,
          `trace decreases at ${j} by ${gm.trace[j - 1]! - gm.trace[j]!}`,
        );
      closeRelative(gm.weights, ref.params.weights, 1e-6, 'weights');
      closeRelative(gm.means, flat(ref.params.means), 1e-6, 'means');
      closeRelative(gm.covariances, flat(ref.params.covariances), 1e-6, 'covariances');
      closeRelative(gm.precisionsCholesky, flat(ref.params.precisions_cholesky), 1e-6, 'precisionsCholesky');
      assertClose([gm.lowerBound], [ref.lower_bound], 1e-9, 0, 'lowerBound');
      assertClose([gm.score(x)], [ref.score], 1e-9, 0, 'score');
      assertClose([gm.bic(x), gm.aic(x)], [ref.bic, ref.aic], 1e-6, 0, 'bic/aic');
      assert.equal(gm.nParameters(), ref.n_parameters);

      const persample = readFileSync(join(dir, `persample_${type}.csv`), 'utf8')
        .trim()
        .split('\n')
        .slice(1);
      const scores = gm.scoreSamples(x);
      const predicted = gm.predict(x);
      const proba = gm.predictProba(x);
      const k = reference.K;
      persample.forEach((line, i) => {
        const cells = line.split(',').map(Number);
        assert.equal(predicted[i], cells[1], `label of row ${i}`);
        assertClose([scores[i]!], [cells[0]!], 1e-8, 1e-9, `score_samples[${i}]`);
        assertClose(proba.subarray(i * k, i * k + k), cells.slice(2), 1e-8, 1e-6, `proba[${i}]`);
      });
    });

    test(`${name} ${type}: default tol 1e-3 from the same start`, () => {
      const gm = make(1e-3, 100).fit(x);
      const d = ref.default_tol_from_same_init;
      assert.equal(gm.nIter, d.n_iter);
      assert.equal(gm.converged, d.converged);
      assertClose([gm.lowerBound, gm.score(x)], [d.lower_bound, d.score], 1e-9, 0, 'lower bound / score');
      assertClose([gm.bic(x)], [d.bic], 1e-6, 0, 'bic');
    });
  }
}
