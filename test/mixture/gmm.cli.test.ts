// `tailor gmm` end to end: fit -> JSON -> predict / score / sample, select, and the errors a
// user sees for bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, dataDir, assertClose } from '../helpers.js';

const cli = join(repoRoot, 'dist/src/cli/main.js');
const irisDir = join(dataDir, 'mixture/gmm/iris');
const irisData = join(irisDir, 'data.csv');

function tailor(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cli, 'gmm', ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const work = mkdtempSync(join(tmpdir(), 'tailor-gmm-cli-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

test('fit with the reference labels reproduces scikit-learn; predict and score use the saved model', () => {
  const reference = JSON.parse(readFileSync(join(irisDir, 'reference.json'), 'utf8')).fixed_init.diag;
  const model = join(work, 'diag.json');
  const fit = tailor(
    'fit',
    '--data',
    irisData,
    '--k',
    '3',
    '--covariance',
    'diag',
    '--init',
    `labels:${join(irisDir, 'init_labels.csv')}`,
    '--tol',
    '1e-12',
    '--max-iter',
    '100000',
    '--out',
    model,
  );
  assert.equal(fit.code, 0, fit.stderr);
  assert.match(fit.stdout, /diag GMM, K = 3, n = 150, d = 4: .* converged; wrote/);
  const json = JSON.parse(readFileSync(model, 'utf8'));
  assertClose(
    [json.score, json.bic, json.aic],
    [reference.score, reference.bic, reference.aic],
    1e-8,
    0,
    'scores',
  );
  assert.equal(json.nIter, reference.n_iter);
  assert.equal(json.converged, true);
  assert.equal(json.trace.length, json.nIter);
  assertClose(json.means.flat(), reference.params.means.flat(), 1e-8, 1e-6, 'means');
  for (const key of [
    'weights',
    'means',
    'covariances',
    'precisionsCholesky',
    'score',
    'bic',
    'aic',
    'nIter',
    'converged',
    'trace',
  ]) {
    assert.ok(key in json, key);
  }

  const predicted = tailor('predict', '--model', model, '--data', irisData, '--proba');
  assert.equal(predicted.code, 0, predicted.stderr);
  const lines = predicted.stdout.trim().split('\n');
  assert.equal(lines[0], 'label,p0,p1,p2');
  const expected = readFileSync(join(irisDir, 'persample_diag.csv'), 'utf8').trim().split('\n').slice(1);
  assert.equal(lines.length - 1, expected.length);
  expected.forEach((row, i) => assert.equal(lines[i + 1]!.split(',')[0], row.split(',')[1], `row ${i}`));

  const scored = tailor('score', '--model', model, '--data', irisData);
  assert.equal(scored.code, 0, scored.stderr);
  assertClose([JSON.parse(scored.stdout).score], [reference.score], 1e-8);

  const sampled = tailor('sample', '--model', model, '--n', '5', '--seed', '2');
  assert.equal(sampled.code, 0, sampled.stderr);
  assert.equal(
    sampled.stdout.trim().split('\n')[0],
    'sepal_length,sepal_width,petal_length,petal_width,component',
  );
  assert.equal(sampled.stdout.trim().split('\n').length, 6);

  // Starting from the saved model: EM is already at its optimum.
  const again = tailor(
    'fit',
    '--data',
    irisData,
    '--k',
    '3',
    '--covariance',
    'diag',
    '--init',
    `model:${model}`,
    '--tol',
    '1e-10',
  );
  assert.equal(again.code, 0, again.stderr);
  assert.ok(JSON.parse(again.stdout).nIter <= 2);
});

test('select prints the BIC table and stars the best model', () => {
  const r = tailor('select', '--data', irisData, '--k', '1..4', '--covariance', 'full,diag', '--n-init', '2');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^\s+K\s+full\s+diag$/m);
  assert.match(r.stdout, /^\s+2\s+574\.0\d\d\*/m);
  assert.match(r.stdout, /best \(lowest BIC\): K = 2, covariance full/);
  const json = tailor('select', '--data', irisData, '--k', '1,3', '--covariance', 'spherical', '--json');
  assert.equal(JSON.parse(json.stdout).rows.length, 2);
});

test('bad input names the file, line and column, or the option, with the remedy', () => {
  const bad = join(work, 'bad.csv');
  writeFileSync(bad, 'a,b\n1,2\n3\n5,6\n');
  let r = tailor('fit', '--data', bad, '--k', '2');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /bad\.csv:3: row has 1 fields but the header has 2/);

  writeFileSync(bad, 'a,b\n1,2\n3,x\n5,6\n');
  r = tailor('fit', '--data', bad, '--k', '2');
  assert.match(r.stderr, /bad\.csv:3: column 'b' has 'x', expected a finite number/);

  writeFileSync(bad, 'a,b\n1,2\n3,NaN\n');
  r = tailor('fit', '--data', bad, '--k', '2');
  assert.match(r.stderr, /bad\.csv:3: column 'b' has 'NaN'/);

  writeFileSync(bad, 'a,b\n1,2\n3,4\n');
  r = tailor('fit', '--data', bad, '--k', '3');
  assert.match(r.stderr, /2 data rows, fewer than the 3 components/);

  r = tailor('fit', '--data', irisData, '--k', '3', '--columns', 'petal_length,nope');
  assert.match(r.stderr, /no column 'nope'.*the header has: sepal_length/);

  // A point alone in its component with no regularisation: singular covariance, remedy named.
  const single = join(work, 'single.csv');
  writeFileSync(single, 'a,b\n0,0\n1,2\n2,1\n3,3\n1,1\n');
  const labels = join(work, 'labels.csv');
  writeFileSync(labels, 'label\n1\n0\n0\n0\n0\n');
  r = tailor('fit', '--data', single, '--k', '2', '--init', `labels:${labels}`, '--reg-covar', '0');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /component 1 of 2 .*--reg-covar/s);

  writeFileSync(labels, 'label\n1\n0\n7\n0\n0\n');
  r = tailor('fit', '--data', single, '--k', '2', '--init', `labels:${labels}`);
  assert.match(r.stderr, /labels\.csv:4: label '7' is not an integer in 0\.\.1/);

  r = tailor('fit', '--data', irisData);
  assert.match(r.stderr, /--k is required/);
  r = tailor('fit', '--data', irisData, '--k', '3', '--covariance', 'blocky');
  assert.match(r.stderr, /--covariance must be one of full, tied, diag, spherical/);
  r = tailor('fit', '--data', irisData, '--k', '3', '--tol', 'abc');
  assert.match(r.stderr, /--tol needs a non-negative number, got 'abc'/);
  r = tailor('predict', '--model', join(work, 'missing.json'), '--data', irisData);
  assert.match(r.stderr, /cannot read model/);
});

