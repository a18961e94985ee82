// PyTorch's matrix transforms (torch.distributions.transforms): LowerCholeskyTransform and
// CorrCholeskyTransform of 1.13, and PositiveDefiniteTransform as PyTorch 2.0 adds it (1.13 has
// none), with PyTorch's formulas op for op, and the tril_matrix_to_vec/vec_to_tril_matrix they use.
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { eye, tensor } from '../creation.js';
import * as aten from '../generated/aten.js';
import { finfoEps, type Constraint } from './distribution.js';
import * as c from './constraints.js';
import { TransformBase, sumRightmost } from './transform-base.js';
import type { Transform } from './transforms.js';

/** The row-major flat positions (i * n + j) of an n x n matrix's entries with j <= i + diag. */
function trilPositions(n: number, diag: number): number[] {
  const positions: number[] = [];
  for (let i = 0; i < n; i++) for (let j = 0; j < n && j <= i + diag; j++) positions.push(i * n + j);
  return positions;
}

/** The entries on and below diagonal diag of each matrix, row by row (PyTorch's tril_matrix_to_vec). */
export function trilMatrixToVec(mat: Tensor, diag = 0): Tensor {
  const n = mat.size(-1);
  if (diag < -n || diag >= n) {
    throw new Error(`tailor: trilMatrixToVec: diag ${diag} is out of range for ${n} x ${n} matrices`);
  }
  return tidy(() => {
    const index = tensor(trilPositions(n, diag), { dtype: 'int64', device: mat.device });
    return aten.index_select(mat.reshape(...mat.shape.slice(0, -2), n * n), -1, index);
  });
}

/**
 * The n x n lower triangular matrices whose entries on and below diagonal diag are vec's, row by
 * row, zeros elsewhere (PyTorch's vec_to_tril_matrix); a named error where vec's length is no
 * such count. Built by index_select from vec padded with a zero, so gradients flow to vec.
 */
export function vecToTrilMatrix(vec: Tensor, diag = 0): Tensor {
  const length = vec.size(-1);
  const b = 1 + 2 * diag;
  const root = (-b + Math.sqrt(b * b + 8 * length + 4 * Math.abs(diag) * (diag + 1))) / 2;
  const n = Math.round(root);
  if (Math.abs(n - root) > finfoEps(vec) || trilPositions(n, diag).length !== length) {
    throw new Error(
      `tailor: vecToTrilMatrix: the last dim ${length} is not the size of a lower triangular matrix (diag ${diag}), as PyTorch requires`,
    );
  }
  return tidy(() => {
    const gather = new Array<number>(n * n).fill(length);
    trilPositions(n, diag).forEach((p, k) => (gather[p] = k));
    const index = tensor(gather, { dtype: 'int64', device: vec.device });
    const padded = aten.constant_pad_nd(vec, [0, 1], 0);
    return aten.index_select(padded, -1, index).reshape(...vec.shape.slice(0, -1), n, n);
  });
}

/** Throws unless shape ends in a square matrix (a matrix transform's argument). */
function checkSquare(who: string, shape: number[]): void {
  if (shape.length < 2 || shape[shape.length - 1] !== shape[shape.length - 2]) {
    throw new Error(
      `tailor: ${who}: expected square matrices (shape [..., n, n]), got [${shape.join(', ')}]`,
    );
  }
}

/**
 * Unconstrained square matrices to lower triangular ones of positive diagonal: the strictly
 * lower part kept, the diagonal exponentiated (torch.distributions.transforms.LowerCholeskyTransform).
 * Not a bijection in PyTorch's sense (the upper part is dropped), and without log |det J|.
 */
export class LowerCholeskyTransform extends TransformBase {
  readonly name = 'LowerCholeskyTransform';
  override readonly bijective = false;
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.independent(c.real, 2);
  }
  get codomain(): Constraint {
    return c.lowerCholesky;
  }
  protected call(x: Tensor): Tensor {
    checkSquare('LowerCholeskyTransform.forward', x.shape);
    return tidy(() => x.tril(-1).add(aten.diag_embed(aten.diagonal(x, 0, -2, -1).exp())));
  }
  protected override invert(y: Tensor): Tensor {
    checkSquare('LowerCholeskyTransform.inverse', y.shape);
    return tidy(() => y.tril(-1).add(aten.diag_embed(aten.diagonal(y, 0, -2, -1).log())));
  }
  override equals(other: Transform): boolean {
    return other instanceof LowerCholeskyTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new LowerCholeskyTransform(cacheSize);
  }
}

