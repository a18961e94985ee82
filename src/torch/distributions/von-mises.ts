// The von Mises distribution on the circle (PyTorch 1.13's formulas): its log I0 and I1 are
// PyTorch's polynomial approximations, and its draws PyTorch's rejection sampler (Best and
// Fisher, 1979) with the same rand draws per round, so seeded draws equal PyTorch's.
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { empty, where, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  type Param,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';

const I0_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2];
const I0_LARGE = [
  0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1, 0.2635537e-1,
  -0.1647633e-1, 0.392377e-2,
];
const I1_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3];
const I1_LARGE = [
  0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1, 0.2282967e-1, -0.2895312e-1,
  0.1787654e-1, -0.420059e-2,
];

/** Σ coef[i] y^i by Horner's rule, in PyTorch's _eval_poly order. */
function evalPoly(y: Tensor, coef: number[]): Tensor {
  let result = y.mul(coef[coef.length - 1]).add(coef[coef.length - 2]);
  for (let i = coef.length - 3; i >= 0; i--) result = y.mul(result).add(coef[i]);
  return result;
}

/** log I_order(x) for x > 0 and order 0 or 1 (PyTorch's _log_modified_bessel_fn). */
function logModifiedBessel(x: Tensor, order: 0 | 1): Tensor {
  return tidy(() => {
    let y = x.div(3.75);
    y = y.mul(y);
    let small = evalPoly(y, order === 0 ? I0_SMALL : I1_SMALL);
    if (order === 1) small = x.abs().mul(small);
    small = small.log();
    const yLarge = x.reciprocal().mul(3.75);
    const large = x.sub(x.log().mul(0.5)).add(evalPoly(yLarge, order === 0 ? I0_LARGE : I1_LARGE).log());
    return where(x.lt(3.75), small, large);
  });
}

/** The sampler's rounds before it gives up (each accepts about 60% or more of the proposals). */
const MAX_ROUNDS = 10_000;

/**
 * The von Mises distribution of mean direction loc and concentration (torch.distributions.VonMises):
 * values and loc are angles in radians, any real (read modulo 2π); draws lie in [-π, π).
 */
export class VonMises extends Distribution {
  readonly loc: Tensor;
  readonly concentration: Tensor;
  /** The rejection sampler's r = (1 + ρ²) / (2ρ). */
  readonly proposalR: Tensor;
  constructor(loc: Param, concentration: Param, options?: DistributionOptions) {
    const [l, k] = broadcastAll('VonMises', loc, concentration);
    super(l.shape, [], options);
    this.loc = this.own(l);
    this.concentration = this.own(k);
    this.checkParam('loc', l, c.real);
    this.checkParam('concentration', k, c.positive);
    this.proposalR = this.own(
      tidy(() => {
        const tau = k.pow(2).mul(4).add(1).sqrt().add(1);
        const rho = tau.sub(tau.mul(2).sqrt()).div(k.mul(2));
        return rho.pow(2).add(1).div(rho.mul(2));
      }),
    );
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new VonMises(
      this.expandParam(this.loc, batchShape),
      this.expandParam(this.concentration, batchShape),
    );
  }
  get support(): Constraint {
    return c.real;
  }
  /** The circular mean: loc. */
  get mean(): Tensor {
    return this.loc.clone();
  }
  /** The circular variance 1 - I1(κ) / I0(κ). */
  get variance(): Tensor {
    return tidy(() =>
      logModifiedBessel(this.concentration, 1)
        .sub(logModifiedBessel(this.concentration, 0))
        .exp()
        .neg()
        .add(1),
    );
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() =>
      this.concentration
        .mul(value.sub(this.loc).cos())
        .sub(Math.log(2 * Math.PI))
        .sub(logModifiedBessel(this.concentration, 0)),
    );
  }
  /** Rounds of three rand draws per element until every element is accepted (PyTorch's order). */

  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const shape = this.extendedShape(sampleShape);
        const { loc, concentration: k, proposalR: r } = this;
        let x = zeros(shape, loc.dtype, loc.device);
        // Where r is not above 1 (a concentration so large that r rounds to 1 or overflows, or
        // NaN with validateArgs off) no proposal is ever accepted, in PyTorch too, which loops
        // for ever: there the draw is loc itself (the limit as the concentration grows), or NaN
        // for a NaN concentration.
        const stuck = aten.logical_not(r.expand(...shape).gt(1));
        const kNaN = aten.isnan(k.expand(...shape));
        x = where(aten.logical_and(stuck, kNaN), k.expand(...shape), x);
        let done = stuck;
        for (let round = 0; aten.all(done).item() === 0; round++) {
          // each round accepts at least about 60% of the proposals where r > 1: never reached
          if (round === MAX_ROUNDS)
            throw new Error(
              `tailor: VonMises.sample: the rejection sampler accepted nothing in ${MAX_ROUNDS} rounds for some elements; check loc and concentration`,
            );
          const [u1, u2, u3] = aten.uniform_(empty([3, ...shape], loc.dtype, loc.device)).unbind(0);
          const z = u1.mul(Math.PI).cos();
          const f = r.mul(z).add(1).div(r.add(z));
          const cc = k.mul(r.sub(f));
          const accept = aten.logical_or(
            cc.mul(cc.neg().add(2)).sub(u2).gt(0),
            cc.div(u2).log().add(1).sub(cc).ge(0),
          );
          if (aten.any(accept).item() !== 0) {
            x = where(accept, u3.sub(0.5).sign().mul(aten.acos(f)), x);
            done = aten.logical_or(done, accept);
          }
        }
        return aten.remainder_Scalar(x.add(Math.PI).add(loc), 2 * Math.PI).sub(Math.PI);
      }),
    );
  }
}
