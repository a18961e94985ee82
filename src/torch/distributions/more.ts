// Cauchy, HalfNormal, HalfCauchy and Chi2 (PyTorch 1.13's formulas). Cauchy draws with libtorch's
// cauchy_ and the half distributions take the absolute value of their base's draws, as PyTorch's
// AbsTransform does, so seeded draws equal PyTorch's.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { empty, full, where } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  type Param,
  type Constraint,
  type DistributionOptions,
  resolveValidateArgs,
} from './distribution.js';
import * as c from './constraints.js';
import { Normal } from './continuous.js';
import { Gamma } from './gamma.js';

const LOG_2 = Math.log(2);

/**
 * A named error unless param (a number or tensor) is positive everywhere: for the families that
 * hand their parameter on to another's constructor, so that the error names their own (the
 * type always; the sign where validate, the validateArgs of the construction).
 */
function checkPositive(who: string, argument: string, param: Param, validate: boolean): void {
  if (!(param instanceof Tensor) && typeof param !== 'number')
    throw new Error(`tailor: ${who}: parameter ${argument} must be a Tensor or a number`);
  if (!validate) return;
  const ok =
    typeof param === 'number'
      ? param > 0
      : !(param instanceof Tensor) || tidy(() => aten.all(param.gt(0)).item() !== 0);
  if (!ok) {
    throw new Error(
      `tailor: ${who}: parameter ${argument} must satisfy GreaterThan(lower_bound=0.0), as PyTorch's validate_args requires; found values outside it`,
    );
  }
}

/** The Cauchy distribution of median loc and half width scale (torch.distributions.Cauchy). */
export class Cauchy extends Distribution {
  readonly loc: Tensor;
  readonly scale: Tensor;
  override readonly hasRsample = true;
  constructor(loc: Param, scale: Param, options?: DistributionOptions) {
    const [l, s] = broadcastAll('Cauchy', loc, scale);
    super(l.shape, [], options);
    this.loc = this.own(l);
    this.scale = this.own(s);
    this.checkParam('loc', this.loc, c.real);
    this.checkParam('scale', this.scale, c.positive);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Cauchy(e(this.loc), e(this.scale));
  }
  get support(): Constraint {
    return c.real;
  }
  /** NaN: a Cauchy variable has no mean (as in PyTorch). */
  get mean(): Tensor {
    return full(this.extendedShape(), NaN, this.loc.dtype, this.loc.device);
  }
  /** Infinity (as in PyTorch). */
  get variance(): Tensor {
    return full(this.extendedShape(), Infinity, this.loc.dtype, this.loc.device);
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const eps = aten.cauchy_(empty(this.extendedShape(sampleShape), this.loc.dtype, this.loc.device));
      return this.loc.add(eps.mul(this.scale));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() =>
      this.scale.log().neg().sub(Math.log(Math.PI)).sub(value.sub(this.loc).div(this.scale).square().log1p()),
    );
  }
  override entropy(): Tensor {
    return tidy(() => this.scale.log().add(Math.log(4 * Math.PI)));
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => aten.atan(value.sub(this.loc).div(this.scale)).div(Math.PI).add(0.5));
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => aten.tan(value.sub(0.5).mul(Math.PI)).mul(this.scale).add(this.loc));
  }
}

/**
 * |X| for X of a zero-centred base (HalfNormal, HalfCauchy): PyTorch's TransformedDistribution
 * with an AbsTransform, whose density, cdf and icdf fold the base's onto [0, ∞).
 */
abstract class Folded extends Distribution {
  /** The zero-centred distribution that is folded. */
  readonly baseDist: Normal | Cauchy;
  override readonly hasRsample = true;
  protected constructor(base: Normal | Cauchy) {
    super(base.batchShape, [], { validateArgs: base.validateArgs });
    this.baseDist = base;
  }
  get scale(): Tensor {
    return this.baseDist.scale;
  }
  get support(): Constraint {
    return c.nonnegative;
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.baseDist.rsample(sampleShape).abs());
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const lp = this.baseDist.logProb(value).add(LOG_2);
      return where(value.ge(0), lp, full([], -Infinity, lp.dtype, lp.device));
    });
  }
  override cdf(value: Tensor): Tensor {
    this.validateSample(value, 'cdf');
    return tidy(() => this.baseDist.cdf(value).mul(2).sub(1));
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => this.baseDist.icdf(value.add(1).div(2)));
  }
  override entropy(): Tensor {
    return tidy(() => this.baseDist.entropy().sub(LOG_2));
  }
  override dispose(): void {
    this.baseDist.dispose();
    super.dispose();
  }
}

/** |X| for X ~ Normal(0, scale) (torch.distributions.HalfNormal). */
export class HalfNormal extends Folded {
  /** The Normal(0, scale) that is folded. */
  declare readonly baseDist: Normal;
  constructor(scale: Param, options?: DistributionOptions) {
    checkPositive('HalfNormal', 'scale', scale, resolveValidateArgs('HalfNormal', options));
    super(new Normal(0, scale, options));
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new HalfNormal(this.expandParam(this.scale, batchShape));
  }
  get mean(): Tensor {
    return this.scale.mul(Math.sqrt(2 / Math.PI));
  }
  get variance(): Tensor {
    return tidy(() => this.scale.square().mul(1 - 2 / Math.PI));
  }
}

/** |X| for X ~ Cauchy(0, scale) (torch.distributions.HalfCauchy). */
export class HalfCauchy extends Folded {
  /** The Cauchy(0, scale) that is folded. */
  declare readonly baseDist: Cauchy;
  constructor(scale: Param, options?: DistributionOptions) {
    checkPositive('HalfCauchy', 'scale', scale, resolveValidateArgs('HalfCauchy', options));
    super(new Cauchy(0, scale, options));
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new HalfCauchy(this.expandParam(this.scale, batchShape));
  }
  /** Infinity (as in PyTorch). */
  get mean(): Tensor {
    return full(this.extendedShape(), Infinity, this.scale.dtype, this.scale.device);
  }
  /** The base's variance: infinity. */
  get variance(): Tensor {
    return this.baseDist.variance;
  }
}

/** The chi-squared distribution of df degrees of freedom: Gamma(df / 2, 1 / 2) (torch.distributions.Chi2). */
export class Chi2 extends Gamma {
  constructor(df: Param, options?: DistributionOptions) {
    checkPositive('Chi2', 'df', df, resolveValidateArgs('Chi2', options));
    const half = df instanceof Tensor ? df.mul(0.5) : df * 0.5;
    super(half, 0.5, options);
    if (half instanceof Tensor) this.own(half);
  }
  /** The degrees of freedom: twice the concentration. */
  get df(): Tensor {
    return this.concentration.mul(2);
  }
  protected override expanded(batchShape: number[]): Distribution {
    return tidy(() => new Chi2(this.expandParam(this.concentration, batchShape).mul(2)));
  }
}
