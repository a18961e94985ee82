// PRL's training loss: per-expert losses (forward / uniform / backward) combined by a
// scalarization under the batch's preference r. The 'paper' variant is the method of the paper;
// 'released' reproduces what the released code trains (the expert losses summed, as its
// DiverseExpertLoss configs do: the preference never reaches the loss).
import { tidy, type Tensor } from '../../torch/index.js';
import { DEFAULT_EXPERT_TERMS, expertTermsLoss, type BiasedExpertsLoss, type ExpertTerm } from './experts.js';
import { createScalarization, type Scalarization } from './scalarize.js';
import type { ExpertLoss, LossExtra, ModelOutput } from './types.js';

export interface PrlLossOptions {
  variant?: 'paper' | 'released';
  /** 'stch' (default) or 'linear'; also the released solver names ('ls', 'released_stch', 'sum'). */
  scalarization?: string;
  mu?: number;
  z?: number | number[];
  /** One term per expert; default forward, uniform, backward (tau 2). */
  expertLosses?: readonly ExpertTerm[];
}

export class PreferenceLoss implements ExpertLoss {
  readonly type = 'PRLLoss';
  readonly terms: BiasedExpertsLoss;
  readonly variant: 'paper' | 'released';
  readonly scalarizationName: string;
  readonly #scalarize: Scalarization;

  constructor(classCounts: number[], experts: number, options: PrlLossOptions = {}) {
    const terms = options.expertLosses ?? DEFAULT_EXPERT_TERMS;
    if (terms.length !== experts) {
      throw new Error(
        `PRL: ${terms.length} expert losses are configured but the model has ${experts} experts; give one per expert`,
      );
    }
    if (Array.isArray(options.z) && options.z.length !== experts) {
      throw new Error(`PRL: the ideal point z has ${options.z.length} values for ${experts} experts`);
    }
    this.terms = expertTermsLoss(classCounts, terms, 'sum');
    this.variant = options.variant ?? 'paper';
    this.scalarizationName = this.variant === 'released' ? 'sum' : (options.scalarization ?? 'stch');
    this.#scalarize = createScalarization(this.scalarizationName, {
      mu: options.mu ?? 0.1,
      z: options.z ?? 0,
    });
  }

  expertLosses(out: ModelOutput, target: Tensor): Tensor {
    return this.terms.expertLosses(out, target);
  }

  forward(out: ModelOutput, target: Tensor, extra: LossExtra = {}): Tensor {
    return tidy(() => this.#scalarize(this.expertLosses(out, target), extra.preference));
  }

  /** Mixup mixes each expert's loss, then scalarizes: the expert losses are what r weighs. */
  forwardMixup(out: ModelOutput, ya: Tensor, yb: Tensor, lam: number, extra: LossExtra = {}): Tensor {
    return tidy(() => {
      const mixed = this.expertLosses(out, ya)
        .mul(lam)
        .add(this.expertLosses(out, yb).mul(1 - lam));
      return this.#scalarize(mixed, extra.preference);
    });
  }
}