/**
 * Real vectors of D(D-1)/2 to Cholesky factors of D x D correlation matrices
 * (torch.distributions.transforms.CorrCholeskyTransform): tanh of each entry, then a signed
 * stick breaking along each row. log |det J| is that of x and the flattened strictly lower part
 * of y, as PyTorch's.
 */
export class CorrCholeskyTransform extends TransformBase {
  readonly name = 'CorrCholeskyTransform';
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.realVector;
  }
  get codomain(): Constraint {
    return c.corrCholesky;
  }
  protected call(x: Tensor): Tensor {
    return tidy(() => {
      const eps = finfoEps(x);
      const r = vecToTrilMatrix(x.tanh().clamp(-1 + eps, 1 - eps), -1);
      // y = sign(r) sqrt(z * cumprod(1 - z)) = r * sqrt(cumprod(1 - z)), z = r²
      const z1mCumprodSqrt = aten.cumprod(r.square().neg().add(1).sqrt(), -1);
      const n = r.size(-1);
      const withDiagonal = r.add(eye(n, r.dtype, r.device));
      return withDiagonal.mul(aten.constant_pad_nd(z1mCumprodSqrt.narrow(-1, 0, n - 1), [1, 0], 1));
    });
  }
  protected override invert(y: Tensor): Tensor {
    return tidy(() => {
      const n = y.size(-1);
      const yCumsum = aten.cumsum(y.mul(y), -1).neg().add(1);
      const shifted = aten.constant_pad_nd(yCumsum.narrow(-1, 0, n - 1), [1, 0], 1);
      const t = trilMatrixToVec(y, -1).div(trilMatrixToVec(shifted, -1).sqrt());
      // atanh written as PyTorch's: log((1 + t) / (1 - t)) / 2
      return t.add(1).div(t.neg().add(1)).log().div(2);
    });
  }
  /** The stick breaking's 0.5 Σ log(1 - cumsum(y²)) plus tanh's -2 Σ (x + softplus(-2x) - log 2). */
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    return tidy(() => {
      const y1mCumsum = aten.cumsum(y.mul(y), -1).neg().add(1);
      const stickBreaking = trilMatrixToVec(y1mCumsum, -2).log().sum(-1).mul(0.5);
      const tanh = sumRightmost(x.add(aten.softplus(x.mul(-2))).sub(Math.log(2)), 1).mul(-2);
      return stickBreaking.add(tanh);
    });
  }
  /** [..., N] to [..., D, D] with N = D(D-1)/2. */
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    if (shape.length < 1) throw new Error('tailor: CorrCholeskyTransform: too few dimensions on input');
    const count = shape[shape.length - 1];
    const d = Math.round(Math.sqrt(0.25 + 2 * count) + 0.5);
    if ((d * (d - 1)) / 2 !== count) {
      throw new Error(
        `tailor: CorrCholeskyTransform: the last dim ${count} is not D(D-1)/2 for any D (a flattened strictly lower triangle)`,
      );
    }
    return [...shape.slice(0, -1), d, d];
  }
  /** [..., D, D] to [..., D(D-1)/2]. */
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    checkSquare('CorrCholeskyTransform.inverseShape', shape);
    const d = shape[shape.length - 1];
    return [...shape.slice(0, -2), (d * (d - 1)) / 2];
  }
  override equals(other: Transform): boolean {
    return other instanceof CorrCholeskyTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new CorrCholeskyTransform(cacheSize);
  }
}

/**
 * Unconstrained square matrices to positive definite ones, L Lᵀ of L = LowerCholeskyTransform(x)
 * (torch.distributions.transforms.PositiveDefiniteTransform, as PyTorch 2.0 defines it); the
 * inverse takes the Cholesky factor. Not a bijection in PyTorch's sense, without log |det J|.
 */
export class PositiveDefiniteTransform extends TransformBase {
  readonly name = 'PositiveDefiniteTransform';
  override readonly bijective = false;
  readonly #lower = new LowerCholeskyTransform();
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.independent(c.real, 2);
  }
  get codomain(): Constraint {
    return c.positiveDefinite;
  }
  protected call(x: Tensor): Tensor {
    return tidy(() => {
      const lower = this.#lower.forward(x);
      return lower.matmul(lower.transpose(-2, -1));
    });
  }
  protected override invert(y: Tensor): Tensor {
    checkSquare('PositiveDefiniteTransform.inverse', y.shape);
    return tidy(() => this.#lower.inverse(aten.linalg_cholesky(y)));
  }
  override equals(other: Transform): boolean {
    return other instanceof PositiveDefiniteTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new PositiveDefiniteTransform(cacheSize);
  }
}
