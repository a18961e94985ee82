// The multivariate normal of a low-rank plus diagonal covariance W Wᵀ + D (PyTorch 1.13's
// LowRankMultivariateNormal): densities, entropy and KL work through the m x m capacitance
// matrix I + Wᵀ D⁻¹ W (Woodbury), never an n x n factorisation.
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
import { batchMahalanobis, halfLogDet } from './multivariate-normal.js';

const LOG_2PI = Math.log(2 * Math.PI);

/** The lower Cholesky factor of the capacitance matrix I + Wᵀ D⁻¹ W (PyTorch's _batch_capacitance_tril). */
export function capacitanceTril(W: Tensor, D: Tensor): Tensor {
  return tidy(() => {
    const m = W.size(-1);
    const K = W.transpose(-2, -1).div(D.unsqueeze(-2)).matmul(W);
    return aten.linalg_cholesky(K.add(eye(m, K.dtype, K.device)));
  });
}

/** log det(W Wᵀ + D) by the matrix determinant lemma: log det C + Σ log D. */
export function lowRankLogDet(D: Tensor, capacitance: Tensor): Tensor {
  return tidy(() => halfLogDet(capacitance).mul(2).add(D.log().sum(-1)));
}

/** xᵀ (W Wᵀ + D)⁻¹ x by Woodbury: Σ x²/D minus the capacitance term (PyTorch's _batch_lowrank_mahalanobis). */
export function lowRankMahalanobis(W: Tensor, D: Tensor, x: Tensor, capacitance: Tensor): Tensor {
  return tidy(() => {
    const WtDinvX = W.transpose(-2, -1).div(D.unsqueeze(-2)).matmul(x.unsqueeze(-1)).squeeze(-1);
    return x.square().div(D).sum(-1).sub(batchMahalanobis(capacitance, WtDinvX));
  });
}

/**
 * The multivariate normal N(loc, W Wᵀ + D) (torch.distributions.LowRankMultivariateNormal):
 * `new LowRankMultivariateNormal(loc, covFactor, covDiag)` with loc [..., n], covFactor W
 * [..., n, m] and covDiag D [..., n] (> 0), batch dimensions broadcast together.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const d = new torch.distributions.LowRankMultivariateNormal(
 *   torch.zeros([3]), torch.ones([3, 1]), torch.ones([3]),
 * );
 * d.logProb(torch.zeros([3])); // a scalar
 * ```
 */
