// PRL's training loss: per-expert losses (forward / uniform / backward) combined by a
// scalarization under the batch's preference r. The 'paper' variant is the method of the paper;
// 'released' reproduces what the released code trains (the expert losses summed, as its
// DiverseExpertLoss configs do: the preference never reaches the loss).
import * as torch from '../../torch/index.js';
import { nn, tidy, type Tensor } from '../../torch/index.js';
import { DEFAULT_EXPERT_TERMS, expertTermsLoss, type BiasedExpertsLoss, type ExpertTerm } from './experts.js';
import { createScalarization, type Scalarization } from './scalarize.js';
import type { ExpertLoss, LossExtra, ModelOutput } from './types.js';
import { mixed } from './mixup.js';

/**
 * The ideal point z of the Tchebycheff scalarization estimated online as the lowest loss each
 * expert has reached so far (MOEA/D's z* update). With z = 0 the expert whose loss is
 * intrinsically largest (the backward expert: its logit adjustment makes long-tailed training
 * data hard on purpose) dominates the max almost every batch and the others barely train; the
 * running ideal point compares the experts by how far each is from its own best instead.
 * A module, so checkpoints carry it and a resumed run continues exactly.
 */
export class RunningIdealPoint extends nn.Module {
  readonly best: Tensor;
  constructor(experts: number) {
    super();
    this.best = this.registerBuffer('best', torch.tensor(new Array<number>(experts).fill(Infinity)));
  }

  /** Includes this batch's losses and returns z (no gradient flows into it). */
  update(losses: Tensor): Tensor {
    torch.noGrad(() =>
      tidy(() => {
        this.best.copy_(torch.aten.minimum(this.best, losses.detach().to(this.best.dtype)));
      }),
    );
    return this.best.detach();
  }
}

export interface PrlLossOptions {
  variant?: 'paper' | 'released';
  /** 'stch' (default) or 'linear'; also the released solver names ('ls', 'released_stch', 'sum'). */
  scalarization?: string;
  mu?: number;
  /** The ideal point: a number, one per expert, or 'running_min' (estimated online, see RunningIdealPoint). */
  z?: number | number[] | 'running_min';
  /** One term per expert; default forward, uniform, backward (tau 2). */
  expertLosses?: readonly ExpertTerm[];
}

export class PreferenceLoss implements ExpertLoss {
  readonly type = 'PRLLoss';
  readonly terms: BiasedExpertsLoss;
  readonly variant: 'paper' | 'released';
  readonly scalarizationName: string;
  readonly #scalarize: Scalarization;
  /** Set when the ideal point is estimated online; its state belongs in the checkpoint. */
  readonly ideal: RunningIdealPoint | null;

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
    const running = options.z === 'running_min';
    if (running && this.scalarizationName !== 'stch') {
      throw new Error(
        `PRL: z "running_min" is an ideal point of the Tchebycheff scalarization; it has no effect with '${this.scalarizationName}'`,
      );
    }
    this.ideal = running ? new RunningIdealPoint(experts) : null;
    this.#scalarize = createScalarization(this.scalarizationName, {
      mu: options.mu ?? 0.1,
      z: options.z === 'running_min' ? 0 : (options.z ?? 0),
    });
  }

  get logitBiases(): readonly (number[] | null)[] {
    return this.terms.biases;
  }

  expertLosses(out: ModelOutput, target: Tensor): Tensor {
    return this.terms.expertLosses(out, target);
  }

  forward(out: ModelOutput, target: Tensor, extra: LossExtra = {}): Tensor {
    return tidy(() =>
      this.#overDraws(out, extra, (o, e) => this.#scalarized(this.expertLosses(o, target), e)),
    );
  }

  /** Mixup mixes each expert's loss, then scalarizes: the expert losses are what r weighs. */
  forwardMixup(
    out: ModelOutput,
    ya: Tensor,
    yb: Tensor,
    lam: number | Tensor,
    extra: LossExtra = {},
  ): Tensor {
    return tidy(() =>
      this.#overDraws(out, extra, (o, e) =>
        this.#scalarized(mixed(lam, this.expertLosses(o, ya), this.expertLosses(o, yb)), e),
      ),
    );
  }

  /**
   * The loss of the batch's one preference, or the mean over several draws (extra.draws). The
   * draws' losses are independent branches (on streams of their own under branch streams),
   * except with the running ideal point, which each draw's loss updates in turn.
   */
  #overDraws(out: ModelOutput, extra: LossExtra, loss: (o: ModelOutput, e: LossExtra) => Tensor): Tensor {
    const draws = extra.draws;
    if (!draws || draws.length === 0) return loss(out, extra);
    const branches = draws.map((d) => () => loss(d.out, { preference: d.preference }));
    const losses = this.ideal
      ? branches.map((branch) => branch())
      : torch.parallelBranches(out.output.device, branches);
    return torch.stack(losses).mean();
  }

  #scalarized(losses: Tensor, extra: LossExtra): Tensor {
    return this.#scalarize(losses, extra.preference, this.ideal?.update(losses));
  }
}
