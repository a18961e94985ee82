// The multivariate normal distribution (PyTorch 1.13's MultivariateNormal): one Cholesky factor
// of the covariance drives sampling, densities and entropy.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { eye } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastShapes,
  standardNormal,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';
import { lowerCholesky } from './constraints-matrix.js';

/** Exactly one of the three: the covariance, its inverse, or its lower Cholesky factor. */
export interface MultivariateNormalOptions extends DistributionOptions {
  covarianceMatrix?: Tensor;
  precisionMatrix?: Tensor;
  scaleTril?: Tensor;
}

const LOG_2PI = Math.log(2 * Math.PI);

/** Σ (L⁻¹ x)², the squared Mahalanobis norm of x (.., n) for the lower factor L (.., n, n). */
export function batchMahalanobis(L: Tensor, x: Tensor): Tensor {
  return tidy(() => {
    const shape = broadcastShapes('MultivariateNormal', L.shape.slice(0, -2), x.shape.slice(0, -1));
    const n = x.size(-1);
    const y = aten.linalg_solve_triangular(
      L.expand(...shape, n, n),
      x.expand(...shape, n).unsqueeze(-1),
      false,
    );
    return y.squeeze(-1).square().sum(-1);
  });
}

/** The sum of the logs of a triangular factor's diagonal: half the log-determinant. */
export function halfLogDet(L: Tensor): Tensor {
  return tidy(() => aten.diagonal(L, 0, -2, -1).log().sum(-1));
}

/**
 * The multivariate normal N(loc, Σ) (torch.distributions.MultivariateNormal):
 * `new MultivariateNormal(loc, { covarianceMatrix })`, `{ precisionMatrix }` or `{ scaleTril }`.
 */
export class MultivariateNormal extends Distribution {
  /** The mean, broadcast to batchShape + eventShape. */
  readonly loc: Tensor;
  /** The lower Cholesky factor of the covariance, before broadcasting to batchShape. */
  readonly unbroadcastedScaleTril: Tensor;
  override readonly hasRsample = true;
  constructor(loc: Tensor, options: MultivariateNormalOptions) {
    if (!(loc instanceof Tensor) || loc.ndim < 1) {
      throw new Error('tailor: MultivariateNormal: parameter loc must be a tensor of at least one dimension');
    }
    const given = (['covarianceMatrix', 'precisionMatrix', 'scaleTril'] as const).filter(
      (k) => options?.[k] !== undefined,
    );
    if (given.length !== 1) {
      throw new Error(
        'tailor: MultivariateNormal: give exactly one of covarianceMatrix, precisionMatrix or scaleTril',
      );
    }
    const which = given[0];
    const matrix = options[which] as Tensor;
    const n = loc.size(-1);
    if (!(matrix instanceof Tensor) || matrix.ndim < 2 || matrix.size(-1) !== n || matrix.size(-2) !== n) {
      throw new Error(
        `tailor: MultivariateNormal: parameter ${which} must be a tensor of shape [..., ${n}, ${n}] (loc's last size)`,
      );
    }
    const batch = broadcastShapes('MultivariateNormal', matrix.shape.slice(0, -2), loc.shape.slice(0, -1));
    super(batch, [n], options);
    this.loc = this.own(loc.expand(...batch, n));
    this.checkParam('loc', this.loc, c.realVector);
    if (which === 'scaleTril') {
      this.checkParam('scaleTril', matrix, lowerCholesky);
      this.unbroadcastedScaleTril = matrix;
    } else {
      this.checkParam(which, matrix, symmetric);
      let L: Tensor;
      try {
        L = which === 'covarianceMatrix' ? aten.linalg_cholesky(matrix) : precisionToScaleTril(matrix);
      } catch {
        this.dispose();
        throw new Error(
          `tailor: MultivariateNormal: parameter ${which} must satisfy PositiveDefinite(), as PyTorch's validate_args requires; its Cholesky factorisation failed`,
        );
      }
      this.unbroadcastedScaleTril = this.own(L);
    }
  }
  /**
   * loc expanded, the Cholesky factor shared unbroadcast (as PyTorch 1.13) through a view the new
   * distribution owns. Whichever matrix built this one, the expansion's covariance, precision
   * and scale_tril are the same (tailor derives all three from the factor).
   */
  protected override expanded(batchShape: number[]): Distribution {
    const L = this.unbroadcastedScaleTril;
    const out = new MultivariateNormal(this.expandParam(this.loc, batchShape), {
      scaleTril: L.expand(...L.shape),
    });
    out.own(out.unbroadcastedScaleTril);
    return out;
  }
  get support(): Constraint {
    return c.realVector;
  }
  /** The lower Cholesky factor of the covariance, of shape batchShape + [n, n]. */
  get scaleTril(): Tensor {
    const n = this.eventShape[0];
    return this.unbroadcastedScaleTril.expand(...this.batchShape, n, n);
  }
  /** L Lᵀ. */
  get covarianceMatrix(): Tensor {
    return tidy(() => {
      const L = this.unbroadcastedScaleTril;
      const n = this.eventShape[0];
      return L.matmul(L.transpose(-2, -1)).expand(...this.batchShape, n, n);
    });
  }
  /** The inverse covariance, from the Cholesky factor. */
  get precisionMatrix(): Tensor {
    return tidy(() => {
      const L = this.unbroadcastedScaleTril;
      const n = this.eventShape[0];
      const id = eye(n, L.dtype, L.device);
      return aten.cholesky_solve(id.expand(...L.shape), L, false).expand(...this.batchShape, n, n);
    });
  }
  get mean(): Tensor {
    return this.loc.clone();
  }
  get variance(): Tensor {
    return tidy(() =>
      this.unbroadcastedScaleTril
        .square()
        .sum(-1)
        .expand(...this.batchShape, ...this.eventShape),
    );
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const eps = standardNormal(this.extendedShape(sampleShape), this.loc);
      return this.loc.add(this.unbroadcastedScaleTril.matmul(eps.unsqueeze(-1)).squeeze(-1));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const m = batchMahalanobis(this.unbroadcastedScaleTril, value.sub(this.loc));
      return m
        .add(this.eventShape[0] * LOG_2PI)
        .mul(-0.5)
        .sub(halfLogDet(this.unbroadcastedScaleTril));
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const h = halfLogDet(this.unbroadcastedScaleTril).add(0.5 * this.eventShape[0] * (1 + LOG_2PI));
      return h.expand(...this.batchShape);
    });
  }
}

/** PyTorch's _precision_to_scale_tril: the covariance's lower factor without inverting P. */
function precisionToScaleTril(P: Tensor): Tensor {
  return tidy(() => {
    const Lf = aten.linalg_cholesky(aten.flip(P, [-2, -1]));
    const Linv = aten.flip(Lf, [-2, -1]).transpose(-2, -1);
    const id = eye(P.size(-1), P.dtype, P.device);
    return aten.linalg_solve_triangular(Linv, id, false);
  });
}

const symmetric: Constraint = {
  name: 'PositiveDefinite() (symmetric to 1e-6)',
  eventDim: 2,
  check: (v) => aten.all_dim(aten.all_dim(v.sub(v.transpose(-2, -1)).abs().le(1e-6), -1), -1),
};
