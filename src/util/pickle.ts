// A pickle machine that runs no Python: it decodes the binary opcodes of protocols 2 to 5 that
// plain data is written with (dicts, lists, tuples, strings, bytes, numbers) into JavaScript
// values, and hands every object construction (GLOBAL, REDUCE, BUILD, NEWOBJ, persistent ids) to
// a host that recognises a fixed set of names and refuses the rest. The readers of pickled
// formats (CIFAR batches, PyTorch checkpoints) each bring a host and a narrower opcode set.
//
// Every opcode consumes at least one byte and pushes at most one item, so the stack and the memo
// stay within the input's size; lengths are checked against the bytes left before anything is
// sliced; MARKs live on their own stack, so no opcode scans the value stack.

/** A Python tuple (kept apart from lists: hosts tell call arguments from data by it). */
export class PickleTuple {
  constructor(readonly items: unknown[]) {}
}

/** Object construction, which the machine leaves to the reader of a format. */
export interface PickleHost {
  /** GLOBAL or STACK_GLOBAL: what stands for `module.name`; throws for a name the format does not allow. */
  global(module: string, name: string, at: number): unknown;
  /** REDUCE (`callable(*args)`) and NEWOBJ (`cls.__new__(cls, *args)`): the object made. */
  call(callable: unknown, args: unknown[], at: number): unknown;
  /** BUILD: sets `state` on `obj` (or ignores it). */
  build(obj: unknown, state: unknown, at: number): void;
  /** BINPERSID: the object a persistent id stands for; absent when the format has none. */
  persistentLoad?(pid: unknown, at: number): unknown;
}

/** How a reader runs the machine. */
export interface PickleOptions {
  /** Throws the reader's own error (naming the file) for `message` at byte offset `at`. */
  fail: (message: string, at: number) => never;
  /** The PROTO versions accepted (default 2 to 5). */
  protocols?: { min: number; max: number };
  /** Added to the message about an unaccepted protocol (what the format is written with). */
  protocolHint?: string;
  /** When given, only these opcodes (by pickletools name, e.g. 'BINUNICODE') are accepted. */
  opcodes?: readonly string[];
}

/** Where a dict key of another type than these fails: keys become strings, as JSON's do. */
function keyOf(k: unknown, fail: (message: string) => never): string {
  if (typeof k === 'string') return k;
  if (k instanceof Uint8Array) return Buffer.from(k).toString('latin1');
  if (typeof k === 'number' || typeof k === 'bigint') return String(k);
  if (typeof k === 'boolean') return k ? 'True' : 'False';
  return fail(
    `a dict key is a ${k === null ? 'None' : typeof k === 'object' ? 'Python object' : typeof k}, not a string or a number`,
  );
}

/** The machine's state: the input and its read position, the stack, MARKs, memo and result. */
class Machine {
  readonly stack: unknown[] = [];
  /** Stack lengths at each MARK. */
  readonly marks: number[] = [];
  readonly memo = new Map<number, unknown>();
  pos: number;
  done = false;
  private readonly view: DataView;

  constructor(
    readonly bytes: Uint8Array,
    start: number,
    readonly host: PickleHost,
    readonly options: PickleOptions,
  ) {
    this.pos = start;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  at = 0;

  fail(message: string, at = this.at): never {
    return this.options.fail(message, at);
  }

  private need(n: number): void {
    if (this.pos + n > this.bytes.length)
      this.fail(`truncated pickle: needs ${n} more bytes, ${this.bytes.length - this.pos} left`, this.pos);
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

  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }

  /** An 8-byte length; anything beyond the input fails in raw(). */
  u64(): number {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
  }

  f64be(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, false);
    this.pos += 8;
    return v;
  }

