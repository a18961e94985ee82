// From a checkpoint's unpickled object to named tensors and values: the nesting (dicts, lists,
// tuples) is flattened to dotted paths, and each tensor record's view (offset, sizes, strides)
// is cut out of its storage's bytes into a new contiguous tensor. Every size is checked against
// the storage before anything is allocated, and the total the tensors take is bounded, since
// views (expanded tensors, one tensor saved under many names) can ask for more than the file
// holds.
import type { Tensor } from './tensor.js';
import { tensor } from './creation.js';
import { dispose } from './scope.js';
import type { Device } from './device.js';
import { PickleTuple } from '../util/pickle.js';
import { SkippedObject, TensorRecord } from './pytorch-pickle.js';
import { littleEndianHost, swapBytes, typedArrayFromBytes } from './tensor-bytes.js';

/** A value of a PyTorch file that is not a tensor: a Python number, string, bool, None or bytes. */
export type PytorchValue = number | bigint | string | boolean | null | Uint8Array;

/** Nesting deeper than any checkpoint has (a cycle through the memo reaches it too). */
const MAX_DEPTH = 64;
/** More dimensions than any model uses (as the safetensors reader). */
const MAX_DIMS = 32;

/** What flattening needs: the storages' bytes, the file's byte order, limits and the error. */
export interface FlattenContext {
  storageBytes: (key: string) => Uint8Array;
  bigEndian: boolean;
  device: Device;
  /** Bytes the tensors may take in all. */
  maxBytes: number;
  /** Containers and leaves visited at most (a memo reference repeated many times could multiply them). */
  maxVisits: number;
  /** Only paths under this prefix, which is taken off. */
  prefix?: string;
  fail: (message: string) => never;
}

/** The tensors and plain values of `root` under their dotted paths; on failure no tensor is left behind. */
export function flattenCheckpoint(
  root: unknown,
  context: FlattenContext,
): { tensors: Map<string, Tensor>; values: Map<string, PytorchValue>; skipped: Map<string, string> } {
  const tensors = new Map<string, Tensor>();
  const values = new Map<string, PytorchValue>();
  const skipped = new Map<string, string>();
  const { fail, prefix } = context;
  let visits = 0;
  let bytes = 0;
  const keep = (path: string): string | undefined => {
    if (prefix === undefined || prefix === '') return path;
    if (path === prefix) return '';
    return path.startsWith(`${prefix}.`) ? path.slice(prefix.length + 1) : undefined;
  };
  const claim = (path: string, name: string): void => {
    if (tensors.has(name) || values.has(name))
      fail(`two entries are both named '${path}' (a key with a dot that equals a nested path)`);
  };
  const walk = (v: unknown, path: string, depth: number): void => {
    if (++visits > context.maxVisits)
      fail(`it refers to its objects ${context.maxVisits} times or more (corrupt or hostile file?)`);
    if (depth > MAX_DEPTH) fail(`it nests deeper than ${MAX_DEPTH} levels at '${path}' (a cycle?)`);
    const child = (k: string | number): string => (path === '' ? String(k) : `${path}.${k}`);
    if (v instanceof Map) {
      for (const [k, x] of v) walk(x, child(k), depth + 1);
    } else if (Array.isArray(v) || v instanceof PickleTuple) {
      const items = Array.isArray(v) ? v : v.items;
      items.forEach((x, k) => walk(x, child(k), depth + 1));
    } else if (v instanceof TensorRecord) {
      const name = keep(path);
      if (name === undefined) return;
      claim(path, name);
      const need = v.size.reduce((a, d) => a * d, 1) * v.storage.elementBytes;
      if (bytes + need > context.maxBytes)
        fail(
          `its tensors need more than ${context.maxBytes} bytes (at '${path}'); pass a larger maxBytes if the file is trusted`,
        );
      bytes += need;
      tensors.set(name, materialize(v, path, context));
    } else if (v instanceof SkippedObject) {
      const name = keep(path);
      if (name !== undefined) skipped.set(name, v.className);
    } else if (isPlainValue(v)) {
      const name = keep(path);
      if (name === undefined) return;
      claim(path, name);
      values.set(name, v);
    } else {
      fail(`'${path}' holds an object that is neither a tensor nor a plain value (a bare storage or dtype)`);
    }
  };
  try {
    walk(root, '', 0);
  } catch (error) {
    dispose([...tensors.values()]);
    throw error;
  }
  return { tensors, values, skipped };
}

