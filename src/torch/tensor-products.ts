// Matrix and vector products under PyTorch's names (torch.matmul, mm, bmm, dot, vdot, mv, inner,
// and the fused addmm, addmv, addr, baddbmm, addbmm), over libtorch's kernels so that results and
// gradients are PyTorch's. Each checks the ranks first, so that a wrong shape is an
// ArgumentError naming the function and the argument rather than a C++ message. PyTorch's
// keyword-only beta and alpha (out = beta * input + alpha * product) are an options object.
import type { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../util/arguments.js';
import { tensorArg } from './tensor-args.js';
import { zeros } from './creation.js';
import { tidy } from './scope.js';

/** The scale factors of the fused products: `beta * input + alpha * product` (both default 1). */
export interface ProductScaleOptions {
  /** The factor of `input` (0 ignores its values, NaN included, as PyTorch). */
  beta?: number;
  /** The factor of the product. */
  alpha?: number;
}

function ranked(
  c: ArgumentChecks,
  value: unknown,
  name: string,
  ranks: readonly number[],
  what: string,
): Tensor {
  const t = tensorArg(c, value, name);
  if (!ranks.includes(t.ndim))
    throw new ArgumentError(
      `${c.fn}: ${name} must be ${what}, got a tensor of shape [${t.shape.join(', ')}]`,
    );
  return t;
}

function scales(c: ArgumentChecks, options: unknown): { beta: number; alpha: number } {
  const o = c.object(options, 'options') as ProductScaleOptions;
  return {
    beta: o.beta === undefined ? 1 : c.number(o.beta, 'options.beta'),
    alpha: o.alpha === undefined ? 1 : c.number(o.alpha, 'options.alpha'),
  };
}

/**
 * The matrix product with batching and broadcasting (torch.matmul): vectors are dotted, a
 * vector times a matrix is a vector, batches of matrices broadcast.
 *
 * @example
 * ```ts
 * import { matmul, randn } from 'tailor/torch';
 *
 * console.log(matmul(randn([10, 3, 4]), randn([4, 5])).shape); // [10, 3, 5]
 * ```
 */
export function matmul(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('matmul');
  const a = tensorArg(c, input, 'input');
  const b = tensorArg(c, other, 'other');
  for (const [name, t] of [
    ['input', a],
    ['other', b],
  ] as const)
    if (t.ndim === 0)
      throw new ArgumentError(
        `matmul: ${name} must be a tensor of at least 1 dimension, got a 0-d tensor (use mul)`,
      );
  return aten.matmul(a, b);
}

/** The product of two matrices, [n, m] x [m, p] -> [n, p], without broadcasting (torch.mm). */
export function mm(input: Tensor, mat2: Tensor): Tensor {
  const c = checksOf('mm');
  return aten.mm(ranked(c, input, 'input', [2], 'a matrix'), ranked(c, mat2, 'mat2', [2], 'a matrix'));
}

/** Batches of matrix products, [b, n, m] x [b, m, p] -> [b, n, p] (torch.bmm). */
export function bmm(input: Tensor, mat2: Tensor): Tensor {
  const c = checksOf('bmm');
  const what = 'a batch of matrices [b, n, m]';
  return aten.bmm(ranked(c, input, 'input', [3], what), ranked(c, mat2, 'mat2', [3], what));
}

/** The dot product of two 1-d tensors of one length (torch.dot). */
export function dot(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('dot');
  return aten.dot(
    ranked(c, input, 'input', [1], 'a 1-d tensor'),
    ranked(c, other, 'other', [1], 'a 1-d tensor'),
  );
}

/** The dot product with the first argument conjugated (torch.vdot): `dot` for real tensors. */
export function vdot(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('vdot');
  return aten.vdot(
    ranked(c, input, 'input', [1], 'a 1-d tensor'),
    ranked(c, other, 'other', [1], 'a 1-d tensor'),
  );
}

/** The product of a matrix and a vector, [n, m] x [m] -> [n] (torch.mv). */
export function mv(input: Tensor, vec: Tensor): Tensor {
  const c = checksOf('mv');
  return aten.mv(ranked(c, input, 'input', [2], 'a matrix'), ranked(c, vec, 'vec', [1], 'a 1-d tensor'));
}

/** Sums of products over the last dimension of both (torch.inner); a 0-d tensor scales. */
export function inner(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('inner');
  return aten.inner(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}

/** `beta * input + alpha * (mat1 @ mat2)` for matrices; `input` broadcasts (torch.addmm). */
export function addmm(input: Tensor, mat1: Tensor, mat2: Tensor, options: ProductScaleOptions = {}): Tensor {
  const c = checksOf('addmm');
  const { beta, alpha } = scales(c, options);
  return aten.addmm(
    tensorArg(c, input, 'input'),
    ranked(c, mat1, 'mat1', [2], 'a matrix'),
    ranked(c, mat2, 'mat2', [2], 'a matrix'),
    beta,
    alpha,
  );
}

/** `beta * input + alpha * (mat @ vec)`; `input` broadcasts to the result (torch.addmv). */
export function addmv(input: Tensor, mat: Tensor, vec: Tensor, options: ProductScaleOptions = {}): Tensor {
  const c = checksOf('addmv');
  const { beta, alpha } = scales(c, options);
  return aten.addmv(
    tensorArg(c, input, 'input'),
    ranked(c, mat, 'mat', [2], 'a matrix'),
    ranked(c, vec, 'vec', [1], 'a 1-d tensor'),
    beta,
    alpha,
  );
}

/** `beta * input + alpha * outer(vec1, vec2)` (torch.addr). */
export function addr(input: Tensor, vec1: Tensor, vec2: Tensor, options: ProductScaleOptions = {}): Tensor {
  const c = checksOf('addr');
  const { beta, alpha } = scales(c, options);
  return aten.addr(
    tensorArg(c, input, 'input'),
    ranked(c, vec1, 'vec1', [1], 'a 1-d tensor'),
    ranked(c, vec2, 'vec2', [1], 'a 1-d tensor'),
    beta,
    alpha,
  );
}

/** `beta * input + alpha * bmm(batch1, batch2)`, per batch (torch.baddbmm). */
export function baddbmm(
  input: Tensor,
  batch1: Tensor,
  batch2: Tensor,
  options: ProductScaleOptions = {},
): Tensor {
  const c = checksOf('baddbmm');
  const { beta, alpha } = scales(c, options);
  const what = 'a batch of matrices [b, n, m]';
  const self = tensorArg(c, input, 'input');
  const b1 = ranked(c, batch1, 'batch1', [3], what);
  const b2 = ranked(c, batch2, 'batch2', [3], what);
  if (beta !== 0) return aten.baddbmm(self, b1, b2, beta, alpha);
  // libtorch 1.13's baddbmm with beta 0 leaves its output uninitialised and scales it by 0, so
  // whatever NaN the memory held survives: the input goes in as zeros (its gradient stays zero,
  // as beta 0 makes it) and beta as 1.
  return tidy(() => {
    const ignored = aten.where_ScalarOther(zeros(self.shape, 'bool', self.device), self, 0);
    return aten.baddbmm(ignored, b1, b2, 1, alpha);
  });
}

/** `beta * input + alpha * (sum over the batch of batch1[i] @ batch2[i])` (torch.addbmm). */
export function addbmm(
  input: Tensor,
  batch1: Tensor,
  batch2: Tensor,
  options: ProductScaleOptions = {},
): Tensor {
  const c = checksOf('addbmm');
  const { beta, alpha } = scales(c, options);
  const what = 'a batch of matrices [b, n, m]';
  return aten.addbmm(
    tensorArg(c, input, 'input'),
    ranked(c, batch1, 'batch1', [3], what),
    ranked(c, batch2, 'batch2', [3], what),
    beta,
    alpha,
  );
}
