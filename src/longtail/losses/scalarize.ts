// Scalarizations of the per-expert losses L_e under a preference r (PRL): smooth Tchebycheff mu *
// log sum_e exp(r_e (L_e - z_e) / mu) (the paper's method; mu = 0.1, z = 0), linear sum_e r_e L_e
// (the paper's ablation), and the released code's STCH solver, which ignores r.
import { Tensor, tidy } from '../../torch/index.js';
import { constant } from './priors.js';
import { floatDtype } from './types.js';

export interface ScalarizationOptions {
  /** Smoothing of the Tchebycheff scalarization (> 0). */
  mu?: number;
  /** Ideal point z: one value for all experts, one per expert, or a tensor [E] (estimated online). */
  z?: number | number[] | Tensor;
}

/** Scalarizes per-expert losses under r; `z` (a tensor [E]) overrides the configured ideal point. */
export type Scalarization = (losses: Tensor, preference?: number[] | Tensor, z?: Tensor) => Tensor;

/** r as a tensor of the losses' dtype, checked against the number of experts. */
export function preferenceTensor(preference: number[] | Tensor | undefined, losses: Tensor): Tensor {
  const E = losses.size(0);
  if (preference === undefined) {
    throw new Error('this scalarization needs a preference (one weight per expert): pass extra.preference');
  }
  if (Array.isArray(preference)) {
    if (preference.length !== E)
      throw new Error(`preference has ${preference.length} weights but there are ${E} expert losses`);
    preference.forEach((v, i) => {
      if (!Number.isFinite(v) || v < 0)
        throw new Error(`preference[${i}] is ${v}; weights must be finite and >= 0`);
    });
    return constant(preference, floatDtype(losses));
  }
  if (preference.ndim !== 1 || preference.size(0) !== E) {
    throw new Error(`preference tensor has shape [${preference.shape}], expected [${E}]`);
  }
  return preference.dtype === losses.dtype ? preference : preference.to(floatDtype(losses));
}

function idealPoint(z: number | number[] | undefined, E: number): number[] {
  if (z === undefined) return new Array<number>(E).fill(0);
  if (typeof z === 'number') return new Array<number>(E).fill(z);
  if (z.length !== E)
    throw new Error(`the ideal point z has ${z.length} values but there are ${E} expert losses`);
  return z;
}

function checkLosses(losses: Tensor): void {
  if (losses.ndim !== 1)
    throw new Error(`expected a 1-d tensor of per-expert losses, got shape [${losses.shape}]`);
}

/** mu * logsumexp_e(r_e (L_e - z_e) / mu); tends to max_e r_e (L_e - z_e) as mu -> 0. */
export function smoothTchebycheff(
  losses: Tensor,
  preference: number[] | Tensor | undefined,
  options: ScalarizationOptions = {},
): Tensor {
  const mu = options.mu ?? 0.1;
  if (!(mu > 0)) throw new Error(`smooth Tchebycheff: mu must be > 0, got ${mu}`);
  checkLosses(losses);
  return tidy(() => {
    const r = preferenceTensor(preference, losses);
    const z =
      options.z instanceof Tensor
        ? options.z.to(floatDtype(losses))
        : constant(idealPoint(options.z, losses.size(0)), floatDtype(losses));
    return r.mul(losses.sub(z)).div(mu).logsumexp(0).mul(mu);
  });
}

/** sum_e r_e L_e. */
export function linearScalarization(losses: Tensor, preference: number[] | Tensor | undefined): Tensor {
  checkLosses(losses);
  return tidy(() => preferenceTensor(preference, losses).mul(losses).sum());
}

/** The released PRL code's STCHSolver: sum_e L_e + mu * logsumexp_e L_e (the preference is not used). */
export function releasedStch(losses: Tensor, options: ScalarizationOptions = {}): Tensor {
  checkLosses(losses);
  const mu = options.mu ?? 0.1;
  return tidy(() => losses.sum().add(losses.logsumexp(0).mul(mu)));
}

/**
 * A scalarization by name. Also accepts the released configs' "Solvers" section
 * ({"name": "stch", "mu": 0.1, "Z": 0.0, "n_tasks": 3}): 'ls' is linear, 'stch' the paper's smooth
 * Tchebycheff (use 'released_stch' for what the released solver computes).
 */
export function createScalarization(name: string, options: ScalarizationOptions = {}): Scalarization {
  switch (name.toLowerCase()) {
    case 'stch':
    case 'stchsolver':
      return (losses, r, z) => smoothTchebycheff(losses, r, z ? { ...options, z } : options);
    case 'linear':
    case 'ls':
      return (losses, r) => linearScalarization(losses, r);
    case 'released_stch':
      return (losses) => releasedStch(losses, options);
    case 'sum':
      return (losses) => tidy(() => losses.sum());
    default:
      throw new Error(`unknown scalarization '${name}'; use stch, linear (ls), released_stch or sum`);
  }
}
