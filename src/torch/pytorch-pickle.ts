// The objects of a PyTorch checkpoint's pickle, built without Python: the pickle machine
// (util/pickle.ts) decodes the data, and this host recognises only the globals a state dict and
// its training checkpoint use (OrderedDict, the tensor and parameter rebuilders, the typed
// storage classes, torch.Size, torch.device, set, bytes, numpy scalars). Any other global (a
// model class, os.system) is refused by name when it is read, so nothing in a file is ever
// called. Tensors stay records (storage reference, offset, sizes, strides) until the file's
// storages are read.
import type { DType } from './dtype.js';
import { halfBitsToFloat32 } from './half-bits.js';
import { PickleTuple, type PickleHost } from '../util/pickle.js';

/** The typed storage classes of torch.save, by their global name. */
export const STORAGE_TYPES: ReadonlyMap<string, { dtype: DType; bytes: number }> = new Map([
  ['torch.FloatStorage', { dtype: 'float32', bytes: 4 }],
  ['torch.DoubleStorage', { dtype: 'float64', bytes: 8 }],
  ['torch.HalfStorage', { dtype: 'float16', bytes: 2 }],
  ['torch.BFloat16Storage', { dtype: 'bfloat16', bytes: 2 }],
  ['torch.LongStorage', { dtype: 'int64', bytes: 8 }],
  ['torch.IntStorage', { dtype: 'int32', bytes: 4 }],
  ['torch.ShortStorage', { dtype: 'int16', bytes: 2 }],
  ['torch.CharStorage', { dtype: 'int8', bytes: 1 }],
  ['torch.ByteStorage', { dtype: 'uint8', bytes: 1 }],
  ['torch.BoolStorage', { dtype: 'bool', bytes: 1 }],
]);

/** A global the host allows, as it stands on the pickle stack. */
class AllowedGlobal {
  constructor(readonly name: string) {}
}

/** One storage a tensor refers to: its key in the file, element type and, for a legacy view, the elements it covers. */
export interface StorageRef {
  key: string;
  dtype: DType;
  elementBytes: number;
  /** Elements of the storage the file declares. */
  numel: number;
  /** A legacy storage view: the first element and the count within the root storage. */
  view?: { offset: number; numel: number };
}

/** A tensor as the pickle describes it; its bytes are read once the storages are. */
export class TensorRecord {
  constructor(
    readonly storage: StorageRef,
    readonly offset: number,
    readonly size: number[],
    readonly stride: number[],
  ) {}
}

/** numpy.dtype(code) with its byte order, set by BUILD. */
class NumpyDtype {
  order = '=';
  constructor(readonly code: string) {}
}

/**
 * An object of a class the host does not allow, kept inert when the reader skips such objects:
 * calling it, or building it from its state, makes another inert object and runs nothing.
 */
export class SkippedObject {
  constructor(readonly className: string) {}
}

/** Pickle's generic constructors, whose first argument names the class of the object made. */
const CONSTRUCTORS = new Set(['copyreg._reconstructor', 'copy_reg._reconstructor', 'copyreg.__newobj__']);

/**
 * Builds the host; `fail` throws the reader's error, `storages` collects every storage a
 * persistent id declares. With `skipObjects`, globals other than a state dict's become inert
 * {@link SkippedObject}s instead of errors.
 */
