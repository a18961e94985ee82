// npm run bench -- subgroup [--json]: the latent-subgroup EM on the reference case S1 (N = 500,
// t = 5, K = 3) from the deterministic quantile start to |change in total log-likelihood| < 1e-6,
// plain EM (the shared BaseMixture loop) against SQUAREM: iterations, time, final log-likelihood
// and the largest parameter difference from the reference EM's converged estimates. Also the
// AR(1) variant and the default multi-start fit (20 starts). Times are the median of 5 runs.
import './lib/user-errors.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readSubgroupCsv } from '../src/mixture/subgroup/data.js';
import type { EmOptions } from '../src/mixture/subgroup/em.js';
import { defaultEmOptions } from '../src/mixture/subgroup/em.js';
import { quantileStart } from '../src/mixture/subgroup/init.js';
import { orderClasses, fitSubgroup } from '../src/mixture/subgroup/fit.js';
import { runFromStart } from '../src/mixture/subgroup/starts.js';
import type { Correlation } from '../src/mixture/subgroup/stats.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dir = join(root, 'data', 'mixture', 'subgroup', 'S1_indep');
const data = readSubgroupCsv(join(dir, 'data_long.csv'), {
  id: 'id',
  time: 'time',
  y: 'y',
  fixed: ['W1', 'W2', 'W3'],
  membership: ['U1', 'U2'],
});
const reference = JSON.parse(readFileSync(join(dir, 'em_reference_identity_K3.json'), 'utf8')) as {
  from_theta0: {
    loglik: number;
    estimates: { alpha: number[]; mu: number[]; sigma_b2: number; sigma_eps2: number };
  };
};
const json = parseArgs({ options: { json: { type: 'boolean', default: false } } }).values.json;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

interface Row {
  name: string;
  iterations: number;
  ms: number;
  logLik: number;
  maxParamDiff: number | null;
}

function timeEm(correlation: Correlation, acceleration: 'none' | 'squarem'): Row {
  const em: EmOptions = { ...defaultEmOptions, correlation, acceleration, tol: 1e-6 };
  const start = quantileStart(data, 3, correlation);
  const times: number[] = [];
  let result = runFromStart(data, start, 3, em, em.maxIter);
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    result = runFromStart(data, start, 3, em, em.maxIter);
    times.push(performance.now() - t0);
  }
  const { params } = orderClasses(result.params, 3, data.q);
  const ref = reference.from_theta0.estimates;
  const diffs = [
    ...ref.alpha.map((a, j) => a - params.alpha[j]!),
    ...ref.mu.map((m, k) => m - params.mu[k]!),
    ref.sigma_b2 - params.sigmaB2,
    ref.sigma_eps2 - params.sigmaEps2,
  ].map(Math.abs);
  return {
    name: `EM ${correlation} ${acceleration}`,
    iterations: result.nIter,
    ms: median(times),
    logLik: result.logLik,
    maxParamDiff: correlation === 'independent' ? Math.max(...diffs) : null,
  };
}

const rows: Row[] = [];
for (const correlation of ['independent', 'ar1'] as const) {
  for (const acceleration of ['none', 'squarem'] as const) rows.push(timeEm(correlation, acceleration));
}
for (const acceleration of ['none', 'squarem'] as const) {
  const times: number[] = [];
  let fit = fitSubgroup(data, { K: 3, acceleration, standardErrors: false });
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now();
    fit = fitSubgroup(data, { K: 3, acceleration, standardErrors: false });
    times.push(performance.now() - t0);
  }
  rows.push({
    name: `fit 20 starts ${acceleration}`,
    iterations: fit.nIter,
    ms: median(times),
    logLik: fit.logLik,
    maxParamDiff: null,
  });
}

if (json) {
  console.log(
    JSON.stringify(
      { case: 'S1_indep K=3', tol: 1e-6, referenceLogLik: reference.from_theta0.loglik, rows },
      null,
      2,
    ),
  );
} else {
  console.log(
    `S1_indep, K = 3, tol 1e-6 on the total log-likelihood (reference optimum ${reference.from_theta0.loglik})`,
  );
  console.log('run                         iterations   ms (median)   logLik            max |param - ref|');
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(28)}${String(r.iterations).padStart(10)}${r.ms.toFixed(1).padStart(14)}   ${r.logLik.toFixed(6).padEnd(18)}` +
        `${r.maxParamDiff === null ? '-' : r.maxParamDiff.toExponential(1)}`,
    );
  }
}
