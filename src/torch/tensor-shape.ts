// Products, differences, grids, triangles, diagonals, rotations and splits under PyTorch's names
// (torch.kron, torch.diff, torch.meshgrid, torch.tril_indices, torch.rot90, torch.tensor_split...),
// over libtorch's kernels so that results and gradients are PyTorch's. PyTorch's variadic
// arguments (`torch.einsum(eq, a, b)`, `torch.broadcast_tensors(a, b)`) are rest parameters here.
import { Tensor } from './tensor.js';
import type { DType } from './dtype.js';
import * as aten from './generated/aten.js';
import { creationDevice, type DeviceLike } from './device.js';
import { checksOf } from '../util/arguments.js';
import { dimArg, tensorArg, tensorsArg } from './tensor-args.js';

/** The Kronecker product of two tensors (torch.kron). */
export function kron(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('kron');
  return aten.kron(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}

/**
 * Contracts `a` and `b` over dimensions (torch.tensordot): `dims` a count (the last `dims` of a
 * with the first of b, default 2) or the two lists of dimensions to pair.
 */
export function tensordot(a: Tensor, b: Tensor, dims: number | [number[], number[]] = 2): Tensor {
  const c = checksOf('tensordot');
  tensorArg(c, a, 'a');
  tensorArg(c, b, 'b');
  if (typeof dims === 'number') {
    c.integer(dims, 'dims', { min: 0, max: Math.min(a.ndim, b.ndim) });
    const first = Array.from({ length: dims }, (_, k) => a.ndim - dims + k);
    return aten.tensordot(
      a,
      b,
      first,
      Array.from({ length: dims }, (_, k) => k),
    );
  }
  if (!Array.isArray(dims) || dims.length !== 2 || !Array.isArray(dims[0]) || !Array.isArray(dims[1]))
    c.fail('dims', 'a count or two lists of dimensions [dimsA, dimsB]', dims);
  if (dims[0].length !== dims[1].length) c.fail('dims', 'two lists of the same length', dims);
  return aten.tensordot(a, b, dims[0], dims[1]);
}

/**
 * The `n`-th forward difference along `dim` (torch.diff), after concatenating `prepend` and
 * `append` to `input` along `dim`.
 */
export function diff(
  input: Tensor,
  n = 1,
  dim = -1,
  prepend: Tensor | null = null,
  append: Tensor | null = null,
): Tensor {
  const c = checksOf('diff');
  tensorArg(c, input, 'input');
  c.integer(n, 'n', { min: 0 });
  if (prepend !== null) tensorArg(c, prepend, 'prepend');
  if (append !== null) tensorArg(c, append, 'append');
  return aten.diff(input, n, dimArg(c, dim, 'dim', input), prepend, append);
}

/**
 * Coordinate grids of the 1-D `tensors` (torch.meshgrid): with indexing 'ij' (default) grid k
 * varies along dimension k; 'xy' swaps the first two, as NumPy's meshgrid.
 */
export function meshgrid(tensors: Tensor[], options: { indexing?: 'ij' | 'xy' } = {}): Tensor[] {
  const c = checksOf('meshgrid');
  tensorsArg(c, tensors, 'tensors', 1);
  return aten.meshgrid_indexing(tensors, c.oneOf(options.indexing ?? 'ij', 'indexing', ['ij', 'xy']));
}

/** The Cartesian product of 1-D tensors, one combination a row (torch.cartesian_prod). */
export function cartesianProd(...tensors: Tensor[]): Tensor {
  return aten.cartesian_prod(tensorsArg(checksOf('cartesianProd'), tensors, 'tensors', 1));
}

/** The length-`r` combinations of a 1-D tensor's elements, one a row (torch.combinations). */
export function combinations(input: Tensor, r = 2, withReplacement = false): Tensor {
  const c = checksOf('combinations');
  if (tensorArg(c, input, 'input').ndim !== 1)
    c.fail('input', 'a 1-D tensor', `shape [${input.shape.join(', ')}]`);
  c.integer(r, 'r', { min: 0 });
  return aten.combinations(input, r, withReplacement);
}

/** Options of {@link trilIndices} and {@link triuIndices}. */
export interface TriangleIndicesOptions {
  /** The dtype of the indices (default int64). */
  dtype?: DType;
  /** Where to create them (default the CPU). */
  device?: DeviceLike;
}

function triangleIndices(
  fn: 'trilIndices' | 'triuIndices',
  row: number,
  col: number,
  offset: number,
  options: TriangleIndicesOptions,
): Tensor {
  const c = checksOf(fn);
  c.integer(row, 'row', { min: 0 });
  c.integer(col, 'col', { min: 0 });
  c.integer(offset, 'offset');
  const op = fn === 'trilIndices' ? aten.tril_indices : aten.triu_indices;
  return op(row, col, offset, options.dtype ?? 'int64', null, creationDevice(options.device));
}

/** The [2, N] coordinates of the lower triangle (on and below diagonal `offset`) of a row×col matrix (torch.tril_indices). */
export function trilIndices(
  row: number,
  col: number,
  offset = 0,
  options: TriangleIndicesOptions = {},
): Tensor {
  return triangleIndices('trilIndices', row, col, offset, options);
}

/** The [2, N] coordinates of the upper triangle (on and above diagonal `offset`) of a row×col matrix (torch.triu_indices). */
export function triuIndices(
  row: number,
  col: number,
  offset = 0,
  options: TriangleIndicesOptions = {},
): Tensor {
  return triangleIndices('triuIndices', row, col, offset, options);
}

function matrixInput(fn: string, input: unknown): Tensor {
  const c = checksOf(fn);
  const t = tensorArg(c, input, 'input');
  if (t.ndim < 2)
    c.fail('input', 'a matrix or a batch of them (2 or more dimensions)', `shape [${t.shape.join(', ')}]`);
  return t;
}

/** The lower triangle (on and below `diagonal`) of the last two dimensions, zeros elsewhere (torch.tril). */
export function tril(input: Tensor, diagonal = 0): Tensor {
  return aten.tril(matrixInput('tril', input), checksOf('tril').integer(diagonal, 'diagonal'));
}

/** The upper triangle (on and above `diagonal`) of the last two dimensions, zeros elsewhere (torch.triu). */
export function triu(input: Tensor, diagonal = 0): Tensor {
  return aten.triu(matrixInput('triu', input), checksOf('triu').integer(diagonal, 'diagonal'));
}

/** The elements shifted by `shifts` along `dims`, wrapping around (the flattened tensor without dims; torch.roll). */
export function roll(input: Tensor, shifts: number | number[], dims: number | number[] = []): Tensor {
  const c = checksOf('roll');
  tensorArg(c, input, 'input');
  const s = typeof shifts === 'number' ? [shifts] : (c.array(shifts, 'shifts') as number[]);
  const d = typeof dims === 'number' ? [dims] : (c.array(dims, 'dims') as number[]);
  if (d.length > 0 && d.length !== s.length)
    c.fail('dims', `as many dimensions as shifts (${s.length})`, dims);
  return aten.roll(input, s, d);
}

/** The elements in reverse order along `dims` (torch.flip). */
export function flip(input: Tensor, dims: number | number[]): Tensor {
  tensorArg(checksOf('flip'), input, 'input');
  return aten.flip(input, dims);
}

/** Rotates by 90° `k` times in the plane of `dims`, from the first towards the second (torch.rot90). */
export function rot90(input: Tensor, k = 1, dims: [number, number] = [0, 1]): Tensor {
  const c = checksOf('rot90');
  tensorArg(c, input, 'input');
  c.integer(k, 'k');
  if (!Array.isArray(dims) || dims.length !== 2) c.fail('dims', 'two dimensions [dim0, dim1]', dims);
  return aten.rot90(input, k, dims);
}

/** A 1-D input as the `diagonal`-th diagonal of a square matrix, or a matrix's `diagonal`-th diagonal (torch.diag). */
export function diag(input: Tensor, diagonal = 0): Tensor {
  const c = checksOf('diag');
  if (![1, 2].includes(tensorArg(c, input, 'input').ndim))
    c.fail('input', 'a 1-D or 2-D tensor', `shape [${input.shape.join(', ')}]`);
  return aten.diag(input, c.integer(diagonal, 'diagonal'));
}

/** The diagonal `offset` of the planes (dim1, dim2), as the last dimension (a view; torch.diagonal). */
export function diagonal(input: Tensor, offset = 0, dim1 = 0, dim2 = 1): Tensor {
  const c = checksOf('diagonal');
  tensorArg(c, input, 'input');
  return aten.diagonal(
    input,
    c.integer(offset, 'offset'),
    dimArg(c, dim1, 'dim1', input),
    dimArg(c, dim2, 'dim2', input),
  );
}

/** Matrices (in dims dim1, dim2 of the output) whose diagonal `offset` is the last dimension of `input` (torch.diag_embed). */
export function diagEmbed(input: Tensor, offset = 0, dim1 = -2, dim2 = -1): Tensor {
  const c = checksOf('diagEmbed');
  tensorArg(c, input, 'input');
  return aten.diag_embed(input, c.integer(offset, 'offset'), dim1, dim2);
}

/** The sum of the main diagonal of a matrix (torch.trace). */
export function trace(input: Tensor): Tensor {
  const c = checksOf('trace');
  if (tensorArg(c, input, 'input').ndim !== 2)
    c.fail('input', 'a matrix (2-D)', `shape [${input.shape.join(', ')}]`);
  return aten.trace(input);
}

/** The outer product of two 1-D tensors (torch.outer). */
export function outer(input: Tensor, vec2: Tensor): Tensor {
  const c = checksOf('outer');
  return aten.outer(tensorArg(c, input, 'input'), tensorArg(c, vec2, 'vec2'));
}

/** The cross product of 3-vectors along `dim` (default: the first dimension of size 3; torch.cross). */
export function cross(input: Tensor, other: Tensor, dim: number | null = null): Tensor {
  const c = checksOf('cross');
  tensorArg(c, input, 'input');
  tensorArg(c, other, 'other');
  return aten.cross(input, other, dim === null ? null : dimArg(c, dim, 'dim', input));
}

/** Sums of products of the operands' elements as the Einstein notation `equation` says ('ij,jk->ik'; torch.einsum). */
export function einsum(equation: string, ...operands: Tensor[]): Tensor {
  const c = checksOf('einsum');
  c.string(equation, 'equation');
  return aten.einsum(equation, tensorsArg(c, operands, 'operands', 1));
}

/** The tensors broadcast to their common shape (views; torch.broadcast_tensors). */
export function broadcastTensors(...tensors: Tensor[]): Tensor[] {
  return aten.broadcast_tensors(tensorsArg(checksOf('broadcastTensors'), tensors, 'tensors'));
}

/** Splits into `chunks` parts along `dim`, the last smaller if it does not divide (views; torch.chunk). */
export function chunk(input: Tensor, chunks: number, dim = 0): Tensor[] {
  const c = checksOf('chunk');
  tensorArg(c, input, 'input');
  c.integer(chunks, 'chunks', { min: 1 });
  return aten.chunk(input, chunks, dimArg(c, dim, 'dim', input));
}

/** Splits along `dim` into parts of `splitSizeOrSections` each (the last may be smaller) or of the listed sizes (torch.split). */
export function split(input: Tensor, splitSizeOrSections: number | number[], dim = 0): Tensor[] {
  const c = checksOf('split');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  if (typeof splitSizeOrSections === 'number')
    return aten.split_Tensor(input, c.integer(splitSizeOrSections, 'splitSizeOrSections', { min: 1 }), d);
  const total = c
    .array(splitSizeOrSections, 'splitSizeOrSections')
    .reduce<number>((a, b, i) => a + c.integer(b, `splitSizeOrSections[${i}]`, { min: 0 }), 0);
  if (total !== input.size(d))
    c.fail(
      'splitSizeOrSections',
      `sizes that add up to the length of dim ${dim} (${input.size(d)})`,
      splitSizeOrSections,
    );
  return aten.split_with_sizes(input, splitSizeOrSections, d);
}

/**
 * Splits along `dim` (torch.tensor_split): into `n` nearly equal parts (the first ones one
 * longer), or before each of the listed indices (a list or a 1-D int64 tensor).
 */
export function tensorSplit(input: Tensor, indicesOrSections: number | number[] | Tensor, dim = 0): Tensor[] {
  const c = checksOf('tensorSplit');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  if (typeof indicesOrSections === 'number')
    return aten.tensor_split_sections(
      input,
      c.integer(indicesOrSections, 'indicesOrSections', { min: 1 }),
      d,
    );
  const indices =
    indicesOrSections instanceof Tensor
      ? indicesOrSections.toNumbers()
      : c
          .array(indicesOrSections, 'indicesOrSections')
          .map((v, k) => c.integer(v, `indicesOrSections[${k}]`));
  return aten.tensor_split_indices(input, indices, d);
}

/** Repeats the tensor `dims[k]` times along dimension k, padding `dims` with leading 1s (torch.tile). */
export function tile(input: Tensor, dims: number[]): Tensor {
  const c = checksOf('tile');
  tensorArg(c, input, 'input');
  c.array(dims, 'dims').forEach((v, k) => c.integer(v, `dims[${k}]`, { min: 0 }));
  return aten.tile(input, dims);
}

/**
 * Repeats each element (or slice along `dim`; of the flattened input when null) `repeats` times,
 * a number or one count per element (torch.repeat_interleave). Given only a 1-D tensor of counts,
 * repeats its indices: repeatInterleave([2, 1]) is [0, 0, 1].
 */
export function repeatInterleave(
  input: Tensor,
  repeats?: number | Tensor,
  dim: number | null = null,
  options: { outputSize?: number } = {},
): Tensor {
  const c = checksOf('repeatInterleave');
  tensorArg(c, input, 'input');
  const outputSize = options.outputSize ?? null;
  if (repeats === undefined) return aten.repeat_interleave_Tensor(input, outputSize);
  const d = dim === null ? null : dimArg(c, dim, 'dim', input);
  if (repeats instanceof Tensor) return aten.repeat_interleave_self_Tensor(input, repeats, d, outputSize);
  return aten.repeat_interleave_self_int(input, c.integer(repeats, 'repeats', { min: 0 }), d, outputSize);
}