export function torchPickleHost(
  fail: (message: string, at: number) => never,
  storages: Map<string, StorageRef>,
  skipObjects = false,
): PickleHost {
  const int = (v: unknown, what: string, at: number): number => {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      fail(`${what} is not a non-negative integer (corrupt file)`, at);
    return v as number;
  };
  const ints = (v: unknown, what: string, at: number): number[] => {
    if (!(v instanceof PickleTuple)) return fail(`${what} is not a tuple (corrupt file)`, at);
    return v.items.map((d) => int(d, what, at));
  };
  return {
    global(module, name, at) {
      const qualified = `${module}.${name}`;
      if (!ALLOWED.has(qualified) && !STORAGE_TYPES.has(qualified)) {
        if (skipObjects) return new SkippedObject(qualified);
        fail(refusal(qualified), at);
      }
      return new AllowedGlobal(qualified);
    },
    call(fn, args, at) {
      if (fn instanceof SkippedObject)
        return CONSTRUCTORS.has(fn.className) && args[0] instanceof SkippedObject ? args[0] : fn;
      if (!(fn instanceof AllowedGlobal))
        return fail('a call of something that is not a global (corrupt file)', at);
      switch (fn.name) {
        case 'collections.OrderedDict':
          return orderedDict(args, fail, at);
        case 'torch._utils._rebuild_tensor':
        case 'torch._utils._rebuild_tensor_v2': {
          const [storage, offset, size, stride] = args;
          if (!isStorageRef(storage)) return fail(`${fn.name} without a storage (corrupt file)`, at);
          const sizes = ints(size, 'a tensor size', at);
          const strides = ints(stride, 'a tensor stride', at);
          if (sizes.length !== strides.length)
            fail(`a tensor has ${sizes.length} sizes but ${strides.length} strides (corrupt file)`, at);
          return new TensorRecord(storage, int(offset, 'a storage offset', at), sizes, strides);
        }
        case 'torch._utils._rebuild_parameter':
        case 'torch._utils._rebuild_parameter_with_state':
          // requires_grad, hooks and state do not matter to a loaded weight
          if (!(args[0] instanceof TensorRecord))
            return fail(`${fn.name} without a tensor (corrupt file)`, at);
          return args[0];
        case 'torch.Size':
          return new PickleTuple(ints(args[0], 'torch.Size', at));
        case 'builtins.set':
        case '__builtin__.set':
          if (args.length === 0) return [];
          if (!Array.isArray(args[0]))
            return fail('set() of something that is not a list (corrupt file)', at);
          return [...(args[0] as unknown[])];
        case 'builtins.bytes':
        case '__builtin__.bytes':
          // Python 3 writes b'' at protocol 2 as bytes()
          if (args.length !== 0) return fail('bytes() with arguments (corrupt file)', at);
          return new Uint8Array(0);
        case 'torch.device': {
          // torch.device('cuda') or ('cuda', 0): its name, as a string
          const [type, index] = args;
          if (typeof type !== 'string' || (index !== undefined && typeof index !== 'number'))
            return fail('torch.device of something that is not a device name (corrupt file)', at);
          return index === undefined ? type : `${type}:${index}`;
        }
        case '_codecs.encode': {
          // Python 3 writes bytes at protocol 2 as _codecs.encode(text, 'latin1')
          const [text, encoding] = args;
          if (typeof text !== 'string' || (encoding !== 'latin1' && encoding !== 'latin-1'))
            return fail('an unsupported _codecs.encode call (corrupt file)', at);
          return new Uint8Array(Buffer.from(text, 'latin1'));
        }
        case 'numpy.dtype':
          if (typeof args[0] !== 'string') return fail('numpy.dtype of something that is not a string', at);
          return new NumpyDtype(args[0]);
        case 'numpy.core.multiarray.scalar':
        case 'numpy._core.multiarray.scalar':
          return numpyScalar(args, fail, at);
        default:
          return fail(`${fn.name} cannot be called (corrupt file)`, at);
      }
    },
    build(obj, state, at) {
      if (obj instanceof SkippedObject) return;
      // An OrderedDict's attributes (a state dict's _metadata: layer versions) are not weights.
      if (obj instanceof Map && (state instanceof Map || state === null || state instanceof PickleTuple))
        return;
      if (obj instanceof NumpyDtype && state instanceof PickleTuple) {
        // numpy.dtype state: (version, byteorder, subarray, names, fields, elsize, alignment, flags)
        if (typeof state.items[1] === 'string') obj.order = state.items[1];
        return;
      }
      fail('a BUILD on an object that is neither a dict nor a numpy dtype (corrupt file)', at);
    },
    persistentLoad(pid, at) {
      const items = pid instanceof PickleTuple ? pid.items : [];
      if (items[0] === 'module' && skipObjects) return new SkippedObject('torch.nn.Module');
      if (items[0] === 'module')
        fail(
          'it holds a whole nn.Module object (torch.save(model)), which cannot be read without running its Python code',
          at,
        );
      const [tag, type, key, , numel, view] = items;
      if (tag !== 'storage' || !(type instanceof AllowedGlobal) || typeof key !== 'string')
        return fail('a persistent id that is not a storage (corrupt file)', at);
      const kind = STORAGE_TYPES.get(type.name);
      if (!kind) return fail(`a storage of type ${type.name} (corrupt file)`, at);
      const ref: StorageRef = {
        key,
        dtype: kind.dtype,
        elementBytes: kind.bytes,
        numel: int(numel, 'a storage size', at),
      };
      const known = storages.get(key);
      if (known && known.numel * known.elementBytes !== ref.numel * ref.elementBytes)
        fail(`storage '${key}' is declared with two different sizes (corrupt file)`, at);
      if (!known) storages.set(key, ref);
      if (view instanceof PickleTuple) {
        // legacy storage views: (view key, first element, element count) within the root storage
        const [, offset, count] = view.items;
        const v = { offset: int(offset, 'a view offset', at), numel: int(count, 'a view size', at) };
        if (v.offset + v.numel > ref.numel)
          fail(`a view beyond the end of storage '${key}' (corrupt file)`, at);
        return { ...ref, view: v };
      }
      return ref;
    },
  };
}

