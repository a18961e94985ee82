// torch.nn.utils.parametrizations of PyTorch 1.13: orthogonal and spectral_norm, the
// parametrization modules (_Orthogonal, _SpectralNorm) registered through parametrize.ts, with
// PyTorch's arithmetic step by step (so values agree to rounding) and its state-dict names
// (`parametrizations.weight.original`, `parametrizations.weight.0.base`, `...0._u`, `...0._v`).
import { Tensor } from '../tensor.js';
import { cat, empty, eye, randn, zeros, zerosLike } from '../creation.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import type { DType } from '../dtype.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { moduleRegistries } from './module-registries.js';
import { isParametrized, registerParametrization } from './parametrize.js';
import { ConvTranspose1d, ConvTranspose2d, ConvTranspose3d } from './conv.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** The maps from an unconstrained matrix to an orthogonal one (PyTorch's `orthogonal_map`). */
export type OrthogonalMap = 'matrix_exp' | 'cayley' | 'householder';

const orthogonalMaps: readonly OrthogonalMap[] = ['matrix_exp', 'cayley', 'householder'];

/** The last two dimensions swapped (torch's `.mT`). */
const mT = (x: Tensor): Tensor => x.transpose(-2, -1);

/** The machine epsilon of a floating dtype (torch.finfo(dtype).eps). */
function machineEpsilon(dtype: DType): number {
  if (dtype === 'float64') return 2 ** -52;
  if (dtype === 'float16') return 2 ** -10;
  if (dtype === 'bfloat16') return 2 ** -7;
  return 2 ** -23;
}

/** Whether `Q`'s columns are orthonormal to PyTorch's tolerance (its `_is_orthogonal`: allclose(Qᵀ Q, I)). */
function isOrthogonal(Q: Tensor): boolean {
  const [n, k] = Q.shape.slice(-2) as [number, number];
  const id = eye(k, Q.dtype, Q.device);
  const atol = 10 * n * machineEpsilon(Q.dtype);
  // allclose: |a - b| <= atol + rtol |b|, rtol 1e-5
  return aten.all(mT(Q).matmul(Q).sub(id).abs().le(id.abs().mul(1e-5).add(atol))).item() !== 0;
}

/** The Q factor of the tall `A` = QR with diag(R) >= 0 (PyTorch's `_make_orthogonal`). */
function makeOrthogonal(A: Tensor): Tensor {
  const [X, tau] = aten.geqrf(A);
  const Q = aten.linalg_householder_product(X, tau);
  return Q.mul(aten.diagonal(X, 0, -2, -1).sign().unsqueeze(-2));
}

/**
 * The orthogonal parametrization (PyTorch's `_Orthogonal`), registered by {@link orthogonal}: maps
 * a matrix (or a batch, the last two dimensions) to one with orthonormal columns (tall) or rows
 * (wide). With trivialization the result is multiplied by the buffer `base`, set by
 * `rightInverse` from the initial weight.
 */
export class Orthogonal extends Module {
  /** The map applied to the skew-symmetric (or Householder) part of the original. */
  readonly orthogonalMap: OrthogonalMap;
  /** The shape of the parametrized tensor. */
  readonly shape: readonly number[];
  /** Whether the result is `base` times the map's result (PyTorch's dynamic trivialization). */
  readonly useTrivialization: boolean;
  /** The orthogonal matrix the map's result is multiplied by, set by rightInverse (trivialization only). */
  base: Tensor | null = null;

  /** A parametrization of tensors of `shape` by `orthogonalMap`. */
  constructor(shape: readonly number[], orthogonalMap: OrthogonalMap, useTrivialization = true) {
    super();
    this.shape = [...shape];
    this.orthogonalMap = orthogonalMap;
    this.useTrivialization = useTrivialization;
    if (useTrivialization) this.registerBuffer('base', null);
  }

