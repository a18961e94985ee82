// The latent-subgroup model against the reference cases of data/mixture/subgroup:
// lcmm hlme 2.2.2 fits and an independent numpy EM (classes ordered by mu, class 1 the gamma
// reference, total log-likelihood with the 2 pi constant).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, assertClose } from '../helpers.js';
import { readSubgroupCsv } from '../../src/mixture/subgroup/data.js';
import { fitSubgroup } from '../../src/mixture/subgroup/fit.js';
import { runEm } from '../../src/mixture/subgroup/em.js';
import { quantileStart } from '../../src/mixture/subgroup/init.js';
import type { SubgroupParams } from '../../src/mixture/subgroup/model.js';
import { membershipLrt, selectClasses } from '../../src/mixture/subgroup/compare.js';

const caseDir = (name: string): string => join(dataDir, 'mixture/subgroup', name);
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

interface RefParams {
  alpha: number[];
  mu: number[];
  sigma_b2: number;
  sigma_eps2: number;
  gamma: number[][];
}
interface HlmeModel {
  loglik: number;
  alpha: number[] | number;
  alpha_se: number[] | number;
  mu: number[];
  mu_se: number[];
  sigma_b2: number;
  sigma_b: number;
  sigma_b_se_from_cholesky: number;
  sigma_eps2: number;
  sigma_eps: number;
  sigma_eps_se: number;
  gamma_class1_ref: number[][];
  posterior_class_sizes: number[];
}
interface EmReference {
  theta0: RefParams;
  trace_loglik: number[];
  from_theta0: { loglik: number; estimates: RefParams; posterior_class_sizes: number[] };
}

const S1 = readSubgroupCsv(join(caseDir('S1_indep'), 'data_long.csv'), {
  id: 'id',
  time: 'time',
  y: 'y',
  fixed: ['W1', 'W2', 'W3'],
  membership: ['U1', 'U2'],
});
const PAQUID = readSubgroupCsv(join(caseDir('real_paquid_IST'), 'data_long.csv'), {
  id: 'id',
  time: 'time',
  y: 'y',
  fixed: ['W1', 'W2'],
  membership: ['CEP', 'male'],
});
const ORTHODONT = readSubgroupCsv(join(caseDir('real_orthodont'), 'data_long.csv'), {
  id: 'id',
  time: 'time',
  y: 'y',
  fixed: ['W1'],
  membership: ['female'],
});

function toParams(ref: RefParams, q: number): SubgroupParams {
  return {
    alpha: Float64Array.from(ref.alpha),
    mu: Float64Array.from(ref.mu),
    sigmaB2: ref.sigma_b2,
    sigmaEps2: ref.sigma_eps2,
    phi: 0,
    gamma: Float64Array.from(
      ref.gamma.flatMap((row) => (row.length === q ? row : [...row, ...new Array(q - row.length).fill(0)])),
    ),
  };
}

function assertParams(actual: SubgroupParams, expected: RefParams, atol: number, what: string): void {
  assertClose(actual.alpha, expected.alpha, atol, 0, `${what} alpha`);
  assertClose(actual.mu, expected.mu, atol, 0, `${what} mu`);
  assertClose(
    [actual.sigmaB2, actual.sigmaEps2],
    [expected.sigma_b2, expected.sigma_eps2],
    atol,
    0,
    `${what} variances`,
  );
  assertClose(actual.gamma, expected.gamma.flat(), atol, 0, `${what} gamma`);
}

const hlmeAsRef = (m: HlmeModel): RefParams => ({
  alpha: [m.alpha].flat(),
  mu: m.mu,
  sigma_b2: m.sigma_b2,
  sigma_eps2: m.sigma_eps2,
  gamma: m.gamma_class1_ref,
});

function assertMonotone(trace: number[], what: string): void {
  for (let j = 1; j < trace.length; j++) {
    // Round-off in a sum of thousands of terms is ~1e-10; any real decrease is far larger.
    assert.ok(
      trace[j]! >= trace[j - 1]! - 1e-9,
      `${what}: log-likelihood fell at iteration ${j}: ${trace[j - 1]} -> ${trace[j]}`,
    );
  }
}

test('S1: the quantile start reproduces the reference theta_0', () => {
  const ref = readJson<EmReference>(join(caseDir('S1_indep'), 'em_reference_identity_K3.json'));
  const start = quantileStart(S1, 3, 'independent');
  assertParams(start, ref.theta0, 1e-10, 'theta0');
});

