// Multi-expert losses: every expert e gets CE(z_e + b_e) with its own logit bias b_e, and the
// terms are summed (SADE's DiverseExpertLoss) or averaged (BalPoE's BSExpertLoss). The same
// per-expert terms feed PRL's scalarizations (prl.ts).
import { stack, tidy, type Tensor } from '../../torch/index.js';
import { adjustedCrossEntropy } from './single.js';
import { inverseLogitBias, logPrior, PRIOR_EPS } from './priors.js';
import { expertLogits, type ExpertLoss, type ModelOutput } from './types.js';

/**
 * The three kinds of expert of SADE / PRL:
 * - forward: plain CE, fits the long-tailed training distribution;
 * - uniform: CE(z + tau log pi), balanced softmax at tau = 1 (BalPoE's tau_e);
 * - backward: CE(z + log pi - tau log pi_bar), SADE's inverse-prior expert (tau 2 on CIFAR/ImageNet).
 */
export type ExpertKind = 'forward' | 'uniform' | 'backward';

export interface ExpertTerm {
  type: ExpertKind;
  tau?: number;
}

export const DEFAULT_EXPERT_TERMS: readonly ExpertTerm[] = [
  { type: 'forward' },
  { type: 'uniform' },
  { type: 'backward', tau: 2 },
];

/** The logit bias of one expert term (null = none). */
export function expertBias(term: ExpertTerm, classCounts: number[], eps = PRIOR_EPS): number[] | null {
  switch (term.type) {
    case 'forward':
      if (term.tau !== undefined && term.tau !== 0) {
        throw new Error(
          `a 'forward' expert is plain cross-entropy and takes no tau (got ${term.tau}); use 'uniform' with tau for CE(z + tau log pi)`,
        );
      }
      return null;
    case 'uniform':
      return logPrior(classCounts, term.tau ?? 1, eps);
    case 'backward':
      return inverseLogitBias(classCounts, term.tau ?? 2, eps);
    default:
      throw new Error(
        `unknown expert loss '${String((term as { type: unknown }).type)}'; use forward, uniform or backward`,
      );
  }
}

/** A multi-expert loss from per-expert logit biases; 'sum' or 'mean' over the experts. */
export class BiasedExpertsLoss implements ExpertLoss {
  constructor(
    readonly type: string,
    readonly biases: (number[] | null)[],
    readonly reduce: 'sum' | 'mean',
  ) {
    if (biases.length < 1) throw new Error(`${type}: needs at least one expert`);
  }

  get experts(): number {
    return this.biases.length;
  }

  get logitBiases(): readonly (number[] | null)[] {
    return this.biases;
  }

  expertLosses(out: ModelOutput, target: Tensor): Tensor {
    return tidy(() => {
      const logits = expertLogits(out, this.experts, this.type);
      return stack(this.biases.map((bias, e) => adjustedCrossEntropy(logits.select(0, e), target, bias)));
    });
  }

  /** Without per-expert logits the reference code falls back to CE on the combined output; so do we. */
  forward(out: ModelOutput, target: Tensor): Tensor {
    if (!out.logits) return adjustedCrossEntropy(out.output, target);
    return tidy(() => {
      const losses = this.expertLosses(out, target);
      return this.reduce === 'sum' ? losses.sum() : losses.mean();
    });
  }
}

/**
 * SADE's DiverseExpertLoss: CE(z1) + CE(z2 + log pi) + CE(z3 + log pi - tau log pi_bar).
 * Exactly three experts, as in the reference.
 */
export function diverseExpertLoss(classCounts: number[], experts: number, tau = 2): BiasedExpertsLoss {
  if (experts !== 3) {
    throw new Error(
      `DiverseExpertLoss is defined for 3 experts (forward, uniform, backward); the model has ${experts}. ` +
        'Use BSExpertLoss with one tau per expert ("tau_list") for other counts',
    );
  }
  const biases = [{ type: 'forward' }, { type: 'uniform' }, { type: 'backward', tau }].map((t) =>
    expertBias(t as ExpertTerm, classCounts),
  );
  return new BiasedExpertsLoss('DiverseExpertLoss', biases, 'sum');
}

/** BalPoE's BSExpertLoss: mean over experts of CE(z_e + tau_e log(pi + eps)). */
export function bsExpertLoss(
  classCounts: number[],
  experts: number,
  tauList: number[] = [0, 1, 2],
  eps = PRIOR_EPS,
): BiasedExpertsLoss {
  if (tauList.length !== experts) {
    throw new Error(
      `BSExpertLoss: tau_list has ${tauList.length} values but the model has ${experts} experts; give one tau per expert`,
    );
  }
  const biases = tauList.map((tau) => logPrior(classCounts, tau, eps));
  return new BiasedExpertsLoss('BSExpertLoss', biases, 'mean');
}

/** A multi-expert loss from a list of expert terms (PRL's forward / uniform / backward experts). */
export function expertTermsLoss(
  classCounts: number[],
  terms: readonly ExpertTerm[],
  reduce: 'sum' | 'mean' = 'sum',
): BiasedExpertsLoss {
  return new BiasedExpertsLoss(
    'ExpertTermsLoss',
    terms.map((t) => expertBias(t, classCounts)),
    reduce,
  );
}
