// The Gaussian mixture's API: initialisations, restarts, warm start, warnings, errors, sampling,
// the model JSON, k-means, and the BIC table against mclust's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, assertClose } from '../helpers.js';
import { GaussianMixture } from '../../src/mixture/gaussian.js';
import type { GaussianInit } from '../../src/mixture/gaussian-options.js';
import { readLabelsFile, readMatrixCsv } from '../../src/mixture/csv.js';
import {
  COVARIANCE_TYPES,
  SingularCovarianceError,
  type CovarianceType,
} from '../../src/mixture/gaussian-params.js';
import { gaussianModelFromJson, gaussianModelToJson } from '../../src/mixture/gaussian-model.js';
import { setUnrolledKernels } from '../../src/mixture/gaussian-kernels.js';
import { kmeans, kmeansPlusPlus } from '../../src/mixture/kmeans.js';
import { fromRows, inverseSpd, type DenseMatrix } from '../../src/mixture/linalg.js';
import { MixtureArgumentError } from '../../src/mixture/index.js';
import { UserError } from '../../src/util/errors.js';
import { formatBicTable, selectByBic } from '../../src/mixture/select.js';
import { Rng } from '../../src/util/rng.js';

const gmmDir = join(dataDir, 'mixture/gmm');
const iris = readMatrixCsv(join(gmmDir, 'iris/data.csv'));
const irisLabels = readLabelsFile(join(gmmDir, 'iris/init_labels.csv'), iris.rows, 3);
const irisRef = JSON.parse(readFileSync(join(gmmDir, 'iris/reference.json'), 'utf8')) as {
  fixed_init: Record<
    CovarianceType,
    { params: { weights: number[]; means: number[][]; covariances: unknown }; score: number }
  >;
  kmeans_ninit10: Record<CovarianceType, { score: number }>;
};
const quiet = { onWarning: () => {} };

function blobs(n: number, seed: number): { x: DenseMatrix; truth: Int32Array } {
  const rng = new Rng(seed);
  const centres = [
    [0, 0],
    [8, 0],
    [0, 8],
  ];
  const data = new Float64Array(n * 2);
  const truth = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const c = i % 3;
    truth[i] = c;
    data[i * 2] = centres[c]![0]! + rng.normal();
    data[i * 2 + 1] = centres[c]![1]! + 0.5 * rng.normal();
  }
  return { x: { rows: n, cols: 2, data }, truth };
}

/** Whether two labelings agree up to a renaming of the components. */
function samePartition(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  const map = new Map<number, number>();
  for (let i = 0; i < a.length; i++) {
    const m = map.get(a[i]!);
    if (m === undefined) map.set(a[i]!, b[i]!);
    else if (m !== b[i]) return false;
  }
  return new Set(map.values()).size === map.size;
}

test('predict, predictProba, scoreSamples and score agree with each other and with fitPredict', () => {
  for (const covarianceType of COVARIANCE_TYPES) {
    const gm = new GaussianMixture({ nComponents: 3, covarianceType, seed: 3, ...quiet });
    const fitLabels = gm.fitPredict(iris);
    const labels = gm.predict(iris);
    assert.deepEqual(labels, fitLabels);
    const proba = gm.predictProba(iris);
    for (let i = 0; i < iris.rows; i++) {
      const row = proba.subarray(i * 3, i * 3 + 3);
      assertClose([row[0]! + row[1]! + row[2]!], [1], 1e-12, 0, 'row sum');
      assert.equal(labels[i], row.indexOf(Math.max(...row)));
    }
    const s = gm.scoreSamples(iris);
    assertClose([gm.score(iris)], [s.reduce((a, b) => a + b, 0) / s.length], 1e-12, 0, 'score');
    const p = gm.nParameters();
    assertClose(
      [gm.bic(iris), gm.aic(iris)],
      [-2 * gm.score(iris) * 150 + p * Math.log(150), -2 * gm.score(iris) * 150 + 2 * p],
      1e-9,
    );
  }
});

