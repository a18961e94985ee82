// Telling a sparse COO tensor from a dense (strided) one (the addon reads the layout), and
// reading a sparse tensor's data through a dense copy.
import { native } from './native.js';
import type { Tensor } from './tensor.js';
import type { NumericArray } from './dtype.js';
import { ArgumentError } from '../util/arguments.js';

/** The layouts a tailor tensor can have (PyTorch's torch.strided and torch.sparse_coo). */
export type Layout = 'strided' | 'sparse_coo';

let toDenseOp = -1;

/** Whether the tensor behind `handle` is a sparse COO tensor (on any device). */
export function isSparseHandle(handle: number): boolean {
  return native.isSparse(handle);
}

/** Whether `t` is a sparse COO tensor. */
export function isSparseTensor(t: Tensor): boolean {
  return isSparseHandle(t.handle);
}

/** Runs `read` on a dense copy of the sparse tensor, freed before returning. */
function readDense<T>(t: Tensor, read: (dense: number) => T): T {
  if (toDenseOp < 0) toDenseOp = native.resolve('aten::to_dense', '');
  const dense = native.call(toDenseOp, t.handle) as number;
  try {
    return read(dense);
  } finally {
    native.dispose(dense);
  }
}

/** The data of a sparse tensor, read through a dense copy that is freed before returning. */
export function sparseToArray(t: Tensor): NumericArray {
  return readDense(t, (dense) => native.toArray(dense));
}

/** The value of a one-element sparse tensor, read through a dense copy. */
export function sparseItem(t: Tensor): number | boolean {
  return readDense(t, (dense) => native.item(dense));
}

/** The error of a dense-only Tensor member used on a sparse tensor, naming the remedy. */
export function sparseRefused(member: string, why: string): Error {
  return new ArgumentError(
    `Tensor.${member}: ${why} on a sparse COO tensor; convert it first with toDense() (or work on its indices() and values())`,
  );
}