  /** The orthogonal matrix (or batch) parametrized by `x`. */
  forward(x: Tensor): Tensor {
    let X = x;
    let [n, k] = X.shape.slice(-2) as [number, number];
    const transposed = n < k;
    if (transposed) {
      X = mT(X);
      [n, k] = [k, n];
    }
    let Q: Tensor;
    if (this.orthogonalMap === 'householder') {
      const A = aten.tril(X, -1);
      const tau = A.mul(A).sum(-2).add(1).reciprocal().mul(2);
      Q = aten.linalg_householder_product(A, tau);
      // PyTorch truncates the diagonal to integers: ±1 after rightInverse
      Q = Q.mul(aten.diagonal(X, 0, -2, -1).int().unsqueeze(-2));
    } else {
      X = aten.tril(X);
      if (n !== k) X = cat([X, zeros([...X.shape.slice(0, -1), n - k], X.dtype, X.device)], -1);
      const A = X.sub(mT(X));
      if (this.orthogonalMap === 'matrix_exp') Q = aten.linalg_matrix_exp(A);
      else {
        const id = eye(n, A.dtype, A.device);
        Q = aten.linalg_solve(id.add(A, -0.5), id.add(A, 0.5));
      }
      if (n !== k) Q = Q.narrow(-1, 0, k);
    }
    if (this.useTrivialization) {
      if (!this.base)
        throw new ArgumentError(
          'parametrizations.Orthogonal: base is not set; rightInverse sets it (orthogonal() registers it on an unparametrized tensor)',
        );
      Q = this.base.matmul(Q);
    }
    return transposed ? mT(Q) : Q;
  }

  /**
   * An original that this parametrization maps to `Q` (PyTorch's right_inverse, applied at
   * registration). With trivialization, `base` becomes `Q` (orthonormalised by QR when it is not
   * orthogonal, completed by random columns from the global generator when not square) and the
   * original is -I. Without, the householder map returns Q's Householder reflectors and
   * matrix_exp and cayley, which have no inverse, return `Q` (PyTorch's registration keeps the
   * original then).
   */
  rightInverse(Q: Tensor): Tensor {
    if (Q.shape.join() !== this.shape.join())
      throw new ArgumentError(
        `parametrizations.Orthogonal.rightInverse: expected a matrix or batch of matrices of shape [${this.shape}], got [${Q.shape}]`,
      );
    return noGrad(() => {
      const qInit = Q;
      let [n, k] = Q.shape.slice(-2) as [number, number];
      const transposed = n < k;
      if (transposed) {
        Q = mT(Q);
        [n, k] = [k, n];
      }
      if (!this.useTrivialization) {
        if (this.orthogonalMap !== 'householder') return qInit.clone();
        const [A, tau] = aten.geqrf(Q);
        const diagonal = aten.diagonal(A, 0, -2, -1);
        const signs = diagonal.sign();
        diagonal.copy_(aten.where_self(tau.eq(0), signs.neg(), signs));
        return transposed ? mT(A) : A;
      }
      let B: Tensor;
      if (n === k) B = isOrthogonal(Q) ? Q.clone() : makeOrthogonal(Q);
      else B = makeOrthogonal(cat([Q, randn([...Q.shape.slice(0, -2), n, n - k], Q.dtype, Q.device)], -1));
      if (this.base) this.base.setData(B);
      else this.base = this.registerBuffer('base', B);
      const negId = zerosLike(qInit);
      aten.diagonal(negId, 0, -2, -1).fill_(-1);
      return negId;
    });
  }
}

/** Options of {@link orthogonal} (PyTorch's, camelCase). */
export interface OrthogonalOptions {
  /** The map (default 'matrix_exp' for square matrices, 'householder' otherwise). */
  orthogonalMap?: OrthogonalMap;
  /** Keep the buffer `base` and parametrize base · map(original) (default true). */
  useTrivialization?: boolean;
}