test('S1 K=3: the plain EM trace from theta_0 agrees with the reference EM and never decreases', () => {
  const ref = readJson<EmReference>(join(caseDir('S1_indep'), 'em_reference_identity_K3.json'));
  const theta0 = toParams(ref.theta0, S1.q);
  // Plain EM through the shared BaseMixture loop (one given start).
  const fit = fitSubgroup(S1, {
    K: 3,
    onlyStarts: [theta0],
    acceleration: 'none',
    tol: 1e-9,
    standardErrors: false,
  });
  assertClose(fit.trace.slice(0, ref.trace_loglik.length), ref.trace_loglik, 1e-6, 0, 'trace');
  assertMonotone(fit.trace, 'S1 plain EM');
  assert.ok(fit.converged);
  assert.ok(Math.abs(fit.logLik - ref.from_theta0.loglik) < 1e-6, `logLik ${fit.logLik}`);
  assertParams(fit.params, ref.from_theta0.estimates, 1e-4, 'S1 from theta0');
  // The stand-alone loop (em.ts) is the same algorithm.
  const direct = runEm(S1, theta0, 3, {
    correlation: 'independent',
    tol: 1e-9,
    maxIter: 10000,
    acceleration: 'none',
    membership: { ridge: 1e-8, bound: 25, maxNewton: 50 },
  });
  assertClose(direct.trace.slice(0, 40), ref.trace_loglik, 1e-6, 0, 'runEm trace');
  assertMonotone(direct.trace, 'runEm');
});

