// Linear algebra (torch.linalg): PyTorch's functions and arguments in camelCase over libtorch's
// linalg_* kernels, so results and gradients are PyTorch's. Arguments that PyTorch takes by
// keyword only (`left`, `upper`, `driver`, `dtype`...) are an options object here. Functions that
// return several tensors return them as an array in PyTorch's order (`const [U, S, Vh] =
// linalg.svd(A)`), each owned by the current scope. The other functions of torch.linalg live beside
// this file (linalg-more.ts, linalg-factor.ts) and are re-exported here; eig and eigvals return
// complex tensors (complex.ts) even for real inputs.
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import type { DType } from './dtype.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../util/arguments.js';
import { matrixArg, tensorArg, tolerances, type Tolerance } from './linalg-args.js';
export type { Tolerance } from './linalg-args.js';
import { tidy } from './scope.js';

export * from './linalg-more.js';
export * from './linalg-factor.js';

/** The order of a matrix norm: 'fro' (Frobenius), 'nuc' (nuclear), or ±1, ±2, ±Infinity. */
export type MatrixNormOrder = 'fro' | 'nuc' | number;

const MATRIX_ORDERS = [1, -1, 2, -2, Infinity, -Infinity];

function matrixOrder(c: ArgumentChecks, ord: unknown): MatrixNormOrder {
  if (ord === 'fro' || ord === 'nuc' || MATRIX_ORDERS.includes(ord as number)) return ord as MatrixNormOrder;
  return c.fail('ord', "'fro', 'nuc', 1, -1, 2, -2, Infinity or -Infinity", ord);
}

/**
 * The vector norm of `x` (torch.linalg.vector_norm): (sum |x|^ord)^(1/ord) over `dim` (all
 * elements when null); ord Infinity is the largest |x|, -Infinity the smallest, 0 counts the
 * non-zeros. Shape: `x`'s without `dim` (kept as size 1 with `keepdim`).
 */
export function vectorNorm(
  x: Tensor,
  ord = 2,
  dim: number | number[] | null = null,
  keepdim = false,
  options: { dtype?: DType } = {},
): Tensor {
  const c = checksOf('linalg.vectorNorm');
  c.object(options, 'options');
  tensorArg(c, x, 'x');
  if (typeof ord !== 'number' || Number.isNaN(ord)) c.fail('ord', 'a number (Infinity included)', ord);
  return aten.linalg_vector_norm(x, ord, dim, keepdim, options.dtype ?? null);
}

/**
 * The matrix norm of `A` [..., m, n] over the two dimensions `dim` (torch.linalg.matrix_norm):
 * 'fro' (default), 'nuc' (sum of singular values), 1/-1 (max/min column sum), 2/-2 (largest/
 * smallest singular value), Infinity/-Infinity (max/min row sum). Shape: the batch [...].
 */
export function matrixNorm(
  A: Tensor,
  ord: MatrixNormOrder = 'fro',
  dim: [number, number] = [-2, -1],
  keepdim = false,
  options: { dtype?: DType } = {},
): Tensor {
  const c = checksOf('linalg.matrixNorm');
  c.object(options, 'options');
  matrixArg(c, A, 'A');
  const o = matrixOrder(c, ord);
  const dtype = options.dtype ?? null;
  return typeof o === 'string'
    ? aten.linalg_matrix_norm_str_ord(A, o, dim, keepdim, dtype)
    : aten.linalg_matrix_norm(A, o, dim, keepdim, dtype);
}

/**
 * torch.linalg.norm: a vector norm when `dim` is one dimension (or null with a 1-d input, or with
 * `ord` null: the 2-norm of all elements), a matrix norm when `dim` is two dimensions (or null
 * with a 2-d input). String orders ('fro', 'nuc') are matrix norms. Shape: `A`'s without `dim`.
 */
export function norm(
  A: Tensor,
  ord: MatrixNormOrder | null = null,
  dim: number | number[] | null = null,
  keepdim = false,
  options: { dtype?: DType } = {},
): Tensor {
  const c = checksOf('linalg.norm');
  c.object(options, 'options');
  tensorArg(c, A, 'A');
  const dtype = options.dtype ?? null;
  if (typeof ord === 'string') {
    matrixOrder(c, ord);
    return aten.linalg_norm_ord_str(A, ord, dim, keepdim, dtype);
  }
  if (ord !== null && (typeof ord !== 'number' || Number.isNaN(ord)))
    c.fail('ord', "null, a number or 'fro' or 'nuc'", ord);
  return aten.linalg_norm(A, ord, dim, keepdim, dtype);
}

