// Normal, LogNormal, Laplace, Uniform, Exponential and StudentT (PyTorch 1.13's formulas).
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { empty, full, where } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  standardNormal,
  finfoEps,
  type Param,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';
import { Gamma } from './gamma.js';

const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/**
 * What the location-scale families on the real line share (Normal, Laplace): parameters `loc`
 * and `scale` (> 0) broadcast together, reparameterised sampling, support the reals, mean `loc`.
 */
abstract class RealLocScale extends Distribution {
  readonly loc: Tensor;
  readonly scale: Tensor;
  override readonly hasRsample = true;
  constructor(name: string, loc: Param, scale: Param, options?: DistributionOptions) {
    const [l, s] = broadcastAll(name, loc, scale);
    super(l.shape, [], options);
    this.loc = this.own(l);
    this.scale = this.own(s);
    this.checkParam('loc', this.loc, c.real);
    this.checkParam('scale', this.scale, c.positive);
  }
  get support(): Constraint {
    return c.real;
  }
  get mean(): Tensor {
    return this.loc.clone();
  }
}

/** The normal distribution N(loc, scale²) (torch.distributions.Normal). */
export class Normal extends RealLocScale {
  constructor(loc: Param, scale: Param, options?: DistributionOptions) {
    super('Normal', loc, scale, options);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Normal(e(this.loc), e(this.scale));
  }
  get variance(): Tensor {
    return this.scale.square();
  }
  override get stddev(): Tensor {
    return this.scale.clone();
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() =>
      this.loc.add(standardNormal(this.extendedShape(sampleShape), this.loc).mul(this.scale)),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() =>
      value
        .sub(this.loc)
        .square()
        .div(this.scale.square().mul(2))
        .neg()
        .sub(this.scale.log())
        .sub(LOG_SQRT_2PI),
    );
  }
  override entropy(): Tensor {
    return tidy(() => this.scale.log().add(0.5 + LOG_SQRT_2PI));
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => aten.erf(value.sub(this.loc).div(this.scale).mul(Math.SQRT1_2)).add(1).mul(0.5));
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => this.loc.add(aten.erfinv(value.mul(2).sub(1)).mul(this.scale).mul(Math.SQRT2)));
  }
}

/** exp of a normal variable (torch.distributions.LogNormal): loc and scale are the normal's. */
export class LogNormal extends Distribution {
  readonly loc: Tensor;
  readonly scale: Tensor;
  /** The normal distribution of log(x). */
  readonly baseDist: Normal;
  override readonly hasRsample = true;
  constructor(loc: Param, scale: Param, options?: DistributionOptions) {
    const base = new Normal(loc, scale, options);
    super(base.batchShape, [], options);
    this.baseDist = base;
    this.loc = base.loc;
    this.scale = base.scale;
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new LogNormal(e(this.loc), e(this.scale));
  }
  get support(): Constraint {
    return c.positive;
  }
  get mean(): Tensor {
    return tidy(() => this.loc.add(this.scale.square().div(2)).exp());
  }
  get variance(): Tensor {
    return tidy(() => {
      const s2 = this.scale.square();
      return aten.expm1(s2).mul(this.loc.mul(2).add(s2).exp());
    });
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.baseDist.rsample(sampleShape).exp());
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const y = value.log();
      return this.baseDist.logProb(y).sub(y);
    });
  }
  override entropy(): Tensor {
    return tidy(() => this.baseDist.entropy().add(this.loc));
  }
  /** The normal's cdf at log(value), which validates it (so 0 gives 0, as in PyTorch). */
  override cdf(value: Tensor): Tensor {
    this.checkValue(value, 'cdf');
    return tidy(() => this.baseDist.cdf(value.log()));
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => this.baseDist.icdf(value).exp());
  }
  override dispose(): void {
    this.baseDist.dispose();
    super.dispose();
  }
}

/** The Laplace distribution (torch.distributions.Laplace). */
export class Laplace extends RealLocScale {
  constructor(loc: Param, scale: Param, options?: DistributionOptions) {
    super('Laplace', loc, scale, options);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Laplace(e(this.loc), e(this.scale));
  }
  get variance(): Tensor {
    return tidy(() => this.scale.square().mul(2));
  }
  override get stddev(): Tensor {
    return this.scale.mul(Math.SQRT2);
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const u = aten.uniform_(
        empty(this.extendedShape(sampleShape), this.loc.dtype, this.loc.device),
        finfoEps(this.loc) - 1,
        1,
      );
      return this.loc.sub(this.scale.mul(u.sign()).mul(u.abs().neg().log1p()));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => this.scale.mul(2).log().neg().sub(value.sub(this.loc).abs().div(this.scale)));
  }
  override entropy(): Tensor {
    return tidy(() => this.scale.mul(2).log().add(1));
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => {
      const d = value.sub(this.loc);
      return d
        .sign()
        .mul(aten.expm1(d.abs().neg().div(this.scale)))
        .mul(-0.5)
        .add(0.5);
    });
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => {
      const term = value.sub(0.5);
      return this.loc.sub(this.scale.mul(term.sign()).mul(term.abs().mul(-2).log1p()));
    });
  }
}

