// Independent and MixtureSameFamily (PyTorch 1.13): distributions built from others, whose
// densities and draws are those of their parts in PyTorch's order.
import { describeValue } from '../../util/arguments.js';
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import * as aten from '../generated/aten.js';
import { Distribution, type Constraint, type DistributionOptions } from './distribution.js';
import * as c from './constraints.js';
import { Categorical } from './discrete.js';

/** Sums the n rightmost dimensions out (PyTorch's _sum_rightmost). */
function sumRightmost(value: Tensor, n: number): Tensor {
  return n === 0 ? value : value.sum(Array.from({ length: n }, (_, i) => -1 - i));
}

/**
 * A distribution whose rightmost reinterpretedBatchNdims batch dimensions are read as event
 * dimensions (torch.distributions.Independent): logProb and entropy sum over them. The base
 * distribution is the caller's (dispose() leaves it), except one made by expand().
 */
export class Independent extends Distribution {
  /** The distribution whose batch dimensions are reinterpreted. */
  readonly baseDist: Distribution;
  /** How many rightmost batch dimensions of the base form part of the event. */
  readonly reinterpretedBatchNdims: number;
  override readonly hasRsample: boolean;
  #ownsBase = false;
  constructor(
    baseDistribution: Distribution,
    reinterpretedBatchNdims: number,
    options?: DistributionOptions,
  ) {
    if (!(baseDistribution instanceof Distribution)) {
      throw new Error('tailor: Independent: baseDistribution must be a Distribution');
    }
    const n = baseDistribution.batchShape.length;
    const r = reinterpretedBatchNdims;
    if (!Number.isInteger(r) || r < 0 || r > n) {
      throw new Error(
        `tailor: Independent: reinterpretedBatchNdims must be an integer in [0, len(baseDistribution.batchShape)] = [0, ${n}], got ${describeValue(r)}`,
      );
    }
    const batch = baseDistribution.batchShape;
    super(batch.slice(0, n - r), [...batch.slice(n - r), ...baseDistribution.eventShape], options);
    this.baseDist = baseDistribution;
    this.reinterpretedBatchNdims = r;
    this.hasRsample = baseDistribution.hasRsample;
  }
  protected override expanded(batchShape: number[]): Distribution {
    const r = this.reinterpretedBatchNdims;
    const base = this.baseDist.batchShape;
    const out = new Independent(this.baseDist.expand([...batchShape, ...base.slice(base.length - r)]), r);
    out.#ownsBase = true;
    return out;
  }
  get support(): Constraint {
    return c.independent(this.baseDist.support, this.reinterpretedBatchNdims);
  }
  get mean(): Tensor {
    return this.baseDist.mean;
  }
  get variance(): Tensor {
    return this.baseDist.variance;
  }
  override sample(sampleShape: number[] = []): Tensor {
    return this.baseDist.sample(sampleShape);
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return this.baseDist.rsample(sampleShape);
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => sumRightmost(this.baseDist.logProb(value), this.reinterpretedBatchNdims));
  }
  override entropy(): Tensor {
    return tidy(() => sumRightmost(this.baseDist.entropy(), this.reinterpretedBatchNdims));
  }
  override dispose(): void {
    if (this.#ownsBase) this.baseDist.dispose();
    super.dispose();
  }
}

/**
 * A mixture of K components of one family (torch.distributions.MixtureSameFamily): a
 * Categorical over the K components (the rightmost batch dimension of componentDistribution)
 * picks which one draws. Both parts are the caller's: dispose() leaves them.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const D = torch.distributions;
 * // Two one-dimensional Gaussians, weighted 0.3 and 0.7.
 * const gmm = new D.MixtureSameFamily(
 *   new D.Categorical({ probs: torch.tensor([0.3, 0.7]) }),
 *   new D.Normal(torch.tensor([-1, 2]), torch.tensor([0.5, 1])),
 * );
 * const x = gmm.sample([1000]); // [1000]
 * const nll = gmm.logProb(x).mean().neg();
 * ```
 */