/** The determinant of the square matrices `A` [..., n, n] (torch.linalg.det). Shape: [...]. */
export function det(A: Tensor): Tensor {
  return aten.linalg_det(matrixArg(checksOf('linalg.det'), A, 'A', true));
}

/**
 * The sign and the log of the absolute value of the determinant of `A` [..., n, n]
 * (torch.linalg.slogdet), stable where det over- or underflows: `[sign, logabsdet]`, each [...].
 */
export function slogdet(A: Tensor): [sign: Tensor, logabsdet: Tensor] {
  return aten.linalg_slogdet(matrixArg(checksOf('linalg.slogdet'), A, 'A', true));
}

/** The inverse of the square matrices `A` [..., n, n] (torch.linalg.inv). Shape: `A`'s. */
export function inv(A: Tensor): Tensor {
  return aten.linalg_inv(matrixArg(checksOf('linalg.inv'), A, 'A', true));
}

/**
 * The solution X of A X = B (torch.linalg.solve) for square `A` [..., n, n] and `B` [..., n, k]
 * or [..., n]; with `left: false`, of X A = B (`B` [..., k, n]). Shape: `B`'s (batches broadcast).
 */
export function solve(A: Tensor, B: Tensor, options: { left?: boolean } = {}): Tensor {
  const c = checksOf('linalg.solve');
  c.object(options, 'options');
  matrixArg(c, A, 'A', true);
  tensorArg(c, B, 'B');
  return aten.linalg_solve(A, B, options.left ?? true);
}

/**
 * The solution X of A X = B for triangular `A` [..., n, n] (torch.linalg.solve_triangular):
 * `upper` says which triangle of A is read (required, as in PyTorch), `left: false` solves
 * X A = B, `unitriangular` takes A's diagonal as ones. Shape: `B`'s [..., n, k].
 */
export function solveTriangular(
  A: Tensor,
  B: Tensor,
  options: { upper: boolean; left?: boolean; unitriangular?: boolean },
): Tensor {
  const c = checksOf('linalg.solveTriangular');
  matrixArg(c, A, 'A', true);
  matrixArg(c, B, 'B');
  if (typeof options?.upper !== 'boolean') c.fail('options.upper', 'true or false', options?.upper);
  return aten.linalg_solve_triangular(
    A,
    B,
    options.upper,
    options.left ?? true,
    options.unitriangular ?? false,
  );
}

/**
 * The Cholesky factor L (lower, A = L Lᴴ) of the Hermitian positive-definite `A` [..., n, n]
 * (torch.linalg.cholesky); `upper: true` gives U = Lᴴ instead. Shape: `A`'s.
 */
export function cholesky(A: Tensor, options: { upper?: boolean } = {}): Tensor {
  const c = checksOf('linalg.cholesky');
  c.object(options, 'options');
  return aten.linalg_cholesky(matrixArg(c, A, 'A', true), options.upper ?? false);
}

function uplo(c: ArgumentChecks, UPLO: unknown): 'L' | 'U' {
  return c.oneOf(UPLO, 'UPLO', ['L', 'U']);
}

/**
 * The eigenvalues (ascending) and eigenvectors (the columns) of the symmetric or Hermitian `A`
 * [..., n, n] (torch.linalg.eigh), reading the lower triangle ('L') or the upper one ('U'):
 * `[eigenvalues [..., n], eigenvectors [..., n, n]]`. Eigenvectors are unique only up to sign.
 */
export function eigh(A: Tensor, UPLO: 'L' | 'U' = 'L'): [eigenvalues: Tensor, eigenvectors: Tensor] {
  const c = checksOf('linalg.eigh');
  return aten.linalg_eigh(matrixArg(c, A, 'A', true), uplo(c, UPLO));
}

/** The eigenvalues (ascending) of the symmetric or Hermitian `A` [..., n, n] (torch.linalg.eigvalsh). Shape: [..., n]. */
export function eigvalsh(A: Tensor, UPLO: 'L' | 'U' = 'L'): Tensor {
  const c = checksOf('linalg.eigvalsh');
  return aten.linalg_eigvalsh(matrixArg(c, A, 'A', true), uplo(c, UPLO));
}

/**
 * The singular value decomposition A = U diag(S) Vh of `A` [..., m, n] (torch.linalg.svd):
 * `[U [..., m, m], S [..., k], Vh [..., n, n]]` with k = min(m, n) and S descending; with
 * `fullMatrices` false, U [..., m, k] and Vh [..., k, n]. U and Vh are unique only up to sign.
 * `driver` picks the cuSOLVER routine on CUDA ('gesvd', 'gesvdj', 'gesvda').
 */