/** The tensor `name` of `module` as PyTorch's getattr sees it: the parametrized value or the parameter. */
function tensorOf(c: ArgumentChecks, module: unknown, name: unknown): Tensor {
  if (!(module instanceof Module)) c.fail('module', 'an nn.Module', module);
  if (typeof name !== 'string') c.fail('name', "the name of a parameter of module ('weight')", name);
  const m = module as Module;
  if (isParametrized(m, name as string)) return (m as unknown as Record<string, Tensor>)[name as string]!;
  const p = moduleRegistries(m).parametersByName.get(name as string);
  if (p) return p;
  const own = [...moduleRegistries(m).parametersByName].filter(([, t]) => t).map(([n]) => `'${n}'`);
  throw new ArgumentError(
    `${c.fn}: ${m.constructor.name} has no parameter '${String(name)}' (it has ${own.join(', ') || 'none'}); name one of them`,
  );
}

/**
 * Makes `module[name]` orthogonal (torch.nn.utils.parametrizations.orthogonal): a matrix, or a
 * batch of matrices in the last two dimensions, with orthonormal columns when tall and rows when
 * wide, through an {@link Orthogonal} registered with parametrize.registerParametrization
 * (unsafe, as PyTorch). With trivialization (the default) the initial value is the weight itself
 * when orthogonal, its QR orthonormalisation otherwise. Build the optimizer after this call.
 * Returns `module`.
 */
export function orthogonal<M extends Module>(module: M, name = 'weight', options: OrthogonalOptions = {}): M {
  const c = checksOf('parametrizations.orthogonal');
  const weight = tensorOf(c, module, name);
  const o = c.object(options, 'options');
  if (weight.ndim < 2)
    c.fail('name', `a matrix or a batch of matrices (${name} has ${weight.ndim} dimension)`, name);
  const [n, k] = weight.shape.slice(-2) as [number, number];
  const map = (o.orthogonalMap ?? (n === k ? 'matrix_exp' : 'householder')) as OrthogonalMap;
  c.oneOf(map, 'options.orthogonalMap', orthogonalMaps);
  const useTrivialization = o.useTrivialization ?? true;
  if (typeof useTrivialization !== 'boolean')
    c.fail('options.useTrivialization', 'a boolean', useTrivialization);
  if (useTrivialization && isParametrized(module, name))
    throw new ArgumentError(
      `${c.fn}: ${name} is parametrized already, so base cannot be set from it; pass { useTrivialization: false }`,
    );
  registerParametrization(module, name, new Orthogonal(weight.shape, map, useTrivialization as boolean), {
    unsafe: true,
  });
  return module;
}

/** `x / max(||x||, eps)` (torch.nn.functional.normalize of a vector). */
function normalize(x: Tensor, eps: number): Tensor {
  return x.div(aten.linalg_vector_norm(x, 2).clamp(eps, null));
}

/**
 * The spectral-norm parametrization (PyTorch's `_SpectralNorm`), registered by
 * {@link spectralNorm}: divides the weight by its largest singular value, estimated by power
 * iteration with the buffers `_u` and `_v`; a 1-d weight is divided by its norm.
 */
export class SpectralNorm extends Module {
  /** The dimension of the output units, first in the matrix the weight is viewed as. */
  readonly dim: number;
  /** The floor of the norms the vectors are divided by. */
  readonly eps: number;
  /** Power-iteration steps per training-mode forward. */
  readonly nPowerIterations: number;
  private uBuffer: Tensor | null = null;
  private vBuffer: Tensor | null = null;

  /**
   * A parametrization of tensors like `weight`: u and v start as random unit vectors from the
   * global generator and take 15 power-iteration steps on `weight`.
   */
  constructor(weight: Tensor, nPowerIterations = 1, dim = 0, eps = 1e-12) {
    super();
    const c = checksOf('parametrizations.SpectralNorm');
    const ndim = weight.ndim;
    c.integer(dim, 'dim', { min: -ndim, max: ndim - 1 });
    this.nPowerIterations = c.integer(nPowerIterations, 'nPowerIterations', { min: 1, max: 1e6 });
    this.eps = c.number(eps, 'eps', { above: 0 });
    this.dim = dim < 0 ? dim + ndim : dim;
    if (ndim < 2) return;
    noGrad(() =>
      tidy(() => {
        const mat = this.matrix(weight);
        const [h, w] = mat.shape as [number, number];
        const random = (size: number) => aten.normal_(empty([size], mat.dtype, mat.device), 0, 1);
        const u = random(h);
        const v = random(w);
        this.uBuffer = this.registerBuffer('_u', normalize(u, this.eps));
        this.vBuffer = this.registerBuffer('_v', normalize(v, this.eps));
        this.powerMethod(mat, 15);
      }),
    );
  }

