// What `tailor gmm` delegates to the library: warm starts from a saved model (precisions from
// their Cholesky factors), reading model files and the data to apply them to, and the CSV/JSON
// that predict, score and sample print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDir, assertClose } from '../helpers.js';
import { GaussianMixture } from '../../src/mixture/gaussian.js';
import { readLabelsFile, readMatrixCsv } from '../../src/mixture/csv.js';
import {
  gaussianInitByName,
  precisionsFromCholesky,
  warmStartFrom,
} from '../../src/mixture/gaussian-init.js';
import {
  GaussianModelError,
  gaussianModelToJson,
  readDataForModel,
  readGaussianModel,
} from '../../src/mixture/gaussian-model.js';
import { predictionsCsv, samplesCsv, scoreSummary } from '../../src/mixture/gaussian-report.js';
import { COVARIANCE_TYPES } from '../../src/mixture/gaussian-params.js';
import { Rng } from '../../src/util/rng.js';

const irisFile = join(dataDir, 'mixture/gmm/iris/data.csv');
const iris = readMatrixCsv(irisFile);
const irisLabels = readLabelsFile(join(dataDir, 'mixture/gmm/iris/init_labels.csv'), iris.rows, 3);
const work = mkdtempSync(join(tmpdir(), 'tailor-gmm-files-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

function fitted(covarianceType: (typeof COVARIANCE_TYPES)[number], maxIter = 1000): GaussianMixture {
  return new GaussianMixture({
    nComponents: 3,
    covarianceType,
    initLabels: irisLabels,
    tol: 1e-10,
    maxIter,
    onWarning: () => {},
  }).fit(iris);
}

test('precisions from Cholesky factors are the inverse covariances, for every covariance type', () => {
  const d = iris.cols;
  for (const type of COVARIANCE_TYPES) {
    const gm = fitted(type);
    const p = precisionsFromCholesky(type, d, gm.precisionsCholesky);
    const c = gm.covariances;
    assert.equal(p.length, c.length, type);
    if (type === 'diag' || type === 'spherical') {
      assertClose(
        p.map((v, i) => v * c[i]!),
        new Array(p.length).fill(1),
        1e-10,
        0,
        type,
      );
      continue;
    }
    for (let off = 0; off < p.length; off += d * d) {
      const product: number[] = [];
      for (let i = 0; i < d; i++)
        for (let j = 0; j < d; j++) {
          let s = 0;
          for (let m = 0; m < d; m++) s += p[off + i * d + m]! * c[off + m * d + j]!;
          product.push(s);
        }
      const identity = Array.from({ length: d * d }, (_, ij) => (ij % (d + 1) === 0 ? 1 : 0));
      assertClose(product, identity, 1e-8, 1e-8, `${type} block at ${off}`);
    }
  }
  assert.throws(() => precisionsFromCholesky('full', 4, [1, 2, 3]), /not a multiple of d x d = 16/);
});

test('a warm start from a fitted model continues EM where that model stopped', () => {
  for (const type of COVARIANCE_TYPES) {
    const done = fitted(type);
    const partial = fitted(type, 3);
    const target = { nComponents: 3, nFeatures: iris.cols, covarianceType: type };
    // From the converged model EM stops at once, with the same parameters.
    const again = new GaussianMixture({ ...target, ...warmStartFrom(done, target), tol: 1e-10 }).fit(iris);
    assert.ok(again.nIter <= 2, `${type}: ${again.nIter} iterations from the optimum`);
    assertClose(again.means, done.means, 1e-5, 1e-5, `${type} means`);
    // From a model stopped after 3 iterations it reaches the same optimum as the full run.
    const resumed = new GaussianMixture({ ...target, ...warmStartFrom(partial, target), tol: 1e-10 }).fit(
      iris,
    );
    assertClose([resumed.score(iris)], [done.score(iris)], 1e-9, 0, `${type} score`);
    assert.ok(resumed.nIter < done.nIter, `${type}: resumed ${resumed.nIter} < ${done.nIter}`);
  }
  const full = fitted('full');
  assert.throws(
    () => warmStartFrom(full, { nComponents: 2, nFeatures: 4, covarianceType: 'full' }),
    (e: Error) =>
      e instanceof GaussianModelError && e.message === 'the model has K = 3, d = 4; the fit has K = 2, d = 4',
  );
  assert.throws(
    () => warmStartFrom(full, { nComponents: 3, nFeatures: 4, covarianceType: 'diag' }),
    /the model's covariance type is full, not diag/,
  );
});

test('initialisation names map to the fit options; unknown names to nothing', () => {
  assert.equal(gaussianInitByName('kmeans++'), 'k-means++');
  assert.equal(gaussianInitByName('random-from-data'), 'random_from_data');
  assert.equal(gaussianInitByName('kmeans'), 'kmeans');
  assert.equal(gaussianInitByName('labels:x.csv'), undefined);
  assert.equal(gaussianInitByName('toString'), undefined);
});

test('model files: read back they predict as the fitted model; bad ones name the file and the fault', () => {
  const gm = fitted('tied');
  const file = join(work, 'tied.json');
  writeFileSync(file, JSON.stringify(gaussianModelToJson(gm, iris, { columns: iris.columns })));
  const { model, columns } = readGaussianModel(file);
  assert.deepEqual(columns, iris.columns);
  assert.deepEqual(Array.from(model.predict(iris)), Array.from(gm.predict(iris)));
  assertClose(model.scoreSamples(iris), gm.scoreSamples(iris), 1e-10, 0, 'log densities');

  const missing = join(work, 'missing.json');
  assert.throws(
    () => readGaussianModel(missing),
    (e: Error) =>
      e instanceof GaussianModelError && e.message.startsWith(`cannot read model ${missing}: ENOENT`),
  );
  const broken = join(work, 'broken.json');
  writeFileSync(broken, '{"format": ');
  assert.throws(
    () => readGaussianModel(broken),
    new RegExp(`^GaussianModelError: ${broken}: not valid JSON`),
  );
  const other = join(work, 'other.json');
  writeFileSync(other, '{"format": "sklearn"}');
  assert.throws(() => readGaussianModel(other), /field 'format' is "sklearn", not 'tailor-gmm'/);
});

test('data for a model: its columns by name, else in order with a note, and the count must match', () => {
  const gm = fitted('diag');
  const names = iris.columns;
  // The model's columns in another order, plus an extra one: picked by name.
  const shuffled = join(work, 'shuffled.csv');
  const rows = Array.from({ length: 5 }, (_, i) => Array.from(iris.data.subarray(i * 4, i * 4 + 4)));
  writeFileSync(
    shuffled,
    [
      'extra,' + [...names].reverse().join(','),
      ...rows.map((r, i) => `${i},` + [...r].reverse().join(',')),
    ].join('\n'),
  );
  const byName = readDataForModel(shuffled, gm, names);
  assert.equal(byName.note, undefined);
  assert.deepEqual(byName.x.columns, names);
  assert.deepEqual(Array.from(byName.x.data), rows.flat());

  const renamed = join(work, 'renamed.csv');
  writeFileSync(renamed, ['a,b,c,d', ...rows.map((r) => r.join(','))].join('\n'));
  const inOrder = readDataForModel(renamed, gm, names);
  assert.match(
    inOrder.note!,
    /renamed\.csv lacks the model's columns \(sepal_length, .*\); using its columns in order/,
  );
  assert.deepEqual(Array.from(inOrder.x.data), rows.flat());
  assert.deepEqual(
    Array.from(readDataForModel(renamed, gm, names, ['a', 'b', 'c', 'd']).x.data),
    rows.flat(),
  );

  assert.throws(
    () => readDataForModel(shuffled, gm, names, ['extra', 'a'].slice(0, 1)),
    /shuffled\.csv has 1 columns \(extra\) but the model was fitted on 4 \(sepal_length, .*\); pick them with --columns/,
  );
});

test('prediction, score and sample output agree with the model they come from', () => {
  const gm = fitted('full');
  const lines = predictionsCsv(gm, iris, { proba: true, logDensity: true }).trimEnd().split('\n');
  assert.equal(lines[0], 'label,p0,p1,p2,log_density');
  assert.equal(lines.length, iris.rows + 1);
  const labels = gm.predict(iris);
  const proba = gm.predictProba(iris);
  const density = gm.scoreSamples(iris);
  for (const i of [0, 70, 149]) {
    const cells = lines[i + 1]!.split(',').map(Number);
    assert.deepEqual(cells, [labels[i], proba[i * 3], proba[i * 3 + 1], proba[i * 3 + 2], density[i]]);
  }
  assert.equal(predictionsCsv(gm, iris).split('\n')[1], String(labels[0]));

  const summary = scoreSummary(gm, iris);
  assert.equal(summary.n, 150);
  assert.equal(summary.nParameters, 3 * 4 + 3 * 10 + 2);
  assertClose([summary.logLik], [density.reduce((a, b) => a + b, 0)], 1e-9, 0, 'logLik');
  assertClose([summary.bic!], [-2 * summary.logLik + summary.nParameters! * Math.log(150)], 1e-9, 0, 'bic');
  assertClose([summary.aic!], [-2 * summary.logLik + 2 * summary.nParameters!], 1e-9, 0, 'aic');

  const sampled = samplesCsv(gm, 4, new Rng(5), iris.columns).trimEnd().split('\n');
  const direct = gm.sample(4, new Rng(5));
  assert.equal(sampled[0], `${iris.columns.join(',')},component`);
  assert.equal(sampled[2], [...direct.x.data.subarray(4, 8), direct.labels[1]].join(','));
  assert.equal(samplesCsv(gm, 1, new Rng(5)).split('\n')[0], 'x1,x2,x3,x4,component');
});
