// The unpickler for exactly what the CIFAR "python version" batches contain: a protocol-2 pickle
// (written by Python 2's cPickle) of a dict with str keys, lists of ints or strs, and numpy uint8
// arrays (numpy.core.multiarray._reconstruct + BUILD). It also accepts the `_codecs.encode` form
// Python 3 uses for bytes at protocol 2. The opcodes run on the shared pickle machine
// (util/pickle.ts); anything else (other globals, other opcodes, other protocols) is rejected
// with an error naming the opcode and its offset; nothing is ever executed.
import { InputError } from '../../util/errors.js';
import { PickleTuple, runPickle, type PickleHost } from '../../util/pickle.js';

export { PickleTuple };

/** A numpy array as stored in the pickle: shape, dtype string ('|u1', '<i8', ...), raw bytes. */
export interface PickledArray {
  kind: 'ndarray';
  shape: number[];
  dtype: string;
  fortranOrder: boolean;
  data: Uint8Array;
}

export type PickleValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | PickleValue[]
  | PickleTuple
  | Map<string, PickleValue>
  | PickledArray
  | PickleGlobal;

export class PickleGlobal {
  constructor(readonly name: string) {}
}
class PickleDtype {
  constructor(
    public code: string,
    public order = '|',
  ) {}
}

const ALLOWED_GLOBALS = new Set([
  'numpy.core.multiarray._reconstruct',
  'numpy._core.multiarray._reconstruct',
  'numpy.ndarray',
  'numpy.dtype',
  '_codecs.encode',
  '__builtin__.bytearray',
]);

export class PickleError extends InputError {}

type Item = PickleValue | PickleDtype;

/** The opcodes the CIFAR batches are written with (Python 2's cPickle and Python 3 at protocol 2). */
const CIFAR_OPCODES = [
  'PROTO',
  'STOP',
  'EMPTY_DICT',
  'EMPTY_LIST',
  'EMPTY_TUPLE',
  'MARK',
  'BINPUT',
  'LONG_BINPUT',
  'BINGET',
  'LONG_BINGET',
  'SHORT_BINSTRING',
  'BINSTRING',
  'BINUNICODE',
  'BININT1',
  'BININT2',
  'BININT',
  'NONE',
  'NEWTRUE',
  'NEWFALSE',
  'TUPLE1',
  'TUPLE2',
  'TUPLE3',
  'TUPLE',
  'APPEND',
  'APPENDS',
  'SETITEM',
  'SETITEMS',
  'GLOBAL',
  'REDUCE',
  'BUILD',
] as const;

/** Unpickles `bytes`; `file` is only used in error messages. Byte strings come back as Uint8Array. */
export function unpickle(bytes: Uint8Array, file: string): PickleValue {
  const fail = (msg: string, at = 0): never => {
    throw new PickleError(`${file}: byte ${at}: ${msg}`);
  };
  if (bytes.length < 2 || bytes[0] !== 0x80)
    fail('not a protocol-2 pickle (no PROTO opcode); expected a CIFAR python batch', 0);
  const host: PickleHost = {
    global: (module, name, at) => {
      const qualified = `${module}.${name}`;
      if (!ALLOWED_GLOBALS.has(qualified))
        fail(`global '${qualified}' is not allowed (only numpy arrays, lists, ints and strings)`, at);
      return new PickleGlobal(qualified);
    },
    call: (fn, args, at) => {
      if (!(fn instanceof PickleGlobal)) return fail('REDUCE without a global', at);
      return reduce(fn.name, args as PickleValue[], fail, at);
    },
    build: (obj, state, at) => build(obj as Item, state as Item, fail, at),
  };
  const { value } = runPickle(bytes, host, {
    fail,
    protocols: { min: 2, max: 2 },
    protocolHint: ' (the CIFAR python batches)',
    opcodes: CIFAR_OPCODES,
  });
  if (value instanceof PickleDtype) fail('pickle does not hold a value');
  return value as PickleValue;
}

function reduce(fn: string, args: PickleValue[], fail: (m: string, at?: number) => never, at: number): Item {
  if (fn.endsWith('._reconstruct')) {
    // _reconstruct(ndarray, (0,), b'b'): an empty array whose state BUILD fills in
    return {
      kind: 'ndarray',
      shape: [0],
      dtype: '|u1',
      fortranOrder: false,
      data: new Uint8Array(0),
    } satisfies PickledArray;
  }
  if (fn === 'numpy.dtype') {
    const code = args[0];
    if (typeof code !== 'string') return fail('numpy.dtype with a non-string code', at);
    return new PickleDtype(code);
  }
  if (fn === '_codecs.encode') {
    // Python 3 writes bytes at protocol 2 as _codecs.encode(text, 'latin1')
    const [text, encoding] = args;
    if (typeof text !== 'string' || (encoding !== 'latin1' && encoding !== 'latin-1'))
      return fail('unsupported _codecs.encode call', at);
    return new Uint8Array(Buffer.from(text, 'latin1'));
  }
  if (fn === '__builtin__.bytearray') return new Uint8Array(0);
  return fail(`cannot call ${fn}`, at);
}

function build(obj: Item, state: Item, fail: (m: string, at?: number) => never, at: number): void {
  if (obj instanceof PickleDtype) {
    // dtype state: (version, byteorder, subarray, names, fields, elsize, alignment, flags)
    if (state instanceof PickleTuple && typeof state.items[1] === 'string') obj.order = state.items[1];
    return;
  }
  if (obj && typeof obj === 'object' && 'kind' in obj && obj.kind === 'ndarray') {
    // ndarray state: (version, shape, dtype, is_fortran, raw data)
    if (!(state instanceof PickleTuple) || state.items.length !== 5)
      return fail('ndarray state is not a 5-tuple', at);
    const [, shape, dtype, fortran, data] = state.items;
    if (!(shape instanceof PickleTuple) || !shape.items.every((d) => typeof d === 'number'))
      return fail('ndarray shape is not a tuple of ints', at);
    if (!((dtype as unknown) instanceof PickleDtype)) return fail('ndarray dtype missing', at);
    const bytes = typeof data === 'string' ? new Uint8Array(Buffer.from(data, 'latin1')) : data;
    if (!(bytes instanceof Uint8Array))
      return fail('ndarray data is not a byte string (object arrays are not supported)', at);
    const d = dtype as unknown as PickleDtype;
    obj.shape = shape.items as number[];
    obj.dtype = `${d.order}${d.code}`;
    obj.fortranOrder = fortran === true;
    obj.data = bytes;
    return;
  }
  fail('BUILD on an object that is neither an ndarray nor a dtype', at);
}

/** A dict value as text (CIFAR label names, batch labels): accepts str and bytes. */
export function pickleText(v: PickleValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return undefined;
}
