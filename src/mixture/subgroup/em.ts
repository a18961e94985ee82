// EM for the latent-subgroup model with the corrected updates of reference/mixture.md:
// E step with the marginal densities; M step: gamma by weighted multinomial logistic regression,
// mu_k = sum_i P_ik m_ik / sum_i P_ik, alpha by GLS on y_i - 1 b_hat_i, sigmaB2 with the "+ v" term,
// sigmaEps2 with the "v 1'R^-1 1" term, and for AR(1) phi by maximising Q's profile in phi (alpha
// and sigmaEps2 are closed-form given phi). Every part maximises Q exactly (or raises it, for gamma
// and phi), so the log-likelihood never decreases.
import { UserError } from '../../util/errors.js';
import { cholSolve, cholesky } from '../linalg.js';
import type { SubgroupData } from './data.js';
import { type EStep, type SubgroupParams, eStep, residualForms } from './model.js';
import { type MembershipOptions, defaultMembershipOptions, updateMembership } from './membership.js';
import { type Correlation, type SubjectStats, computeStats, phiRange } from './stats.js';

export interface EmOptions {
  correlation: Correlation;
  /** Stop when the total log-likelihood changes by less than this (absolute). */
  tol: number;
  maxIter: number;
  membership: MembershipOptions;
  /** 'squarem' accelerates the EM map (see squarem.ts); 'none' is plain EM. */
  acceleration: 'none' | 'squarem';
}

export const defaultEmOptions: EmOptions = {
  correlation: 'independent',
  tol: 1e-8,
  maxIter: 10000,
  membership: defaultMembershipOptions,
  acceleration: 'squarem',
};

export interface EmResult {
  params: SubgroupParams;
  logLik: number;
  nIter: number;
  converged: boolean;
  /** Total log-likelihood at theta_0, theta_1, ... */
  trace: number[];
  estep: EStep;
  stats: SubjectStats;
  gammaAtBound: boolean;
  /** Classes whose posterior weight vanished (sum_i P_ik ~ 0), 0-based. */
  emptyClasses: number[];
}

/** Collinear fixed-effect columns; the message names the remedy but not the data file (callers add it). */
export class CollinearityError extends UserError {
  /** The error for collinear fixed-effect columns, with the remedy. */
  static fixedEffects(): CollinearityError {
    return new CollinearityError(
      'the fixed-effect columns are collinear (with each other, or constant and so collinear with the class ' +
        'means that act as intercepts): remove the redundant --fixed columns',
    );
  }
}

interface AlphaFit {
  alpha: Float64Array;
  sigmaEps2: number;
}

/** alpha and sigmaEps2 maximising Q for the given residual correlation statistics. */
function fitAlphaSigma(data: SubgroupData, stats: SubjectStats, e: EStep, K: number): AlphaFit {
  const { nSubjects: N, p } = data;
  const rhs = new Float64Array(p);
  const bhat = new Float64Array(N);
  const second = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    let b = 0;
    let b2 = 0;
    for (let k = 0; k < K; k++) {
      const r = e.resp[i * K + k]!;
      const mk = e.m[i * K + k]!;
      b += r * mk;
      b2 += r * mk * mk;
    }
    bhat[i] = b;
    second[i] = b2 + e.v[i]!;
    for (let c = 0; c < p; c++) rhs[c] += stats.Wy[i * p + c]! - b * stats.W1[i * p + c]!;
  }
  let alpha: Float64Array = new Float64Array(p);
  if (p > 0) {
    const L = cholesky(stats.sumWW, p);
    if (!L) throw CollinearityError.fixedEffects();
    alpha = cholSolve(L, p, rhs);
  }
  let total = 0;
  for (let i = 0; i < N; i++) {
    const { a, qf } = residualForms(stats, i, alpha);
    total += qf - 2 * a * bhat[i]! + stats.s[i]! * second[i]!;
  }
  return { alpha, sigmaEps2: Math.max(total / data.nObs, 1e-300) };
}

/** Q's profile in phi (up to a constant), with alpha and sigmaEps2 at their maximisers. */
function profileQ(data: SubgroupData, stats: SubjectStats, fit: AlphaFit): number {
  let logdet = 0;
  for (let i = 0; i < data.nSubjects; i++) logdet += stats.logdetR[i]!;
  return -0.5 * (data.nObs * Math.log(fit.sigmaEps2) + logdet);
}

