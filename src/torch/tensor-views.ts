// The Tensor methods that reshape, view, slice and select (x.reshape(...), x.permute(...),
// x.narrow(...), x.split(...)): declared on Tensor by module augmentation and attached to its
// prototype (tensor-attach.ts) when the package's index loads.
import type { Scalar, Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { split as splitChecked } from './tensor-shape.js';
import { memoryFormatCode, type MemoryFormat } from './memory-format.js';
import { attachTensorMembers } from './tensor-attach.js';
import { isSparseHandle, sparseRefused } from './sparse-layout.js';

declare module './tensor.js' {
  interface Tensor {
    /** The same elements in a new shape (one dimension may be -1); a view when possible. */
    reshape(...shape: number[]): Tensor;
    /** A view with a new shape over the same memory (the tensor must be contiguous enough). */
    view(...shape: number[]): Tensor;
    /** Flattens dimensions startDim..endDim into one. */
    flatten(startDim?: number, endDim?: number): Tensor;
    /** Reorders the dimensions (a view). */
    permute(...dims: number[]): Tensor;
    /** Swaps two dimensions (a view). */
    transpose(dim0: number, dim1: number): Tensor;
    /** Transposes a 2-D tensor (a view). */
    t(): Tensor;
    /** Inserts a dimension of size 1 at `dim` (a view). */
    unsqueeze(dim: number): Tensor;
    /** Removes dimensions of size 1 (all, or `dim`). */
    squeeze(dim?: number): Tensor;
    /** Broadcasts to a larger shape without copying (-1 keeps a dimension). */
    expand(...shape: number[]): Tensor;
    /** expand to the shape of `other`. */
    expandAs(other: Tensor): Tensor;
    /** Tiles the tensor the given number of times along each dimension (copies). */
    repeat(...repeats: number[]): Tensor;
    /**
     * A copy laid out densely in `memoryFormat` (default row-major), or this tensor's data if it
     * already is. 'channelsLast' needs a 4-D tensor (NCHW shape, NHWC storage; see {@link MemoryFormat}).
     */
    contiguous(memoryFormat?: MemoryFormat): Tensor;
    /** A copy with its own memory (differentiable). */
    clone(): Tensor;
    /** A tensor over the same data without autograd history. */
    detach(): Tensor;
    /** The slice [start, start + length) of dimension `dim` (a view). */
    narrow(dim: number, start: number, length: number): Tensor;
    /** Elements start..end (exclusive) with `step` along `dim` (a view). */
    slice(dim: number, start?: number | null, end?: number | null, step?: number): Tensor;
    /** Index `index` of dimension `dim`, removing the dimension (a view). */
    select(dim: number, index: number): Tensor;
    /** The entries of `dim` at the int64 `index` (copies). */
    indexSelect(dim: number, index: Tensor): Tensor;
    /** Gathers values along `dim` at the int64 `index` (torch.gather). */
    gather(dim: number, index: Tensor): Tensor;
    /** Replaces the elements where `mask` is true by `value`. */
    maskedFill(mask: Tensor, value: Scalar): Tensor;
    /** Splits into `chunks` nearly equal parts along `dim`. */
    chunk(chunks: number, dim?: number): Tensor[];
    /**
     * The slices along `dim`, each without that dimension (torch.unbind). Its backward is one
     * stack of the slices' gradients, where selecting each slice costs one zero-filled tensor
     * and a copy per slice.
     */
    unbind(dim?: number): Tensor[];
    /** Splits along `dim` into parts of a size (the last may be smaller) or of the listed sizes, as torch.split(this, ...). */
    split(splitSizeOrSections: number | number[], dim?: number): Tensor[];
    /** Reverses the order along the given dimensions. */
    flip(...dims: number[]): Tensor;
  }
}

attachTensorMembers('tensor-views.ts', {
  reshape(...shape: number[]): Tensor {
    try {
      return aten.reshape(this, shape);
    } catch (error) {
      // libtorch's message lists dispatcher backends: name the remedy instead
      if (isSparseHandle(this.handle)) throw sparseRefused('reshape', 'there is no reshape');
      throw error;
    }
  },
  view(...shape: number[]): Tensor {
    try {
      return aten.view(this, shape);
    } catch (error) {
      // libtorch's message lists dispatcher backends: name the remedy instead
      if (isSparseHandle(this.handle)) throw sparseRefused('view', 'there is no view');
      throw error;
    }
  },
  flatten(startDim = 0, endDim = -1): Tensor {
    return aten.flatten_using_ints(this, startDim, endDim);
  },
  permute(...dims: number[]): Tensor {
    return aten.permute(this, dims);
  },
  transpose(dim0: number, dim1: number): Tensor {
    return aten.transpose_int(this, dim0, dim1);
  },
  t(): Tensor {
    return aten.t(this);
  },
  unsqueeze(dim: number): Tensor {
    return aten.unsqueeze(this, dim);
  },
  squeeze(dim?: number): Tensor {
    return dim === undefined ? aten.squeeze(this) : aten.squeeze_dim(this, dim);
  },
  expand(...shape: number[]): Tensor {
    return aten.expand(this, shape);
  },
  expandAs(other: Tensor): Tensor {
    return aten.expand_as(this, other);
  },
  repeat(...repeats: number[]): Tensor {
    return aten.repeat(this, repeats);
  },
  contiguous(memoryFormat: MemoryFormat = 'contiguous'): Tensor {
    // The default call stays the plain one (libtorch's own default), so eager results are unchanged.
    return memoryFormat === 'contiguous'
      ? aten.contiguous(this)
      : aten.contiguous(this, memoryFormatCode(memoryFormat));
  },
  clone(): Tensor {
    return aten.clone(this);
  },
  detach(): Tensor {
    return aten.detach(this);
  },
  narrow(dim: number, start: number, length: number): Tensor {
    return aten.narrow(this, dim, start, length);
  },
  slice(dim: number, start: number | null = null, end: number | null = null, step = 1): Tensor {
    return aten.slice_Tensor(this, dim, start, end, step);
  },
  select(dim: number, index: number): Tensor {
    return aten.select_int(this, dim, index);
  },
  indexSelect(dim: number, index: Tensor): Tensor {
    return aten.index_select(this, dim, index);
  },
  gather(dim: number, index: Tensor): Tensor {
    return aten.gather(this, dim, index);
  },
  maskedFill(mask: Tensor, value: Scalar): Tensor {
    return aten.masked_fill_Scalar(this, mask, value);
  },
  chunk(chunks: number, dim = 0): Tensor[] {
    return aten.chunk(this, chunks, dim);
  },
  unbind(dim = 0): Tensor[] {
    return aten.unbind_int(this, dim);
  },
  split(splitSizeOrSections: number | number[], dim = 0): Tensor[] {
    return splitChecked(this, splitSizeOrSections, dim);
  },
  flip(...dims: number[]): Tensor {
    return aten.flip(this, dims);
  },
});
