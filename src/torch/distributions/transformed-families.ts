// Gumbel, Weibull and Pareto. PyTorch 1.13 builds them as TransformedDistributions (of a Uniform
// or an Exponential); here each writes its transform chain out, op for op in PyTorch's order, so
// that densities, cdf/icdf and seeded draws equal PyTorch's, and the closed forms PyTorch
// overrides (Gumbel's logProb, the moments and entropies) are its closed forms.
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { empty, onesLike } from '../creation.js';
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

const EULER = 0.5772156649015329;

/**
 * TransformedDistribution's _monotonize_cdf when the transforms' sign is a tensor (an
 * AffineTransform of tensor scale): sign * (value - 0.5) + 0.5 with sign +1, kept for its
 * rounding.
 */
const monotonize = (value: Tensor): Tensor => value.sub(0.5).add(0.5);

/** Two parameters broadcast together, each owned and checked positive or real, for the families below. */
abstract class TwoParams extends Distribution {
  override readonly hasRsample = true;
  protected readonly pair: [Tensor, Tensor];
  protected constructor(
    name: string,
    a: Param,
    b: Param,
    names: [string, string],
    positiveFirst: boolean,
    options?: DistributionOptions,
  ) {
    const [x, y] = broadcastAll(name, a, b);
    super(x.shape, [], options);
    this.pair = [this.own(x), this.own(y)];
    this.checkParam(names[0], x, positiveFirst ? c.positive : c.real);
    this.checkParam(names[1], y, c.positive);
  }
  /** Standard exponential draws of sampleShape + batchShape (Exponential(1).rsample). */
  protected exponentialDraws(sampleShape: number[], rate: Tensor): Tensor {
    return aten.exponential_(empty(this.extendedShape(sampleShape), rate.dtype, rate.device)).div(rate);
  }
}

/** The Gumbel (type-I extreme value) distribution (torch.distributions.Gumbel). */
export class Gumbel extends TwoParams {
  constructor(loc: Param, scale: Param, options?: DistributionOptions) {
    super('Gumbel', loc, scale, ['loc', 'scale'], false, options);
  }
  get loc(): Tensor {
    return this.pair[0];
  }
  get scale(): Tensor {
    return this.pair[1];
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new Gumbel(this.expandParam(this.loc, batchShape), this.expandParam(this.scale, batchShape));
  }
  get support(): Constraint {
    return c.real;
  }
  get mean(): Tensor {
    return tidy(() => this.loc.add(this.scale.mul(EULER)));
  }
  override get stddev(): Tensor {
    return this.scale.mul(Math.PI / Math.sqrt(6));
  }
  get variance(): Tensor {
    return tidy(() => this.stddev.square());
  }
  /** The base Uniform(tiny, 1 - eps)'s bounds. */
  private bounds(): [number, number] {
    return [finfoTiny(this.loc), 1 - finfoEps(this.loc)];
  }
  /** Uniform(tiny, 1 - eps) draws, then log, negation, log and loc - scale * x. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const [low, high] = this.bounds();
      const u = aten.uniform_(empty(this.extendedShape(sampleShape), this.loc.dtype, this.loc.device));
      const x = u
        .mul(high - low)
        .add(low)
        .log()
        .neg()
        .log();
      return this.loc.sub(this.scale.mul(x));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const y = this.loc.sub(value).div(this.scale);
      return y.sub(y.exp()).sub(this.scale.log());
    });
  }
  override entropy(): Tensor {
    return tidy(() => this.scale.log().add(1 + EULER));
  }
  /** The base Uniform's cdf at the inverted transforms (exp(-exp(-(value - loc) / scale))). */
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => {
      const [low, high] = this.bounds();
      const u = value.sub(this.loc).div(this.scale.neg()).exp().neg().exp();
      return monotonize(
        u
          .sub(low)
          .div(high - low)
          .clamp(0, 1),
      );
    });
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => {
      const [low, high] = this.bounds();
      const x = monotonize(value)
        .mul(high - low)
        .add(low)
        .log()
        .neg()
        .log();
      return this.loc.sub(this.scale.mul(x));
    });
  }
}

