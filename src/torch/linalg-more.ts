// More of torch.linalg (re-exported by linalg.ts): matrix powers and rank, chained products, the
// tensor inverse and solve, the condition number, diagonals, Vandermonde matrices and batched dot
// products, and the eigenvalues of general matrices, over libtorch's linalg_* kernels, so results
// and gradients are PyTorch's.
import type { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import type { MatrixNormOrder } from './linalg.js';
import { ArgumentError, checksOf } from '../util/arguments.js';
import { flagOptions, matrixArg, tensorArg, tolerances, type Tolerance } from './linalg-args.js';
import { tidy } from './scope.js';

const product = (sizes: readonly number[]): number => sizes.reduce((a, b) => a * b, 1);
const shapeText = (t: Tensor): string => `[${t.shape.join(', ')}]`;

/**
 * The `n`-th power of the square matrices `A` [..., n, n] (torch.linalg.matrix_power), by
 * repeated squaring: the identity for n = 0, powers of the inverse for negative n (A must then be
 * invertible). Shape: `A`'s.
 */
export function matrixPower(A: Tensor, n: number): Tensor {
  const c = checksOf('linalg.matrixPower');
  matrixArg(c, A, 'A', true);
  return aten.linalg_matrix_power(A, c.integer(n, 'n'));
}

/**
 * The numerical rank of `A` [..., m, n] (torch.linalg.matrix_rank): the number of singular values
 * (eigenvalue magnitudes with `hermitian`) above max(atol, rtol · σ₁). Without tolerances, rtol
 * is eps(A's dtype) · max(m, n); with only `atol`, rtol is 0. The tolerances are numbers, or
 * tensors broadcast over the batch (one per matrix). Shape: [...], int64.
 */
export function matrixRank(
  A: Tensor,
  options: { atol?: Tolerance; rtol?: Tolerance; hermitian?: boolean } = {},
): Tensor {
  const c = checksOf('linalg.matrixRank');
  const flags = flagOptions(c, options, ['hermitian']);
  const hermitian = flags.hermitian ?? false;
  matrixArg(c, A, 'A', hermitian);
  return tidy(() => {
    const t = tolerances(c, A, options.atol, options.rtol);
    return t.tensors
      ? aten.linalg_matrix_rank_atol_rtol_tensor(A, t.atol, t.rtol, hermitian)
      : aten.linalg_matrix_rank_atol_rtol_float(A, t.atol, t.rtol, hermitian);
  });
}

/**
 * The product of two or more matrices (torch.linalg.multi_dot), multiplied in the order that
 * needs the fewest operations. The first may be a vector [n] (a row) and the last a vector [n]
 * (a column), whose dimension the result then lacks; the others are matrices [m, n] (no batches).
 */
export function multiDot(tensors: Tensor[]): Tensor {
  const c = checksOf('linalg.multiDot');
  c.array(tensors, 'tensors', { minLength: 2 });
  const last = tensors.length - 1;
  tensors.forEach((t, i) => {
    const name = `tensors[${i}]`;
    tensorArg(c, t, name);
    const vectorAllowed = i === 0 || i === last;
    if (t.shape.length !== 2 && !(vectorAllowed && t.shape.length === 1))
      throw new ArgumentError(
        `linalg.multiDot: ${name} must be a matrix [m, n]${vectorAllowed ? ' or a vector [n]' : ''} (only the first and the last may be vectors), got shape ${shapeText(t)}`,
      );
    if (i === 0) return;
    const previous = tensors[i - 1]!;
    const inner = previous.shape[previous.shape.length - 1];
    if (t.shape[0] !== inner)
      throw new ArgumentError(
        `linalg.multiDot: ${name} must have ${inner} rows to follow tensors[${i - 1}] of shape ${shapeText(previous)}, got shape ${shapeText(t)}`,
      );
  });
  return aten.linalg_multi_dot(tensors);
}

/**
 * The inverse of `A` as a tensor of its first `ind` dimensions onto the others
 * (torch.linalg.tensorinv): `tensordot(tensorinv(A, ind), A, ind)` is the identity. The first
 * `ind` sizes and the others must have equal products. Shape: [...A.shape[ind:], ...A.shape[:ind]].
 */
export function tensorinv(A: Tensor, ind = 2): Tensor {
  const c = checksOf('linalg.tensorinv');
  tensorArg(c, A, 'A');
  c.integer(ind, 'ind', { min: 1 });
  const rows = product(A.shape.slice(0, ind));
  const cols = product(A.shape.slice(ind));
  if (ind > A.shape.length || rows !== cols)
    throw new ArgumentError(
      `linalg.tensorinv: A's first ind = ${ind} sizes must have the product of the others (to reshape A to a square matrix), got shape ${shapeText(A)}; choose ind or reshape A`,
    );
  return aten.linalg_tensorinv(A, ind);
}

/**
 * The solution X of tensordot(A, X, X.ndim) = B (torch.linalg.tensorsolve). `dims` moves those
 * dimensions of A to its end first. X's shape is A's last A.ndim - B.ndim sizes, whose product
 * must be B's number of elements.
 */
export function tensorsolve(A: Tensor, B: Tensor, dims: number[] | null = null): Tensor {
  const c = checksOf('linalg.tensorsolve');
  tensorArg(c, A, 'A');
  tensorArg(c, B, 'B');
  let moved = A.shape;
  if (dims !== null) {
    c.array(dims, 'dims');
    const rank = A.shape.length;
    const picked = dims.map((d, i) => {
      c.integer(d, `dims[${i}]`, { min: -rank, max: rank - 1 });
      return d < 0 ? d + rank : d;
    });
    if (new Set(picked).size !== picked.length) c.fail('dims', 'dimensions of A without repeats', dims);
    moved = [...A.shape.filter((_, d) => !picked.includes(d)), ...picked.map((d) => A.shape[d]!)];
  }
  if (moved.length < B.shape.length || product(moved.slice(B.shape.length)) !== product(B.shape))
    throw new ArgumentError(
      `linalg.tensorsolve: A's last ${moved.length - B.shape.length} sizes (after dims) must multiply to B's number of elements ${product(B.shape)}, got A of shape ${shapeText(A)} and B of shape ${shapeText(B)}`,
    );
  return aten.linalg_tensorsolve(A, B, dims);
}

const COND_ORDERS = [1, -1, 2, -2, Infinity, -Infinity];

/**
 * The condition number of `A` (torch.linalg.cond) in the matrix norm `p`: ‖A‖ₚ · ‖A⁻¹‖ₚ. For
 * `p` null (the 2-norm), 2 and -2 it is the ratio of the largest to the smallest singular value
 * (its inverse for -2) of `A` [..., m, n]; 'fro', 'nuc', ±1 and ±Infinity need square `A`
 * [..., n, n] and give Infinity for a singular one. Differentiable for every order (PyTorch 1.13's
 * own backward fails for 'fro', ±1 and ±Infinity: those are computed out of place here). Shape: [...].
 */
export function cond(A: Tensor, p: MatrixNormOrder | null = null): Tensor {
  const c = checksOf('linalg.cond');
  if (p !== null && p !== 'fro' && p !== 'nuc' && !COND_ORDERS.includes(p as number))
    c.fail('p', "null, 'fro', 'nuc', 1, -1, 2, -2, Infinity or -Infinity", p);
  matrixArg(c, A, 'A', !(p === null || p === 2 || p === -2));
  // libtorch computes these from the singular values (and 0 for empty matrices) without the
  // in-place step below.
  if (p === null || p === 2 || p === -2 || p === 'nuc' || A.shape.includes(0))
    return typeof p === 'string' ? aten.linalg_cond_p_str(A, p) : aten.linalg_cond(A, p);
  // libtorch 1.13 computes the other orders as ‖A‖ · ‖A⁻¹‖ but sets the inverses of singular
  // matrices to Infinity in place, which makes its backward fail ("modified by an inplace
  // operation"). The same steps out of place give the same values, and a gradient.
  return tidy(() => {
    const [inverse, info] = aten.linalg_inv_ex(A);
    const singular = aten.unsqueeze(aten.unsqueeze(aten.gt_Scalar(info, 0), -1), -1);
    const inverseOrInfinity = aten.masked_fill_Scalar(inverse, singular, Infinity);
    const norm = (M: Tensor): Tensor =>
      typeof p === 'string' ? aten.linalg_matrix_norm_str_ord(M, p) : aten.linalg_matrix_norm(M, p);
    const result = aten.mul_Tensor(norm(A), norm(inverseOrInfinity));
    // 0 · Infinity is NaN; libtorch (and NumPy) call such a matrix infinitely ill-conditioned.
    return aten.masked_fill_Scalar(result, aten.isnan(result), Infinity);
  });
}

/**
 * The diagonals of the matrices in `A` (torch.linalg.diagonal): the elements [i, i + offset] of
 * the matrices along `dim1` and `dim2` (default the last two; offset > 0 above the main
 * diagonal). A view of `A`: shape `A`'s without dim1 and dim2, the diagonal's length last.
 */
export function diagonal(A: Tensor, options: { offset?: number; dim1?: number; dim2?: number } = {}): Tensor {
  const c = checksOf('linalg.diagonal');
  c.object(options, 'options');
  tensorArg(c, A, 'A');
  const rank = A.shape.length;
  if (rank < 2)
    throw new ArgumentError(`linalg.diagonal: A must have two or more dimensions, got shape ${shapeText(A)}`);
  const offset = c.integer(options.offset ?? 0, 'options.offset');
  const dim = (value: number, name: string): number => {
    const d = c.integer(value, name, { min: -rank, max: rank - 1 });
    return d < 0 ? d + rank : d;
  };
  const dim1 = dim(options.dim1 ?? -2, 'options.dim1');
  const dim2 = dim(options.dim2 ?? -1, 'options.dim2');
  if (dim1 === dim2)
    c.fail('options.dim2', `a dimension other than options.dim1 (${dim1})`, options.dim2 ?? -1);
  return aten.linalg_diagonal(A, offset, dim1, dim2);
}

/**
 * The Vandermonde matrix of `x` [..., n] (torch.linalg.vander): column j holds x^j, for
 * j = 0 .. N - 1 (increasing powers; N defaults to n and must be 2 or more). Shape: [..., n, N].
 */
export function vander(x: Tensor, options: { N?: number | null } = {}): Tensor {
  const c = checksOf('linalg.vander');
  c.object(options, 'options');
  tensorArg(c, x, 'x');
  if (x.shape.length < 1)
    throw new ArgumentError(
      'linalg.vander: x must have at least one dimension (shape [..., n]), got a 0-d tensor',
    );
  const N = options.N ?? null;
  if (N !== null) c.integer(N, 'options.N', { min: 2 });
  else if (x.shape[x.shape.length - 1]! < 2)
    throw new ArgumentError(
      `linalg.vander: x's last dimension must have 2 or more elements when options.N is not given, got shape ${shapeText(x)}; pass options.N >= 2`,
    );
  return aten.linalg_vander(x, N);
}

/**
 * The dot products of the vectors of `x` and `y` along `dim` (torch.linalg.vecdot; the other
 * dimensions broadcast, complex `x` is conjugated). Shape: the broadcast shape without `dim`.
 */
export function vecdot(x: Tensor, y: Tensor, options: { dim?: number } = {}): Tensor {
  const c = checksOf('linalg.vecdot');
  c.object(options, 'options');
  tensorArg(c, x, 'x');
  tensorArg(c, y, 'y');
  return aten.linalg_vecdot(x, y, c.integer(options.dim ?? -1, 'options.dim'));
}

/**
 * The eigenvalues and eigenvectors of the square matrices `A` [..., n, n] (torch.linalg.eig):
 * `[L [..., n], V [..., n, n]]`, complex (complex64 for float32 input, complex128 for float64)
 * even for a real A, with A V = V diag(L); each eigenvector has norm 1 and is unique only up to a
 * complex phase, so a loss through V must not depend on that phase (PyTorch's backward checks
 * it). For symmetric or Hermitian A, eigh is faster and real. CPU and CUDA (through the CPU on
 * CUDA, as PyTorch).
 *
 * @example
 * ```ts
 * import { linalg, tensor } from 'tailor/torch';
 *
 * const [L] = linalg.eig(tensor([[0, 1], [-1, 0]])); // a rotation: eigenvalues i and -i
 * console.log(L.toArray()); // Float32Array [0, 1, 0, -1] (re, im pairs)
 * ```
 */
export function eig(A: Tensor): [eigenvalues: Tensor, eigenvectors: Tensor] {
  const c = checksOf('linalg.eig');
  return aten.linalg_eig(matrixArg(c, A, 'A', true));
}

/** The eigenvalues of the square matrices `A` [..., n, n], complex (torch.linalg.eigvals). Shape: [..., n]. */
export function eigvals(A: Tensor): Tensor {
  const c = checksOf('linalg.eigvals');
  return aten.linalg_eigvals(matrixArg(c, A, 'A', true));
}

/** The matrix product, as torch.matmul (torch.linalg.matmul). */
export function matmul(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('linalg.matmul');
  return aten.matmul(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}