test('k-means initialisation with 10 starts reaches scikit-learn n_init=10 optimum on iris', () => {
  for (const covarianceType of COVARIANCE_TYPES) {
    const gm = new GaussianMixture({ nComponents: 3, covarianceType, nInit: 10, ...quiet }).fit(iris);
    assertClose([gm.score(iris)], [irisRef.kmeans_ninit10[covarianceType].score], 1e-4, 0, covarianceType);
    assert.equal(gm.starts.length, 10);
    assert.equal(gm.lowerBound, Math.max(...gm.starts.map((s) => s.lowerBound)));
  }
});

test('every initialisation is reproducible from its seed, starts elsewhere for another seed and reaches the optimum', () => {
  const optimum = irisRef.kmeans_ninit10.diag.score;
  const firstBounds = new Set<number>();
  for (const initParams of ['kmeans', 'k-means++', 'random', 'random_from_data'] as GaussianInit[]) {
    const fit = (seed: number) =>
      new GaussianMixture({
        nComponents: 3,
        covarianceType: 'diag',
        initParams,
        seed,
        maxIter: 300,
        ...quiet,
      }).fit(iris);
    const a = fit(7);
    const b = fit(7);
    assert.equal(a.lowerBound, b.lowerBound, initParams);
    assert.deepEqual(a.means, b.means);
    // The seed drives the start: another seed starts EM at another point.
    assert.notEqual(fit(8).trace[0], a.trace[0], `${initParams}: seed 8 starts where seed 7 does`);
    firstBounds.add(a.trace[0]!);
    // Each start leads EM to scikit-learn's best diag fit of 10 k-means starts (within 0.01 nats/sample).
    assert.ok(Math.abs(a.score(iris) - optimum) < 0.01, `${initParams}: ${a.score(iris)} vs ${optimum}`);
  }
  assert.equal(firstBounds.size, 4, 'the four initialisations start from four different points');
});

test('a best start that did not converge gives a warning, converged=false and the iteration cap', () => {
  const warnings: string[] = [];
  const gm = new GaussianMixture({
    nComponents: 3,
    initLabels: irisLabels,
    maxIter: 2,
    onWarning: (m) => warnings.push(m),
  }).fit(iris);
  assert.equal(gm.converged, false);
  assert.equal(gm.nIter, 2);
  assert.equal(gm.trace.length, 2);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /did not converge/);
  assert.deepEqual(gm.warnings, warnings);
  const ok = new GaussianMixture({
    nComponents: 3,
    initLabels: irisLabels,
    onWarning: (m) => warnings.push(m),
  }).fit(iris);
  assert.equal(ok.converged, true);
  assert.equal(warnings.length, 1);
});

test('warm start continues EM where the previous fit stopped', () => {
  for (const covarianceType of COVARIANCE_TYPES) {
    const once = new GaussianMixture({
      nComponents: 3,
      covarianceType,
      initLabels: irisLabels,
      tol: 1e-10,
      maxIter: 1000,
    }).fit(iris);
    const warm = new GaussianMixture({
      nComponents: 3,
      covarianceType,
      initLabels: irisLabels,
      tol: 1e-10,
      maxIter: 3,
      warmStart: true,
      ...quiet,
    });
    warm.fit(iris);
    assert.equal(warm.nIter, 3);
    warm.maxIter = 1000;
    warm.fit(iris);
    assert.ok(warm.converged);
    assert.equal(3 + warm.nIter, once.nIter, covarianceType);
    assertClose(warm.means, once.means, 1e-12, 1e-10, `${covarianceType} means`);
    assertClose(warm.covariances, once.covariances, 1e-12, 1e-10, `${covarianceType} covariances`);
  }
});