  raw(n: number, what: string): Uint8Array {
    // A negative length would move pos backwards (a loop that never ends).
    if (!(n >= 0)) this.fail(`negative ${what} length ${n} (corrupt pickle)`);
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

  push(v: unknown): void {
    this.stack.push(v);
  }

  pop(): unknown {
    if (this.stack.length <= (this.marks.at(-1) ?? 0)) this.fail('stack underflow (corrupt pickle)');
    return this.stack.pop();
  }

  top(): unknown {
    if (this.stack.length <= (this.marks.at(-1) ?? 0)) this.fail('stack underflow (corrupt pickle)');
    return this.stack[this.stack.length - 1];
  }

  /** The items above the topmost MARK, which is removed with them. */
  popMark(): unknown[] {
    const k = this.marks.pop();
    if (k === undefined) this.fail('no MARK on the stack (corrupt pickle)');
    return this.stack.splice(k!);
  }

  key(k: unknown): string {
    return keyOf(k, (m) => this.fail(m));
  }
}

/** An integer from little-endian two's complement bytes (LONG1, LONG4): a number when exact, else a bigint. */
function littleEndianInteger(b: Uint8Array): number | bigint {
  if (b.length === 0) return 0;
  let v = BigInt(`0x${Buffer.from(b).reverse().toString('hex')}`);
  if (b[b.length - 1]! & 0x80) v -= 1n << BigInt(8 * b.length);
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/** Python ints beyond 2^53 in LONG opcodes: more bytes than this is no plausible data. */
const MAX_LONG_BYTES = 1024;

type Handler = (m: Machine) => void;

const tupleOf =
  (n: number): Handler =>
  (m) => {
    const items: unknown[] = [];
    for (let i = 0; i < n; i++) items.unshift(m.pop());
    m.push(new PickleTuple(items));
  };

function asList(m: Machine, v: unknown, op: string): unknown[] {
  if (!Array.isArray(v)) m.fail(`${op} to something that is not a list`);
  return v as unknown[];
}

function asDict(m: Machine, v: unknown, op: string): Map<string, unknown> {
  if (!(v instanceof Map)) m.fail(`${op} on something that is not a dict`);
  return v as Map<string, unknown>;
}

/** APPENDS and ADDITEMS: the items above the MARK go to the list below it (a loop: a spread of a long run would overflow the call stack). */
function extend(m: Machine, op: string): void {
  const items = m.popMark();
  const list = asList(m, m.top(), op);
  for (const v of items) list.push(v);
}

function memoPut(m: Machine, k: number): void {
  m.memo.set(k, m.top());
}

function memoGet(m: Machine, k: number): void {
  if (!m.memo.has(k)) m.fail(`memo key ${k} not defined (corrupt pickle)`);
  m.push(m.memo.get(k));
}

function long(m: Machine, n: number): void {
  if (n > MAX_LONG_BYTES) m.fail(`an integer of ${n} bytes (corrupt pickle?)`);
  m.push(littleEndianInteger(m.raw(n, 'LONG')));
}

function callWith(m: Machine, op: string): void {
  const args = m.pop();
  const fn = m.pop();
  if (!(args instanceof PickleTuple)) m.fail(`${op} without an argument tuple (corrupt pickle)`);
  m.push(m.host.call(fn, (args as PickleTuple).items, m.at));
}

/** The opcodes, by byte, with their pickletools names. */
const OPCODES = new Map<number, [string, Handler]>([
  [0x80, ['PROTO', protocol]],
  [0x2e, ['STOP', stop]],
  [0x95, ['FRAME', (m) => void m.u64()]], // a framing hint: the frame's bytes follow inline
  [0x28, ['MARK', (m) => void m.marks.push(m.stack.length)]],
  [0x30, ['POP', (m) => (m.stack.length === m.marks.at(-1) ? m.marks.pop() : m.pop())]],
  [0x31, ['POP_MARK', (m) => void m.popMark()]],
  [0x32, ['DUP', (m) => m.push(m.top())]],
  [0x7d, ['EMPTY_DICT', (m) => m.push(new Map<string, unknown>())]],
  [0x5d, ['EMPTY_LIST', (m) => m.push([])]],
  [0x29, ['EMPTY_TUPLE', (m) => m.push(new PickleTuple([]))]],
  [0x8f, ['EMPTY_SET', (m) => m.push([])]], // sets come back as lists
  [0x90, ['ADDITEMS', (m) => extend(m, 'ADDITEMS')]],
  [0x91, ['FROZENSET', (m) => m.push(m.popMark())]],
  [0x6c, ['LIST', (m) => m.push(m.popMark())]],
  [0x74, ['TUPLE', (m) => m.push(new PickleTuple(m.popMark()))]],
  [0x85, ['TUPLE1', tupleOf(1)]],
  [0x86, ['TUPLE2', tupleOf(2)]],
  [0x87, ['TUPLE3', tupleOf(3)]],
  [0x64, ['DICT', (m) => m.push(setPairs(m, new Map<string, unknown>(), m.popMark(), 'DICT'))]],
  [0x71, ['BINPUT', (m) => memoPut(m, m.u8())]],
  [0x72, ['LONG_BINPUT', (m) => memoPut(m, m.u32())]],
  [0x94, ['MEMOIZE', (m) => memoPut(m, m.memo.size)]],
  [0x68, ['BINGET', (m) => memoGet(m, m.u8())]],
  [0x6a, ['LONG_BINGET', (m) => memoGet(m, m.u32())]],
  // Python 2 str: a short one is text (names, labels), a long one bytes (CIFAR's pixels)
  [0x55, ['SHORT_BINSTRING', (m) => m.push(Buffer.from(m.raw(m.u8(), 'string')).toString('latin1'))]],
  [0x54, ['BINSTRING', (m) => m.push(m.raw(m.i32(), 'BINSTRING'))]],
  [0x8c, ['SHORT_BINUNICODE', (m) => m.push(utf8(m.raw(m.u8(), 'string')))]],
  [0x58, ['BINUNICODE', (m) => m.push(utf8(m.raw(m.i32(), 'BINUNICODE')))]],
  [0x8d, ['BINUNICODE8', (m) => m.push(utf8(m.raw(m.u64(), 'BINUNICODE8')))]],
  [0x43, ['SHORT_BINBYTES', (m) => m.push(new Uint8Array(m.raw(m.u8(), 'bytes')))]],
  [0x42, ['BINBYTES', (m) => m.push(new Uint8Array(m.raw(m.u32(), 'BINBYTES')))]],
  [0x8e, ['BINBYTES8', (m) => m.push(new Uint8Array(m.raw(m.u64(), 'BINBYTES8')))]],
  [0x96, ['BYTEARRAY8', (m) => m.push(new Uint8Array(m.raw(m.u64(), 'BYTEARRAY8')))]],
  [0x4b, ['BININT1', (m) => m.push(m.u8())]],
  [0x4d, ['BININT2', (m) => m.push(m.u16())]],
  [0x4a, ['BININT', (m) => m.push(m.i32())]],
  [0x8a, ['LONG1', (m) => long(m, m.u8())]],
  [0x8b, ['LONG4', (m) => long(m, m.i32())]],
  [0x47, ['BINFLOAT', (m) => m.push(m.f64be())]],
  [0x4e, ['NONE', (m) => m.push(null)]],
  [0x88, ['NEWTRUE', (m) => m.push(true)]],
  [0x89, ['NEWFALSE', (m) => m.push(false)]],
  [0x61, ['APPEND', (m) => ((v) => void asList(m, m.top(), 'APPEND').push(v))(m.pop())]],
  [0x65, ['APPENDS', (m) => extend(m, 'APPENDS')]],
  [0x73, ['SETITEM', setItem]],
  [
    0x75,
    [
      'SETITEMS',
      (m) => ((items) => setPairs(m, asDict(m, m.top(), 'SETITEMS'), items, 'SETITEMS'))(m.popMark()),
    ],
  ],
  [0x63, ['GLOBAL', (m) => m.push(m.host.global(m.line(), m.line(), m.at))]],
  [0x93, ['STACK_GLOBAL', stackGlobal]],
  [0x52, ['REDUCE', (m) => callWith(m, 'REDUCE')]],
  [0x81, ['NEWOBJ', (m) => callWith(m, 'NEWOBJ')]],
  [0x62, ['BUILD', (m) => ((state) => m.host.build(m.top(), state, m.at))(m.pop())]],
  [0x51, ['BINPERSID', binpersid]],
]);

function utf8(b: Uint8Array): string {
  return Buffer.from(b).toString('utf8');
}

function protocol(m: Machine): void {
  const proto = m.u8();
  const { min, max } = m.options.protocols ?? { min: 2, max: 5 };
  if (proto < min || proto > max)
    m.fail(
      `pickle protocol ${proto}; only protocol ${min === max ? min : `${min} to ${max}`}${m.options.protocolHint ?? ''} is supported`,
    );
}

function stop(m: Machine): void {
  if (m.marks.length > 0 || m.stack.length !== 1)
    m.fail(`STOP with ${m.stack.length} items and ${m.marks.length} marks on the stack (corrupt pickle)`);
  m.done = true;
}

function setItem(m: Machine): void {
  const v = m.pop();
  const k = m.pop();
  asDict(m, m.top(), 'SETITEM').set(m.key(k), v);
}

function setPairs(m: Machine, d: Map<string, unknown>, items: unknown[], op: string): Map<string, unknown> {
  if (items.length % 2 !== 0) m.fail(`${op} with an odd number of items (corrupt pickle)`);
  for (let i = 0; i < items.length; i += 2) d.set(m.key(items[i]), items[i + 1]);
  return d;
}

function stackGlobal(m: Machine): void {
  const name = m.pop();
  const module = m.pop();
  if (typeof module !== 'string' || typeof name !== 'string')
    m.fail('STACK_GLOBAL without a module and a name (corrupt pickle)');
  m.push(m.host.global(module as string, name as string, m.at));
}

function binpersid(m: Machine): void {
  const pid = m.pop();
  if (!m.host.persistentLoad) m.fail('a persistent id, which this format does not use');
  m.push(m.host.persistentLoad!(pid, m.at));
}

/**
 * Runs one pickle from byte `start` of `bytes` to its STOP, with `host` building the objects:
 * the value and the offset after STOP (several pickles may follow one another). Dicts come back
 * as Maps with string keys (numbers are written in decimal), lists and sets as arrays, tuples as
 * {@link PickleTuple}, str as strings, bytes as Uint8Arrays, ints as numbers (bigints beyond
 * 2^53), None as null. Unknown opcodes, truncation and malformed structure fail through
 * `options.fail`.
 */
export function runPickle(
  bytes: Uint8Array,
  host: PickleHost,
  options: PickleOptions,
  start = 0,
): { value: unknown; end: number } {
  const m = new Machine(bytes, start, host, options);
  const allowed = options.opcodes && new Set(options.opcodes);
  while (!m.done) {
    m.at = m.pos;
    if (m.pos >= bytes.length) m.fail('truncated pickle: it ends before its STOP opcode', m.pos);
    const op = m.u8();
    const entry = OPCODES.get(op);
    if (!entry || (allowed && !allowed.has(entry[0])))
      m.fail(
        `unsupported pickle opcode 0x${op.toString(16).padStart(2, '0')} (${entry ? entry[0] : `'${String.fromCharCode(op)}'`})`,
      );
    entry![1](m);
  }
  return { value: m.stack[0], end: m.pos };
}
