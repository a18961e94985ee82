// torch.sparse: the functions of PyTorch 1.13's namespace over sparse COO tensors (sum, mm, addmm,
// softmax, logSoftmax), each over the ATen operator PyTorch's Python calls, with the layout of
// each argument checked first so that a wrong one is named.
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import type { DType } from './dtype.js';
import { isSparseHandle } from './sparse-layout.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../util/arguments.js';

export { isSparseTensor, type Layout } from './sparse-layout.js';

function sparseArg(c: ArgumentChecks, value: unknown, name: string): Tensor {
  if (!(value instanceof Tensor)) return c.fail(name, 'a sparse Tensor', value);
  if (!isSparseHandle(value.handle))
    throw new ArgumentError(
      `${c.fn}: ${name} must be a sparse COO tensor, got a dense one: convert it with toSparse()`,
    );
  return value;
}

function denseArg(c: ArgumentChecks, value: unknown, name: string): Tensor {
  if (!(value instanceof Tensor)) return c.fail(name, 'a Tensor', value);
  if (isSparseHandle(value.handle))
    throw new ArgumentError(
      `${c.fn}: ${name} must be a dense tensor, got a sparse one: convert it with toDense()`,
    );
  return value;
}

/**
 * The sum of a sparse tensor's entries (torch.sparse.sum): over all dimensions a dense 0-d tensor;
 * over `dim` (one or several) a sparse tensor, or a dense one when every sparse dimension is summed.
 * Differentiable with respect to the input.
 */
export function sum(input: Tensor, dim?: number | number[], options: { dtype?: DType } = {}): Tensor {
  const c = checksOf('sparse.sum');
  sparseArg(c, input, 'input');
  const o = c.object(options, 'options');
  const source = o.dtype === undefined ? input : input.to(o.dtype as DType);
  try {
    return dim === undefined ? aten._sparse_sum(source) : aten._sparse_sum_dim(source, dim);
  } finally {
    if (source !== input) source.dispose();
  }
}

/**
 * The matrix product of a sparse [n, m] matrix and a dense or sparse [m, p] one (torch.sparse.mm):
 * dense for a dense `mat2`, sparse for a sparse one. Gradients flow to both; a sparse argument's
 * gradient is sparse.
 */
export function mm(mat1: Tensor, mat2: Tensor): Tensor {
  const c = checksOf('sparse.mm');
  sparseArg(c, mat1, 'mat1');
  if (!(mat2 instanceof Tensor)) c.fail('mat2', 'a Tensor', mat2);
  if (mat1.ndim !== 2 || mat2.ndim !== 2 || mat1.shape[1] !== mat2.shape[0])
    throw new ArgumentError(
      `sparse.mm: mat1 [${mat1.shape}] and mat2 [${mat2.shape}] must be matrices [n, m] and [m, p]`,
    );
  return aten._sparse_mm(mat1, mat2);
}

/**
 * beta * input + alpha * (mat1 @ mat2) for a sparse [n, m] `mat1` and dense `input` [n, p] and
 * `mat2` [m, p] (torch.sparse.addmm; defaults beta = alpha = 1). Differentiable.
 */
export function addmm(
  input: Tensor,
  mat1: Tensor,
  mat2: Tensor,
  options: { beta?: Scalar; alpha?: Scalar } = {},
): Tensor {
  const c = checksOf('sparse.addmm');
  denseArg(c, input, 'input');
  sparseArg(c, mat1, 'mat1');
  denseArg(c, mat2, 'mat2');
  const o = c.object(options, 'options');
  if (mat1.ndim !== 2 || mat2.ndim !== 2 || mat1.shape[1] !== mat2.shape[0])
    throw new ArgumentError(
      `sparse.addmm: mat1 [${mat1.shape}] and mat2 [${mat2.shape}] must be matrices [n, m] and [m, p]`,
    );
  return aten._sparse_addmm(input, mat1, mat2, o.beta as Scalar | undefined, o.alpha as Scalar | undefined);
}

/** Checks the dim of softmax/logSoftmax against the input's dimensions. */
function softmaxDim(c: ArgumentChecks, input: Tensor, dim: unknown): number {
  return c.integer(dim, 'dim', { min: -input.ndim, max: input.ndim - 1 });
}

/**
 * The softmax along `dim` over the stored entries only (torch.sparse.softmax): entries that are
 * not stored count as -Infinity, so they stay absent, and a sparse result keeps the input's
 * pattern. Differentiable.
 */
export function softmax(input: Tensor, dim: number, options: { dtype?: DType } = {}): Tensor {
  const c = checksOf('sparse.softmax');
  sparseArg(c, input, 'input');
  const o = c.object(options, 'options');
  return aten._sparse_softmax_int(input, softmaxDim(c, input, dim), (o.dtype as DType | undefined) ?? null);
}

/** The log of {@link softmax} along `dim` over the stored entries (torch.sparse.log_softmax). Differentiable. */
export function logSoftmax(input: Tensor, dim: number, options: { dtype?: DType } = {}): Tensor {
  const c = checksOf('sparse.logSoftmax');
  sparseArg(c, input, 'input');
  const o = c.object(options, 'options');
  return aten._sparse_log_softmax_int(
    input,
    softmaxDim(c, input, dim),
    (o.dtype as DType | undefined) ?? null,
  );
}
