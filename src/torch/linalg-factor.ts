// The factorisations of torch.linalg (re-exported by linalg.ts): LU with partial pivoting and its
// solve, LDLᵀ (Bunch-Kaufman) and its solve, Householder products, and the `_ex` forms of inv,
// cholesky, solve and lu_factor, which return LAPACK's info codes instead of throwing on a
// singular or indefinite matrix. Over libtorch's linalg_* kernels: results and gradients are
// PyTorch's (the LDL functions have no gradient in libtorch 1.13). Pivots are int32 tensors with
// LAPACK's 1-based row numbers, as PyTorch's.
import type { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { ArgumentError, checksOf } from '../util/arguments.js';
import { flagOptions, matrixArg, pivotsArg, tensorArg } from './linalg-args.js';

/**
 * The LU decomposition with partial pivoting A = P L U of `A` [..., m, n] (torch.linalg.lu),
 * k = min(m, n): `[P [..., m, m], L [..., m, k], U [..., k, n]]`, L unit lower triangular, U upper
 * triangular. `pivot: false` (CUDA only, as in PyTorch) leaves out the row exchanges.
 */
export function lu(A: Tensor, options: { pivot?: boolean } = {}): [P: Tensor, L: Tensor, U: Tensor] {
  const c = checksOf('linalg.lu');
  const o = flagOptions(c, options, ['pivot']);
  return aten.linalg_lu(matrixArg(c, A, 'A'), o.pivot ?? true);
}

/**
 * The LU decomposition of `A` [..., m, n] in LAPACK's compact form (torch.linalg.lu_factor):
 * `[LU [..., m, n], pivots [..., min(m, n)]]`, L below the diagonal (its unit diagonal implied)
 * and U on and above it; pivots (int32, 1-based) name the row exchanged with each row. For
 * luSolve, or aten.lu_unpack to get P, L and U.
 */
export function luFactor(A: Tensor, options: { pivot?: boolean } = {}): [LU: Tensor, pivots: Tensor] {
  const c = checksOf('linalg.luFactor');
  const o = flagOptions(c, options, ['pivot']);
  return aten.linalg_lu_factor(matrixArg(c, A, 'A'), o.pivot ?? true);
}

/**
 * luFactor that reports a singular matrix instead of throwing (torch.linalg.lu_factor_ex):
 * `[LU, pivots, info]`, info [...] int32: 0 for success, i > 0 when U[i-1, i-1] is exactly zero.
 * `checkErrors: true` throws on a non-zero info instead.
 */
export function luFactorEx(
  A: Tensor,
  options: { pivot?: boolean; checkErrors?: boolean } = {},
): [LU: Tensor, pivots: Tensor, info: Tensor] {
  const c = checksOf('linalg.luFactorEx');
  const o = flagOptions(c, options, ['pivot', 'checkErrors']);
  return aten.linalg_lu_factor_ex(matrixArg(c, A, 'A'), o.pivot ?? true, o.checkErrors ?? false);
}

/**
 * The solution X of A X = B from A's LU decomposition `[LU [..., n, n], pivots [..., n]]` of
 * luFactor (torch.linalg.lu_solve, PyTorch 1.13's: not the deprecated torch.lu_solve, which takes
 * B first). `left: false` solves X A = B, `adjoint: true` solves Aᴴ X = B. `B` is [..., n, k]
 * ([..., k, n] with `left: false`); the batches broadcast. Shape: `B`'s.
 */
export function luSolve(
  LU: Tensor,
  pivots: Tensor,
  B: Tensor,
  options: { left?: boolean; adjoint?: boolean } = {},
): Tensor {
  const c = checksOf('linalg.luSolve');
  const o = flagOptions(c, options, ['left', 'adjoint']);
  matrixArg(c, LU, 'LU', true);
  pivotsArg(c, pivots, LU);
  matrixArg(c, B, 'B');
  const left = o.left ?? true;
  const n = LU.shape[LU.shape.length - 1]!;
  const side = left ? B.shape[B.shape.length - 2] : B.shape[B.shape.length - 1];
  if (side !== n)
    throw new ArgumentError(
      `linalg.luSolve: B must have ${n} ${left ? 'rows' : 'columns (options.left is false)'} to match LU [..., ${n}, ${n}], got shape [${B.shape.join(', ')}]`,
    );
  return aten.linalg_lu_solve(LU, pivots, B, left, o.adjoint ?? false);
}

/**
 * The LDLᵀ decomposition (Bunch-Kaufman pivoting) of the symmetric `A` [..., n, n]
 * (torch.linalg.ldl_factor), read from its lower triangle: `[LD [..., n, n], pivots [..., n]]`
 * in LAPACK's compact form (sytrf), for ldlSolve. `hermitian` matters for complex A only. No
 * gradient (libtorch 1.13 has none).
 */
export function ldlFactor(A: Tensor, options: { hermitian?: boolean } = {}): [LD: Tensor, pivots: Tensor] {
  const c = checksOf('linalg.ldlFactor');
  const o = flagOptions(c, options, ['hermitian']);
  return aten.linalg_ldl_factor(matrixArg(c, A, 'A', true), o.hermitian ?? false);
}

/**
 * ldlFactor that reports a failure instead of throwing (torch.linalg.ldl_factor_ex):
 * `[LD, pivots, info]`, info [...] int32 (0 for success, as LAPACK's sytrf). `checkErrors: true`
 * throws on a non-zero info instead.
 */
export function ldlFactorEx(
  A: Tensor,
  options: { hermitian?: boolean; checkErrors?: boolean } = {},
): [LD: Tensor, pivots: Tensor, info: Tensor] {
  const c = checksOf('linalg.ldlFactorEx');
  const o = flagOptions(c, options, ['hermitian', 'checkErrors']);
  return aten.linalg_ldl_factor_ex(matrixArg(c, A, 'A', true), o.hermitian ?? false, o.checkErrors ?? false);
}

/**
 * The solution X of A X = B from A's LDLᵀ decomposition `[LD [..., n, n], pivots [..., n]]` of
 * ldlFactor (torch.linalg.ldl_solve), `B` [..., n, k]. No gradient (libtorch 1.13 has none).
 * Shape: `B`'s.
 */
export function ldlSolve(
  LD: Tensor,
  pivots: Tensor,
  B: Tensor,
  options: { hermitian?: boolean } = {},
): Tensor {
  const c = checksOf('linalg.ldlSolve');
  const o = flagOptions(c, options, ['hermitian']);
  matrixArg(c, LD, 'LD', true);
  pivotsArg(c, pivots, LD);
  matrixArg(c, B, 'B');
  const n = LD.shape[LD.shape.length - 1]!;
  if (B.shape[B.shape.length - 2] !== n)
    throw new ArgumentError(
      `linalg.ldlSolve: B must have ${n} rows to match LD [..., ${n}, ${n}], got shape [${B.shape.join(', ')}]`,
    );
  return aten.linalg_ldl_solve(LD, pivots, B, o.hermitian ?? false);
}

/**
 * The first n columns of the product H_1 ⋯ H_k of the Householder matrices H_i = I - τ_i v_i v_iᴴ
 * given in LAPACK's compact form (torch.linalg.householder_product, LAPACK's orgqr): v_i is
 * column i of `A` [..., m, n] (m >= n) below the diagonal, with an implied 1 on it, and `tau`
 * [..., k] (k <= n) holds the τ_i. With `aten.geqrf`'s outputs it gives QR's Q. Shape: `A`'s.
 */
export function householderProduct(A: Tensor, tau: Tensor): Tensor {
  const c = checksOf('linalg.householderProduct');
  matrixArg(c, A, 'A');
  tensorArg(c, tau, 'tau');
  const [m, n] = A.shape.slice(-2) as [number, number];
  if (m < n)
    throw new ArgumentError(
      `linalg.householderProduct: A must have at least as many rows as columns (shape [..., m, n], m >= n), got shape [${A.shape.join(', ')}]`,
    );
  const k = tau.shape[tau.shape.length - 1];
  if (tau.shape.length !== A.shape.length - 1 || k === undefined || k > n)
    throw new ArgumentError(
      `linalg.householderProduct: tau must be [..., k] with A's batch dimensions and k <= ${n}, got shape [${tau.shape.join(', ')}] beside A of shape [${A.shape.join(', ')}]`,
    );
  return aten.linalg_householder_product(A, tau);
}

/**
 * inv that reports a singular matrix instead of throwing (torch.linalg.inv_ex):
 * `[inverse [..., n, n], info [...]]`, info int32: 0 for success, i > 0 when the i-th diagonal
 * element of the LU factor is zero (the inverse then holds no meaningful values). `checkErrors:
 * true` throws on a non-zero info instead.
 */
export function invEx(A: Tensor, options: { checkErrors?: boolean } = {}): [inverse: Tensor, info: Tensor] {
  const c = checksOf('linalg.invEx');
  const o = flagOptions(c, options, ['checkErrors']);
  return aten.linalg_inv_ex(matrixArg(c, A, 'A', true), o.checkErrors ?? false);
}

/**
 * cholesky that reports a matrix that is not positive-definite instead of throwing
 * (torch.linalg.cholesky_ex): `[L [..., n, n], info [...]]`, info int32: 0 for success, i > 0
 * when the leading minor of order i is not positive-definite. `upper: true` gives U = Lᴴ;
 * `checkErrors: true` throws on a non-zero info instead.
 */
export function choleskyEx(
  A: Tensor,
  options: { upper?: boolean; checkErrors?: boolean } = {},
): [L: Tensor, info: Tensor] {
  const c = checksOf('linalg.choleskyEx');
  const o = flagOptions(c, options, ['upper', 'checkErrors']);
  return aten.linalg_cholesky_ex(matrixArg(c, A, 'A', true), o.upper ?? false, o.checkErrors ?? false);
}

/**
 * solve that reports a singular matrix instead of throwing (torch.linalg.solve_ex):
 * `[result, info [...]]`, result as solve's (`B`'s shape), info int32 as luFactorEx's.
 * `left: false` solves X A = B; `checkErrors: true` throws on a non-zero info instead.
 */
export function solveEx(
  A: Tensor,
  B: Tensor,
  options: { left?: boolean; checkErrors?: boolean } = {},
): [result: Tensor, info: Tensor] {
  const c = checksOf('linalg.solveEx');
  const o = flagOptions(c, options, ['left', 'checkErrors']);
  matrixArg(c, A, 'A', true);
  tensorArg(c, B, 'B');
  return aten.linalg_solve_ex(A, B, o.left ?? true, o.checkErrors ?? false);
}