export function svd(
  A: Tensor,
  fullMatrices = true,
  options: { driver?: string } = {},
): [U: Tensor, S: Tensor, Vh: Tensor] {
  const c = checksOf('linalg.svd');
  c.object(options, 'options');
  matrixArg(c, A, 'A');
  return aten.linalg_svd(A, fullMatrices, options.driver ?? null);
}

/** The singular values of `A` [..., m, n], descending (torch.linalg.svdvals). Shape: [..., min(m, n)]. */
export function svdvals(A: Tensor, options: { driver?: string } = {}): Tensor {
  const c = checksOf('linalg.svdvals');
  c.object(options, 'options');
  return aten.linalg_svdvals(matrixArg(c, A, 'A'), options.driver ?? null);
}

/**
 * The QR decomposition A = Q R of `A` [..., m, n] (torch.linalg.qr), k = min(m, n): mode
 * 'reduced' gives Q [..., m, k], R [..., k, n]; 'complete' Q [..., m, m], R [..., m, n]; 'r' only
 * R (Q is an empty tensor). Returns `[Q, R]`.
 */
export function qr(A: Tensor, mode: 'reduced' | 'complete' | 'r' = 'reduced'): [Q: Tensor, R: Tensor] {
  const c = checksOf('linalg.qr');
  matrixArg(c, A, 'A');
  return aten.linalg_qr(A, c.oneOf(mode, 'mode', ['reduced', 'complete', 'r']));
}

/**
 * The least-squares solution X minimising ‖A X - B‖ for `A` [..., m, n] and `B` [..., m, k]
 * (torch.linalg.lstsq): `[solution [..., n, k], residuals, rank, singularValues]`. What the last
 * three hold depends on the driver, as in PyTorch ('gelsy' by default on the CPU, 'gels' on CUDA;
 * 'gelsd' and 'gelss' fill the singular values); `rcond` cuts off small singular values.
 */
export function lstsq(
  A: Tensor,
  B: Tensor,
  rcond: number | null = null,
  options: { driver?: 'gels' | 'gelsy' | 'gelsd' | 'gelss' } = {},
): [solution: Tensor, residuals: Tensor, rank: Tensor, singularValues: Tensor] {
  const c = checksOf('linalg.lstsq');
  c.object(options, 'options');
  matrixArg(c, A, 'A');
  tensorArg(c, B, 'B');
  if (options.driver !== undefined)
    c.oneOf(options.driver, 'options.driver', ['gels', 'gelsy', 'gelsd', 'gelss']);
  return aten.linalg_lstsq(A, B, rcond, options.driver ?? null);
}

/**
 * The Moore-Penrose pseudo-inverse of `A` [..., m, n] (torch.linalg.pinv), from the SVD
 * (or eigh with `hermitian`), dropping singular values below max(atol, rtol · σ₁). The
 * tolerances are numbers, or tensors broadcast over the batch (one per matrix). Shape: [..., n, m].
 */
export function pinv(
  A: Tensor,
  options: { atol?: Tolerance; rtol?: Tolerance; hermitian?: boolean } = {},
): Tensor {
  const c = checksOf('linalg.pinv');
  c.object(options, 'options');
  const hermitian = options.hermitian ?? false;
  matrixArg(c, A, 'A', hermitian === true);
  return tidy(() => {
    const t = tolerances(c, A, options.atol, options.rtol);
    return t.tensors
      ? aten.linalg_pinv_atol_rtol_tensor(A, t.atol, t.rtol, hermitian)
      : aten.linalg_pinv_atol_rtol_float(A, t.atol, t.rtol, hermitian);
  });
}

/** The matrix exponential of the square `A` [..., n, n] (torch.linalg.matrix_exp). Shape: `A`'s. */
export function matrixExp(A: Tensor): Tensor {
  return aten.linalg_matrix_exp(matrixArg(checksOf('linalg.matrixExp'), A, 'A', true));
}

/**
 * The cross product of 3-vectors along `dim` (torch.linalg.cross; size 3 there in both inputs,
 * the other dimensions broadcast). Shape: the broadcast shape.
 */
export function cross(a: Tensor, b: Tensor, options: { dim?: number } = {}): Tensor {
  const c = checksOf('linalg.cross');
  c.object(options, 'options');
  tensorArg(c, a, 'a');
  tensorArg(c, b, 'b');
  const dim = options.dim ?? -1;
  for (const [name, t] of [
    ['a', a],
    ['b', b],
  ] as const) {
    const d = dim < 0 ? dim + t.shape.length : dim;
    if (t.shape[d] !== 3)
      throw new ArgumentError(
        `linalg.cross: ${name} must have size 3 in dimension ${dim} (options.dim), got shape [${t.shape.join(', ')}]`,
      );
  }
  return aten.linalg_cross(a, b, dim);
}