export class LowRankMultivariateNormal extends Distribution {
  /** The mean, broadcast to batchShape + eventShape. */
  readonly loc: Tensor;
  /** W broadcast to batchShape + [n, m]. */
  readonly covFactor: Tensor;
  /** D broadcast to batchShape + [n]. */
  readonly covDiag: Tensor;
  /** W as given. */
  readonly unbroadcastedCovFactor: Tensor;
  /** D as given. */
  readonly unbroadcastedCovDiag: Tensor;
  /** The lower Cholesky factor of I + Wᵀ D⁻¹ W, of W's and D's batch. */
  readonly capacitanceTril: Tensor;
  override readonly hasRsample = true;
  constructor(loc: Tensor, covFactor: Tensor, covDiag: Tensor, options?: DistributionOptions) {
    const who = 'LowRankMultivariateNormal';
    if (!(loc instanceof Tensor) || loc.ndim < 1) {
      throw new Error(`tailor: ${who}: parameter loc must be a tensor of at least one dimension`);
    }
    const n = loc.size(-1);
    if (!(covFactor instanceof Tensor) || covFactor.ndim < 2 || covFactor.size(-2) !== n) {
      throw new Error(
        `tailor: ${who}: parameter covFactor must be a tensor of shape [..., ${n}, m] (loc's last size, then the rank m)`,
      );
    }
    if (!(covDiag instanceof Tensor) || covDiag.ndim < 1 || covDiag.size(-1) !== n) {
      throw new Error(
        `tailor: ${who}: parameter covDiag must be a tensor of shape [..., ${n}] (loc's last size)`,
      );
    }
    const m = covFactor.size(-1);
    const batch = broadcastShapes(
      who,
      loc.shape.slice(0, -1),
      covFactor.shape.slice(0, -2),
      covDiag.shape.slice(0, -1),
    );
    super(batch, [n], options);
    this.loc = this.own(loc.expand(...batch, n));
    this.covFactor = this.own(covFactor.expand(...batch, n, m));
    this.covDiag = this.own(covDiag.expand(...batch, n));
    this.unbroadcastedCovFactor = covFactor;
    this.unbroadcastedCovDiag = covDiag;
    this.checkParam('loc', this.loc, c.realVector);
    this.checkParam('covFactor', covFactor, c.independent(c.real, 2));
    this.checkParam('covDiag', covDiag, c.independent(c.positive, 1));
    this.capacitanceTril = this.own(capacitanceTril(covFactor, covDiag));
  }
  /**
   * loc expanded; W and D shared unbroadcast (as PyTorch 1.13) through views the new
   * distribution owns.
   */
  protected override expanded(batchShape: number[]): Distribution {
    const W = this.unbroadcastedCovFactor;
    const D = this.unbroadcastedCovDiag;
    const out = new LowRankMultivariateNormal(
      this.expandParam(this.loc, batchShape),
      W.expand(...W.shape),
      D.expand(...D.shape),
    );
    out.own(out.unbroadcastedCovFactor);
    out.own(out.unbroadcastedCovDiag);
    return out;
  }
  get support(): Constraint {
    return c.realVector;
  }
  get mean(): Tensor {
    return this.loc.clone();
  }
  /** Σ_j W_ij² + D_i. */
  get variance(): Tensor {
    return tidy(() =>
      this.unbroadcastedCovFactor
        .square()
        .sum(-1)
        .add(this.unbroadcastedCovDiag)
        .expand(...this.batchShape, ...this.eventShape),
    );
  }
  /** W Wᵀ + diag(D). */
  get covarianceMatrix(): Tensor {
    return tidy(() => {
      const W = this.unbroadcastedCovFactor;
      const n = this.eventShape[0];
      return W.matmul(W.transpose(-2, -1))
        .add(aten.diag_embed(this.unbroadcastedCovDiag, 0, -2, -1))
        .expand(...this.batchShape, n, n);
    });
  }
  /** D^½ chol(I + D^-½ W Wᵀ D^-½): PyTorch's well-conditioned route to the covariance's factor. */
  get scaleTril(): Tensor {
    return tidy(() => {
      const n = this.eventShape[0];
      const sqrtD = this.unbroadcastedCovDiag.sqrt().unsqueeze(-1);
      const DinvsqrtW = this.unbroadcastedCovFactor.div(sqrtD);
      const K = DinvsqrtW.matmul(DinvsqrtW.transpose(-2, -1)).add(eye(n, sqrtD.dtype, sqrtD.device));
      return sqrtD.mul(aten.linalg_cholesky(K)).expand(...this.batchShape, n, n);
    });
  }
  /** D⁻¹ - Aᵀ A with A = C⁻¹ Wᵀ D⁻¹ (Woodbury). */
  get precisionMatrix(): Tensor {
    return tidy(() => {
      const n = this.eventShape[0];
      const D = this.unbroadcastedCovDiag;
      const WtDinv = this.unbroadcastedCovFactor.transpose(-2, -1).div(D.unsqueeze(-2));
      const A = aten.linalg_solve_triangular(this.capacitanceTril, WtDinv, false);
      return aten
        .diag_embed(D.reciprocal(), 0, -2, -1)
        .sub(A.transpose(-2, -1).matmul(A))
        .expand(...this.batchShape, n, n);
    });
  }
  /** loc + W ε_W + √D ε_D, ε_W (rank m) drawn first, as PyTorch. */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      const epsW = standardNormal([...shape.slice(0, -1), this.covFactor.size(-1)], this.loc);
      const epsD = standardNormal(shape, this.loc);
      return this.loc
        .add(this.unbroadcastedCovFactor.matmul(epsW.unsqueeze(-1)).squeeze(-1))
        .add(this.unbroadcastedCovDiag.sqrt().mul(epsD));
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const W = this.unbroadcastedCovFactor;
      const D = this.unbroadcastedCovDiag;
      const M = lowRankMahalanobis(W, D, value.sub(this.loc), this.capacitanceTril);
      const logDet = lowRankLogDet(D, this.capacitanceTril);
      return M.add(logDet)
        .add(this.eventShape[0] * LOG_2PI)
        .mul(-0.5);
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const logDet = lowRankLogDet(this.unbroadcastedCovDiag, this.capacitanceTril);
      return logDet
        .add(this.eventShape[0] * (1 + LOG_2PI))
        .mul(0.5)
        .expand(...this.batchShape);
    });
  }
}
