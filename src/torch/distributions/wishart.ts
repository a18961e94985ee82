// The Wishart distribution over positive definite matrices (PyTorch 1.13's Wishart): Bartlett
// draws (a Chi2 then a normal_ draw per sample, in PyTorch's order, with 1.13's redraw rounds),
// log density and entropy through the covariance's Cholesky factor.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { arange, eye, full, tensor, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastShapes,
  finfoEps,
  finfoTiny,
  standardNormal,
  type Param,
  type Constraint,
} from './distribution.js';
import { halfLogDet, type MultivariateNormalOptions } from './multivariate-normal.js';
import {
  lowerCholesky,
  positiveDefinite,
  positiveDefiniteList,
  symmetricFlags,
} from './constraints-matrix.js';

const LOG_2 = Math.log(2);

/** Σ_i digamma(x - i/2) over i < p (PyTorch's _mvdigamma). */
function mvdigamma(x: Tensor, p: number): Tensor {
  return aten.digamma(x.unsqueeze(-1).sub(arange(0, p, 1, x.dtype, x.device).div(2))).sum(-1);
}

/** PyTorch's _precision_to_scale_tril: the covariance's lower factor without inverting P. */
function precisionToScaleTril(P: Tensor): Tensor {
  return tidy(() => {
    const Lf = aten.linalg_cholesky(aten.flip(P, [-2, -1]));
    const Linv = aten.flip(Lf, [-2, -1]).transpose(-2, -1);
    return aten.linalg_solve_triangular(Linv, eye(P.size(-1), P.dtype, P.device), false);
  });
}

/**
 * The Wishart distribution of df degrees of freedom and scale matrix Σ
 * (torch.distributions.Wishart): `new Wishart(df, { covarianceMatrix })`, `{ precisionMatrix }`
 * or `{ scaleTril }`, df > n - 1 for n x n matrices. Its draws are positive definite matrices of
 * mean df Σ.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const w = new torch.distributions.Wishart(4, { covarianceMatrix: torch.eye(2) });
 * const S = w.rsample(); // [2, 2]
 * ```
 */
