// Indexing and elementwise selection under PyTorch's names (torch.gather, torch.scatter_add,
// torch.index_fill, torch.masked_select, torch.nonzero, torch.clamp with tensor bounds,
// torch.lerp...), over libtorch's kernels so that results and gradients are PyTorch's. All of them
// return new tensors: the inputs are never changed in place.
import { Tensor, type Scalar } from './tensor.js';
import * as aten from './generated/aten.js';
import { checksOf } from '../util/arguments.js';
import { dimArg, indexArg, tensorArg, tensorOrScalarArg } from './tensor-args.js';

/** Gathers values along `dim` at the int64 `index` (torch.gather): out[i][j] = input[index[i][j]][j] for dim 0. */
export function gather(input: Tensor, dim: number, index: Tensor): Tensor {
  const c = checksOf('gather');
  tensorArg(c, input, 'input');
  return aten.gather(input, dimArg(c, dim, 'dim', input), indexArg(c, index, 'index'));
}

/** A copy of `input` with the values of `src` (a tensor or one number) written along `dim` at `index` (torch.scatter). */
export function scatter(input: Tensor, dim: number, index: Tensor, src: Tensor | Scalar): Tensor {
  const c = checksOf('scatter');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  indexArg(c, index, 'index');
  const s = tensorOrScalarArg(c, src, 'src');
  return s instanceof Tensor ? aten.scatter_src(input, d, index, s) : aten.scatter_value(input, d, index, s);
}

/** A copy of `input` with the values of `src` added along `dim` at `index`, repeats accumulating (torch.scatter_add). */
export function scatterAdd(input: Tensor, dim: number, index: Tensor, src: Tensor): Tensor {
  const c = checksOf('scatterAdd');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  return aten.scatter_add(input, d, indexArg(c, index, 'index'), tensorArg(c, src, 'src'));
}

/** How {@link scatterReduce} combines the values that land on one element. */
export type ScatterReduction = 'sum' | 'prod' | 'mean' | 'amax' | 'amin';

/**
 * A copy of `input` where the values of `src` that `index` sends to each element along `dim`
 * are combined by `reduce`, with the element's own value unless `includeSelf` is false
 * (torch.scatter_reduce).
 */
export function scatterReduce(
  input: Tensor,
  dim: number,
  index: Tensor,
  src: Tensor,
  reduce: ScatterReduction,
  options: { includeSelf?: boolean } = {},
): Tensor {
  const c = checksOf('scatterReduce');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  indexArg(c, index, 'index');
  tensorArg(c, src, 'src');
  c.oneOf(reduce, 'reduce', ['sum', 'prod', 'mean', 'amax', 'amin']);
  return aten.scatter_reduce_two(input, d, index, src, reduce, options.includeSelf ?? true);
}

/** A copy of `input` with `alpha` times the slices of `source` added at the positions `index` along `dim` (torch.index_add). */
export function indexAdd(
  input: Tensor,
  dim: number,
  index: Tensor,
  source: Tensor,
  options: { alpha?: Scalar } = {},
): Tensor {
  const c = checksOf('indexAdd');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  return aten.index_add(
    input,
    d,
    indexArg(c, index, 'index'),
    tensorArg(c, source, 'source'),
    options.alpha ?? 1,
  );
}

/** A copy of `input` with the slices at positions `index` along `dim` replaced by those of `source` (torch.index_copy). */
export function indexCopy(input: Tensor, dim: number, index: Tensor, source: Tensor): Tensor {
  const c = checksOf('indexCopy');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  return aten.index_copy(input, d, indexArg(c, index, 'index'), tensorArg(c, source, 'source'));
}

/** A copy of `input` with the slices at positions `index` along `dim` filled with `value` (torch.index_fill). */
export function indexFill(input: Tensor, dim: number, index: Tensor, value: Scalar | Tensor): Tensor {
  const c = checksOf('indexFill');
  tensorArg(c, input, 'input');
  const d = dimArg(c, dim, 'dim', input);
  indexArg(c, index, 'index');
  const v = tensorOrScalarArg(c, value, 'value');
  return v instanceof Tensor
    ? aten.index_fill_int_Tensor(input, d, index, v)
    : aten.index_fill_int_Scalar(input, d, index, v);
}

/** A copy of `input` with `value` (a number or a 0-d tensor) where the bool `mask` is true (torch.masked_fill). */
export function maskedFill(input: Tensor, mask: Tensor, value: Scalar | Tensor): Tensor {
  const c = checksOf('maskedFill');
  tensorArg(c, input, 'input');
  tensorArg(c, mask, 'mask');
  const v = tensorOrScalarArg(c, value, 'value');
  return v instanceof Tensor
    ? aten.masked_fill_Tensor(input, mask, v)
    : aten.masked_fill_Scalar(input, mask, v);
}

