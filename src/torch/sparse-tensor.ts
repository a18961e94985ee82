// Sparse COO tensors (PyTorch 1.13's torch.sparse_coo_tensor and the Tensor members of the sparse
// layout): creation with checked arguments, conversion both ways, and access to indices and
// values. libtorch's dispatcher computes with them already; the members here are declared on Tensor
// by module augmentation and attached to its prototype when the package's index loads, as
// tensor-methods.ts does, and each refuses a tensor of the wrong layout by name (libtorch's own
// message lists its dispatcher's backends instead).
import { Tensor } from './tensor.js';
import * as aten from './generated/aten.js';
import { tensor as fromData, type NestedNumbers } from './creation.js';
import { creationDevice, type DeviceLike } from './device.js';
import { native } from './native.js';
import { tidy } from './scope.js';
import type { DType } from './dtype.js';
import { isSparseHandle, type Layout } from './sparse-layout.js';
import { ArgumentError, checksOf, describeValue, type ArgumentChecks } from '../util/arguments.js';

declare module './tensor.js' {
  interface Tensor {
    /** Whether this is a sparse COO tensor (torch.Tensor.is_sparse). */
    readonly isSparse: boolean;
    /** 'sparse_coo' for a sparse COO tensor, else 'strided' (torch.Tensor.layout). */
    readonly layout: Layout;
    /** The number of stored entries (with duplicates, until coalesce()) of a sparse tensor (torch.Tensor._nnz()). */
    readonly nnz: number;
    /** A sparse COO copy whose first `sparseDims` dimensions (default all) are sparse (torch.Tensor.to_sparse). */
    toSparse(sparseDims?: number): Tensor;
    /** A dense copy of a sparse tensor (torch.Tensor.to_dense; differentiable); a dense tensor gives a new handle to itself. */
    toDense(): Tensor;
    /** The int64 indices [sparseDim, nnz] of a coalesced sparse tensor (torch.Tensor.indices; coalesce() first). */
    indices(): Tensor;
    /** The values [nnz, ...dense sizes] of a coalesced sparse tensor (torch.Tensor.values; coalesce() first). */
    values(): Tensor;
    /** The sparse tensor with its duplicate indices summed and the indices sorted (torch.Tensor.coalesce). */
    coalesce(): Tensor;
    /** Whether the sparse tensor's indices are known to be unique and sorted (torch.Tensor.is_coalesced). */
    isCoalesced(): boolean;
    /** The number of sparse dimensions (torch.Tensor.sparse_dim). */
    sparseDim(): number;
    /** The number of dense dimensions: those of each value (torch.Tensor.dense_dim). */
    denseDim(): number;
    /** This dense tensor's entries at the indices of the sparse `mask`, as a sparse tensor (torch.Tensor.sparse_mask). */
    sparseMask(mask: Tensor): Tensor;
  }
}

/** Options of sparseCooTensor: the values' dtype and device, and whether the result is a leaf that takes a gradient. */
export interface SparseCooOptions {
  /** The dtype of the values (default: the values' own). */
  dtype?: DType;
  /** Where the tensor lives (default: the default device). */
  device?: DeviceLike;
  /** Make the result a leaf that records operations for autograd. */
  requiresGrad?: boolean;
}

function layoutOf(t: Tensor): Layout {
  return isSparseHandle(t.handle) ? 'sparse_coo' : 'strided';
}

/** Throws unless `t` is sparse, naming the member and the remedy. */
function needSparse(t: Tensor, member: string): void {
  if (!isSparseHandle(t.handle))
    throw new ArgumentError(
      `Tensor.${member}: needs a sparse COO tensor, this one is strided (dense): make one with toSparse() or torch.sparseCooTensor()`,
    );
}

/** A Tensor argument, or nested numbers made into a tensor of `dtype` (the caller frees it). */
function tensorOrData(c: ArgumentChecks, value: unknown, name: string, dtype?: DType): Tensor {
  if (value instanceof Tensor) return value;
  if (Array.isArray(value) || ArrayBuffer.isView(value))
    return fromData(value as NestedNumbers, dtype ? { dtype } : {});
  return c.fail(name, 'a Tensor or a (nested) array of numbers', value);
}