test('a fit that hits --max-iter warns on stderr and reports converged false', () => {
  const r = tailor('fit', '--data', irisData, '--k', '3', '--max-iter', '2');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /warning: the best of 1 start\(s\) did not converge in 2 iterations/);
  assert.equal(JSON.parse(r.stdout).converged, false);
});

test('fit --prior: the variational fit empties surplus components; predict, score and report read its model', () => {
  const model = join(work, 'bayes.json');
  const fit = tailor(
    'fit',
    '--data',
    irisData,
    '--k',
    '8',
    '--prior',
    'dirichlet-process',
    '--weight-concentration',
    '0.01',
    '--n-init',
    '2',
    '--out',
    model,
  );
  assert.equal(fit.code, 0, fit.stderr);
  assert.match(
    fit.stdout,
    /full variational GMM, K = 8, n = 150, d = 4: score -?[\d.]+, lower bound -?[\d.]+, \d of 8 components with weight >= 1%/,
  );
  const json = JSON.parse(readFileSync(model, 'utf8'));
  assert.equal(json.bic, null);
  assert.equal(json.bayesian.weightConcentrationPriorType, 'dirichlet_process');
  assert.equal(json.bayesian.priors.weightConcentration, 0.01);
  assert.equal(json.options.prior, 'dirichlet-process');
  assert.ok(json.weights.filter((w: number) => w < 1e-3).length >= 2, `weights ${json.weights}`);
  const predict = tailor('predict', '--model', model, '--data', irisData, '--proba');
  assert.equal(predict.code, 0, predict.stderr);
  assert.equal(predict.stdout.split('\n')[0], 'label,p0,p1,p2,p3,p4,p5,p6,p7');
  const score = tailor('score', '--model', model, '--data', irisData);
  assert.equal(score.code, 0, score.stderr);
  const summary = JSON.parse(score.stdout);
  assert.equal(summary.aic, null);
  assertClose([summary.score], [json.score], 1e-12, 0, 'score of the saved model');
  const sample = tailor('sample', '--model', model, '--n', '3');
  assert.equal(sample.code, 0, sample.stderr);

  const bad = (args: string[], pattern: RegExp) => {
    const r = tailor('fit', '--data', irisData, '--k', '8', ...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, pattern);
  };
  bad(['--dof', '5'], /--dof sets a prior of the variational fit: add --prior dirichlet-process/);
  const select = tailor('select', '--data', irisData, '--k', '1..3', '--prior', 'dirichlet-process');
  assert.equal(select.code, 2);
  assert.match(select.stderr, /select ranks models by BIC, which a variational fit does not have/);
  bad(['--prior', 'dp'], /--prior must be dirichlet-process or dirichlet-distribution, got 'dp'/);
  bad(
    ['--prior', 'dirichlet-process', '--mean-precision', '0'],
    /--mean-precision needs a positive number, got '0'/,
  );
  bad(
    ['--prior', 'dirichlet-process', '--dof', '2'],
    /degreesOfFreedomPrior must be > 3 \(features - 1\), got 2/,
  );
  bad(['--prior', 'dirichlet-process', '--mean-prior', '1,2'], /meanPrior has 2 values, the data 4 columns/);
  bad(
    ['--prior', 'dirichlet-distribution', '--init', `model:${model}`],
    /--init model:.* starts from a saved model's parameters; the variational fit starts from responsibilities/,
  );
});