/** The elements where the bool `mask` (broadcast to `input`) is true, as a 1-D tensor (torch.masked_select). */
export function maskedSelect(input: Tensor, mask: Tensor): Tensor {
  const c = checksOf('maskedSelect');
  return aten.masked_select(tensorArg(c, input, 'input'), tensorArg(c, mask, 'mask'));
}

/** A copy of `input` whose elements where `mask` is true are taken in order from `source` (torch.Tensor.masked_scatter). */
export function maskedScatter(input: Tensor, mask: Tensor, source: Tensor): Tensor {
  const c = checksOf('maskedScatter');
  tensorArg(c, input, 'input');
  return aten.masked_scatter(input, tensorArg(c, mask, 'mask'), tensorArg(c, source, 'source'));
}

/** The indices of the non-zero elements, one row each ([count, ndim], int64; torch.nonzero). */
export function nonzero(input: Tensor, options?: { asTuple?: false }): Tensor;
/** The indices of the non-zero elements, one 1-D tensor per dimension (torch.nonzero(as_tuple=True)). */
export function nonzero(input: Tensor, options: { asTuple: true }): Tensor[];
/** The indices of the non-zero elements, as rows or (`asTuple`) one tensor per dimension. */
export function nonzero(input: Tensor, options: { asTuple?: boolean } = {}): Tensor | Tensor[] {
  const c = checksOf('nonzero');
  tensorArg(c, input, 'input');
  return c.object(options, 'options').asTuple === true ? aten.nonzero_numpy(input) : aten.nonzero(input);
}

/** Picks values of `input` at `indices` along `dim` (of the flattened input when null), broadcasting (torch.take_along_dim). */
export function takeAlongDim(input: Tensor, indices: Tensor, dim: number | null = null): Tensor {
  const c = checksOf('takeAlongDim');
  tensorArg(c, input, 'input');
  indexArg(c, indices, 'indices');
  return aten.take_along_dim(input, indices, dim === null ? null : dimArg(c, dim, 'dim', input));
}

/**
 * `input` clamped to [min, max] elementwise (torch.clamp): each bound a number, a tensor that
 * broadcasts, or null for none; where min > max the result is max, as in PyTorch.
 */
export function clamp(
  input: Tensor,
  min: Tensor | Scalar | null = null,
  max: Tensor | Scalar | null = null,
): Tensor {
  const c = checksOf('clamp');
  tensorArg(c, input, 'input');
  if (min !== null) tensorOrScalarArg(c, min, 'min');
  if (max !== null) tensorOrScalarArg(c, max, 'max');
  if (min === null && max === null) c.fail('min', 'a bound (min or max, or both)', min);
  const lowIsTensor = min instanceof Tensor;
  const highIsTensor = max instanceof Tensor;
  if (!lowIsTensor && !highIsTensor) return aten.clamp(input, min as Scalar | null, max as Scalar | null);
  if ((lowIsTensor || min === null) && (highIsTensor || max === null))
    return aten.clamp_Tensor(input, min as Tensor | null, max as Tensor | null);
  // One tensor and one number bound: max(input, min) and then min(., max) is clamp's result
  // (max wins where min > max) and its gradient mask.
  const low = lowIsTensor ? aten.clamp_min_Tensor(input, min) : aten.clamp_min(input, min as Scalar);
  const out = highIsTensor ? aten.clamp_max_Tensor(low, max) : aten.clamp_max(low, max as Scalar);
  low.dispose();
  return out;
}

/** input + weight * (end - input), elementwise with broadcasting; `weight` a number or a tensor (torch.lerp). */
export function lerp(input: Tensor, end: Tensor, weight: Tensor | Scalar): Tensor {
  const c = checksOf('lerp');
  tensorArg(c, input, 'input');
  tensorArg(c, end, 'end');
  const w = tensorOrScalarArg(c, weight, 'weight');
  return w instanceof Tensor ? aten.lerp_Tensor(input, end, w) : aten.lerp_Scalar(input, end, w);
}

/** sqrt(input² + other²) elementwise without overflow (torch.hypot). */
export function hypot(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('hypot');
  return aten.hypot(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}

/** The angle of the point (other, input) in (-π, π], elementwise (torch.atan2). */
export function atan2(input: Tensor, other: Tensor): Tensor {
  const c = checksOf('atan2');
  return aten.atan2(tensorArg(c, input, 'input'), tensorArg(c, other, 'other'));
}