export class Wishart extends Distribution {
  /** The degrees of freedom, broadcast to batchShape. */
  readonly df: Tensor;
  /** The lower Cholesky factor of Σ, before broadcasting to batchShape. */
  readonly unbroadcastedScaleTril: Tensor;
  override readonly hasRsample = true;
  constructor(df: Param, options: MultivariateNormalOptions) {
    const given = (['covarianceMatrix', 'precisionMatrix', 'scaleTril'] as const).filter(
      (k) => options?.[k] !== undefined,
    );
    if (given.length !== 1) {
      throw new Error('tailor: Wishart: give exactly one of covarianceMatrix, precisionMatrix or scaleTril');
    }
    const which = given[0];
    const matrix = options[which] as Tensor;
    if (!(matrix instanceof Tensor) || matrix.ndim < 2 || matrix.size(-1) !== matrix.size(-2)) {
      throw new Error(`tailor: Wishart: parameter ${which} must be a tensor of shape [..., n, n]`);
    }
    if (!(df instanceof Tensor) && typeof df !== 'number') {
      throw new Error('tailor: Wishart: parameter df must be a Tensor or a number');
    }
    const n = matrix.size(-1);
    const dfShape = df instanceof Tensor ? df.shape : [];
    const batch = broadcastShapes('Wishart', matrix.shape.slice(0, -2), dfShape);
    super(batch, [n, n], options);
    this.df = this.own(
      df instanceof Tensor ? df.expand(...batch) : full(batch, df, matrix.dtype, matrix.device),
    );
    this.checkParam('df', this.df, {
      name: `GreaterThan(lower_bound=${n - 1})`,
      eventDim: 0,
      check: (v) => v.gt(n - 1),
    });
    if (which === 'scaleTril') {
      this.checkParam('scaleTril', matrix, lowerCholesky);
      this.unbroadcastedScaleTril = matrix;
      return;
    }
    this.checkParam(which, matrix, {
      name: 'PositiveDefinite() (symmetric to 1e-6)',
      eventDim: 2,
      check: symmetricFlags,
    });
    try {
      const L = which === 'covarianceMatrix' ? aten.linalg_cholesky(matrix) : precisionToScaleTril(matrix);
      this.unbroadcastedScaleTril = this.own(L);
    } catch {
      this.dispose();
      throw new Error(
        `tailor: Wishart: parameter ${which} must satisfy PositiveDefinite(), as PyTorch's validate_args requires; its Cholesky factorisation failed`,
      );
    }
  }
  /** df expanded, the factor shared unbroadcast through a view the expansion owns. */
  protected override expanded(batchShape: number[]): Distribution {
    const L = this.unbroadcastedScaleTril;
    const out = new Wishart(this.df.expand(...batchShape), { scaleTril: L.expand(...L.shape) });
    out.own(out.unbroadcastedScaleTril);
    return out;
  }
  get support(): Constraint {
    return positiveDefinite;
  }
  /** The lower Cholesky factor of Σ, of shape batchShape + [n, n]. */
  get scaleTril(): Tensor {
    return this.unbroadcastedScaleTril.expand(...this.batchShape, ...this.eventShape);
  }
  /** Σ = L Lᵀ. */
  get covarianceMatrix(): Tensor {
    return tidy(() => {
      const L = this.unbroadcastedScaleTril;
      return L.matmul(L.transpose(-2, -1)).expand(...this.batchShape, ...this.eventShape);
    });
  }
  /** Σ⁻¹, from the Cholesky factor. */
  get precisionMatrix(): Tensor {
    return tidy(() => {
      const L = this.unbroadcastedScaleTril;
      const id = eye(L.size(-1), L.dtype, L.device);
      return aten.cholesky_solve(id, L, false).expand(...this.batchShape, ...this.eventShape);
    });
  }
  /** df Σ. */
  get mean(): Tensor {
    return tidy(() => this.df.reshape(...this.batchShape, 1, 1).mul(this.covarianceMatrix));
  }
  /** df (Σ_ij² + Σ_ii Σ_jj). */
  get variance(): Tensor {
    return tidy(() => {
      const V = this.covarianceMatrix;
      const d = aten.diagonal(V, 0, -2, -1);
      return this.df
        .reshape(...this.batchShape, 1, 1)
        .mul(V.square().add(d.unsqueeze(-1).mul(d.unsqueeze(-2))));
    });
  }
  /**
   * Bartlett draws L A (L A)ᵀ, A lower triangular with sqrt(Chi2(df - i)) on its diagonal (drawn
   * first) and normal_ draws below it (row by row). Then PyTorch 1.13's redraw rounds: its
   * `is_singular` is the support check itself, so every sample whose batch holds a positive
   * definite draw is drawn again (as one [count] batch), and those of the new draws that fail the
   * check again, up to 10 rounds. Done the same way, the seeded draws are PyTorch's.
   */
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => {
      const shape = this.extendedShape(sampleShape);
      const count = sampleShape.reduce((a, b) => a * b, 1);
      const flatShape = [count, ...this.batchShape, ...this.eventShape];
      const samples = this.bartlett(sampleShape);
      let flags = this.anyPerSample(samples, true);
      if (!flags.some(Boolean)) return samples;
      let flat = samples.reshape(...flatShape);
      for (let round = 0; round < 10 && flags.some(Boolean); round++) {
        const at = flags.flatMap((f, i) => (f ? [i] : []));
        const fresh = this.bartlett([at.length]);
        flat = aten.index_copy(flat, 0, tensor(at, { dtype: 'int64', device: flat.device }), fresh);
        const again = this.anyPerSample(fresh, false);
        let j = 0;
        flags = flags.map((f) => (f ? again[j++] : false));
      }
      return flat.reshape(...shape);
    });
  }
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const nu = this.df;
      const p = this.eventShape[0];
      const L = this.unbroadcastedScaleTril;
      const [, logAbsDet] = aten.linalg_slogdet(value);
      const trace = aten.diagonal(aten.cholesky_solve(value, L, false), 0, -2, -1).sum(-1);
      return nu
        .mul(halfLogDet(L).add((p * LOG_2) / 2))
        .neg()
        .sub(aten.mvlgamma(nu.div(2), p))
        .add(
          nu
            .sub(p + 1)
            .div(2)
            .mul(logAbsDet),
        )
        .sub(trace.div(2));
    });
  }
  override entropy(): Tensor {
    return tidy(() => {
      const nu = this.df;
      const p = this.eventShape[0];
      const L = this.unbroadcastedScaleTril;
      return halfLogDet(L)
        .add((p * LOG_2) / 2)
        .mul(p + 1)
        .add(aten.mvlgamma(nu.div(2), p))
        .sub(
          nu
            .sub(p + 1)
            .div(2)
            .mul(mvdigamma(nu.div(2), p)),
        )
        .add(nu.mul(p / 2));
    });
  }
  /** One Bartlett draw of sampleShape + batchShape + [n, n]. */
  private bartlett(sampleShape: number[]): Tensor {
    const p = this.eventShape[0];
    const L = this.unbroadcastedScaleTril;
    const batch = this.batchShape;
    // Chi2(df - i) as PyTorch's Gamma(df/2 - i/2, 1/2).rsample: _standard_gamma / 0.5, at least tiny.
    const chi2Df = this.df
      .unsqueeze(-1)
      .sub(arange(0, p, 1, L.dtype, L.device))
      .expand(...batch, p);
    const chi2Shape = [...sampleShape, ...batch, p];
    const chi2 = aten._standard_gamma(chi2Df.mul(0.5).expand(...chi2Shape)).div(0.5);
    const diag = chi2.clamp(finfoTiny(chi2)).sqrt().clamp(finfoEps(chi2));
    const below = (p * (p - 1)) / 2;
    const normals = standardNormal([...sampleShape, ...batch, below], L);
    const positions: number[] = [];
    for (let i = 1; i < p; i++) for (let j = 0; j < i; j++) positions.push(i * p + j);
    const index = tensor(positions, { dtype: 'int64', device: L.device }).expand(...normals.shape);
    const lower = aten
      .scatter_src(zeros([...sampleShape, ...batch, p * p], L.dtype, L.device), -1, index, normals)
      .reshape(...sampleShape, ...batch, p, p);
    const chol = L.matmul(lower.add(aten.diag_embed(diag, 0, -2, -1)));
    return chol.matmul(chol.transpose(-2, -1));
  }
  /**
   * For draws of [..., batch, n, n]: per sample (all leading dims as one), whether some matrix of
   * its batch passes (wanted true) or fails (wanted false) the positive-definite check.
   */
  private anyPerSample(draws: Tensor, wanted: boolean): boolean[] {
    const perBatch = this.batchShape.reduce((a, b) => a * b, 1);
    const flags = noGrad(() => positiveDefiniteList(draws.detach()));
    const out: boolean[] = [];
    for (let i = 0; i < flags.length; i += perBatch) {
      out.push(flags.slice(i, i + perBatch).some((f) => f === wanted));
    }
    return out;
  }
}
