// The latent-subgroup model's pieces that the reference cases do not cover: AR(1) residuals and
// unbalanced subjects (against a dense-matrix likelihood and by simulation), the class ordering,
// the gamma Newton step under separation, the chi-square tail, CSV errors and the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, dataDir, assertClose } from '../helpers.js';
import { Rng } from '../../src/util/rng.js';
import { parseCsv } from '../../src/mixture/csv.js';
import {
  type SubgroupData,
  readSubgroupCsv,
  subgroupDataFromTable,
} from '../../src/mixture/subgroup/data.js';
import { cholesky } from '../../src/mixture/linalg.js';
import { type SubgroupParams, eStep } from '../../src/mixture/subgroup/model.js';
import { computeStats } from '../../src/mixture/subgroup/stats.js';
import { fitSubgroup, orderClasses } from '../../src/mixture/subgroup/fit.js';
import { membershipObjective, updateMembership } from '../../src/mixture/subgroup/membership.js';
import { chiSquareSurvival } from '../../src/mixture/subgroup/chisq.js';

interface Simulated {
  data: SubgroupData;
  truth: SubgroupParams;
}

/** Unbalanced AR(1) data: 3..7 visits at increasing integer times with gaps of 1 or 2. */
function simulate(N: number, truth: SubgroupParams, seed: number): Simulated {
  const rng = new Rng(seed);
  const K = truth.mu.length;
  const lines = ['id,time,y,x1,x2,u1'];
  for (let i = 0; i < N; i++) {
    const u1 = rng.normal();
    const eta = Array.from({ length: K }, (_, k) => truth.gamma[k * 2]! + truth.gamma[k * 2 + 1]! * u1);
    const max = Math.max(...eta);
    const w = eta.map((e) => Math.exp(e - max));
    let r = rng.uniform() * w.reduce((a, b) => a + b, 0);
    let k = 0;
    while (k < K - 1 && (r -= w[k]!) > 0) k++;
    const b = truth.mu[k]! + Math.sqrt(truth.sigmaB2) * rng.normal();
    const visits = 3 + rng.int(5);
    const x2 = rng.uniform() < 0.5 ? 1 : 0;
    let t = 0;
    let e = 0;
    let previousTime = 0;
    for (let v = 0; v < visits; v++) {
      if (v > 0) t += 1 + rng.int(2);
      const rho = v === 0 ? 0 : Math.pow(truth.phi, t - previousTime);
      e = v === 0 ? rng.normal() : rho * e + Math.sqrt(1 - rho * rho) * rng.normal();
      previousTime = t;
      const x1 = t / 2;
      const y = truth.alpha[0]! * x1 + truth.alpha[1]! * x2 + b + Math.sqrt(truth.sigmaEps2) * e;
      lines.push(`s${i},${t},${y},${x1},${x2},${u1}`);
    }
  }
  const table = parseCsv(lines.join('\n') + '\n', 'simulated.csv');
  const data = subgroupDataFromTable(table, {
    id: 'id',
    time: 'time',
    y: 'y',
    fixed: ['x1', 'x2'],
    membership: ['u1'],
  });
  return { data, truth };
}

const TRUTH: SubgroupParams = {
  alpha: Float64Array.from([0.8, -1]),
  mu: Float64Array.from([0, 4]),
  sigmaB2: 0.5,
  sigmaEps2: 1,
  phi: 0.5,
  gamma: Float64Array.from([0, 0, 0.3, 1]),
};

