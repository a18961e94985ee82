// PyTorch's shape functions under their names (torch.flatten, unflatten, movedim, swapaxes, ravel,
// the stacks and splits by axis, atleast_nd, fliplr/flipud, diagflat, block_diag, take, put, isin,
// msort, index_put), the Tensor-only viewAs/reshapeAs/typeAs, and the top-level forms of the core
// shape methods (torch.transpose(x, 0, 1) is x.transpose(0, 1)), over libtorch's kernels.
// Arguments are checked first, so that a wrong value is an ArgumentError naming the function and
// the argument rather than a C++ message.
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { checksOf, type ArgumentChecks } from '../util/arguments.js';
import { dimArg, indexArg, isScalar, tensorArg, tensorsArg } from './tensor-args.js';

function dimsOf(c: ArgumentChecks, value: unknown, name: string, input: Tensor): number[] {
  if (typeof value === 'number') return [dimArg(c, value, name, input)];
  return c.array(value, name).map((d, k) => dimArg(c, d, `${name}[${k}]`, input));
}

function sizesArg(c: ArgumentChecks, value: unknown, name: string): number[] {
  return c.array(value, name, { minLength: 1 }).map((s, k) => c.integer(s, `${name}[${k}]`, { min: -1 }));
}

/** The dimensions `startDim`..`endDim` merged into one (torch.flatten): `input.flatten(startDim, endDim)`. */
export function flatten(input: Tensor, startDim = 0, endDim = -1): Tensor {
  return tensorArg(checksOf('flatten'), input, 'input').flatten(startDim, endDim);
}

/** Dimension `dim` split into `sizes` (one may be -1, inferred), the inverse of flatten (torch.unflatten). */
export function unflatten(input: Tensor, dim: number, sizes: number[]): Tensor {
  const c = checksOf('unflatten');
  const x = tensorArg(c, input, 'input');
  return aten.unflatten_int(x, dimArg(c, dim, 'dim', x), sizesArg(c, sizes, 'sizes'));
}

/** The dimensions `source` moved to the positions `destination`, the others in order (torch.movedim). */
export function movedim(input: Tensor, source: number | number[], destination: number | number[]): Tensor {
  const c = checksOf('movedim');
  const x = tensorArg(c, input, 'input');
  const from = dimsOf(c, source, 'source', x);
  const to = dimsOf(c, destination, 'destination', x);
  if (from.length !== to.length)
    c.fail('destination', `as many dimensions as source (${from.length})`, destination);
  return aten.movedim_intlist(x, from, to);
}

/** The same as {@link movedim} (NumPy's name, torch.moveaxis). */
export function moveaxis(input: Tensor, source: number | number[], destination: number | number[]): Tensor {
  return movedim(input, source, destination);
}

/** Two dimensions exchanged (torch.swapaxes, NumPy's name for transpose). */
export function swapaxes(input: Tensor, axis0: number, axis1: number): Tensor {
  return tensorArg(checksOf('swapaxes'), input, 'input').transpose(axis0, axis1);
}

/** Two dimensions exchanged (torch.swapdims, the same as transpose). */
export function swapdims(input: Tensor, dim0: number, dim1: number): Tensor {
  return tensorArg(checksOf('swapdims'), input, 'input').transpose(dim0, dim1);
}

/** The elements as a 1-d tensor, a view when possible (torch.ravel). */
export function ravel(input: Tensor): Tensor {
  return aten.ravel(tensorArg(checksOf('ravel'), input, 'input'));
}

/** Tensors stacked row-wise: 1-d ones become rows, then concatenated along dimension 0 (torch.vstack). */
export function vstack(tensors: Tensor[]): Tensor {
  return aten.vstack(tensorsArg(checksOf('vstack'), tensors, 'tensors', 1));
}
/** The same as {@link vstack} (torch.row_stack). */
export function rowStack(tensors: Tensor[]): Tensor {
  return aten.row_stack(tensorsArg(checksOf('rowStack'), tensors, 'tensors', 1));
}
/** Tensors stacked column-wise: concatenated along dimension 1, or 0 for 1-d ones (torch.hstack). */
export function hstack(tensors: Tensor[]): Tensor {
  return aten.hstack(tensorsArg(checksOf('hstack'), tensors, 'tensors', 1));
}
/** Tensors stacked depth-wise: made at least 3-d, then concatenated along dimension 2 (torch.dstack). */
export function dstack(tensors: Tensor[]): Tensor {
  return aten.dstack(tensorsArg(checksOf('dstack'), tensors, 'tensors', 1));
}
/** 1-d tensors as columns (and matrices as they are) side by side (torch.column_stack). */
export function columnStack(tensors: Tensor[]): Tensor {
  return aten.column_stack(tensorsArg(checksOf('columnStack'), tensors, 'tensors', 1));
}