/** The uniform distribution on [low, high) (torch.distributions.Uniform). */
export class Uniform extends Distribution {
  readonly low: Tensor;
  readonly high: Tensor;
  override readonly hasRsample = true;
  constructor(low: Param, high: Param, options?: DistributionOptions) {
    const [lo, hi] = broadcastAll('Uniform', low, high);
    super(lo.shape, [], options);
    this.low = this.own(lo);
    this.high = this.own(hi);
    const ok = !this.validateArgs || tidy(() => aten.all(this.low.lt(this.high)).item() !== 0);
    if (!ok) {
      this.dispose();
      throw new Error(
        'tailor: Uniform: parameter low must be below high everywhere (Uniform is not defined when low >= high)',
      );
    }
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Uniform(e(this.low), e(this.high));
  }
  get support(): Constraint {
    return c.interval(this.low, this.high);
  }
  get mean(): Tensor {
    return tidy(() => this.high.add(this.low).div(2));
  }
  get variance(): Tensor {
    return tidy(() => this.high.sub(this.low).square().div(12));
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const u = aten.uniform_(empty(this.extendedShape(sampleShape), this.low.dtype, this.low.device));
      return this.low.add(u.mul(this.high.sub(this.low)));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const inside = aten.logical_and(this.low.le(value), this.high.gt(value)).to(this.low.dtype);
      return inside.log().sub(this.high.sub(this.low).log());
    });
  }
  override entropy(): Tensor {
    return tidy(() => this.high.sub(this.low).log());
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => value.sub(this.low).div(this.high.sub(this.low)).clamp(0, 1));
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => value.mul(this.high.sub(this.low)).add(this.low));
  }
}

/** The exponential distribution of the given rate (torch.distributions.Exponential). */
export class Exponential extends Distribution {
  readonly rate: Tensor;
  override readonly hasRsample = true;
  constructor(rate: Param, options?: DistributionOptions) {
    const [r] = broadcastAll('Exponential', rate);
    super(r.shape, [], options);
    this.rate = this.own(r);
    this.checkParam('rate', this.rate, c.positive);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Exponential(e(this.rate));
  }
  get support(): Constraint {
    return c.nonnegative;
  }
  get mean(): Tensor {
    return this.rate.reciprocal();
  }
  get variance(): Tensor {
    return this.rate.pow(-2);
  }
  override get stddev(): Tensor {
    return this.rate.reciprocal();
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() =>
      aten
        .exponential_(empty(this.extendedShape(sampleShape), this.rate.dtype, this.rate.device))
        .div(this.rate),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => this.rate.log().sub(this.rate.mul(value)));
  }
  override entropy(): Tensor {
    return tidy(() => this.rate.log().neg().add(1));
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => this.rate.neg().mul(value).exp().neg().add(1));
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => value.neg().log1p().neg().div(this.rate));
  }
}

/** Student's t distribution (torch.distributions.StudentT). */
export class StudentT extends Distribution {
  readonly df: Tensor;
  readonly loc: Tensor;
  readonly scale: Tensor;
  override readonly hasRsample = true;
  constructor(df: Param, loc: Param = 0, scale: Param = 1, options?: DistributionOptions) {
    const [d, l, s] = broadcastAll('StudentT', df, loc, scale);
    super(d.shape, [], options);
    this.df = this.own(d);
    this.loc = this.own(l);
    this.scale = this.own(s);
    this.checkParam('df', this.df, c.positive);
    this.checkParam('loc', this.loc, c.real);
    this.checkParam('scale', this.scale, c.positive);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new StudentT(e(this.df), e(this.loc), e(this.scale));
  }
  get support(): Constraint {
    return c.real;
  }
  get mean(): Tensor {
    return tidy(() => where(this.df.gt(1), this.loc, full([], NaN, this.loc.dtype, this.loc.device)));
  }
  get variance(): Tensor {
    return tidy(() => {
      const v = this.scale.square().mul(this.df).div(this.df.sub(2));
      const inf = full([], Infinity, this.df.dtype, this.df.device);
      const nan = full([], NaN, this.df.dtype, this.df.device);
      return where(this.df.gt(2), v, where(this.df.gt(1), inf, nan));
    });
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      // PyTorch's order: the normal draw, then the chi-squared one (a Gamma(df/2, 1/2)).
      const x = standardNormal(shape, this.df);
      const z = new Gamma(this.df.mul(0.5), this.df.mul(0).add(0.5)).rsample(sampleShape);
      return this.loc.add(this.scale.mul(x.mul(z.div(this.df).rsqrt())));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const y = value.sub(this.loc).div(this.scale);
      const z = this.scale
        .log()
        .add(this.df.log().mul(0.5))
        .add(0.5 * Math.log(Math.PI))
        .add(aten.lgamma(this.df.mul(0.5)))
        .sub(aten.lgamma(this.df.add(1).mul(0.5)));
      return this.df.add(1).mul(-0.5).mul(y.square().div(this.df).log1p()).sub(z);
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const half = this.df.mul(0.5);
      const halfPlus = this.df.add(1).mul(0.5);
      const lbeta = aten
        .lgamma(half)
        .add(aten.lgamma(full([], 0.5, this.df.dtype, this.df.device)))
        .sub(aten.lgamma(halfPlus));
      return this.scale
        .log()
        .add(halfPlus.mul(aten.digamma(halfPlus).sub(aten.digamma(half))))
        .add(this.df.log().mul(0.5))
        .add(lbeta);
    });
  }
}