  /** The left singular vector estimate (buffer `_u`; null for a 1-d weight). */
  get u(): Tensor | null {
    return this.uBuffer;
  }
  /** The right singular vector estimate (buffer `_v`; null for a 1-d weight). */
  get v(): Tensor | null {
    return this.vBuffer;
  }

  /** The weight as a matrix, `dim` first and the other dimensions flattened. */
  private matrix(weight: Tensor): Tensor {
    const order = [this.dim, ...weight.shape.map((_, i) => i).filter((i) => i !== this.dim)];
    return (this.dim === 0 ? weight : weight.permute(...order)).flatten(1);
  }

  /** `steps` power-iteration steps, u then v, in place (no gradient). */
  private powerMethod(mat: Tensor, steps: number): void {
    noGrad(() => {
      for (let i = 0; i < steps; i++) {
        this.u!.copy_(normalize(aten.mv(mat, this.v!), this.eps));
        this.v!.copy_(normalize(aten.mv(mat.t(), this.u!), this.eps));
      }
    });
  }

  /** The weight divided by its estimated spectral norm; in training mode u and v step first. */
  forward(weight: Tensor): Tensor {
    if (weight.ndim === 1) return normalize(weight, this.eps);
    const mat = this.matrix(weight);
    if (this.training) this.powerMethod(mat.detach(), this.nPowerIterations);
    // copies, so that the next step's in-place update does not touch this graph
    const u = this.u!.clone();
    const v = this.v!.clone();
    const sigma = aten.dot(u, aten.mv(mat, v));
    return weight.div(sigma);
  }

  /** The original for a weight: the weight itself (PyTorch's right_inverse). */
  rightInverse(value: Tensor): Tensor {
    return value;
  }
}

/** Options of {@link spectralNorm} (PyTorch's names and defaults, camelCase). */
export interface SpectralNormParametrizationOptions {
  /** Power-iteration steps per training-mode forward (default 1). */
  nPowerIterations?: number;
  /** The floor of the norms the vectors are divided by (default 1e-12). */
  eps?: number;
  /** The dimension of the output units (default 0; 1 for ConvTranspose1d/2d/3d). */
  dim?: number;
}

/**
 * Divides `module[name]` by its largest singular value (torch.nn.utils.parametrizations.
 * spectral_norm, PyTorch 1.13), through a {@link SpectralNorm} registered with
 * parametrize.registerParametrization: the trained tensor is
 * `module.parametrizations.weight.original`, the power iteration's vectors the buffers
 * `parametrizations.weight.0._u` and `._v`, initialised from the global generator and 15 steps,
 * then one step at registration and one per training-mode forward (none in evaluation mode).
 * The weight is viewed as a matrix with `dim` first. Build the optimizer after this call.
 * Returns `module`.
 */
export function spectralNorm<M extends Module>(
  module: M,
  name = 'weight',
  options: SpectralNormParametrizationOptions = {},
): M {
  const c = checksOf('parametrizations.spectralNorm');
  const weight = tensorOf(c, module, name);
  const o = c.object(options, 'options');
  const transposed =
    module instanceof ConvTranspose1d ||
    module instanceof ConvTranspose2d ||
    module instanceof ConvTranspose3d;
  const dim = c.integer(o.dim ?? (transposed ? 1 : 0), 'options.dim', {
    min: -weight.ndim,
    max: weight.ndim - 1,
  });
  const n = c.integer(o.nPowerIterations ?? 1, 'options.nPowerIterations', { min: 1, max: 1e6 });
  const eps = c.number(o.eps ?? 1e-12, 'options.eps', { above: 0 });
  registerParametrization(module, name, new SpectralNorm(weight, n, dim, eps));
  return module;
}
