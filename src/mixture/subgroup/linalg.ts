// Dense helpers for the small symmetric systems of the subgroup model (p, K*q and the Hessian are
// at most a few dozen wide), in plain Float64Arrays: faster than a general matrix library at this
// size and free of allocation in the EM loop.

/** Cholesky factor L (lower, row-major n x n) of a symmetric positive definite A, or null. */
export function cholesky(A: Float64Array, n: number): Float64Array | null {
  const L = new Float64Array(n * n);
  for (let j = 0; j < n; j++) {
    let d = A[j * n + j]!;
    for (let k = 0; k < j; k++) d -= L[j * n + k]! ** 2;
    if (!(d > 0) || !Number.isFinite(d)) return null;
    const ljj = Math.sqrt(d);
    L[j * n + j] = ljj;
    for (let i = j + 1; i < n; i++) {
      let s = A[i * n + j]!;
      for (let k = 0; k < j; k++) s -= L[i * n + k]! * L[j * n + k]!;
      L[i * n + j] = s / ljj;
    }
  }
  return L;
}

/** Solves L L' x = b for x given the Cholesky factor. */
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

/** The inverse of a symmetric positive definite matrix, or null when it is not. */
export function spdInverse(A: Float64Array, n: number): Float64Array | null {
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

export function logSumExp(values: ArrayLike<number>, start: number, length: number): number {
  let max = -Infinity;
  for (let k = 0; k < length; k++) max = Math.max(max, values[start + k]!);
  if (max === -Infinity) return -Infinity;
  let s = 0;
  for (let k = 0; k < length; k++) s += Math.exp(values[start + k]! - max);
  return max + Math.log(s);
}