function splitBy(
  fn: 'vsplit' | 'hsplit' | 'dsplit',
  input: unknown,
  indicesOrSections: unknown,
  minRank: number,
  dimOf: (x: Tensor) => number,
): Tensor[] {
  const c = checksOf(fn);
  const x = tensorArg(c, input, 'input');
  if (x.ndim < minRank)
    c.fail('input', `a tensor of at least ${minRank} dimension(s)`, `a ${x.ndim}-d tensor`);
  const size = x.shape[dimOf(x)]!;
  if (typeof indicesOrSections === 'number') {
    const sections = c.integer(indicesOrSections, 'indicesOrSections', { min: 1 });
    if (size % sections !== 0)
      c.fail(
        'indicesOrSections',
        `a number of sections that divides the split dimension's size ${size}`,
        sections,
      );
    const op = { vsplit: aten.vsplit_int, hsplit: aten.hsplit_int, dsplit: aten.dsplit_int }[fn];
    return op(x, sections);
  }
  const indices = c
    .array(indicesOrSections, 'indicesOrSections')
    .map((i, k) => c.integer(i, `indicesOrSections[${k}]`));
  const op = { vsplit: aten.vsplit_array, hsplit: aten.hsplit_array, dsplit: aten.dsplit_array }[fn];
  return op(x, indices);
}

/** Split along dimension 0 into equal sections or at indices (torch.vsplit); at least 2-d. */
export function vsplit(input: Tensor, indicesOrSections: number | number[]): Tensor[] {
  return splitBy('vsplit', input, indicesOrSections, 2, () => 0);
}
/** Split along dimension 1 (0 for a 1-d tensor) into equal sections or at indices (torch.hsplit). */
export function hsplit(input: Tensor, indicesOrSections: number | number[]): Tensor[] {
  return splitBy('hsplit', input, indicesOrSections, 1, (x) => (x.ndim === 1 ? 0 : 1));
}
/** Split along dimension 2 into equal sections or at indices (torch.dsplit); at least 3-d. */
export function dsplit(input: Tensor, indicesOrSections: number | number[]): Tensor[] {
  return splitBy('dsplit', input, indicesOrSections, 3, () => 2);
}

function atLeast(fn: string, op: (t: Tensor) => Tensor, tensors: unknown[]): Tensor | Tensor[] {
  const c = checksOf(fn);
  if (tensors.length === 1 && Array.isArray(tensors[0]))
    return tensorsArg(c, tensors[0], 'tensors').map((t) => op(t));
  if (tensors.length === 0) c.fail('tensors', 'at least one Tensor', tensors);
  const ts = tensors.map((t, k) => tensorArg(c, t, `tensors[${k}]`));
  return ts.length === 1 ? op(ts[0]!) : ts.map((t) => op(t));
}

/** The tensor viewed with at least 1 dimension (torch.atleast_1d); several tensors, or an array, give an array. */
export function atleast1d(tensor: Tensor): Tensor;
/** Each tensor viewed with at least 1 dimension (torch.atleast_1d). */
export function atleast1d(...tensors: Tensor[] | [Tensor[]]): Tensor[];
/** Each tensor viewed with at least 1 dimension (torch.atleast_1d). */
export function atleast1d(...tensors: unknown[]): Tensor | Tensor[] {
  return atLeast('atleast1d', aten.atleast_1d, tensors);
}
/** The tensor viewed with at least 2 dimensions (torch.atleast_2d); several tensors, or an array, give an array. */
export function atleast2d(tensor: Tensor): Tensor;
/** Each tensor viewed with at least 2 dimensions (torch.atleast_2d). */
export function atleast2d(...tensors: Tensor[] | [Tensor[]]): Tensor[];
/** Each tensor viewed with at least 2 dimensions (torch.atleast_2d). */
export function atleast2d(...tensors: unknown[]): Tensor | Tensor[] {
  return atLeast('atleast2d', aten.atleast_2d, tensors);
}
/** The tensor viewed with at least 3 dimensions (torch.atleast_3d); several tensors, or an array, give an array. */
export function atleast3d(tensor: Tensor): Tensor;
/** Each tensor viewed with at least 3 dimensions (torch.atleast_3d). */
export function atleast3d(...tensors: Tensor[] | [Tensor[]]): Tensor[];
/** Each tensor viewed with at least 3 dimensions (torch.atleast_3d). */
export function atleast3d(...tensors: unknown[]): Tensor | Tensor[] {
  return atLeast('atleast3d', aten.atleast_3d, tensors);
}