/** Checks indices [sparseDim, nnz] against values [nnz, ...] and size; returns the size to use or null (inferred). */
function checkCoo(c: ArgumentChecks, indices: Tensor, values: Tensor, size: unknown): number[] | null {
  if (indices.dtype !== 'int64')
    throw new ArgumentError(
      `${c.fn}: indices must be int64, got ${indices.dtype}: convert them with .long()`,
    );
  if (indices.ndim !== 2)
    throw new ArgumentError(
      `${c.fn}: indices must be 2-d [sparseDim, nnz] (one column per entry), got shape [${indices.shape}]`,
    );
  const [sparseDim, nnz] = indices.shape as [number, number];
  if (values.ndim < 1 || values.shape[0] !== nnz)
    throw new ArgumentError(
      `${c.fn}: values must have one row per column of indices ([${nnz}, ...]), got shape [${values.shape}]`,
    );
  const data = indices.toArray() as BigInt64Array;
  for (let i = 0; i < data.length; i++)
    if (data[i]! < 0n)
      throw new ArgumentError(
        `${c.fn}: indices[${Math.floor(i / nnz)}][${i % nnz}] is negative (${data[i]}): sparse indices count from 0`,
      );
  if (size === undefined || size === null) return null;
  const sizes = c.array(size, 'size');
  const denseShape = values.shape.slice(1);
  if (sizes.length !== sparseDim + denseShape.length)
    throw new ArgumentError(
      `${c.fn}: size must have ${sparseDim + denseShape.length} entries (${sparseDim} sparse dimensions from indices, ` +
        `${denseShape.length} dense from values), got ${describeValue(size)}`,
    );
  sizes.forEach((s, d) => c.integer(s, `size[${d}]`, { min: 0 }));
  const checked = sizes as number[];
  for (let d = 0; d < sparseDim; d++) {
    let max = -1n;
    for (let k = 0; k < nnz; k++) if (data[d * nnz + k]! > max) max = data[d * nnz + k]!;
    if (max >= BigInt(checked[d]!))
      throw new ArgumentError(
        `${c.fn}: size[${d}] is ${checked[d]} but indices[${d}] holds ${max}: give a larger size or smaller indices`,
      );
  }
  denseShape.forEach((s, k) => {
    if (checked[sparseDim + k] !== s)
      throw new ArgumentError(
        `${c.fn}: size[${sparseDim + k}] is ${checked[sparseDim + k]} but the values' dimension ${k + 1} is ${s}: the dense sizes are the values'`,
      );
  });
  return checked;
}

/**
 * A sparse COO tensor (torch.sparse_coo_tensor): entry k of `values` [nnz, ...dense sizes] sits at
 * the index column k of `indices` (int64 [sparseDim, nnz]). Without `size`, each sparse dimension
 * is one more than its largest index. Duplicate indices are kept (their values add up:
 * coalesce() sums them).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const s = torch.sparseCooTensor([[0, 1, 1], [2, 0, 2]], [3, 4, 5], [2, 3]);
 * console.log(s.toDense().toNumbers()); // [0, 0, 3, 4, 0, 5]
 * s.dispose();
 * ```
 */
export function sparseCooTensor(
  indices: Tensor | NestedNumbers,
  values: Tensor | NestedNumbers,
  size?: number[] | null,
  options: SparseCooOptions = {},
): Tensor {
  const c = checksOf('sparseCooTensor');
  const o = c.object(options, 'options') as SparseCooOptions;
  return tidy(() => {
    const i = tensorOrData(c, indices, 'indices', 'int64');
    const given = tensorOrData(c, values, 'values');
    // libtorch's operator ignores its dtype argument: convert the values, as PyTorch's Python does
    const v = o.dtype === undefined || o.dtype === given.dtype ? given : given.to(o.dtype);
    if (isSparseHandle(i.handle) || isSparseHandle(v.handle))
      throw new ArgumentError(`${c.fn}: indices and values must be dense tensors`);
    const checked = checkCoo(c, i, v, size);
    const device = creationDevice(o.device ?? v.device);
    const out =
      checked === null
        ? aten.sparse_coo_tensor_indices(i, v, null, null, device ?? null)
        : aten.sparse_coo_tensor_indices_size(i, v, checked, null, null, device ?? null);
    if (o.requiresGrad === true) out.requiresGrad_(true);
    return out;
  });
}