function isPlainValue(v: unknown): v is PytorchValue {
  return (
    v === null || v instanceof Uint8Array || ['number', 'bigint', 'string', 'boolean'].includes(typeof v)
  );
}

/** The tensor a record describes, as a new contiguous tensor. */
function materialize(rec: TensorRecord, path: string, context: FlattenContext): Tensor {
  const { fail } = context;
  const { size, stride, offset, storage } = rec;
  const esize = storage.elementBytes;
  if (size.length > MAX_DIMS) fail(`tensor '${path}' has ${size.length} dimensions (at most ${MAX_DIMS})`);
  let all = context.storageBytes(storage.key);
  if (all.length !== storage.numel * esize)
    fail(
      `storage '${storage.key}' of tensor '${path}' holds ${all.length} bytes, not the ${storage.numel * esize} its ${storage.dtype} elements need (truncated or corrupt file)`,
    );
  if (storage.view)
    all = all.subarray(storage.view.offset * esize, (storage.view.offset + storage.view.numel) * esize);
  const available = all.length / esize;
  const count = size.reduce((a, d) => a * d, 1);
  // the last element the view reaches: sizes and strides are non-negative (checked when read)
  let last = offset;
  for (let d = 0; d < size.length; d++) last += (size[d]! - 1) * stride[d]!;
  if (!Number.isSafeInteger(count) || (count > 0 && last >= available) || offset > available)
    fail(
      `tensor '${path}' (sizes [${size}], strides [${stride}], offset ${offset}) reaches beyond its storage of ${available} elements (corrupt file)`,
    );
  const out = new Uint8Array(count * esize);
  gather(all, out, esize, offset, size, stride);
  if (context.bigEndian === littleEndianHost) swapBytes(out, esize);
  return tensor(typedArrayFromBytes(out, storage.dtype), {
    shape: size,
    dtype: storage.dtype,
    device: context.device,
  });
}

/** Copies the elements of a strided view, in row-major order, into `out`. */
function gather(
  src: Uint8Array,
  out: Uint8Array,
  esize: number,
  offset: number,
  size: number[],
  stride: number[],
): void {
  if (out.length === 0) return;
  // contiguous (every dimension of more than one element strides as row-major): one copy
  let expected = 1;
  let contiguous = true;
  for (let d = size.length - 1; d >= 0; d--) {
    if (size[d]! !== 1 && stride[d] !== expected) contiguous = false;
    expected *= size[d]!;
  }
  if (contiguous) {
    out.set(src.subarray(offset * esize, offset * esize + out.length));
    return;
  }
  // an odometer over the indices (the last dimension moves fastest); when the last dimension
  // is dense, whole rows are copied at once
  const dims = size.length;
  const rowDense = stride[dims - 1] === 1;
  const run = rowDense ? size[dims - 1]! * esize : esize;
  const outer = rowDense ? dims - 1 : dims;
  const index = new Array<number>(outer).fill(0);
  let at = offset;
  for (let k = 0; k < out.length; k += run) {
    out.set(src.subarray(at * esize, at * esize + run), k);
    for (let d = outer - 1; d >= 0; d--) {
      if (++index[d]! < size[d]!) {
        at += stride[d]!;
        break;
      }
      at -= (size[d]! - 1) * stride[d]!;
      index[d] = 0;
    }
  }
}