function atLeastRank(fn: string, input: unknown, rank: number): Tensor {
  const c = checksOf(fn);
  const x = tensorArg(c, input, 'input');
  if (x.ndim < rank) c.fail('input', `a tensor of at least ${rank} dimension(s)`, `a ${x.ndim}-d tensor`);
  return x;
}
/** Flipped left-right: the order along dimension 1 reversed (torch.fliplr); at least 2-d. */
export function fliplr(input: Tensor): Tensor {
  return aten.fliplr(atLeastRank('fliplr', input, 2));
}
/** Flipped up-down: the order along dimension 0 reversed (torch.flipud); at least 1-d. */
export function flipud(input: Tensor): Tensor {
  return aten.flipud(atLeastRank('flipud', input, 1));
}

/** A 2-d matrix with the flattened input on its diagonal `offset` (torch.diagflat). */
export function diagflat(input: Tensor, offset = 0): Tensor {
  const c = checksOf('diagflat');
  return aten.diagflat(tensorArg(c, input, 'input'), c.integer(offset, 'offset'));
}

/** A block-diagonal matrix of the given (at most 2-d) tensors, zeros elsewhere (torch.block_diag). */
export function blockDiag(...tensors: Tensor[]): Tensor {
  const c = checksOf('blockDiag');
  tensors.forEach((t, k) => {
    if (tensorArg(c, t, `tensors[${k}]`).ndim > 2)
      c.fail(`tensors[${k}]`, 'a tensor of at most 2 dimensions', `a ${t.ndim}-d tensor`);
  });
  return aten.block_diag(tensors);
}

/** The elements at the given indices of the flattened input, in the shape of `index` (torch.take). */
export function take(input: Tensor, index: Tensor): Tensor {
  const c = checksOf('take');
  return aten.take(tensorArg(c, input, 'input'), indexArg(c, index, 'index'));
}

/** A copy of `input` with `source`'s elements written (or added, with `accumulate`) at the flat `index` (torch.put). */
export function put(input: Tensor, index: Tensor, source: Tensor, accumulate = false): Tensor {
  const c = checksOf('put');
  const x = tensorArg(c, input, 'input');
  const i = indexArg(c, index, 'index');
  const s = tensorArg(c, source, 'source');
  if (i.numel !== s.numel) c.fail('source', `as many elements as index (${i.numel})`, `${s.numel} elements`);
  if (typeof accumulate !== 'boolean') c.fail('accumulate', 'a boolean', accumulate);
  return aten.put(x, i, s, accumulate);
}

/** In place: `source`'s elements written (or added) at the flat `index` of this tensor (Tensor.put_). */
export function put_(input: Tensor, index: Tensor, source: Tensor, accumulate = false): Tensor {
  const c = checksOf('put_');
  const x = tensorArg(c, input, 'input');
  const i = indexArg(c, index, 'index');
  const s = tensorArg(c, source, 'source');
  if (i.numel !== s.numel) c.fail('source', `as many elements as index (${i.numel})`, `${s.numel} elements`);
  if (typeof accumulate !== 'boolean') c.fail('accumulate', 'a boolean', accumulate);
  return aten.put_(x, i, s, accumulate);
}

function indexPutArgs(
  fn: string,
  input: unknown,
  indices: unknown,
  values: unknown,
  accumulate: unknown,
): [Tensor, (Tensor | null)[], Tensor, boolean] {
  const c = checksOf(fn);
  const x = tensorArg(c, input, 'input');
  const idx = c
    .array(indices, 'indices', { minLength: 1 })
    .map((t, k) => (t === null ? null : tensorArg(c, t, `indices[${k}]`)));
  if (idx.length > Math.max(x.ndim, 1))
    c.fail('indices', `at most ${x.ndim} index tensors (one per dimension)`, `${idx.length}`);
  if (typeof accumulate !== 'boolean') c.fail('accumulate', 'a boolean', accumulate);
  return [x, idx, tensorArg(c, values, 'values'), accumulate as boolean];
}

/** A copy with `values` written (or added) at the positions the index tensors select, x[indices] = values (torch.index_put). */
export function indexPut(
  input: Tensor,
  indices: (Tensor | null)[],
  values: Tensor,
  accumulate = false,
): Tensor {
  return aten.index_put(...indexPutArgs('indexPut', input, indices, values, accumulate));
}

/** In place: `values` written (or added) at the positions the index tensors select (Tensor.index_put_). */
export function indexPut_(
  input: Tensor,
  indices: (Tensor | null)[],
  values: Tensor,
  accumulate = false,
): Tensor {
  return aten.index_put_(...indexPutArgs('indexPut_', input, indices, values, accumulate));
}