export class MixtureSameFamily extends Distribution {
  /** The Categorical over the components. */
  readonly mixtureDistribution: Categorical;
  /** The K components: their batch shape ends in K. */
  readonly componentDistribution: Distribution;
  readonly #eventNdims: number;
  #ownsParts = false;
  constructor(
    mixtureDistribution: Categorical,
    componentDistribution: Distribution,
    options?: DistributionOptions,
  ) {
    if (!(mixtureDistribution instanceof Categorical)) {
      throw new Error('tailor: MixtureSameFamily: mixtureDistribution must be a Categorical');
    }
    if (!(componentDistribution instanceof Distribution)) {
      throw new Error('tailor: MixtureSameFamily: componentDistribution must be a Distribution');
    }
    const cb = componentDistribution.batchShape;
    if (cb.length < 1) {
      throw new Error(
        'tailor: MixtureSameFamily: componentDistribution needs a batch dimension of the K components (its rightmost); wrap an event-only distribution with expand or Independent',
      );
    }
    const mdbs = mixtureDistribution.batchShape;
    const cdbs = cb.slice(0, -1);
    for (let i = 1; i <= Math.min(mdbs.length, cdbs.length); i++) {
      const a = mdbs[mdbs.length - i];
      const b = cdbs[cdbs.length - i];
      if (a !== 1 && b !== 1 && a !== b) {
        throw new Error(
          `tailor: MixtureSameFamily: mixtureDistribution.batchShape [${mdbs.join(', ')}] is not compatible with componentDistribution.batchShape [${cdbs.join(', ')}] (without its last, the components)`,
        );
      }
    }
    const km = mixtureDistribution.numEvents;
    const kc = cb[cb.length - 1];
    if (km !== kc) {
      throw new Error(
        `tailor: MixtureSameFamily: mixtureDistribution has ${km} categories but componentDistribution.batchShape ends in ${kc} components; they must be equal`,
      );
    }
    super(cdbs, componentDistribution.eventShape, options);
    this.mixtureDistribution = mixtureDistribution;
    this.componentDistribution = componentDistribution;
    this.#eventNdims = componentDistribution.eventShape.length;
  }
  /**
   * The mixture expanded to batchShape and the components to batchShape + [K] (PyTorch 1.13's
   * order); the new mixture owns both expansions, and dispose() frees them.
   */
  protected override expanded(batchShape: number[]): Distribution {
    const k = this.mixtureDistribution.numEvents;
    const out = new MixtureSameFamily(
      this.mixtureDistribution.expand(batchShape),
      this.componentDistribution.expand([...batchShape, k]),
    );
    out.#ownsParts = true;
    return out;
  }
  override dispose(): void {
    if (this.#ownsParts) {
      this.mixtureDistribution.dispose();
      this.componentDistribution.dispose();
    }
    super.dispose();
  }
  /** Values where some component has positive density (each component's support). */
  get support(): Constraint {
    const inner = this.componentDistribution.support;
    return {
      name: inner.name,
      eventDim: inner.eventDim,
      check: (v) => aten.logical_not(aten.all_dim(aten.logical_not(inner.check(this.pad(v))), -1)),
    };
  }
  /** The mixture probabilities shaped to broadcast against the components' mean: [..., K, 1 x eventNdims]. */
  private padMixture(x: Tensor): Tensor {
    return x.reshape(...x.shape, ...Array<number>(this.#eventNdims).fill(1));
  }
  /** A value with a components dimension: x.unsqueeze(-1 - eventNdims). */
  private pad(x: Tensor): Tensor {
    return x.unsqueeze(-1 - this.#eventNdims);
  }
  get mean(): Tensor {
    return tidy(() => {
      const probs = this.padMixture(this.mixtureDistribution.probs);
      return probs.mul(this.componentDistribution.mean).sum(-1 - this.#eventNdims);
    });
  }
  /** The law of total variance: E[Var | component] + Var[E | component]. */
  get variance(): Tensor {
    return tidy(() => {
      const dim = -1 - this.#eventNdims;
      const probs = this.padMixture(this.mixtureDistribution.probs);
      const meanCondVar = probs.mul(this.componentDistribution.variance).sum(dim);
      const varCondMean = probs
        .mul(this.componentDistribution.mean.sub(this.pad(this.mean)).square())
        .sum(dim);
      return meanCondVar.add(varCondMean);
    });
  }
  /** Σ_k π_k F_k(value), where the components have a cdf. */
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() =>
      this.componentDistribution.cdf(this.pad(value)).mul(this.mixtureDistribution.probs).sum(-1),
    );
  }
  /** logsumexp over the components of their log density plus the log mixture weight. */
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const logProbX = this.componentDistribution.logProb(this.pad(value));
      const logMix = this.mixtureDistribution.logits.logSoftmax(-1);
      return logProbX.add(logMix).logsumexp(-1);
    });
  }
  /** The mixture's draw of the component, then every component's draw, gathered (PyTorch's order). */
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const gatherDim = sampleShape.length + this.batchShape.length;
        const es = this.eventShape;
        const mix = this.mixtureDistribution.sample(sampleShape);
        const comp = this.componentDistribution.sample(sampleShape);
        const index = mix
          .reshape(...mix.shape, 1, ...es.map(() => 1))
          .repeat(...mix.shape.map(() => 1), 1, ...es);
        return comp.gather(gatherDim, index).squeeze(gatherDim);
      }),
    );
  }
}
