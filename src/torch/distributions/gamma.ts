// Gamma, Dirichlet and Beta (PyTorch 1.13's formulas), sampled by libtorch's _standard_gamma and
// _sample_dirichlet on the global generator.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { isGradEnabled, noGrad } from '../autograd.js';
import { stack } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  finfoTiny,
  type Param,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';

/** The gamma distribution of shape `concentration` and `rate` (torch.distributions.Gamma). */
export class Gamma extends Distribution {
  readonly concentration: Tensor;
  readonly rate: Tensor;
  override readonly hasRsample = true;
  constructor(concentration: Param, rate: Param, options?: DistributionOptions) {
    const [a, r] = broadcastAll('Gamma', concentration, rate);
    super(a.shape, [], options);
    this.concentration = this.own(a);
    this.rate = this.own(r);
    this.checkParam('concentration', this.concentration, c.positive);
    this.checkParam('rate', this.rate, c.positive);
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Gamma(e(this.concentration), e(this.rate));
  }
  get support(): Constraint {
    return c.nonnegative;
  }
  get mean(): Tensor {
    return this.concentration.div(this.rate);
  }
  get variance(): Tensor {
    return tidy(() => this.concentration.div(this.rate.square()));
  }
  /** Differentiable through _standard_gamma's derivative (libtorch's implicit reparameterisation). */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      const x = aten._standard_gamma(this.concentration.expand(...shape)).div(this.rate.expand(...shape));
      return x.clamp(finfoTiny(x));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const a = this.concentration;
      return aten
        .xlogy_Tensor(a, this.rate)
        .add(aten.xlogy_Tensor(a.sub(1), value))
        .sub(this.rate.mul(value))
        .sub(aten.lgamma(a));
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const a = this.concentration;
      return a
        .sub(this.rate.log())
        .add(aten.lgamma(a))
        .add(a.neg().add(1).mul(aten.digamma(a)));
    });
  }
}

/** The Dirichlet distribution over the simplex of the last dimension (torch.distributions.Dirichlet). */
export class Dirichlet extends Distribution {
  readonly concentration: Tensor;
  override readonly hasRsample = true;
  constructor(concentration: Tensor, options?: DistributionOptions) {
    if (!(concentration instanceof Tensor) || concentration.ndim < 1) {
      throw new Error(
        'tailor: Dirichlet: parameter concentration must be a tensor of at least one dimension (the categories last)',
      );
    }
    super(concentration.shape.slice(0, -1), concentration.shape.slice(-1), options);
    this.concentration = concentration;
    this.checkParam('concentration', concentration, {
      name: 'IndependentConstraint(GreaterThan(lower_bound=0.0), 1)',
      eventDim: 1,
      check: (v) => aten.all_dim(v.gt(0), -1),
    });
  }
  /** The expanded concentration is a view this distribution owns (dispose() frees it). */
  protected override expanded(batchShape: number[]): Distribution {
    const view = this.expandParam(this.concentration, batchShape);
    const out = new Dirichlet(view);
    out.own(view);
    return out;
  }
  get support(): Constraint {
    return c.simplex;
  }
  get mean(): Tensor {
    return tidy(() => this.concentration.div(this.concentration.sum(-1, true)));
  }
  get variance(): Tensor {
    return tidy(() => {
      const a0 = this.concentration.sum(-1, true);
      return this.concentration.mul(a0.sub(this.concentration)).div(a0.square().mul(a0.add(1)));
    });
  }
  /** libtorch's _sample_dirichlet, without a gradient path. */
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        return aten._sample_dirichlet(this.concentration.expand(...this.extendedShape(sampleShape)));
      }),
    );
  }
  /**
   * libtorch's _sample_dirichlet (the values of `sample`, as PyTorch's rsample) with PyTorch's
   * pathwise gradient: libtorch gives _sample_dirichlet no derivative, so, as PyTorch's Python-side
   * `_Dirichlet` function, the gradient of the concentration is G * (g - sum(x * g)) with
   * G = _dirichlet_grad(x, alpha, sum(alpha)) and g the upstream gradient. It reaches the graph
   * as x + (z - z.detach()) with z = alpha * G - x * sum(alpha * G) (G and x constants): exactly x
   * forward, and the vector-Jacobian product of z is that gradient.
   */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const alpha = this.concentration.expand(...this.extendedShape(sampleShape));
      const x = noGrad(() => aten._sample_dirichlet(alpha));
      if (!isGradEnabled() || !alpha.requiresGrad) return x;
      const g = noGrad(() => aten._dirichlet_grad(x, alpha, alpha.sum(-1, true).expandAs(alpha)));
      const weighted = alpha.mul(g);
      const z = weighted.sub(x.mul(weighted.sum(-1, true)));
      const zero = z.sub(z.detach());
      // A draw so small that its G is not finite gets no gradient there (PyTorch's is NaN), and
      // its value stays exact.
      return aten.where_self(aten.isfinite(zero), x.add(zero), x);
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const a = this.concentration;
      return aten
        .xlogy_Tensor(a.sub(1), value)
        .sum(-1)
        .add(aten.lgamma(a.sum(-1)))
        .sub(aten.lgamma(a).sum(-1));
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const a = this.concentration;
      const k = a.size(-1);
      const a0 = a.sum(-1);
      return aten
        .lgamma(a)
        .sum(-1)
        .sub(aten.lgamma(a0))
        .sub(a0.neg().add(k).mul(aten.digamma(a0)))
        .sub(a.sub(1).mul(aten.digamma(a)).sum(-1));
    });
  }
}

/** The beta distribution (torch.distributions.Beta), a Dirichlet of two categories. */
export class Beta extends Distribution {
  readonly concentration1: Tensor;
  readonly concentration0: Tensor;
  /** The Dirichlet of [concentration1, concentration0]. */
  readonly dirichlet: Dirichlet;
  override readonly hasRsample = true;
  constructor(concentration1: Param, concentration0: Param, options?: DistributionOptions) {
    const [a, b] = broadcastAll('Beta', concentration1, concentration0);
    super(a.shape, [], options);
    this.concentration1 = this.own(a);
    this.concentration0 = this.own(b);
    this.checkParam('concentration1', this.concentration1, c.positive);
    this.checkParam('concentration0', this.concentration0, c.positive);
    this.dirichlet = new Dirichlet(this.own(stack([a, b], -1)), { validateArgs: this.validateArgs });
  }
  protected override expanded(batchShape: number[]): Distribution {
    const e = (t: Tensor): Tensor => this.expandParam(t, batchShape);
    return new Beta(e(this.concentration1), e(this.concentration0));
  }
  get support(): Constraint {
    return c.unitInterval;
  }
  get mean(): Tensor {
    return tidy(() => this.concentration1.div(this.concentration1.add(this.concentration0)));
  }
  get variance(): Tensor {
    return tidy(() => {
      const total = this.concentration1.add(this.concentration0);
      return this.concentration1.mul(this.concentration0).div(total.square().mul(total.add(1)));
    });
  }
  override sample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.dirichlet.sample(sampleShape).select(-1, 0));
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.dirichlet.rsample(sampleShape).select(-1, 0));
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => this.dirichlet.logProb(stack([value, value.neg().add(1)], -1)));
  }
  override entropy(): Tensor {
    return this.dirichlet.entropy();
  }
}
