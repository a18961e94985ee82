// The LKJ distribution over lower Cholesky factors of correlation matrices (PyTorch 1.13's
// LKJCholesky): the onion method's draws (a Beta draw per row, then a normal_ direction, in
// PyTorch's order) and Stan's log density of the factor.
import { describeValue } from '../../util/arguments.js';
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { arange, cat, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastAll,
  finfoTiny,
  standardNormal,
  type Param,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';
import { Beta } from './gamma.js';
import { corrCholesky } from './constraints-matrix.js';

/**
 * The LKJ distribution of the lower Cholesky factor L of a dim x dim correlation matrix
 * (torch.distributions.LKJCholesky): L Lᵀ has density proportional to det(L Lᵀ)^(concentration - 1).
 * `new LKJCholesky(dim, concentration = 1)`; concentration 1 is uniform over correlation matrices.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const lkj = new torch.distributions.LKJCholesky(3, 0.5);
 * const L = lkj.sample(); // [3, 3], L Lᵀ a correlation matrix
 * ```
 */
export class LKJCholesky extends Distribution {
  /** The size of the matrices. */
  readonly dim: number;
  readonly concentration: Tensor;
  /** The Beta of the squared norms of each row's off-diagonal part (the onion method's). */
  readonly beta: Beta;
  constructor(dim: number, concentration: Param = 1, options?: DistributionOptions) {
    if (!Number.isInteger(dim) || dim < 2) {
      throw new Error(
        `tailor: LKJCholesky: dim must be an integer greater than or equal to 2, got ${describeValue(dim)}`,
      );
    }
    const [conc] = broadcastAll('LKJCholesky', concentration);
    super(conc.shape, [dim, dim], options);
    this.dim = dim;
    this.concentration = this.own(conc);
    this.checkParam('concentration', conc, c.positive);
    // Beta(offset + 1/2, marginal - offset/2) for offset [0, 0, 1, ..., dim - 2] (PyTorch's).
    this.beta = tidy(() => {
      const offset = cat([
        zeros([1], conc.dtype, conc.device),
        arange(0, dim - 1, 1, conc.dtype, conc.device),
      ]);
      const marginal = conc.add(0.5 * (dim - 2));
      return new Beta(offset.add(0.5), marginal.unsqueeze(-1).sub(offset.mul(0.5)), options);
    });
  }
  protected override expanded(batchShape: number[]): Distribution {
    return new LKJCholesky(this.dim, this.expandParam(this.concentration, batchShape));
  }
  get support(): Constraint {
    return corrCholesky;
  }
  /** PyTorch 1.13 has no mean for LKJCholesky: a named error. */
  get mean(): Tensor {
    throw new Error('tailor: LKJCholesky has no mean, as in PyTorch 1.13');
  }
  /** PyTorch 1.13 has no variance for LKJCholesky: a named error. */
  get variance(): Tensor {
    throw new Error('tailor: LKJCholesky has no variance, as in PyTorch 1.13');
  }
  /**
   * The onion method as PyTorch 1.13 vectorises it: y from the Beta (drawn first), a direction
   * from normal_ draws below the diagonal, row i's off-diagonal part sqrt(y_i) times that
   * direction, and the diagonal what makes each row of unit norm.
   */
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() =>
      tidy(() => {
        const y = this.beta.sample(sampleShape).unsqueeze(-1);
        const normal = aten.tril(standardNormal(this.extendedShape(sampleShape), y), -1);
        // The first row has no off-diagonal part: its 0 / 0 direction is 0, as PyTorch fills it.
        const rows = arange(0, this.dim, 1, 'int64', y.device).gt(0).unsqueeze(-1);
        const direction = aten.where_self(
          rows,
          normal.div(normal.norm(2, -1, true)),
          zeros([], y.dtype, y.device),
        );
        const w = y.sqrt().mul(direction);
        const diag = w.square().sum(-1).neg().add(1).clamp(finfoTiny(w)).sqrt();
        return w.add(aten.diag_embed(diag, 0, -2, -1));
      }),
    );
  }
  /** Stan's density of the factor: Σ_i (2(concentration - 1) + dim - i) log L_ii over i >= 2, normalised. */
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const n = this.dim;
      const diag = aten.diagonal(value, 0, -1, -2).narrow(-1, 1, n - 1);
      const order = this.concentration
        .sub(1)
        .mul(2)
        .unsqueeze(-1)
        .add(n)
        .sub(arange(2, n + 1, 1, this.concentration.dtype, this.concentration.device));
      const unnormalized = order.mul(diag.log()).sum(-1);
      const dm1 = n - 1;
      const alpha = this.concentration.add(0.5 * dm1);
      const denominator = aten.lgamma(alpha).mul(dm1);
      const numerator = aten.mvlgamma(alpha.sub(0.5), dm1);
      const normalize = numerator.sub(denominator).add(0.5 * dm1 * Math.log(Math.PI));
      return unnormalized.sub(normalize);
    });
  }
  override dispose(): void {
    // Undefined when a failed parameter check disposes the half-built distribution.
    (this.beta as Beta | undefined)?.dispose();
    super.dispose();
  }
}