test('given weights, means and precisions start EM there', () => {
  for (const covarianceType of COVARIANCE_TYPES) {
    const ref = irisRef.fixed_init[covarianceType].params;
    const cov = (ref.covariances as unknown[]).flat(2) as number[];
    let precisions: number[];
    if (covarianceType === 'diag' || covarianceType === 'spherical') precisions = cov.map((v) => 1 / v);
    else {
      precisions = [];
      for (let off = 0; off < cov.length; off += 16) precisions.push(...inverseSpd(cov, off, 4)!);
    }
    const gm = new GaussianMixture({
      nComponents: 3,
      covarianceType,
      weightsInit: ref.weights,
      meansInit: ref.means,
      precisionsInit: precisions,
      tol: 1e-10,
    }).fit(iris);
    // Started at scikit-learn's optimum (tol 1e-12), EM stops at once and stays there.
    assert.ok(gm.nIter <= 2, `${covarianceType}: ${gm.nIter} iterations`);
    assertClose(gm.means, ref.means.flat(), 1e-7, 1e-6, `${covarianceType} means`);
    assertClose([gm.score(iris)], [irisRef.fixed_init[covarianceType].score], 1e-9);
  }
  assert.throws(
    () =>
      new GaussianMixture({
        nComponents: 3,
        weightsInit: [0.5, 0.5, 0.5],
        meansInit: [[0, 0, 0, 0]],
        ...quiet,
      }).fit(iris),
    /weightsInit must sum to 1/,
  );
  assert.throws(
    () =>
      new GaussianMixture({
        nComponents: 2,
        covarianceType: 'tied',
        precisionsInit: [
          [1, 2, 0, 0],
          [2, 1, 0, 0],
          [0, 0, 1, 0],
          [0, 0, 0, 1],
        ],
      }).fit(iris),
    /not positive definite/,
  );
});

test('a singular covariance names the component and the --reg-covar remedy', () => {
  // Component 1 gets a single point at the origin: with no regularisation its covariance is exactly zero.
  const withOrigin = { rows: 151, cols: 4, data: new Float64Array(151 * 4) };
  withOrigin.data.set(iris.data);
  const labels = new Int32Array(151);
  labels[150] = 1;
  for (const covarianceType of ['full', 'diag', 'spherical'] as CovarianceType[]) {
    const gm = new GaussianMixture({ nComponents: 2, covarianceType, initLabels: labels, regCovar: 0 });
    assert.throws(
      () => gm.fit(withOrigin),
      (e: unknown) =>
        e instanceof SingularCovarianceError &&
        e.component === 1 &&
        /component 1 of 2/.test(e.message) &&
        /--reg-covar/.test(e.message),
      covarianceType,
    );
  }
  // An empty component (no label 2) is reported as empty.
  const empty = new GaussianMixture({
    nComponents: 3,
    initLabels: irisLabels.map((l) => (l === 2 ? 0 : l)),
    regCovar: 0,
  });
  assert.throws(() => empty.fit(iris), /component 2 of 3.*empty/s);
  // A constant column makes the tied covariance singular.
  const constant = {
    rows: 150,
    cols: 2,
    data: Float64Array.from({ length: 300 }, (_, e) => (e % 2 ? 1 : iris.data[e]!)),
  };
  assert.throws(
    () => new GaussianMixture({ nComponents: 2, covarianceType: 'tied', regCovar: 0 }).fit(constant),
    /shared \(tied\) covariance/,
  );
  // The default regularisation fits the same data.
  assert.ok(new GaussianMixture({ nComponents: 2, covarianceType: 'tied', ...quiet }).fit(constant).isFitted);
});

test('bad data and options are refused with a reason', () => {
  assert.throws(() => new GaussianMixture({ nComponents: 0 }), /nComponents must be an integer >= 1/);
  assert.throws(
    () => new GaussianMixture({ nComponents: 2, covarianceType: 'banana' as CovarianceType }),
    /covarianceType/,
  );
  const tiny = { rows: 2, cols: 1, data: Float64Array.of(1, 2) };
  assert.throws(
    () => new GaussianMixture({ nComponents: 3 }).fit(tiny),
    /2 samples, fewer than the 3 components/,
  );
  const nan = { rows: 3, cols: 1, data: Float64Array.of(1, NaN, 2) };
  assert.throws(() => new GaussianMixture({ nComponents: 1 }).fit(nan), /row 1, column 0/);
  const gm = new GaussianMixture({ nComponents: 2, ...quiet }).fit(iris);
  assert.throws(() => gm.predict(tiny), /1 columns but the model was fitted on 4/);
  assert.throws(() => new GaussianMixture({ nComponents: 2 }).predict(iris), /not fitted/);
});