// The members, by name; each takes the tensor first.
const methods: Record<string, (t: Tensor, ...rest: never[]) => unknown> = {
  toSparse(t: Tensor, sparseDims?: number): Tensor {
    if (isSparseHandle(t.handle))
      throw new ArgumentError('Tensor.toSparse: the tensor is sparse already (toDense() converts back)');
    if (sparseDims === undefined) return aten.to_sparse(t);
    checksOf('Tensor.toSparse').integer(sparseDims, 'sparseDims', { min: 0, max: t.ndim });
    return aten.to_sparse_sparse_dim(t, sparseDims);
  },
  toDense(t: Tensor): Tensor {
    return isSparseHandle(t.handle) ? aten.to_dense(t) : new Tensor(native.share(t.handle));
  },
  indices(t: Tensor): Tensor {
    needSparse(t, 'indices');
    return aten.indices(t);
  },
  values(t: Tensor): Tensor {
    needSparse(t, 'values');
    return aten.values(t);
  },
  coalesce(t: Tensor): Tensor {
    needSparse(t, 'coalesce');
    return aten.coalesce(t);
  },
  isCoalesced(t: Tensor): boolean {
    needSparse(t, 'isCoalesced');
    return aten.is_coalesced(t);
  },
  sparseDim(t: Tensor): number {
    // PyTorch 1.13 answers 0 for a dense tensor (its dimensions are all dense)
    return isSparseHandle(t.handle) ? aten.sparse_dim(t) : 0;
  },
  denseDim(t: Tensor): number {
    return isSparseHandle(t.handle) ? aten.dense_dim(t) : t.ndim;
  },
  sparseMask(t: Tensor, mask: Tensor): Tensor {
    const c = checksOf('Tensor.sparseMask');
    if (!(mask instanceof Tensor)) c.fail('mask', 'a sparse Tensor', mask);
    if (isSparseHandle(t.handle))
      throw new ArgumentError('Tensor.sparseMask: the tensor must be dense (the mask is the sparse one)');
    if (!isSparseHandle(mask.handle))
      throw new ArgumentError('Tensor.sparseMask: mask must be a sparse tensor: convert it with toSparse()');
    if (mask.shape.join() !== t.shape.join())
      throw new ArgumentError(
        `Tensor.sparseMask: mask [${mask.shape}] must have the tensor's shape [${t.shape}]`,
      );
    return aten.sparse_mask(t, mask);
  },
};

const getters: Record<string, (t: Tensor) => unknown> = {
  isSparse: (t) => isSparseHandle(t.handle),
  layout: layoutOf,
  nnz: (t) => {
    needSparse(t, 'nnz');
    return aten._nnz(t);
  },
};

for (const [name, fn] of Object.entries(methods)) {
  if (Object.prototype.hasOwnProperty.call(Tensor.prototype, name))
    throw new Error(`tailor: Tensor.${name} is already a core method; sparse-tensor.ts must not replace it`);
  Object.defineProperty(Tensor.prototype, name, {
    value: function (this: Tensor, ...rest: never[]): unknown {
      return fn(this, ...rest);
    },
    writable: true,
    configurable: true,
  });
}
for (const [name, get] of Object.entries(getters)) {
  if (Object.prototype.hasOwnProperty.call(Tensor.prototype, name))
    throw new Error(`tailor: Tensor.${name} is already a core member; sparse-tensor.ts must not replace it`);
  Object.defineProperty(Tensor.prototype, name, {
    get(this: Tensor): unknown {
      return get(this);
    },
    configurable: true,
  });
}

/** The names of the members this module attaches to Tensor (for the tests that check them all). */
export const SPARSE_TENSOR_MEMBERS: readonly string[] = [...Object.keys(methods), ...Object.keys(getters)];