test('S1 K=3: multi-start SQUAREM fit matches hlme and the reference EM, recovers the truth within 3 SE', () => {
  const hlme = readJson<{ models: Record<string, HlmeModel> }>(
    join(caseDir('S1_indep'), 'reference_hlme.json'),
  ).models.K3_full;
  const em = readJson<EmReference>(join(caseDir('S1_indep'), 'em_reference_identity_K3.json'));
  const truth = readJson<{
    alpha: number[];
    mu: number[];
    sigma_b2: number;
    sigma_eps2: number;
    gamma: number[][];
  }>(join(caseDir('S1_indep'), 'true_params.json'));
  const fit = fitSubgroup(S1, { K: 3, starts: 3, seed: 7 });
  assert.ok(Math.abs(fit.logLik - -4277.568) <= 1e-3, `logLik ${fit.logLik}`);
  assert.ok(fit.converged);
  assert.equal(fit.separation, false);
  assert.deepEqual(fit.warnings, []);
  assertMonotone(fit.trace, 'S1 SQUAREM');
  assertParams(fit.params, hlmeAsRef(hlme), 1e-3, 'vs hlme');
  assertParams(fit.params, em.from_theta0.estimates, 1e-3, 'vs reference EM');
  assert.deepEqual(fit.classSizes, em.from_theta0.posterior_class_sizes);
  assert.equal(fit.npm, 14);
  assert.ok(Math.abs(fit.bic - 8642.14053124544) < 2e-3, `BIC ${fit.bic}`);

  // Standard errors: hlme's (observed information too) for alpha and mu; hlme's variance SEs are
  // on the SD scale, se(s^2) = 2 s se(s).
  const se = fit.se!;
  assertClose(se.alpha as number[], hlme.alpha_se as number[], 0, 0.02, 'alpha SE');
  assertClose(se.mu as number[], hlme.mu_se, 0, 0.02, 'mu SE');
  assertClose([se.sigmaB2!], [2 * hlme.sigma_b * hlme.sigma_b_se_from_cholesky], 0, 0.02, 'sigmaB2 SE');
  assertClose([se.sigmaEps2!], [2 * hlme.sigma_eps * hlme.sigma_eps_se], 0, 0.02, 'sigmaEps2 SE');

  // Recovery of the simulation truth within 3 standard errors.
  const within = (estimate: number, sd: number | null, target: number, what: string): void => {
    assert.ok(sd !== null && sd > 0, `${what}: no SE`);
    assert.ok(Math.abs(estimate - target) <= 3 * sd, `${what}: ${estimate} vs truth ${target} (SE ${sd})`);
  };
  truth.alpha.forEach((a, j) => within(fit.params.alpha[j]!, se.alpha[j]!, a, `alpha[${j}]`));
  truth.mu.forEach((m, k) => within(fit.params.mu[k]!, se.mu[k]!, m, `mu[${k}]`));
  within(fit.params.sigmaB2, se.sigmaB2, truth.sigma_b2, 'sigmaB2');
  within(fit.params.sigmaEps2, se.sigmaEps2, truth.sigma_eps2, 'sigmaEps2');
  for (let k = 1; k < 3; k++) {
    for (let j = 0; j < 3; j++)
      within(fit.params.gamma[k * 3 + j]!, se.gamma[k]![j]!, truth.gamma[k]![j]!, `gamma[${k}][${j}]`);
  }

  // Posterior probabilities against the reference EM's.
  const rows = readFileSync(join(caseDir('S1_indep'), 'em_pprob_identity_K3.csv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1);
  assert.equal(rows.length, S1.nSubjects);
  rows.forEach((line, i) => {
    const [id, cls, ...probs] = line.split(',');
    assert.equal(S1.ids[i], id);
    assert.equal(fit.classes[i]! + 1, Number(cls), `class of subject ${id}`);
    assertClose(
      fit.posterior.slice(i * 3, i * 3 + 3),
      probs.map(Number),
      1e-4,
      0,
      `posterior of subject ${id}`,
    );
  });
});

test('paquid K=2: log-likelihood -2831.93436, estimates and SEs as hlme', () => {
  const hlme = readJson<{ models: Record<string, HlmeModel> }>(
    join(caseDir('real_paquid_IST'), 'reference_hlme.json'),
  ).models.K2_full;
  const fit = fitSubgroup(PAQUID, { K: 2, starts: 3 });
  assert.ok(Math.abs(fit.logLik - -2831.93436) <= 1e-3, `logLik ${fit.logLik}`);
  assertParams(fit.params, hlmeAsRef(hlme), 2e-3, 'paquid vs hlme');
  assert.deepEqual(fit.classSizes, hlme.posterior_class_sizes);
  assertClose(fit.se!.alpha as number[], hlme.alpha_se as number[], 0, 0.02, 'alpha SE');
  assertClose(fit.se!.mu as number[], hlme.mu_se, 0, 0.02, 'mu SE');
  assertMonotone(fit.trace, 'paquid');
});

test('orthodont K=2: separation is detected and reported, not claimed as a clean fit', () => {
  const fit = fitSubgroup(ORTHODONT, { K: 2, starts: 3 });
  assert.ok(fit.logLik >= -217.4037 - 1e-3, `logLik ${fit.logLik}`);
  assert.equal(fit.separation, true);
  assert.ok(
    fit.warnings.some((w) => w.includes('separation')),
    fit.warnings.join('\n'),
  );
  // Gamma has no finite MLE: no standard errors for it, finite ones for the rest.
  assert.ok(fit.se!.gamma.flat().every((s) => s === null));
  assert.ok(fit.se!.alpha.every((s) => s !== null && Number.isFinite(s)));
  assert.ok(fit.params.gamma.every((g) => Number.isFinite(g)));
  assert.deepEqual(fit.classSizes, [11, 16]);
  assertMonotone(fit.trace, 'orthodont');
});

test('LR test for membership covariates (S1, drop U2) and BIC selection of K agree with hlme', () => {
  const ref = readJson<{
    lr_tests: Record<string, { l_reduced: number; LR: number; df: number; p_value: number }>;
    bic_table: { K: number; BIC: number; loglik: number }[];
  }>(join(caseDir('S1_indep'), 'reference_hlme.json'));
  const lrt = membershipLrt(S1, ['U2'], { K: 3, starts: 2, standardErrors: false });
  assert.equal(lrt.df, 2);
  assert.ok(
    Math.abs(lrt.reduced.logLik - ref.lr_tests.drop_last!.l_reduced) < 1e-3,
    `reduced ${lrt.reduced.logLik}`,
  );
  assert.ok(Math.abs(lrt.lr - ref.lr_tests.drop_last!.LR) < 2e-3, `LR ${lrt.lr}`);
  assert.ok(Math.abs(lrt.pValue / ref.lr_tests.drop_last!.p_value - 1) < 1e-3, `p ${lrt.pValue}`);

  const selection = selectClasses(S1, [1, 2, 3], { starts: 2, standardErrors: false });
  assert.equal(selection.bestK, 3);
  selection.rows.forEach((row) => {
    const expected = ref.bic_table.find((r) => r.K === row.K)!;
    assert.ok(Math.abs(row.bic - expected.BIC) < 2e-3, `K=${row.K}: BIC ${row.bic} vs ${expected.BIC}`);
  });
});