test('argument errors are MixtureArgumentErrors (UserErrors), also for wrong types from JavaScript', () => {
  const named = (fn: () => unknown, re: RegExp) =>
    assert.throws(
      fn,
      (e: Error) => e instanceof MixtureArgumentError && e instanceof UserError && re.test(e.message),
    );
  const js = (v: unknown) => v as never;
  named(() => new GaussianMixture({ nComponents: 0 }), /^nComponents must be an integer >= 1, got 0$/);
  named(() => new GaussianMixture({ nComponents: js('2') }), /nComponents must be an integer >= 1/);
  named(() => new GaussianMixture({ nComponents: 2, tol: js('0.1') }), /^tol must be >= 0, got 0.1$/);
  named(() => new GaussianMixture({ nComponents: 2, regCovar: js('1') }), /regCovar must be >= 0/);
  named(() => new GaussianMixture({ nComponents: 2, seed: js('7') }), /^seed must be a number, got '7'$/);
  named(() => new GaussianMixture(js(undefined)), /^options must be an object, got undefined$/);
  named(() => new GaussianMixture({ nComponents: 2 }).fit(js([[1], [2], [3]])), /DenseMatrix.*fromRows/);
  named(
    () => new GaussianMixture({ nComponents: 2 }).fit(js('x.csv')),
    /^data must be a DenseMatrix.*got 'x.csv'$/,
  );
  named(() => new GaussianMixture({ nComponents: 2 }).predict(iris), /not fitted/);
  named(() => kmeans(js([[1]]), 1, new Rng(0)), /DenseMatrix/);
  named(() => kmeans(iris, js('3'), new Rng(0)), /^k must be an integer >= 1, got 3$/);
  named(
    () => selectByBic(iris, js({ ks: 3, covarianceTypes: ['full'] })),
    /^options.ks must be an array, got 3$/,
  );
  named(() => fromRows([]), /matrix has no rows/);
  assert.equal(new MixtureArgumentError('x').name, 'MixtureArgumentError');
  assert.equal(new MixtureArgumentError('x').exitCode, 2);
});

test('sample draws from the mixture: component counts follow the weights, moments the parameters', () => {
  const gm = new GaussianMixture({ nComponents: 3, initLabels: irisLabels, ...quiet }).fit(iris);
  const n = 30000;
  const { x, labels } = gm.sample(n, new Rng(5));
  assert.equal(x.rows, n);
  for (let i = 1; i < n; i++) assert.ok(labels[i]! >= labels[i - 1]!, 'grouped by component');
  for (let c = 0; c < 3; c++) {
    const rows = [...labels.keys()].filter((i) => labels[i] === c);
    assertClose([rows.length / n], [gm.weights[c]!], 0.015, 0, `weight ${c}`);
    for (let j = 0; j < 4; j++) {
      const mean = rows.reduce((s, i) => s + x.data[i * 4 + j]!, 0) / rows.length;
      const sd = Math.sqrt(gm.covariances[c * 16 + j * 5]!);
      assertClose([mean], [gm.means[c * 4 + j]!], (4 * sd) / Math.sqrt(rows.length), 0, `mean ${c},${j}`);
    }
  }
});

test('the model JSON round-trips', () => {
  for (const covarianceType of COVARIANCE_TYPES) {
    const gm = new GaussianMixture({ nComponents: 3, covarianceType, seed: 1, ...quiet }).fit(iris);
    const json = JSON.parse(JSON.stringify(gaussianModelToJson(gm, iris, { columns: iris.columns })));
    assert.equal(json.nIter, gm.nIter);
    assert.deepEqual(json.trace, gm.trace);
    const { model, columns } = gaussianModelFromJson(json, 'model.json');
    assert.deepEqual(columns, iris.columns);
    assert.deepEqual(model.predict(iris), gm.predict(iris));
    assertClose(model.scoreSamples(iris), gm.scoreSamples(iris), 1e-12, 1e-12);
    assertClose(model.precisionsCholesky, gm.precisionsCholesky, 1e-12, 1e-10);
  }
  assert.throws(() => gaussianModelFromJson({ format: 'other' }, 'm.json'), /m\.json: field 'format'/);
});

test('k-means recovers separated blobs; k-means++ picks distinct points', () => {
  const { x, truth } = blobs(600, 11);
  const r = kmeans(x, 3, new Rng(2));
  assert.ok(samePartition(r.labels, truth));
  const seeds = kmeansPlusPlus(x, 3, new Rng(4));
  assert.equal(new Set(seeds.indices).size, 3);
  // The seeds land in three different blobs.
  assert.equal(new Set([...seeds.indices].map((i) => truth[i])).size, 3);
  const gm = new GaussianMixture({ nComponents: 3, covarianceType: 'diag', ...quiet }).fit(x);
  assert.ok(samePartition(gm.predict(x), truth));
});

