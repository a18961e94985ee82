// LogisticNormal and Kumaraswamy: the TransformedDistributions of PyTorch 1.13 (a Normal through
// a StickBreakingTransform; a Uniform through two PowerTransforms and an AffineTransform), with
// Kumaraswamy's closed-form mean, variance and entropy.
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { onesLike, zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { broadcastAll, type Constraint, type Param, type DistributionOptions } from './distribution.js';
import * as c from './constraints.js';
import { Normal, Uniform } from './continuous.js';
import { AffineTransform, TransformedDistribution } from './transforms.js';
import { PowerTransform, StickBreakingTransform } from './transforms-more.js';

const EULER = 0.5772156649015329;

/**
 * The law of the stick-breaking image of a Normal(loc, scale) vector
 * (torch.distributions.LogisticNormal): a batch of K - 1 normals gives points of the K-simplex.
 * A scalar batch is read as one of size 1, as PyTorch expands it.
 */
export class LogisticNormal extends TransformedDistribution {
  /** The Normal of the K - 1 coordinates (expanded to [1] where it was a scalar). */
  readonly normal: Normal;
  readonly #madeNormals: Normal[];
  constructor(loc: Param, scale: Param, options?: DistributionOptions) {
    const given = new Normal(loc, scale, options);
    const normal = given.batchShape.length === 0 ? given.expand([1]) : given;
    super(normal, new StickBreakingTransform(), options);
    this.normal = normal;
    this.#madeNormals = normal === given ? [given] : [normal, given];
  }
  get loc(): Tensor {
    return this.normal.loc;
  }
  get scale(): Tensor {
    return this.normal.scale;
  }
  override get support(): Constraint {
    return c.simplex;
  }
  /** Frees the Normals it made, and what they derived. */
  override dispose(): void {
    super.dispose();
    for (const n of this.#madeNormals) n.dispose();
  }
}

/** b · exp(lgamma(1 + n/a) + lgamma(b) - lgamma(1 + n/a + b)), PyTorch's _moments. */
function moments(a: Tensor, b: Tensor, n: number): Tensor {
  return tidy(() => {
    const arg1 = a.reciprocal().mul(n).add(1);
    const logValue = aten
      .lgamma(arg1)
      .add(aten.lgamma(b))
      .sub(aten.lgamma(arg1.add(b)));
    return b.mul(logValue.exp());
  });
}

/**
 * The Kumaraswamy distribution on [0, 1] of concentration1 a and concentration0 b
 * (torch.distributions.Kumaraswamy): (1 - U^(1/b))^(1/a) for U uniform on [0, 1].
 */
export class Kumaraswamy extends TransformedDistribution {
  readonly concentration1: Tensor;
  readonly concentration0: Tensor;
  readonly #uniform: Uniform;
  constructor(concentration1: Param, concentration0: Param, options?: DistributionOptions) {
    const [a, b] = broadcastAll('Kumaraswamy', concentration1, concentration0);
    const low = zerosLike(b);
    const high = onesLike(b);
    const uniform = new Uniform(low, high, options);
    const exponents = [b.reciprocal(), a.reciprocal()];
    super(
      uniform,
      [new PowerTransform(exponents[0]), new AffineTransform(1, -1), new PowerTransform(exponents[1])],
      options,
    );
    this.#uniform = uniform;
    for (const t of [a, b, low, high, ...exponents]) this.own(t);
    this.concentration1 = a;
    this.concentration0 = b;
    this.checkParam('concentration1', a, c.positive);
    this.checkParam('concentration0', b, c.positive);
  }
  override get support(): Constraint {
    return c.unitInterval;
  }
  override get mean(): Tensor {
    return moments(this.concentration1, this.concentration0, 1);
  }
  override get variance(): Tensor {
    return tidy(() => moments(this.concentration1, this.concentration0, 2).sub(this.mean.pow(2)));
  }
  override entropy(): Tensor {
    return tidy(() => {
      const t1 = this.concentration1.reciprocal().neg().add(1);
      const t0 = this.concentration0.reciprocal().neg().add(1);
      const h0 = aten.digamma(this.concentration0.add(1)).add(EULER);
      return t0.add(t1.mul(h0)).sub(this.concentration1.log()).sub(this.concentration0.log());
    });
  }
  /** Frees the Uniform and the exponents it made. */
  override dispose(): void {
    this.#uniform?.dispose();
    super.dispose();
  }
}
