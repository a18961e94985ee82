// NegativeBinomial, ContinuousBernoulli and FisherSnedecor (PyTorch 1.13's formulas), sampled as
// PyTorch samples them: a Gamma-Poisson mixture, the inverse cdf of uniform_ draws, and a ratio
// of two _standard_gamma draws, on libtorch's global generator in PyTorch's order.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { empty, full, where } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  finfoEps,
  finfoTiny,
  type Param,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';
import { pick, probsToLogits, type ProbsOrLogits } from './discrete.js';

/** PyTorch's `HalfOpenInterval(lower_bound=0.0, upper_bound=1.0)`: values in [0, 1). */
const halfOpenUnit = c.halfOpenInterval(0, 1);

/** The gamma draws of PyTorch's Gamma.rsample: _standard_gamma(a) / rate, at least tiny. */
function gammaDraw(concentration: Tensor, rate: Tensor, shape: number[]): Tensor {
  const x = aten._standard_gamma(concentration.expand(...shape)).div(rate.expand(...shape));
  return x.clamp(finfoTiny(x));
}

/**
 * The number of successes before totalCount failures of Bernoulli(probs) trials
 * (torch.distributions.NegativeBinomial): totalCount (> = 0, need not be an integer), then
 * `{ probs }` (in [0, 1)) or `{ logits }`.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const nb = new torch.distributions.NegativeBinomial(5, { probs: 0.3 });
 * nb.mean; // 5 * 0.3 / 0.7
 * ```
 */
export class NegativeBinomial extends Distribution {
  readonly totalCount: Tensor;
  readonly probs: Tensor;
  readonly logits: Tensor;
  readonly #given: 'probs' | 'logits';
  constructor(totalCount: Param, options: ProbsOrLogits) {
    const [kind, value] = pick('NegativeBinomial', options);
    const [n, p] = broadcastAll('NegativeBinomial', totalCount, value);
    super(p.shape, [], options);
    this.#given = kind;
    this.own(n);
    this.own(p);
    this.totalCount = n.dtype === p.dtype ? n : this.own(n.to(p.dtype));
    this.checkParam('totalCount', this.totalCount, c.nonnegative);
    if (kind === 'probs') {
      this.probs = p;
      this.checkParam('probs', p, halfOpenUnit);
      this.logits = this.own(probsToLogits(p, true));
    } else {
      this.logits = p;
      this.checkParam('logits', p, c.real);
      this.probs = this.own(p.sigmoid());
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    const given = this.#given === 'probs' ? this.probs : this.logits;
    return new NegativeBinomial(e(this.totalCount), { [this.#given]: e(given) });
  }
  get support(): Constraint {
    return c.nonnegativeInteger;
  }
  /** totalCount * exp(logits). */
  get mean(): Tensor {
    return tidy(() => this.totalCount.mul(this.logits.exp()));
  }
  /** The mean divided by σ(-logits). */
  get variance(): Tensor {
    return tidy(() => this.mean.div(this.logits.neg().sigmoid()));
  }
  /** A Gamma(totalCount, exp(-logits)) draw, then a Poisson draw of that rate (PyTorch's order). */
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const shape = this.extendedShape(sampleShape);
        return aten.poisson(gammaDraw(this.totalCount, this.logits.neg().exp(), shape));
      }),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const n = this.totalCount;
      const unnormalized = n
        .mul(aten.log_sigmoid(this.logits.neg()))
        .add(value.mul(aten.log_sigmoid(this.logits)));
      const normalization = aten
        .lgamma(n.add(value))
        .neg()
        .add(aten.lgamma(value.add(1)))
        .add(aten.lgamma(n));
      // totalCount 0 and value 0 has mass 1, where lgamma(0) is infinite.
      const zero = full([], 0, normalization.dtype, normalization.device);
      return unnormalized.sub(where(n.add(value).eq(0), zero, normalization));
    });
  }
}

/** The interval of probs, [0.499, 0.501] by default, where the Taylor expansions stand in. */
export type ContinuousBernoulliLims = [number, number];

