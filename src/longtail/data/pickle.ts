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
  const m = new Machine(bytes, file);
  if (bytes.length < 2 || bytes[0] !== 0x80)
    m.fail('not a protocol-2 pickle (no PROTO opcode); expected a CIFAR python batch', 0);
  while (m.result === undefined) {
    const at = m.pos;
    const op = m.u8();
    const handler = OPCODES.get(op);
    if (!handler)
      m.fail(
        `unsupported pickle opcode 0x${op.toString(16).padStart(2, '0')} ('${String.fromCharCode(op)}')`,
        at,
      );
    handler!(m, at);
  }
  return m.result.value;
}

/** The pickle machine: the input and its read position, the stack, the memo, and the result. */
class Machine {
  readonly stack: Item[] = [];
  readonly memo = new Map<number, Item>();
  pos = 0;
  /** Set by STOP. */
  result: { value: PickleValue } | undefined;
  private readonly view: DataView;

  constructor(
    readonly bytes: Uint8Array,
    readonly file: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  readonly fail = (msg: string, at = this.pos): never => {
    throw new PickleError(`${this.file}: byte ${at}: ${msg}`);
  };

  private need(n: number): void {
    if (this.pos + n > this.bytes.length)
      this.fail(`truncated pickle: needs ${n} more bytes, file has ${this.bytes.length - this.pos}`);
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }

  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }

  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }

  raw(n: number): Uint8Array {
    // A negative length would move pos backwards (a loop that never ends).
    if (!(n >= 0)) this.fail(`negative length ${n} (corrupt pickle)`);
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  line(): string {
    const end = this.bytes.indexOf(0x0a, this.pos);
    if (end < 0) this.fail('truncated pickle: unterminated text line');
    const s = Buffer.from(this.bytes.subarray(this.pos, end)).toString('latin1');
    this.pos = end + 1;
    return s;
  }

  pop(): Item {
    if (this.stack.length === 0) this.fail('stack underflow (corrupt pickle)');
    return this.stack.pop()!;
  }

  /** The items above the topmost MARK, which is removed with them. */
  popMark(): Item[] {
    const k = this.stack.lastIndexOf(MARK);
    if (k < 0) this.fail('no MARK on the stack (corrupt pickle)');
    const items = this.stack.splice(k);
    items.shift();
    return items;
  }

  top(): Item {
    if (this.stack.length === 0) this.fail('stack underflow (corrupt pickle)');
    return this.stack[this.stack.length - 1]!;
  }

  asKey(k: Item): string {
    if (typeof k === 'string') return k;
    if (k instanceof Uint8Array) return Buffer.from(k).toString('latin1');
    if (typeof k === 'number') return String(k);
    return this.fail('dict key is not a string');
  }
}

/** An opcode's action; `at` is the opcode's offset (for error messages). */
type Handler = (m: Machine, at: number) => void;

const pushing =
  (read: (m: Machine) => Item): Handler =>
  (m) => {
    m.stack.push(read(m));
  };

const memoGet =
  (readKey: (m: Machine) => number): Handler =>
  (m, at) => {
    const k = readKey(m);
    if (!m.memo.has(k)) m.fail(`memo key ${k} not defined`, at);
    m.stack.push(m.memo.get(k)!);
  };

const memoPut =
  (readKey: (m: Machine) => number): Handler =>
  (m) => {
    const k = readKey(m);
    m.memo.set(k, m.top());
  };

/** TUPLE1, TUPLE2, TUPLE3: the top n items as a tuple. */
const tupleOf =
  (n: number): Handler =>
  (m) => {
    const items: Item[] = [];
    for (let i = 0; i < n; i++) items.unshift(m.pop());
    m.stack.push(new PickleTuple(items as PickleValue[]));
  };

/** BINSTRING and BINUNICODE: a 4-byte length, then the bytes. */
const sized =
  (what: string, convert: (b: Uint8Array) => Item): Handler =>
  (m, at) => {
    const n = m.i32();
    if (n < 0) m.fail(`negative ${what} length`, at);
    m.stack.push(convert(m.raw(n)));
  };

function appendOne(m: Machine, at: number): void {
  const v = m.pop();
  const list = m.top();
  if (!Array.isArray(list)) m.fail('APPEND to a non-list', at);
  (list as PickleValue[]).push(v as PickleValue);
}