/** Marginal log-likelihood of subject i with dense Sigma = sB2 J + sE2 R (Cholesky). */
function denseLogLik(data: SubgroupData, params: SubgroupParams, K: number, i: number): number {
  const start = data.offsets[i]!;
  const t = data.offsets[i + 1]! - start;
  const Sigma = new Float64Array(t * t);
  for (let a = 0; a < t; a++) {
    for (let b = 0; b < t; b++) {
      const lag = Math.abs(data.time[start + a]! - data.time[start + b]!);
      Sigma[a * t + b] = params.sigmaB2 + params.sigmaEps2 * Math.pow(params.phi, lag);
    }
  }
  const L = cholesky(Sigma, t)!;
  let logdet = 0;
  for (let a = 0; a < t; a++) logdet += 2 * Math.log(L[a * t + a]!);
  const eta = Array.from({ length: K }, (_, k) =>
    Array.from({ length: data.q }, (_, j) => data.U[i * data.q + j]! * params.gamma[k * data.q + j]!).reduce(
      (x, y) => x + y,
    ),
  );
  const norm = Math.log(eta.reduce((s, e) => s + Math.exp(e), 0));
  let total = 0;
  for (let k = 0; k < K; k++) {
    const z = new Float64Array(t);
    for (let a = 0; a < t; a++) {
      let r = data.y[start + a]! - params.mu[k]!;
      for (let c = 0; c < data.p; c++) r -= data.W[(start + a) * data.p + c]! * params.alpha[c]!;
      for (let b = 0; b < a; b++) r -= L[a * t + b]! * z[b]!;
      z[a] = r / L[a * t + a]!;
    }
    const quad = z.reduce((s, v) => s + v * v, 0);
    total += Math.exp(eta[k]! - norm - 0.5 * (t * Math.log(2 * Math.PI) + logdet + quad));
  }
  return Math.log(total);
}

test('AR(1), unbalanced: the whitened Woodbury likelihood equals the dense-matrix one', () => {
  const { data } = simulate(40, TRUTH, 3);
  const params: SubgroupParams = { ...TRUTH, phi: 0.63 };
  const e = eStep(data, computeStats(data, 'ar1', params.phi), params, 2);
  for (let i = 0; i < data.nSubjects; i++) {
    const dense = denseLogLik(data, params, 2, i);
    assert.ok(
      Math.abs(e.perSubject[i]! - dense) < 1e-9,
      `subject ${i}: ${e.perSubject[i]} vs dense ${dense}`,
    );
  }
  const visits = new Set(
    Array.from({ length: data.nSubjects }, (_, i) => data.offsets[i + 1]! - data.offsets[i]!),
  );
  assert.ok(visits.size > 1, 'the simulated subjects should be unbalanced');
});

test('AR(1), unbalanced: EM never decreases and recovers phi and the other parameters', () => {
  const { data, truth } = simulate(300, TRUTH, 11);
  const plain = fitSubgroup(data, {
    K: 2,
    correlation: 'ar1',
    starts: 1,
    acceleration: 'none',
    maxIter: 150,
    standardErrors: false,
  });
  for (let j = 1; j < plain.trace.length; j++)
    assert.ok(plain.trace[j]! >= plain.trace[j - 1]! - 1e-9, `decrease at ${j}`);

  const fit = fitSubgroup(data, { K: 2, correlation: 'ar1', starts: 2, seed: 1 });
  assert.ok(fit.converged);
  const se = fit.se!;
  const within = (estimate: number, sd: number | null, target: number, what: string): void => {
    assert.ok(sd !== null && Number.isFinite(sd), `${what}: no SE`);
    assert.ok(Math.abs(estimate - target) <= 3 * sd, `${what}: ${estimate} vs truth ${target} (SE ${sd})`);
  };
  within(fit.params.phi, se.phi, truth.phi, 'phi');
  within(fit.params.sigmaEps2, se.sigmaEps2, truth.sigmaEps2, 'sigmaEps2');
  within(fit.params.sigmaB2, se.sigmaB2, truth.sigmaB2, 'sigmaB2');
  truth.alpha.forEach((a, j) => within(fit.params.alpha[j]!, se.alpha[j]!, a, `alpha[${j}]`));
  truth.mu.forEach((m, k) => within(fit.params.mu[k]!, se.mu[k]!, m, `mu[${k}]`));
  within(fit.params.gamma[3]!, se.gamma[1]![1]!, truth.gamma[3]!, 'gamma[2][u1]');
  // The maximum is at least as high as the truth.
  const atTruth = eStep(data, computeStats(data, 'ar1', truth.phi), truth, 2).logLik;
  assert.ok(fit.logLik >= atTruth, `${fit.logLik} < logLik at truth ${atTruth}`);
  // Independence is nested (phi = 0): it cannot fit better.
  const indep = fitSubgroup(data, { K: 2, starts: 2, standardErrors: false });
  assert.ok(indep.logLik < fit.logLik);
  assert.equal(indep.npm + 1, fit.npm);
});