/**
 * The continuous Bernoulli distribution on [0, 1] (torch.distributions.ContinuousBernoulli,
 * Loaiza-Ganem and Cunningham 2019): `{ probs }` (in [0, 1], clamped to [eps, 1 - eps] as PyTorch)
 * or `{ logits }`, and `lims`, where probs close to 1/2 use PyTorch's Taylor expansions.
 */
export class ContinuousBernoulli extends Distribution {
  /** The probabilities, clamped to [eps, 1 - eps]. */
  readonly probs: Tensor;
  readonly logits: Tensor;
  /** The unstable interval of probs (PyTorch's `_lims`). */
  readonly lims: ContinuousBernoulliLims;
  override readonly hasRsample = true;
  readonly #given: 'probs' | 'logits';
  constructor(options: ProbsOrLogits & { lims?: ContinuousBernoulliLims }) {
    const [kind, value] = pick('ContinuousBernoulli', options);
    const lims = options.lims ?? [0.499, 0.501];
    if (!Array.isArray(lims) || lims.length !== 2 || !lims.every((x) => typeof x === 'number')) {
      throw new Error('tailor: ContinuousBernoulli: lims must be a pair of numbers [low, high]');
    }
    const [p] = broadcastAll('ContinuousBernoulli', value);
    super(p.shape, [], options);
    this.#given = kind;
    this.lims = [lims[0], lims[1]];
    this.own(p);
    if (kind === 'probs') {
      // Checked before the clamp, which would let any value pass (PyTorch checks it there too).
      this.checkParam('probs', p, c.unitInterval);
      this.probs = this.own(tidy(() => p.clamp(finfoEps(p), 1 - finfoEps(p))));
      this.logits = this.own(probsToLogits(this.probs, true));
    } else {
      this.checkParam('logits', p, c.real);
      this.logits = p;
      this.probs = this.own(tidy(() => p.sigmoid().clamp(finfoEps(p), 1 - finfoEps(p))));
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    // The clamped probs: clamping them again changes nothing.
    const given = this.#given === 'probs' ? this.probs : this.logits;
    return new ContinuousBernoulli({
      [this.#given]: this.expandParam(given, batchShape),
      lims: this.lims,
    });
  }
  get support(): Constraint {
    return c.unitInterval;
  }
  /** Whether probs lies outside (lims[0], lims[1]], where the closed forms are stable. */
  private outsideUnstable(): Tensor {
    return aten.logical_or(this.probs.le(this.lims[0]), this.probs.gt(this.lims[1]));
  }
  /** probs where stable, lims[0] inside the unstable interval (PyTorch's _cut_probs). */
  private cutProbs(): Tensor {
    return where(this.outsideUnstable(), this.probs, this.lims[0]);
  }
  /** The log normalising constant log C(probs) (PyTorch's _cont_bern_log_norm). */
  logNorm(): Tensor {
    return tidy(() => {
      const cut = this.cutProbs();
      const belowHalf = where(cut.le(0.5), cut, 0);
      const aboveHalf = where(cut.ge(0.5), cut, 1);
      const logNorm = cut
        .neg()
        .log1p()
        .sub(cut.log())
        .abs()
        .log()
        .sub(where(cut.le(0.5), belowHalf.mul(-2).log1p(), aboveHalf.mul(2).sub(1).log()));
      const x = this.probs.sub(0.5).square();
      const taylor = x
        .mul(104 / 45)
        .add(4 / 3)
        .mul(x)
        .add(Math.log(2));
      return where(this.outsideUnstable(), logNorm, taylor);
    });
  }
  get mean(): Tensor {
    return tidy(() => {
      const cut = this.cutProbs();
      const mus = cut.div(cut.mul(2).sub(1)).add(cut.neg().log1p().sub(cut.log()).reciprocal());
      const x = this.probs.sub(0.5);
      const taylor = x
        .square()
        .mul(16 / 45)
        .add(1 / 3)
        .mul(x)
        .add(0.5);
      return where(this.outsideUnstable(), mus, taylor);
    });
  }
  get variance(): Tensor {
    return tidy(() => {
      const cut = this.cutProbs();
      const vars = cut
        .mul(cut.sub(1))
        .div(cut.mul(-2).add(1).square())
        .add(cut.neg().log1p().sub(cut.log()).square().reciprocal());
      const x = this.probs.sub(0.5).square();
      const taylor = x
        .mul(128 / 945)
        .sub(1 / 15)
        .mul(x)
        .add(1 / 12);
      return where(this.outsideUnstable(), vars, taylor);
    });
  }
  /** The inverse cdf of uniform_ draws (torch.rand), as PyTorch. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const u = aten.uniform_(empty(this.extendedShape(sampleShape), this.probs.dtype, this.probs.device));
      return this.icdf(u);
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const [logits, v] = aten.broadcast_tensors([this.logits, value]);
      return aten.binary_cross_entropy_with_logits(logits, v, null, null, 0).neg().add(this.logNorm());
    });
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => {
      const cut = this.cutProbs();
      const cdfs = cut
        .pow(value)
        .mul(cut.neg().add(1).pow(value.neg().add(1)))
        .add(cut)
        .sub(1)
        .div(cut.mul(2).sub(1));
      const unbounded = where(this.outsideUnstable(), cdfs, value);
      return where(value.le(0), 0, where(value.ge(1), 1, unbounded));
    });
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => {
      const cut = this.cutProbs();
      const stable = cut
        .neg()
        .add(value.mul(cut.mul(2).sub(1)))
        .log1p()
        .sub(cut.neg().log1p())
        .div(cut.log().sub(cut.neg().log1p()));
      return where(this.outsideUnstable(), stable, value);
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const logProbs0 = this.probs.neg().log1p();
      const logProbs1 = this.probs.log();
      return this.mean.mul(logProbs0.sub(logProbs1)).sub(this.logNorm()).sub(logProbs0);
    });
  }
}

/** Fisher-Snedecor's F distribution of df1 and df2 degrees of freedom (torch.distributions.FisherSnedecor). */
export class FisherSnedecor extends Distribution {
  readonly df1: Tensor;
  readonly df2: Tensor;
  override readonly hasRsample = true;
  constructor(df1: Param, df2: Param, options?: DistributionOptions) {
    const [d1, d2] = broadcastAll('FisherSnedecor', df1, df2);
    super(d1.shape, [], options);
    this.df1 = this.own(d1);
    this.df2 = this.own(d2);
    this.checkParam('df1', this.df1, c.positive);
    this.checkParam('df2', this.df2, c.positive);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new FisherSnedecor(e(this.df1), e(this.df2));
  }
  get support(): Constraint {
    return c.positive;
  }
  /** df2 / (df2 - 2), NaN where df2 <= 2. */
  get mean(): Tensor {
    return tidy(() => {
      const df2 = where(this.df2.le(2), NaN, this.df2);
      return df2.div(df2.sub(2));
    });
  }
  /** NaN where df2 <= 4. */
  get variance(): Tensor {
    return tidy(() => {
      const df2 = where(this.df2.le(4), NaN, this.df2);
      return df2
        .square()
        .mul(2)
        .mul(this.df1.add(df2).sub(2))
        .div(this.df1.mul(df2.sub(2).square()).mul(df2.sub(4)));
    });
  }
  /** X1 / X2 for X1 ~ Gamma(df1/2, df1) drawn first, X2 ~ Gamma(df2/2, df2), as PyTorch. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      const x1 = gammaDraw(this.df1.mul(0.5), this.df1, shape);
      const x2 = gammaDraw(this.df2.mul(0.5), this.df2, shape);
      const tiny = finfoTiny(x2);
      return x1.div(x2.clamp(tiny)).clamp(tiny);
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const ct1 = this.df1.mul(0.5);
      const ct2 = this.df2.mul(0.5);
      const ct3 = this.df1.div(this.df2);
      const t1 = aten.lgamma(ct1.add(ct2)).sub(aten.lgamma(ct1)).sub(aten.lgamma(ct2));
      const t2 = ct1.mul(ct3.log()).add(ct1.sub(1).mul(value.log()));
      const t3 = ct1.add(ct2).mul(ct3.mul(value).log1p());
      return t1.add(t2).sub(t3);
    });
  }
}