function appendMany(m: Machine, at: number): void {
  const items = m.popMark();
  const list = m.top();
  if (!Array.isArray(list)) m.fail('APPENDS to a non-list', at);
  for (const v of items) (list as PickleValue[]).push(v as PickleValue);
}

function setItem(m: Machine, at: number): void {
  const v = m.pop();
  const k = m.pop();
  const d = m.top();
  if (!(d instanceof Map)) m.fail('SETITEM on a non-dict', at);
  (d as Map<string, PickleValue>).set(m.asKey(k), v as PickleValue);
}

function setItems(m: Machine, at: number): void {
  const items = m.popMark();
  const d = m.top();
  if (!(d instanceof Map) || items.length % 2 !== 0)
    m.fail('SETITEMS on a non-dict or with an odd item count', at);
  for (let i = 0; i < items.length; i += 2)
    (d as Map<string, PickleValue>).set(m.asKey(items[i]!), items[i + 1] as PickleValue);
}

function global(m: Machine, at: number): void {
  const name = `${m.line()}.${m.line()}`;
  if (!ALLOWED_GLOBALS.has(name))
    m.fail(`global '${name}' is not allowed (only numpy arrays, lists, ints and strings)`, at);
  m.stack.push(new PickleGlobal(name));
}

function reduceCall(m: Machine, at: number): void {
  const args = m.pop();
  const fn = m.pop();
  if (!(fn instanceof PickleGlobal) || !(args instanceof PickleTuple))
    m.fail('REDUCE without a global and an argument tuple', at);
  m.stack.push(reduce((fn as PickleGlobal).name, (args as PickleTuple).items, m.fail, at));
}

function buildState(m: Machine, at: number): void {
  const state = m.pop();
  const obj = m.top();
  build(obj, state, m.fail, at);
}

/** The opcodes of protocol 2 that the CIFAR batches use; any other is an error. */
const OPCODES = new Map<number, Handler>([
  [
    0x80, // PROTO
    (m, at) => {
      const proto = m.u8();
      if (proto !== 2)
        m.fail(`pickle protocol ${proto}; only protocol 2 (the CIFAR python batches) is supported`, at);
    },
  ],
  [
    0x2e, // STOP
    (m, at) => {
      if (m.stack.length !== 1) m.fail(`STOP with ${m.stack.length} items on the stack`, at);
      m.result = { value: finish(m.stack[0]!, m.fail) };
    },
  ],
  [0x7d, pushing(() => new Map<string, PickleValue>())], // EMPTY_DICT
  [0x5d, pushing(() => [])], // EMPTY_LIST
  [0x29, pushing(() => new PickleTuple([]))], // EMPTY_TUPLE
  [0x28, pushing(() => MARK)], // MARK
  [0x71, memoPut((m) => m.u8())], // BINPUT
  [0x72, memoPut((m) => m.i32())], // LONG_BINPUT
  [0x68, memoGet((m) => m.u8())], // BINGET
  [0x6a, memoGet((m) => m.i32())], // LONG_BINGET
  [0x55, pushing((m) => Buffer.from(m.raw(m.u8())).toString('latin1'))], // SHORT_BINSTRING
  // BINSTRING: raw bytes (the image data); kept as bytes, keys are converted when used
  [0x54, sized('BINSTRING', (b) => b)],
  [0x58, sized('BINUNICODE', (b) => Buffer.from(b).toString('utf8'))],
  [0x4b, pushing((m) => m.u8())], // BININT1
  [0x4d, pushing((m) => m.u16())], // BININT2
  [0x4a, pushing((m) => m.i32())], // BININT
  [0x4e, pushing(() => null)], // NONE
  [0x88, pushing(() => true)], // NEWTRUE
  [0x89, pushing(() => false)], // NEWFALSE
  [0x85, tupleOf(1)], // TUPLE1
  [0x86, tupleOf(2)], // TUPLE2
  [0x87, tupleOf(3)], // TUPLE3
  [0x74, pushing((m) => new PickleTuple(m.popMark() as PickleValue[]))], // TUPLE
  [0x61, appendOne], // APPEND
  [0x65, appendMany], // APPENDS
  [0x73, setItem], // SETITEM
  [0x75, setItems], // SETITEMS
  [0x63, global], // GLOBAL
  [0x52, reduceCall], // REDUCE
  [0x62, buildState], // BUILD
]);

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