test('ordering classes by mu re-references gamma and leaves the likelihood unchanged', () => {
  const { data } = simulate(30, TRUTH, 5);
  const params: SubgroupParams = {
    ...TRUTH,
    mu: Float64Array.from([4, 0, 2]),
    gamma: Float64Array.from([0, 0, -0.5, 1, 0.7, -2]),
  };
  const stats = computeStats(data, 'ar1', params.phi);
  const before = eStep(data, stats, params, 3);
  const { params: ordered, order } = orderClasses(params, 3, data.q);
  assert.deepEqual(order, [1, 2, 0]);
  assert.deepEqual(Array.from(ordered.mu), [0, 2, 4]);
  assert.deepEqual(Array.from(ordered.gamma.slice(0, 2)), [0, 0]);
  const after = eStep(data, stats, ordered, 3);
  assert.ok(Math.abs(before.logLik - after.logLik) < 1e-9);
  for (let i = 0; i < data.nSubjects; i++) {
    assertClose(
      after.resp.slice(i * 3, i * 3 + 3),
      order.map((k) => before.resp[i * 3 + k]!),
      1e-12,
      0,
      'resp',
    );
  }
});

test('gamma Newton step: zero gradient at an interior optimum; the bound and a flag under separation', () => {
  const { data } = simulate(200, TRUTH, 8);
  const K = 2;
  const rng = new Rng(2);
  const soft = new Float64Array(data.nSubjects * K);
  for (let i = 0; i < data.nSubjects; i++) {
    const p = 1 / (1 + Math.exp(-(0.2 + 0.8 * data.U[i * 2 + 1]!)));
    const r = 0.8 * (rng.uniform() < p ? 1 : 0) + 0.1;
    soft[i * K] = 1 - r;
    soft[i * K + 1] = r;
  }
  const start = new Float64Array(K * data.q);
  const interior = updateMembership(data, soft, start, K);
  assert.equal(interior.atBound, false);
  const f = (g: Float64Array): number => membershipObjective(data, soft, g, K);
  for (let j = 2; j < 4; j++) {
    const h = 1e-5;
    const plus = Float64Array.from(interior.gamma);
    const minus = Float64Array.from(interior.gamma);
    plus[j]! += h;
    minus[j]! -= h;
    assert.ok(Math.abs((f(plus) - f(minus)) / (2 * h)) < 1e-5, `gradient ${j}`);
  }
  assert.ok(f(interior.gamma) > f(start));
  // Complete separation: class 2 exactly when u1 > 0.
  const hard = new Float64Array(data.nSubjects * K);
  for (let i = 0; i < data.nSubjects; i++) hard[i * K + (data.U[i * 2 + 1]! > 0 ? 1 : 0)] = 1;
  const separated = updateMembership(data, hard, start, K, { ridge: 1e-8, bound: 25, maxNewton: 50 });
  assert.equal(separated.atBound, true);
  assert.ok(separated.gamma.every((g) => Number.isFinite(g) && Math.abs(g) <= 25));
  const fHard = (g: Float64Array): number => membershipObjective(data, hard, g, K);
  assert.ok(fHard(separated.gamma) > fHard(start));
  assert.ok(fHard(separated.gamma) > -0.1 * data.nSubjects, 'the separated fit should be nearly perfect');
});

test('chi-square upper tail, including tiny p-values', () => {
  const cases: [number, number, number][] = [
    [27.0072526615841, 2, Math.exp(-27.0072526615841 / 2)],
    [128.337454375855, 4, 8.82907305588053e-27],
    [8.20321647467239, 1, 0.0041816193108462],
    [3.841458820694124, 1, 0.05],
    [18.307038053275146, 10, 0.05],
    [0.5, 3, 0.9188914116546758],
    [0, 2, 1],
  ];
  for (const [x, df, p] of cases) {
    const got = chiSquareSurvival(x, df);
    assert.ok(Math.abs(got / p - 1) < 1e-9, `P(chi2_${df} > ${x}) = ${got}, expected ${p}`);
  }
});

