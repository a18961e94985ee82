// Dense linear algebra on the small matrices of the mixture models (the d x d covariances of a
// Gaussian mixture, the p, K*q and Hessian-sized systems of the subgroup model: at most a few
// dozen wide), row-major in Float64Array. Plain loops: on these sizes they beat ml-matrix (no
// boxing, no per-call allocation; see bench/gmm.ts and BENCHMARKS.md), and they let the
// hot loops exploit the triangular shape of the precision Cholesky factors.
import { MixtureArgumentError } from './errors.js';

/** A row-major dense matrix. */
/** A dense matrix of float64, row-major: entry (i, j) is `data[i * cols + j]`. */
export interface DenseMatrix {
  rows: number;
  cols: number;
  data: Float64Array;
}

/** A rows x cols matrix over `data` (zeros when omitted); MixtureArgumentError when the length does not match. */
export function denseMatrix(rows: number, cols: number, data?: Float64Array): DenseMatrix {
  const d = data ?? new Float64Array(rows * cols);
  if (d.length !== rows * cols)
    throw new MixtureArgumentError(`matrix data has ${d.length} values, expected ${rows}x${cols}`);
  return { rows, cols, data: d };
}

/** Copies nested arrays (rows of equal length) into a DenseMatrix; `what` names it in errors. */
export function fromRows(rows: ArrayLike<ArrayLike<number>>, what = 'matrix'): DenseMatrix {
  const n = rows.length;
  if (n === 0) throw new MixtureArgumentError(`${what} has no rows`);
  const d = rows[0]!.length;
  const data = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    if (row.length !== d)
      throw new MixtureArgumentError(`${what}: row ${i} has ${row.length} values, expected ${d}`);
    for (let j = 0; j < d; j++) data[i * d + j] = row[j]!;
  }
  return { rows: n, cols: d, data };
}

/** Nested arrays from a row-major block of `rows` x `cols` values starting at `offset`. */
export function toRows(data: ArrayLike<number>, rows: number, cols: number, offset = 0): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < rows; i++) {
    const row = new Array<number>(cols);
    for (let j = 0; j < cols; j++) row[j] = data[offset + i * cols + j]!;
    out.push(row);
  }
  return out;
}

/**
 * Lower Cholesky factor L of the symmetric d x d matrix at `a[aOff..]` (only its lower triangle
 * is read), written to `out[outOff..]` with zeros above the diagonal. Returns the index of the
 * first pivot that is not positive and finite (the matrix is not positive definite, or overflows),
 * or -1 on success.
 */
export function choleskyLower(
  a: ArrayLike<number>,
  aOff: number,
  d: number,
  out: Float64Array,
  outOff: number,
): number {
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = a[aOff + i * d + j]!;
      for (let m = 0; m < j; m++) s -= out[outOff + i * d + m]! * out[outOff + j * d + m]!;
      if (i === j) {
        if (!(s > 0) || s === Infinity) return i;
        out[outOff + i * d + i] = Math.sqrt(s);
      } else {
        out[outOff + i * d + j] = s / out[outOff + j * d + j]!;
      }
    }
    for (let j = i + 1; j < d; j++) out[outOff + i * d + j] = 0;
  }
  return -1;
}

/** The Cholesky factor L (lower, row-major n x n) of a symmetric positive definite A, or null. */
export function cholesky(A: ArrayLike<number>, n: number): Float64Array | null {
  const L = new Float64Array(n * n);
  return choleskyLower(A, 0, n, L, 0) < 0 ? L : null;
}

/** Solves L L' x = b for x given the Cholesky factor L (n x n). */
export function cholSolve(L: Float64Array, n: number, b: ArrayLike<number>): Float64Array {
  const x = Float64Array.from(b);
  for (let i = 0; i < n; i++) {
    let s = x[i]!;
    for (let k = 0; k < i; k++) s -= L[i * n + k]! * x[k]!;
    x[i] = s / L[i * n + i]!;
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = x[i]!;
    for (let k = i + 1; k < n; k++) s -= L[k * n + i]! * x[k]!;
    x[i] = s / L[i * n + i]!;
  }
  return x;
}

/**
 * Writes (L^{-1})^T for the lower-triangular L at `l[lOff..]` into `out[outOff..]`: an upper
 * triangular matrix A with A A^T = (L L^T)^{-1}, scikit-learn's precision Cholesky factor.
 */
export function inverseLowerTransposed(
  l: ArrayLike<number>,
  lOff: number,
  d: number,
  out: Float64Array,
  outOff: number,
): void {
  // Column c of L^{-1} solves L x = e_c by forward substitution; it is row c of A.
  for (let c = 0; c < d; c++) {
    for (let r = 0; r < c; r++) out[outOff + c * d + r] = 0;
    for (let r = c; r < d; r++) {
      let s = r === c ? 1 : 0;
      for (let m = c; m < r; m++) s -= l[lOff + r * d + m]! * out[outOff + c * d + m]!;
      out[outOff + c * d + r] = s / l[lOff + r * d + r]!;
    }
  }
}

/** C = A A^T for the d x d matrix A at `a[aOff..]` (symmetric; both triangles are written). */
export function multiplyABt(
  a: ArrayLike<number>,
  aOff: number,
  d: number,
  out: Float64Array,
  outOff: number,
): void {
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = 0;
      for (let m = 0; m < d; m++) s += a[aOff + i * d + m]! * a[aOff + j * d + m]!;
      out[outOff + i * d + j] = s;
      out[outOff + j * d + i] = s;
    }
  }
}

/**
 * The inverse of a symmetric positive-definite d x d matrix at `a[aOff..]` as A A^T with
 * A = L^{-T} (exactly symmetric), or null if not PD. Used for the precisions a Gaussian mixture
 * is given.
 */
export function inverseSpd(a: ArrayLike<number>, aOff: number, d: number): Float64Array | null {
  const l = new Float64Array(d * d);
  if (choleskyLower(a, aOff, d, l, 0) >= 0) return null;
  const upper = new Float64Array(d * d);
  inverseLowerTransposed(l, 0, d, upper, 0);
  // (L L^T)^{-1} = L^{-T} L^{-1} = A A^T with A = L^{-T}.
  const out = new Float64Array(d * d);
  multiplyABt(upper, 0, d, out, 0);
  return out;
}

/**
 * The inverse of a symmetric positive-definite n x n matrix column by column (n solves with its
 * Cholesky factor), or null when it is not PD. Used for the subgroup model's observed
 * information; it rounds differently from inverseSpd, and each model keeps the one its
 * reference results were computed with.
 */
export function inverseSpdBySolves(A: ArrayLike<number>, n: number): Float64Array | null {
  const L = cholesky(A, n);
  if (!L) return null;
  const inv = new Float64Array(n * n);
  const e = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    e.fill(0);
    e[j] = 1;
    const col = cholSolve(L, n, e);
    for (let i = 0; i < n; i++) inv[i * n + j] = col[i]!;
  }
  return inv;
}

/** log(sum(exp(v[off..off+len]))) without overflow. */
export function logSumExp(v: ArrayLike<number>, off: number, len: number): number {
  let max = -Infinity;
  for (let k = 0; k < len; k++) if (v[off + k]! > max) max = v[off + k]!;
  if (max === -Infinity || !Number.isFinite(max)) return max;
  let s = 0;
  for (let k = 0; k < len; k++) s += Math.exp(v[off + k]! - max);
  return max + Math.log(s);
}
