// SQUAREM acceleration of the EM map (Varadhan & Roland 2008, scheme S3) with a monotone
// safeguard: from theta_0 two EM steps give theta_1, theta_2; the squared extrapolation
// theta' = theta_0 - 2 a r + a^2 v (r = theta_1 - theta_0, v = theta_2 - 2 theta_1 + theta_0,
// a = -|r|/|v| <= -1) is kept only when its log-likelihood is at least that of theta_2, else the cycle
// ends at theta_2 (plain EM). So the recorded log-likelihood never decreases. Variances move on the
// log scale and phi on the atanh scale so that extrapolation stays inside the parameter space.
import type { SubgroupData } from './data.js';
import { type EmOptions, type EmResult, mStep } from './em.js';
import { type EStep, type SubgroupParams, eStep } from './model.js';
import { type SubjectStats, computeStats, phiRange } from './stats.js';

function toVector(params: SubgroupParams, ar1: boolean): Float64Array {
  const values = [...params.alpha, ...params.mu, Math.log(params.sigmaB2), Math.log(params.sigmaEps2)];
  if (ar1) values.push(Math.atanh(params.phi));
  values.push(...params.gamma);
  return Float64Array.from(values);
}

function fromVector(
  x: Float64Array,
  like: SubgroupParams,
  ar1: boolean,
  bound: number,
  phiLimits: [number, number],
) {
  let o = 0;
  const alpha = x.slice(o, (o += like.alpha.length));
  const mu = x.slice(o, (o += like.mu.length));
  const sigmaB2 = Math.exp(x[o++]!);
  const sigmaEps2 = Math.exp(x[o++]!);
  const phi = ar1 ? Math.min(phiLimits[1], Math.max(phiLimits[0], Math.tanh(x[o++]!))) : 0;
  const gamma = x.slice(o, o + like.gamma.length).map((g) => Math.max(-bound, Math.min(bound, g)));
  return { alpha, mu, sigmaB2, sigmaEps2, phi, gamma };
}

interface State {
  params: SubgroupParams;
  stats: SubjectStats;
  e: EStep;
}

export function runSquarem(
  data: SubgroupData,
  start: SubgroupParams,
  K: number,
  options: EmOptions,
): EmResult {
  const ar1 = options.correlation === 'ar1';
  const limits = phiRange(data);
  const evaluate = (params: SubgroupParams, stats?: SubjectStats): State => {
    const st =
      stats && stats.phi === params.phi ? stats : computeStats(data, options.correlation, params.phi);
    return { params, stats: st, e: eStep(data, st, params, K) };
  };
  let gammaAtBound = false;
  let emptyClasses: number[] = [];
  let emSteps = 0;
  const emMap = (state: State): State => {
    const next = mStep(data, state.stats, state.params, state.e, K, options);
    gammaAtBound = next.gammaAtBound;
    emptyClasses = next.emptyClasses;
    emSteps++;
    return evaluate(next.params, next.stats);
  };
  let current = evaluate(start);
  const trace = [current.e.logLik];
  let converged = false;
  while (emSteps < options.maxIter) {
    const s1 = emMap(current);
    const s2 = emMap(s1);
    let next = s2;
    const x0 = toVector(current.params, ar1);
    const x1 = toVector(s1.params, ar1);
    const x2 = toVector(s2.params, ar1);
    let rr = 0;
    let vv = 0;
    for (let j = 0; j < x0.length; j++) {
      const r = x1[j]! - x0[j]!;
      const v = x2[j]! - 2 * x1[j]! + x0[j]!;
      rr += r * r;
      vv += v * v;
    }
    if (vv > 0 && Number.isFinite(rr / vv)) {
      const a = Math.min(-1, -Math.sqrt(rr / vv));
      if (a < -1) {
        const x = new Float64Array(x0.length);
        for (let j = 0; j < x.length; j++) {
          const r = x1[j]! - x0[j]!;
          const v = x2[j]! - 2 * x1[j]! + x0[j]!;
          x[j] = x0[j]! - 2 * a * r + a * a * v;
        }
        const candidate = evaluate(fromVector(x, current.params, ar1, options.membership.bound, limits));
        if (Number.isFinite(candidate.e.logLik) && candidate.e.logLik >= s2.e.logLik) next = candidate;
      }
    }
    const delta = next.e.logLik - current.e.logLik;
    trace.push(next.e.logLik);
    current = next;
    if (Math.abs(delta) < options.tol) {
      converged = true;
      break;
    }
  }
  return {
    params: current.params,
    logLik: current.e.logLik,
    nIter: emSteps,
    converged,
    trace,
    estep: current.e,
    stats: current.stats,
    gammaAtBound,
    emptyClasses,
  };
}