test('bad CSV input: errors name the file, line and column', () => {
  const columns = { id: 'id', time: 'time', y: 'y', fixed: ['x'], membership: ['u'] };
  const check = (text: string, pattern: RegExp): void => {
    assert.throws(() => subgroupDataFromTable(parseCsv(text, 'long.csv'), columns), pattern);
  };
  check('id,time,y,x\n1,0,1,2\n', /long\.csv: no column 'u' \(given as --membership\)/);
  check('id,time,y,x,u\n1,0,1,2,0\n1,1,abc,2,0\n', /long\.csv:3: column 'y' has 'abc'/);
  check('id,time,y,x,u\n1,0,1,NaN,0\n', /long\.csv:2: column 'x' has 'NaN'/);
  check('id,time,y,x,u\n1,0,1,,0\n', /long\.csv:2: column 'x' has an empty cell/);
  check(
    'id,time,y,x,u\n1,0,1,2,0\n1,1,1,2,1\n',
    /long\.csv:3: membership column 'u' changes within subject '1'/,
  );
  check('id,time,y,x,u\n1,0,1,2\n', /long\.csv:2: row has 4 fields but the header has 5/);
  check('id,time,y,x,u\n1,0,"1,2,0\n', /unterminated quoted field/);
  const data = subgroupDataFromTable(
    parseCsv('id,time,y,x,u\n"a",0,1,2,0\nb,0,2,1,1\n', 'long.csv'),
    columns,
  );
  assert.throws(() => fitSubgroup(data, { K: 3 }), /2 subjects cannot be split into 3 classes/);
});

test('CLI: subgroup fit writes the JSON and posterior CSV; bad data exit with a located error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-subgroup-'));
  const csv = join(dataDir, 'mixture/subgroup/real_orthodont/data_long.csv');
  const cli = join(repoRoot, 'dist/src/cli/main.js');
  const out = join(dir, 'fit.json');
  const post = join(dir, 'post.csv');
  const args = [
    'subgroup',
    'fit',
    '--data',
    csv,
    '--fixed',
    'W1',
    '--membership',
    'female',
    '--k',
    '2',
    '--starts',
    '2',
  ];
  const ok = spawnSync(process.execPath, [cli, ...args, '--out', out, '--posterior', post], {
    encoding: 'utf8',
  });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stderr, /warning: separation/);
  const json = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
  for (const key of [
    'alpha',
    'mu',
    'sigmaB2',
    'sigmaEps2',
    'phi',
    'gamma',
    'standardErrors',
    'logLik',
    'bic',
    'nIter',
    'converged',
    'warnings',
  ]) {
    assert.ok(key in json, `missing ${key}`);
  }
  assert.equal(json.bicN, 27);
  const mu = json.mu as number[];
  assert.ok(mu[0]! < mu[1]!);
  const postLines = readFileSync(post, 'utf8').trim().split('\n');
  assert.equal(postLines[0], 'id,class,prob1,prob2');
  assert.equal(postLines.length, 28);

  const lrt = spawnSync(
    process.execPath,
    [cli, 'subgroup', 'lrt', ...args.slice(2), '--drop', 'female', '--no-se'],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(lrt.status, 0, lrt.stderr);
  assert.match(lrt.stdout, /^LR 8\.20\d*\ndf 1\np 0\.00418/m);

  const bad = join(dir, 'bad.csv');
  writeFileSync(bad, 'id,time,y,W1,female\n1,0,22,0,0\n1,1,oops,2,0\n');
  const failed = spawnSync(
    process.execPath,
    [cli, 'subgroup', 'fit', '--data', bad, '--fixed', 'W1', '--membership', 'female', '--k', '2'],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(failed.status, 2);
  assert.match(failed.stderr, /bad\.csv:3: column 'y' has 'oops'/);
  const missing = spawnSync(
    process.execPath,
    [cli, 'subgroup', 'fit', '--data', csv, '--fixed', 'age', '--k', '2'],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no column 'age' \(given as --fixed\)/);
});

test('reading the shared long CSV keeps subjects in file order and visits sorted by time', () => {
  const data = readSubgroupCsv(join(dataDir, 'mixture/subgroup/real_paquid_IST/data_long.csv'), {
    id: 'id',
    time: 'time',
    y: 'y',
    fixed: ['W1', 'W2'],
    membership: ['CEP', 'male'],
  });
  assert.equal(data.nSubjects, 199);
  assert.equal(data.nObs, 995);
  for (let i = 0; i < data.nSubjects; i++) {
    for (let o = data.offsets[i]! + 1; o < data.offsets[i + 1]!; o++)
      assert.ok(data.time[o]! > data.time[o - 1]!);
  }
});
