// A minimal unpickler for exactly what the CIFAR "python version" batches contain: a protocol-2
// pickle (written by Python 2's cPickle) of a dict with str keys, lists of ints or strs, and
// numpy uint8 arrays (numpy.core.multiarray._reconstruct + BUILD). It also accepts the
// `_codecs.encode` form Python 3 uses for bytes at protocol 2. Anything else (other globals,
// other opcodes, other protocols) is rejected with an error naming the opcode and its offset;
// nothing is ever executed.
import { InputError } from '../../util/errors.js';

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

export class PickleTuple {
  constructor(readonly items: PickleValue[]) {}
}
export class PickleGlobal {
  constructor(readonly name: string) {}
}
class PickleDtype {
  constructor(
    public code: string,
    public order = '|',
  ) {}
}
const MARK = Symbol('mark');

const ALLOWED_GLOBALS = new Set([
  'numpy.core.multiarray._reconstruct',
  'numpy._core.multiarray._reconstruct',
  'numpy.ndarray',
  'numpy.dtype',
  '_codecs.encode',
  '__builtin__.bytearray',
]);

export class PickleError extends InputError {}

type Item = PickleValue | PickleDtype | typeof MARK;

/** Unpickles `bytes`; `file` is only used in error messages. Byte strings come back as Uint8Array. */
export function unpickle(bytes: Uint8Array, file: string): PickleValue {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: Item[] = [];
  const memo = new Map<number, Item>();
  let pos = 0;
  const fail = (msg: string, at = pos): never => {
    throw new PickleError(`${file}: byte ${at}: ${msg}`);
  };
  const need = (n: number): void => {
    if (pos + n > bytes.length)
      fail(`truncated pickle: needs ${n} more bytes, file has ${bytes.length - pos}`);
  };
  const u8 = (): number => {
    need(1);
    return bytes[pos++]!;
  };
  const u16 = (): number => {
    need(2);
    const v = view.getUint16(pos, true);
    pos += 2;
    return v;
  };
  const i32 = (): number => {
    need(4);
    const v = view.getInt32(pos, true);
    pos += 4;
    return v;
  };
  const raw = (n: number): Uint8Array => {
    // A negative length would move pos backwards (a loop that never ends).
    if (!(n >= 0)) fail(`negative length ${n} (corrupt pickle)`);
    need(n);
    const out = bytes.subarray(pos, pos + n);
    pos += n;
    return out;
  };
  const line = (): string => {
    const end = bytes.indexOf(0x0a, pos);
    if (end < 0) fail('truncated pickle: unterminated text line');
    const s = Buffer.from(bytes.subarray(pos, end)).toString('latin1');
    pos = end + 1;
    return s;
  };
  const pop = (): Item => {
    if (stack.length === 0) fail('stack underflow (corrupt pickle)');
    return stack.pop()!;
  };
  const popMark = (): Item[] => {
    const k = stack.lastIndexOf(MARK);
    if (k < 0) fail('no MARK on the stack (corrupt pickle)');
    const items = stack.splice(k);
    items.shift();
    return items;
  };
  const top = (): Item => {
    if (stack.length === 0) fail('stack underflow (corrupt pickle)');
    return stack[stack.length - 1]!;
  };
  const asKey = (k: Item): string => {
    if (typeof k === 'string') return k;
    if (k instanceof Uint8Array) return Buffer.from(k).toString('latin1');
    if (typeof k === 'number') return String(k);
    return fail('dict key is not a string');
  };

  if (bytes.length < 2 || bytes[0] !== 0x80)
    fail('not a protocol-2 pickle (no PROTO opcode); expected a CIFAR python batch', 0);
  for (;;) {
    const at = pos;
    const op = u8();
    switch (op) {
      case 0x80: {
        const proto = u8();
        if (proto !== 2)
          fail(`pickle protocol ${proto}; only protocol 2 (the CIFAR python batches) is supported`, at);
        break;
      }
      case 0x2e: // STOP
        if (stack.length !== 1) fail(`STOP with ${stack.length} items on the stack`, at);
        return finish(stack[0]!, fail);
      case 0x7d: // EMPTY_DICT
        stack.push(new Map<string, PickleValue>());
        break;
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push(new PickleTuple([]));
        break;
      case 0x28: // MARK
        stack.push(MARK);
        break;
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(i32(), top());
        break;
      case 0x68: // BINGET
      case 0x6a: {
        // LONG_BINGET
        const k = op === 0x68 ? u8() : i32();
        if (!memo.has(k)) fail(`memo key ${k} not defined`, at);
        stack.push(memo.get(k)!);
        break;
      }
      case 0x55: // SHORT_BINSTRING
        stack.push(Buffer.from(raw(u8())).toString('latin1'));
        break;
      case 0x54: {
        // BINSTRING: raw bytes (the image data); kept as bytes, keys are converted when used
        const n = i32();
        if (n < 0) fail('negative BINSTRING length', at);
        stack.push(raw(n));
        break;
      }
      case 0x58: {
        // BINUNICODE
        const n = i32();
        if (n < 0) fail('negative BINUNICODE length', at);
        stack.push(Buffer.from(raw(n)).toString('utf8'));
        break;
      }
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(u16());
        break;
      case 0x4a: // BININT
        stack.push(i32());
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x85: // TUPLE1
        stack.push(new PickleTuple([pop() as PickleValue]));
        break;
      case 0x86: {
        const b = pop();
        const a = pop();
        stack.push(new PickleTuple([a as PickleValue, b as PickleValue]));
        break;
      }
      case 0x87: {
        const c = pop();
        const b = pop();
        const a = pop();
        stack.push(new PickleTuple([a as PickleValue, b as PickleValue, c as PickleValue]));
        break;
      }
      case 0x74: // TUPLE
        stack.push(new PickleTuple(popMark() as PickleValue[]));
        break;
      case 0x61: {
        // APPEND
        const v = pop();
        const list = top();
        if (!Array.isArray(list)) fail('APPEND to a non-list', at);
        (list as PickleValue[]).push(v as PickleValue);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        const list = top();
        if (!Array.isArray(list)) fail('APPENDS to a non-list', at);
        for (const v of items) (list as PickleValue[]).push(v as PickleValue);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        const d = top();
        if (!(d instanceof Map)) fail('SETITEM on a non-dict', at);
        (d as Map<string, PickleValue>).set(asKey(k), v as PickleValue);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        const d = top();
        if (!(d instanceof Map) || items.length % 2 !== 0)
          fail('SETITEMS on a non-dict or with an odd item count', at);
        for (let i = 0; i < items.length; i += 2)
          (d as Map<string, PickleValue>).set(asKey(items[i]!), items[i + 1] as PickleValue);
        break;
      }
      case 0x63: {
        // GLOBAL
        const name = `${line()}.${line()}`;
        if (!ALLOWED_GLOBALS.has(name))
          fail(`global '${name}' is not allowed (only numpy arrays, lists, ints and strings)`, at);
        stack.push(new PickleGlobal(name));
        break;
      }
      case 0x52: {
        // REDUCE
        const args = pop();
        const fn = pop();
        if (!(fn instanceof PickleGlobal) || !(args instanceof PickleTuple))
          fail('REDUCE without a global and an argument tuple', at);
        stack.push(reduce((fn as PickleGlobal).name, (args as PickleTuple).items, fail, at));
        break;
      }
      case 0x62: {
        // BUILD
        const state = pop();
        const obj = top();
        build(obj, state, fail, at);
        break;
      }
      default:
        fail(
          `unsupported pickle opcode 0x${op.toString(16).padStart(2, '0')} ('${String.fromCharCode(op)}')`,
          at,
        );
    }
  }
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

function finish(v: Item, fail: (m: string, at?: number) => never): PickleValue {
  if (v instanceof PickleDtype || v === MARK) return fail('pickle does not hold a value');
  return v as PickleValue;
}

/** A dict value as text (CIFAR label names, batch labels): accepts str and bytes. */
export function pickleText(v: PickleValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  return undefined;
}