/** Whether each element of `elements` is among `testElements` (torch.isin); `invert` negates. */
export function isin(
  elements: Tensor | Scalar,
  testElements: Tensor | Scalar,
  options: { assumeUnique?: boolean; invert?: boolean } = {},
): Tensor {
  const c = checksOf('isin');
  const o = c.object(options, 'options');
  for (const k of ['assumeUnique', 'invert'] as const)
    if (o[k] !== undefined && typeof o[k] !== 'boolean') c.fail(`options.${k}`, 'a boolean', o[k]);
  const unique = (o.assumeUnique as boolean | undefined) ?? false;
  const invert = (o.invert as boolean | undefined) ?? false;
  if (elements instanceof Tensor) {
    if (testElements instanceof Tensor)
      return aten.isin_Tensor_Tensor(elements, testElements, unique, invert);
    if (isScalar(testElements)) return aten.isin_Tensor_Scalar(elements, testElements, unique, invert);
    return c.fail('testElements', 'a Tensor or a number', testElements);
  }
  if (!isScalar(elements)) c.fail('elements', 'a Tensor or a number', elements);
  if (!(testElements instanceof Tensor))
    c.fail('testElements', 'a Tensor when elements is a number', testElements);
  return aten.isin_Scalar_Tensor(elements as Scalar, testElements as Tensor, unique, invert);
}

/** Sorted along dimension 0, values only (torch.msort). */
export function msort(input: Tensor): Tensor {
  return aten.msort(atLeastRank('msort', input, 1));
}

/** This tensor viewed with the shape of `other` (Tensor.view_as). */
export function viewAs(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('viewAs');
  return aten.view_as(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}
/** This tensor reshaped to the shape of `other` (Tensor.reshape_as). */
export function reshapeAs(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('reshapeAs');
  return aten.reshape_as(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}
/** This tensor in the dtype of `other` (Tensor.type_as). */
export function typeAs(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('typeAs');
  return aten.type_as(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}

// The top-level forms of the core Tensor shape methods: each is the method on its first argument.

/** A copy with its own storage (torch.clone): `input.clone()`. */
export function clone(input: Tensor): Tensor {
  return tensorArg(checksOf('clone'), input, 'input').clone();
}
/** A tensor sharing the data, cut from the autograd graph (torch.detach): `input.detach()`. */
export function detach(input: Tensor): Tensor {
  return tensorArg(checksOf('detach'), input, 'input').detach();
}
/** Two dimensions exchanged (torch.transpose): `input.transpose(dim0, dim1)`. */
export function transpose(input: Tensor, dim0: number, dim1: number): Tensor {
  return tensorArg(checksOf('transpose'), input, 'input').transpose(dim0, dim1);
}
/** The dimensions reordered (torch.permute): `input.permute(...dims)`. */
export function permute(input: Tensor, dims: number[]): Tensor {
  const c = checksOf('permute');
  return tensorArg(c, input, 'input').permute(...(c.array(dims, 'dims') as number[]));
}
/** The elements in a new shape, one size may be -1 (torch.reshape): `input.reshape(...shape)`. */
export function reshape(input: Tensor, shape: number[]): Tensor {
  const c = checksOf('reshape');
  return tensorArg(c, input, 'input').reshape(...sizesArg(c, shape, 'shape'));
}
/** Dimensions of size 1 removed, all or only `dim` (torch.squeeze): `input.squeeze(dim)`. */
export function squeeze(input: Tensor, dim?: number): Tensor {
  return tensorArg(checksOf('squeeze'), input, 'input').squeeze(dim);
}
/** A dimension of size 1 inserted at `dim` (torch.unsqueeze): `input.unsqueeze(dim)`. */
export function unsqueeze(input: Tensor, dim: number): Tensor {
  return tensorArg(checksOf('unsqueeze'), input, 'input').unsqueeze(dim);
}
/** `length` elements from `start` along `dim`, a view (torch.narrow): `input.narrow(dim, start, length)`. */
export function narrow(input: Tensor, dim: number, start: number, length: number): Tensor {
  return tensorArg(checksOf('narrow'), input, 'input').narrow(dim, start, length);
}
/** The slice at `index` along `dim`, that dimension removed (torch.select): `input.select(dim, index)`. */
export function select(input: Tensor, dim: number, index: number): Tensor {
  return tensorArg(checksOf('select'), input, 'input').select(dim, index);
}
/** The slices at `index` along `dim` (torch.index_select): `input.indexSelect(dim, index)`. */
export function indexSelect(input: Tensor, dim: number, index: Tensor): Tensor {
  return tensorArg(checksOf('indexSelect'), input, 'input').indexSelect(dim, index);
}
/** The slices along `dim`, that dimension removed (torch.unbind): `input.unbind(dim)`. */
export function unbind(input: Tensor, dim = 0): Tensor[] {
  return tensorArg(checksOf('unbind'), input, 'input').unbind(dim);
}
/** A matrix transposed, a vector as it is (torch.t): `input.t()`. */
export function t(input: Tensor): Tensor {
  return tensorArg(checksOf('t'), input, 'input').t();
}