/** Brent's minimiser of a function on [lo, hi] (golden section with parabolic steps). */
export function brentMinimize(f: (x: number) => number, lo: number, hi: number, tol = 1e-9): number {
  const golden = 0.381966011250105;
  let a = lo;
  let b = hi;
  let x = a + golden * (b - a);
  let w = x;
  let v = x;
  let fx = f(x);
  let fw = fx;
  let fv = fx;
  let d = 0;
  let e = 0;
  for (let iter = 0; iter < 200; iter++) {
    const mid = 0.5 * (a + b);
    const tol1 = tol * Math.abs(x) + 1e-12;
    const tol2 = 2 * tol1;
    if (Math.abs(x - mid) <= tol2 - 0.5 * (b - a)) break;
    let useGolden = true;
    if (Math.abs(e) > tol1) {
      const r = (x - w) * (fx - fv);
      let q = (x - v) * (fx - fw);
      let p = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      else q = -q;
      const eOld = e;
      e = d;
      if (Math.abs(p) < Math.abs(0.5 * q * eOld) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        const u = x + d;
        if (u - a < tol2 || b - u < tol2) d = x < mid ? tol1 : -tol1;
        useGolden = false;
      }
    }
    if (useGolden) {
      e = x < mid ? b - x : a - x;
      d = golden * e;
    }
    const u = Math.abs(d) >= tol1 ? x + d : x + (d > 0 ? tol1 : -tol1);
    const fu = f(u);
    if (fu <= fx) {
      if (u < x) b = x;
      else a = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x) a = u;
      else b = u;
      if (fu <= fw || w === x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v === x || v === w) {
        v = u;
        fv = fu;
      }
    }
  }
  return x;
}

export interface MStepResult {
  params: SubgroupParams;
  stats: SubjectStats;
  gammaAtBound: boolean;
  emptyClasses: number[];
}

export function mStep(
  data: SubgroupData,
  stats: SubjectStats,
  params: SubgroupParams,
  e: EStep,
  K: number,
  options: EmOptions,
): MStepResult {
  const N = data.nSubjects;
  const membership = updateMembership(data, e.resp, params.gamma, K, options.membership);
  const mu = Float64Array.from(params.mu);
  const emptyClasses: number[] = [];
  for (let k = 0; k < K; k++) {
    let w = 0;
    let wm = 0;
    for (let i = 0; i < N; i++) {
      w += e.resp[i * K + k]!;
      wm += e.resp[i * K + k]! * e.m[i * K + k]!;
    }
    if (w > 1e-10) mu[k] = wm / w;
    else emptyClasses.push(k);
  }
  let sb2 = 0;
  for (let i = 0; i < N; i++) {
    for (let k = 0; k < K; k++) sb2 += e.resp[i * K + k]! * ((e.m[i * K + k]! - mu[k]!) ** 2 + e.v[i]!);
  }
  sb2 /= N;

  let newStats = stats;
  let fit = fitAlphaSigma(data, stats, e, K);
  if (options.correlation === 'ar1') {
    const [lo, hi] = phiRange(data);
    const negProfile = (phi: number): number => {
      const st = computeStats(data, 'ar1', phi);
      return -profileQ(data, st, fitAlphaSigma(data, st, e, K));
    };
    const phiNew = brentMinimize(negProfile, lo, hi);
    const candidateStats = computeStats(data, 'ar1', phiNew);
    const candidateFit = fitAlphaSigma(data, candidateStats, e, K);
    // Keep the old phi unless the new one really raises Q (guards monotonicity).
    if (profileQ(data, candidateStats, candidateFit) > profileQ(data, stats, fit)) {
      newStats = candidateStats;
      fit = candidateFit;
    }
  }
  return {
    params: {
      alpha: fit.alpha,
      mu,
      sigmaB2: Math.max(sb2, 1e-10 * fit.sigmaEps2),
      sigmaEps2: fit.sigmaEps2,
      phi: newStats.phi,
      gamma: membership.gamma,
    },
    stats: newStats,
    gammaAtBound: membership.atBound,
    emptyClasses,
  };
}

export function runEm(
  data: SubgroupData,
  start: SubgroupParams,
  K: number,
  options: EmOptions = defaultEmOptions,
): EmResult {
  let stats = computeStats(data, options.correlation, start.phi);
  let params = start;
  let e = eStep(data, stats, params, K);
  const trace = [e.logLik];
  let converged = false;
  let nIter = 0;
  let gammaAtBound = false;
  let emptyClasses: number[] = [];
  while (nIter < options.maxIter) {
    const next = mStep(data, stats, params, e, K, options);
    const eNext = eStep(data, next.stats, next.params, K);
    nIter++;
    trace.push(eNext.logLik);
    const delta = eNext.logLik - e.logLik;
    params = next.params;
    stats = next.stats;
    e = eNext;
    gammaAtBound = next.gammaAtBound;
    emptyClasses = next.emptyClasses;
    if (!Number.isFinite(eNext.logLik)) break;
    if (Math.abs(delta) < options.tol) {
      converged = true;
      break;
    }
  }
  return { params, logLik: e.logLik, nIter, converged, trace, estep: e, stats, gammaAtBound, emptyClasses };
}
