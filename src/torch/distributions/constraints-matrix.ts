// PyTorch 1.13's matrix constraints (torch.distributions.constraints): lower_cholesky,
// corr_cholesky and positive_definite, shared by the families whose support or parameters they
// are (MultivariateNormal, LKJCholesky, Wishart) so that bijectTo/transformTo recognise them.
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { tensor } from '../creation.js';
import * as aten from '../generated/aten.js';
import { finfoEps, type Constraint } from './distribution.js';
import { makeConstraint } from './constraint-make.js';

/** Whether each matrix (of x: [..., p, p]) is symmetric (PyTorch's isclose, atol 1e-6, rtol 1e-5). */
export function symmetricFlags(x: Tensor): Tensor {
  const t = x.transpose(-2, -1);
  const close = x.sub(t).abs().le(t.abs().mul(1e-5).add(1e-6));
  return aten.all_dim(aten.all_dim(close, -1), -1);
}

/**
 * PyTorch 1.13's `PositiveDefinite()` check per matrix, as a list: symmetric and with a Cholesky
 * factor (when some matrix is not symmetric, the symmetry flags alone, as PyTorch returns them).
 */
export function positiveDefiniteList(x: Tensor): boolean[] {
  return tidy(() => {
    const p = x.size(-1);
    const sym = symmetricFlags(x).reshape(-1).toNumbers();
    if (sym.some((s) => s === 0)) return sym.map((s) => s !== 0);
    try {
      aten.linalg_cholesky(x);
      return sym.map(() => true);
    } catch {
      // Some factorisation failed: find which, one matrix at a time.
      const flat = x.reshape(-1, p, p);
      return sym.map((_, i) => {
        try {
          aten.linalg_cholesky(flat.select(0, i));
          return true;
        } catch {
          return false;
        }
      });
    }
  });
}

/** Symmetric positive definite matrices (PyTorch's `PositiveDefinite()`). */
export const positiveDefinite: Constraint = makeConstraint(
  'PositiveDefinite()',
  (v) =>
    tensor(positiveDefiniteList(v).map(Number), { device: v.device })
      .reshape(...v.shape.slice(0, -2))
      .gt(0),
  2,
);

/** Lower triangular matrices with a positive diagonal (PyTorch's `LowerCholesky()`). */
export const lowerCholesky: Constraint = makeConstraint(
  'LowerCholesky()',
  (v) =>
    aten.logical_and(
      aten.all_dim(aten.all_dim(aten.tril(v).eq(v), -1), -1),
      aten.all_dim(aten.diagonal(v, 0, -2, -1).gt(0), -1),
    ),
  2,
);

/**
 * Cholesky factors of correlation matrices (PyTorch's `CorrCholesky()`): lower triangular with a
 * positive diagonal and rows of unit norm (to eps * n * 10, PyTorch's tolerance).
 */
export const corrCholesky: Constraint = makeConstraint(
  'CorrCholesky()',
  (v) => {
    const tol = finfoEps(v) * v.size(-1) * 10;
    const unitRows = aten.all_dim(v.norm(2, -1).sub(1).abs().le(tol), -1);
    return aten.logical_and(lowerCholesky.check(v), unitRows);
  },
  2,
);