/** The Weibull distribution of scale and shape concentration (torch.distributions.Weibull). */
export class Weibull extends TwoParams {
  /** 1 / concentration, the exponent of PyTorch's PowerTransform. */
  readonly concentrationReciprocal: Tensor;
  constructor(scale: Param, concentration: Param, options?: DistributionOptions) {
    super('Weibull', scale, concentration, ['scale', 'concentration'], true, options);
    this.concentrationReciprocal = this.own(this.concentration.reciprocal());
  }
  get scale(): Tensor {
    return this.pair[0];
  }
  get concentration(): Tensor {
    return this.pair[1];
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new Weibull(
      this.expandParam(this.scale, batchShape),
      this.expandParam(this.concentration, batchShape),
    );
  }
  get support(): Constraint {
    return c.positive;
  }
  get mean(): Tensor {
    return tidy(() => this.scale.mul(aten.lgamma(this.concentrationReciprocal.add(1)).exp()));
  }
  get variance(): Tensor {
    return tidy(() => {
      const k = this.concentrationReciprocal;
      const t1 = aten.lgamma(k.mul(2).add(1)).exp();
      const t2 = aten.lgamma(k.add(1)).mul(2).exp();
      return this.scale.square().mul(t1.sub(t2));
    });
  }
  /** Exponential(1) draws, raised to 1 / concentration, times scale. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const e = this.exponentialDraws(sampleShape, onesLike(this.scale));
      return this.scale.mul(e.pow(this.concentrationReciprocal));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const x1 = value.div(this.scale);
      const x0 = x1.pow(this.concentrationReciprocal.reciprocal());
      const powerJacobian = this.concentrationReciprocal.mul(x1).div(x0).abs().log();
      return this.scale.abs().log().neg().sub(powerJacobian).sub(x0);
    });
  }
  override entropy(): Tensor {
    return tidy(() =>
      this.concentrationReciprocal
        .neg()
        .add(1)
        .mul(EULER)
        .add(this.scale.mul(this.concentrationReciprocal).log())
        .add(1),
    );
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => {
      const x0 = value.div(this.scale).pow(this.concentrationReciprocal.reciprocal());
      return monotonize(x0.neg().exp().neg().add(1));
    });
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => {
      const e = monotonize(value).neg().log1p().neg();
      return this.scale.mul(e.pow(this.concentrationReciprocal));
    });
  }
}

/** The Pareto distribution of scale and shape alpha (torch.distributions.Pareto). */
export class Pareto extends TwoParams {
  constructor(scale: Param, alpha: Param, options?: DistributionOptions) {
    super('Pareto', scale, alpha, ['scale', 'alpha'], true, options);
  }
  get scale(): Tensor {
    return this.pair[0];
  }
  get alpha(): Tensor {
    return this.pair[1];
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new Pareto(this.expandParam(this.scale, batchShape), this.expandParam(this.alpha, batchShape));
  }
  get support(): Constraint {
    return c.greaterThanEq(this.scale, 'scale');
  }
  /** Infinity where alpha <= 1. */
  get mean(): Tensor {
    return tidy(() => {
      const a = this.alpha.clamp(1);
      return a.mul(this.scale).div(a.sub(1));
    });
  }
  /** Infinity where alpha <= 2. */
  get variance(): Tensor {
    return tidy(() => {
      const a = this.alpha.clamp(2);
      return this.scale
        .square()
        .mul(a)
        .div(a.sub(1).square().mul(a.sub(2)));
    });
  }
  /** Exponential(alpha) draws, exponentiated, times scale. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.scale.mul(this.exponentialDraws(sampleShape, this.alpha).exp()));
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const x0 = value.div(this.scale).log();
      const base = this.alpha.log().sub(this.alpha.mul(x0));
      return this.scale.abs().log().neg().sub(x0).add(base);
    });
  }
  override entropy(): Tensor {
    return tidy(() => this.scale.div(this.alpha).log().add(this.alpha.reciprocal().add(1)));
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => {
      const x0 = value.div(this.scale).log();
      return monotonize(this.alpha.neg().mul(x0).exp().neg().add(1));
    });
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => this.scale.mul(monotonize(value).neg().log1p().neg().div(this.alpha).exp()));
  }
}
