// The gamma part of the M step: a weighted multinomial logistic regression of the posterior class
// probabilities P_ik on U_i (class 1 the reference), by Newton's method with step halving. Under
// (quasi-)complete separation the likelihood keeps rising as |gamma| grows and has no finite
// maximiser: a small ridge keeps the Newton system solvable and a bound on |gamma| keeps the
// estimates finite; the caller turns "hit the bound" into a warning. Every accepted step raises
// the objective, so EM stays monotone.
import { cholSolve, cholesky } from '../linalg.js';
import type { SubgroupData } from './data.js';
import { logPriors, membershipLogits } from './model.js';

export interface MembershipOptions {
  /** Ridge added to the Newton system, relative to its largest diagonal entry. */
  ridge: number;
  /** Bound on |gamma_kj|; estimates reaching it signal separation. */
  bound: number;
  maxNewton: number;
}

export const defaultMembershipOptions: MembershipOptions = { ridge: 1e-8, bound: 25, maxNewton: 50 };

/** sum_i sum_k P_ik log pi_ik(gamma). */
export function membershipObjective(
  data: SubgroupData,
  resp: Float64Array,
  gamma: Float64Array,
  K: number,
): number {
  const logPi = new Float64Array(K);
  let total = 0;
  for (let i = 0; i < data.nSubjects; i++) {
    logPriors(data, i, gamma, K, logPi);
    for (let k = 0; k < K; k++) {
      const r = resp[i * K + k]!;
      if (r > 0) total += r * logPi[k]!;
    }
  }
  return total;
}

export interface MembershipUpdate {
  gamma: Float64Array;
  atBound: boolean;
  newtonSteps: number;
}

export function updateMembership(
  data: SubgroupData,
  resp: Float64Array,
  gammaOld: Float64Array,
  K: number,
  options: MembershipOptions = defaultMembershipOptions,
): MembershipUpdate {
  const q = data.q;
  const n = (K - 1) * q;
  let gamma: Float64Array = Float64Array.from(gammaOld);
  if (n === 0) return { gamma, atBound: false, newtonSteps: 0 };
  let objective = membershipObjective(data, resp, gamma, K);
  const grad = new Float64Array(n);
  const hess = new Float64Array(n * n);
  let steps = 0;
  for (; steps < options.maxNewton; steps++) {
    newtonSystem(data, resp, gamma, K, grad, hess);
    const delta = newtonDirection(gamma, grad, hess, q, options);
    if (!delta) break;
    const next = halvingStep(data, resp, gamma, objective, delta, K, options.bound);
    if (!next) break;
    let change = 0;
    for (let d = 0; d < gamma.length; d++) change = Math.max(change, Math.abs(next.gamma[d]! - gamma[d]!));
    const gain = next.objective - objective;
    gamma = next.gamma;
    objective = next.objective;
    if (change < 1e-10 || gain < 1e-13) {
      steps++;
      break;
    }
  }
  let atBound = false;
  for (let d = q; d < gamma.length; d++) if (Math.abs(gamma[d]!) >= options.bound) atBound = true;
  return { gamma, atBound, newtonSteps: steps };
}

/** The gradient and the (positive) Hessian of -objective in gamma_2..K, written to grad and hess. */
function newtonSystem(
  data: SubgroupData,
  resp: Float64Array,
  gamma: Float64Array,
  K: number,
  grad: Float64Array,
  hess: Float64Array,
): void {
  const q = data.q;
  const n = grad.length;
  const pi = new Float64Array(K);
  grad.fill(0);
  hess.fill(0);
  for (let i = 0; i < data.nSubjects; i++) {
    const max = membershipLogits(data, i, gamma, K, pi);
    let sum = 0;
    for (let k = 0; k < K; k++) sum += pi[k] = Math.exp(pi[k]! - max);
    for (let k = 0; k < K; k++) pi[k] = pi[k]! / sum;
    for (let k = 1; k < K; k++) {
      const rk = resp[i * K + k]! - pi[k]!;
      for (let j = 0; j < q; j++) grad[(k - 1) * q + j] += rk * data.U[i * q + j]!;
      for (let l = 1; l < K; l++) {
        const w = pi[k]! * ((k === l ? 1 : 0) - pi[l]!);
        if (w === 0) continue;
        for (let j = 0; j < q; j++) {
          const uj = data.U[i * q + j]! * w;
          const row = ((k - 1) * q + j) * n + (l - 1) * q;
          for (let jj = 0; jj < q; jj++) hess[row + jj] += uj * data.U[i * q + jj]!;
        }
      }
    }
  }
}

/**
 * The projected Newton direction: coordinates held at the bound while the gradient pushes them
 * outwards are left out of the system, so the other coordinates get a proper Newton step; the
 * system gets a ridge (grown tenfold until it factors). Null when no step is worth taking: every
 * coordinate held, no factorisation, or a negligible Newton decrement.
 */
function newtonDirection(
  gamma: Float64Array,
  grad: Float64Array,
  hess: Float64Array,
  q: number,
  options: MembershipOptions,
): Float64Array | null {
  const n = grad.length;
  const free: number[] = [];
  for (let d = 0; d < n; d++) {
    const value = gamma[q + d]!;
    if (!(Math.abs(value) >= options.bound && value * grad[d]! > 0)) free.push(d);
  }
  const nf = free.length;
  if (nf === 0) return null;
  const hf = new Float64Array(nf * nf);
  const gf = new Float64Array(nf);
  let maxDiag = 0;
  for (let a = 0; a < nf; a++) {
    gf[a] = grad[free[a]!]!;
    for (let b = 0; b < nf; b++) hf[a * nf + b] = hess[free[a]! * n + free[b]!]!;
    maxDiag = Math.max(maxDiag, hf[a * nf + a]!);
  }
  let lambda = options.ridge * (maxDiag > 0 ? maxDiag : 1);
  let L: Float64Array | null = null;
  for (let tries = 0; tries < 20 && !L; tries++, lambda *= 10) {
    const A = Float64Array.from(hf);
    for (let d = 0; d < nf; d++) A[d * nf + d] += lambda;
    L = cholesky(A, nf);
  }
  if (!L) return null;
  const deltaFree = cholSolve(L, nf, gf);
  const delta = new Float64Array(n);
  free.forEach((d, a) => (delta[d] = deltaFree[a]!));
  // The Newton decrement g' delta is about twice the remaining gain: stop once it is negligible.
  let decrement = 0;
  for (let a = 0; a < nf; a++) decrement += gf[a]! * deltaFree[a]!;
  return decrement < 1e-20 ? null : delta;
}

/**
 * gamma + s delta (clipped to the bound) for the largest s in 1, 1/2, 1/4, ... (30 tries) that
 * does not lower the objective, or null when none does.
 */
function halvingStep(
  data: SubgroupData,
  resp: Float64Array,
  gamma: Float64Array,
  objective: number,
  delta: Float64Array,
  K: number,
  bound: number,
): { gamma: Float64Array; objective: number } | null {
  const q = data.q;
  let stepSize = 1;
  for (let halvings = 0; halvings < 30; halvings++, stepSize /= 2) {
    const candidate = Float64Array.from(gamma);
    for (let k = 1; k < K; k++) {
      for (let j = 0; j < q; j++) {
        const idx = k * q + j;
        const value = gamma[idx]! + stepSize * delta[(k - 1) * q + j]!;
        candidate[idx] = Math.max(-bound, Math.min(bound, value));
      }
    }
    const candidateObjective = membershipObjective(data, resp, candidate, K);
    if (candidateObjective >= objective) return { gamma: candidate, objective: candidateObjective };
  }
  return null;
}