const ALLOWED = new Set([
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_parameter',
  'torch._utils._rebuild_parameter_with_state',
  'torch.Size',
  'torch.device',
  'builtins.bytes',
  '__builtin__.bytes',
  'builtins.set',
  '__builtin__.set',
  '_codecs.encode',
  'numpy.dtype',
  'numpy.core.multiarray.scalar',
  'numpy._core.multiarray.scalar',
]);

/** Why a global is refused, with what the file holds when the name says it. */
function refusal(name: string): string {
  const model =
    name.startsWith('torch.nn.') || name.startsWith('__main__.') || name.startsWith('torchvision.models.');
  return (
    `it refers to the Python global '${name}', which is not read: only tensors, state dicts and plain ` +
    `values (numbers, strings, lists, dicts) are, and nothing in a file is run` +
    (model
      ? ` (the file holds a model object, from torch.save(model), rather than its state dict)`
      : '; pass skipObjects to read the rest of the file without such objects')
  );
}

function isStorageRef(v: unknown): v is StorageRef {
  return typeof v === 'object' && v !== null && 'key' in v && 'elementBytes' in v;
}

function orderedDict(
  args: unknown[],
  fail: (m: string, at: number) => never,
  at: number,
): Map<string, unknown> {
  const d = new Map<string, unknown>();
  if (args.length === 0) return d;
  // OrderedDict([(key, value), ...]), as older pickles write it
  if (!Array.isArray(args[0])) return fail('OrderedDict of something that is not a list of pairs', at);
  for (const pair of args[0] as unknown[]) {
    if (!(pair instanceof PickleTuple) || pair.items.length !== 2 || typeof pair.items[0] !== 'string')
      return fail('OrderedDict of something that is not a list of (name, value) pairs', at);
    d.set(pair.items[0], pair.items[1]);
  }
  return d;
}

/** numpy.core.multiarray.scalar(dtype, bytes): a number (bigint beyond 2^53) or a boolean. */
function numpyScalar(
  args: unknown[],
  fail: (m: string, at: number) => never,
  at: number,
): number | bigint | boolean {
  const [dtype, data] = args;
  if (!(dtype instanceof NumpyDtype) || !(data instanceof Uint8Array))
    return fail('a numpy scalar without a dtype and bytes (corrupt file)', at);
  const code = dtype.code.replace(/^[<>=|]/, '');
  const size = Number(code.slice(1));
  if (code === '?' || code === 'b1') {
    if (data.length !== 1) fail('a numpy bool that is not one byte (corrupt file)', at);
    return data[0] !== 0;
  }
  if (!/^[fiu][1248]$/.test(code) || data.length !== size)
    return fail(
      `a numpy scalar of dtype '${dtype.code}' (only bool, int, uint and float scalars are read)`,
      at,
    );
  const bytes = new Uint8Array(data);
  // numpy writes its native order ('=' or '<' on every machine PyTorch runs on) or states it
  if (dtype.order === '>' || dtype.code.startsWith('>')) bytes.reverse();
  const view = new DataView(bytes.buffer);
  const exact = (v: bigint): number | bigint => (v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : v);
  switch (code) {
    case 'f2':
      return halfBitsToFloat32(view.getUint16(0, true));
    case 'f4':
      return view.getFloat32(0, true);
    case 'f8':
      return view.getFloat64(0, true);
    case 'i1':
      return view.getInt8(0);
    case 'u1':
      return view.getUint8(0);
    case 'i2':
      return view.getInt16(0, true);
    case 'u2':
      return view.getUint16(0, true);
    case 'i4':
      return view.getInt32(0, true);
    case 'u4':
      return view.getUint32(0, true);
    case 'i8':
      return exact(view.getBigInt64(0, true));
    case 'u8':
      return exact(view.getBigUint64(0, true));
  }
  return fail(`a numpy scalar of dtype '${dtype.code}'`, at);
}