test('BIC selection agrees with mclust on iris and synthetic3 (VVV/EEE/VVI/VII)', () => {
  const mclustName: Record<CovarianceType, string> = {
    full: 'VVV',
    tied: 'EEE',
    diag: 'VVI',
    spherical: 'VII',
  };
  for (const [name, k, bestBic] of [
    ['iris', 2, 574.0178],
    ['synthetic3', 3, 4364.7053],
  ] as const) {
    const x = readMatrixCsv(join(gmmDir, name, 'data.csv'));
    const mclust = JSON.parse(readFileSync(join(gmmDir, name, 'mclust_reference.json'), 'utf8')) as {
      bic_selection: { bic_table: Record<string, Record<string, number>> };
    };
    const result = selectByBic(x, {
      ks: [1, 2, 3, 4],
      covarianceTypes: COVARIANCE_TYPES,
      nInit: 3,
      tol: 1e-8,
      maxIter: 1000,
    });
    assert.equal(result.best?.covarianceType, 'full', name);
    assert.equal(result.best?.k, k, name);
    // mclust stops at its own tolerance (relative change 1e-5): agreement to a few hundredths.
    assertClose([result.best!.bic], [bestBic], 0.02, 0, `${name} best BIC`);
    for (const row of result.rows) {
      const theirs = -mclust.bic_selection.bic_table[String(row.k)]![mclustName[row.covarianceType]]!;
      // K = 1 is closed form; for K > 1 EM may stop at another local optimum, but not a much worse one.
      if (row.k === 1) assertClose([row.bic], [theirs], 1e-3, 0, `${name} K=1 ${row.covarianceType}`);
      else
        assert.ok(
          row.bic < theirs + 2,
          `${name} K=${row.k} ${row.covarianceType}: ${row.bic} vs mclust ${theirs}`,
        );
    }
    const table = formatBicTable(result);
    assert.match(table, new RegExp(`best \\(lowest BIC\\): K = ${k}, covariance full`));
    assert.equal((table.match(/\*/g) ?? []).length, 1);
  }
});

test('the generated unrolled kernels give the same fits as the plain loops', () => {
  const synthetic = readMatrixCsv(join(gmmDir, 'synthetic3/data.csv'));
  for (const [x, labels] of [
    [iris, irisLabels],
    [synthetic, readLabelsFile(join(gmmDir, 'synthetic3/init_labels.csv'), synthetic.rows, 3)],
  ] as const) {
    for (const covarianceType of COVARIANCE_TYPES) {
      const fit = () =>
        new GaussianMixture({ nComponents: 3, covarianceType, initLabels: labels, tol: 1e-10, ...quiet }).fit(
          x,
        );
      const unrolled = fit();
      setUnrolledKernels(false);
      let loops: GaussianMixture;
      try {
        loops = fit();
      } finally {
        setUnrolledKernels(true);
      }
      assert.deepEqual(unrolled.trace, loops.trace, covarianceType);
      assert.deepEqual(unrolled.means, loops.means);
      assert.deepEqual(unrolled.covariances, loops.covariances);
      assert.deepEqual(unrolled.scoreSamples(x), loops.scoreSamples(x));
    }
  }
});

test('fitting twice gives the same model: every fit draws its starts from the seed (scikit-learn with an integer random_state)', () => {
  const rng = new Rng(9);
  const rows = Array.from({ length: 200 }, (_, i) => [
    rng.normal() + (i % 4) * 3,
    rng.normal() - (i % 2) * 4,
  ]);
  const x = fromRows(rows);
  for (const initParams of ['kmeans', 'random', 'random_from_data'] as const) {
    const gm = new GaussianMixture({ nComponents: 4, initParams, nInit: 2, seed: 4, onWarning: () => {} });
    const first = gm.fit(x).means.slice();
    assert.deepEqual(Array.from(gm.fit(x).means), Array.from(first), initParams);
    assert.deepEqual(Array.from(gm.fitPredict(x)), Array.from(gm.predict(x)), initParams);
  }
});
