// A seeded mutator of real-format seed files: byte-level edits (bit flips, boundary integers,
// inserted, deleted, repeated and spliced chunks, truncation), text edits (numbers replaced by
// boundary values, long runs, repeated lines, markup) and, for JSON, structural edits (a value
// replaced by another type, a huge number, a deep or long array, markup). Input i of a campaign
// depends only on (campaign seed, target, i), so any finding can be replayed alone.
import { Rng } from '../../src/util/rng.js';

export type SeedKind = 'binary' | 'text' | 'json';

/** Mutated inputs are capped at this size (a bigger file proves nothing more). */
export const MAX_INPUT_BYTES = 2 * 1024 * 1024;

/** Markup that must never reach a report unescaped. */
export const MARKUP = '<x-fuzz onmouseover=alert(1)>';

const BYTES = [0x00, 0x01, 0x0a, 0x20, 0x2d, 0x30, 0x39, 0x7f, 0x80, 0xfe, 0xff];
const INT32 = [0, 1, -1, 2, 255, 256, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, -0x80000000, 1e6, 3072];
const INT64 = [0n, 1n, -1n, 2n ** 31n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)];
const NUMBER_TEXT = [
  '-1',
  '0',
  '-0',
  '1',
  '2',
  '0.5',
  '1e20',
  '1e308',
  '-1e308',
  '1e400',
  '1e-320',
  'NaN',
  'Infinity',
  '-Infinity',
  '2147483648',
  '4294967296',
  '9007199254740993',
  '99999999999999999999',
  '0x10',
  '1.5.5',
  '',
];
const JSON_VALUES: (() => unknown)[] = [
  () => null,
  () => true,
  () => -1,
  () => 0,
  () => 1e308,
  () => 1e20,
  () => -2147483649,
  () => 0.5,
  () => '',
  () => MARKUP,
  () => `"></script>${MARKUP}`,
  () => 'x'.repeat(100_000),
  () => [],
  () => ({}),
  () => [1, 2, 3],
  () => ['a', null, {}],
  () => new Array(200_000).fill(0),
  () => nest(2000),
  () => ({ __proto__: { polluted: true }, constructor: 1, toString: 2 }),
];

function nest(depth: number): unknown {
  let v: unknown = 0;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)]!;
}

/** A chunk length biased to small values. */
function chunkLength(rng: Rng, max: number): number {
  if (max <= 0) return 0;
  const bound = Math.min(max, pick(rng, [1, 2, 4, 8, 64, 1024, max]));
  return 1 + rng.int(bound);
}

type Op = (b: Uint8Array, rng: Rng, donors: readonly Uint8Array[]) => Uint8Array;

const byteOps: Op[] = [
  // flip one to eight bits
  (b, rng) => {
    if (b.length === 0) return b;
    const out = b.slice();
    for (let k = 1 + rng.int(8); k > 0; k--) out[rng.int(out.length)]! ^= 1 << rng.int(8);
    return out;
  },
  // a boundary byte
  (b, rng) => {
    if (b.length === 0) return b;
    const out = b.slice();
    out[rng.int(out.length)] = pick(rng, BYTES);
    return out;
  },
  // a boundary 32-bit integer, either byte order, often in the header
  (b, rng) => {
    if (b.length < 4) return b;
    const out = b.slice();
    const at = rng.uniform() < 0.5 ? rng.int(Math.min(out.length - 3, 64)) : rng.int(out.length - 3);
    new DataView(out.buffer).setInt32(at, pick(rng, INT32) | 0, rng.uniform() < 0.5);
    return out;
  },
  // a boundary 64-bit integer
  (b, rng) => {
    if (b.length < 8) return b;
    const out = b.slice();
    const at = rng.uniform() < 0.5 ? rng.int(Math.min(out.length - 7, 16)) : rng.int(out.length - 7);
    new DataView(out.buffer).setBigInt64(at, pick(rng, INT64), rng.uniform() < 0.7);
    return out;
  },
  // insert random bytes
  (b, rng) => {
    const at = rng.int(b.length + 1);
    const n = chunkLength(rng, 256);
    const ins = new Uint8Array(n).map(() => rng.int(256));
    return concat(b.subarray(0, at), ins, b.subarray(at));
  },
  // delete a range
  (b, rng) => {
    if (b.length === 0) return b;
    const at = rng.int(b.length);
    const n = chunkLength(rng, b.length - at);
    return concat(b.subarray(0, at), b.subarray(at + n));
  },
  // repeat a chunk many times
  (b, rng) => {
    if (b.length === 0) return b;
    const at = rng.int(b.length);
    const chunk = b.subarray(at, at + chunkLength(rng, Math.min(64, b.length - at)));
    const times = pick(rng, [2, 16, 1000, 100_000]);
    const reps = new Uint8Array(Math.min(chunk.length * times, MAX_INPUT_BYTES));
    for (let i = 0; i < reps.length; i += chunk.length) reps.set(chunk.subarray(0, reps.length - i), i);
    return concat(b.subarray(0, at), reps, b.subarray(at));
  },
  // truncate
  (b, rng) => b.subarray(0, rng.int(b.length + 1)),
  // splice a chunk of another seed (or of itself) over a position
  (b, rng, donors) => {
    const donor = donors.length > 0 ? pick(rng, donors) : b;
    if (donor.length === 0 || b.length === 0) return b;
    const from = rng.int(donor.length);
    const chunk = donor.subarray(from, from + chunkLength(rng, donor.length - from));
    const at = rng.int(b.length);
    return concat(b.subarray(0, at), chunk, b.subarray(Math.min(b.length, at + chunk.length)));
  },
];

// Text edits work on latin1 strings: every byte maps to one character and back unchanged.
const decode = (b: Uint8Array): string =>
  Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
const latin1 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'latin1'));

const textOps: ((s: string, rng: Rng) => string)[] = [
  // a number replaced by a boundary value
  (s, rng) => {
    const matches = [...s.matchAll(/[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g)];
    if (matches.length === 0) return s;
    const m = pick(rng, matches);
    return s.slice(0, m.index) + pick(rng, NUMBER_TEXT) + s.slice(m.index! + m[0].length);
  },
  // a long run of one character (comment signs, digits, separators, letters)
  (s, rng) => {
    const at = rng.int(s.length + 1);
    const ch = pick(rng, ['#', '9', ' ', ',', '"', 'a', '$', '=', '\n', '(', '@', 'J', 's', '<']);
    return s.slice(0, at) + ch.repeat(pick(rng, [100, 10_000, 300_000])) + s.slice(at);
  },
  // a line repeated
  (s, rng) => {
    const lines = s.split('\n');
    const k = rng.int(lines.length);
    const times = Math.min(pick(rng, [2, 100, 10_000]), Math.floor(MAX_INPUT_BYTES / (lines[k]!.length + 1)));
    lines.splice(k, 0, ...new Array<string>(times).fill(lines[k]!));
    return lines.join('\n');
  },
  // a line deleted
  (s, rng) => {
    const lines = s.split('\n');
    lines.splice(rng.int(lines.length), 1);
    return lines.join('\n');
  },
  // two lines swapped
  (s, rng) => {
    const lines = s.split('\n');
    const a = rng.int(lines.length);
    const b = rng.int(lines.length);
    [lines[a], lines[b]] = [lines[b]!, lines[a]!];
    return lines.join('\n');
  },
  // markup inserted
  (s, rng) => {
    const at = rng.int(s.length + 1);
    return s.slice(0, at) + MARKUP + s.slice(at);
  },
];

function jsonPaths(v: unknown, path: (string | number)[] = [], out: (string | number)[][] = []) {
  if (out.length > 5000) return out;
  out.push(path);
  if (Array.isArray(v)) {
    const step = Math.max(1, Math.floor(v.length / 50));
    for (let i = 0; i < v.length; i += step) jsonPaths(v[i], [...path, i], out);
  } else if (v && typeof v === 'object') {
    for (const k of Object.keys(v)) jsonPaths((v as Record<string, unknown>)[k], [...path, k], out);
  }
  return out;
}

function jsonMutation(text: string, rng: Rng): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const paths = jsonPaths(value);
  for (let k = 1 + rng.int(3); k > 0; k--) {
    const path = pick(rng, paths);
    if (path.length === 0) {
      value = pick(rng, JSON_VALUES)();
      continue;
    }
    let parent: unknown = value;
    for (const p of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)?.[p];
    if (!parent || typeof parent !== 'object') continue;
    const key = path[path.length - 1]!;
    const container = parent as Record<string | number, unknown>;
    const r = rng.uniform();
    if (r < 0.15) {
      if (Array.isArray(container)) container.splice(Number(key), 1);
      else delete container[key];
    } else if (r < 0.25 && typeof container[key] === 'number') {
      container[key] = -(container[key] as number) || -1;
    } else if (r < 0.3 && typeof container[key] === 'string') {
      container[key] = `${container[key] as string}${MARKUP}`;
    } else {
      container[key] = pick(rng, JSON_VALUES)();
    }
  }
  // JSON.stringify cannot express a __proto__ own key from the literal above; write it by text.
  return JSON.stringify(value);
}

/** A token of the format (an opcode with a boundary length, a keyword, a huge count) inserted or written over. */
function tokenEdit(b: Uint8Array, rng: Rng, dictionary: readonly string[]): Uint8Array {
  const token = latin1(pick(rng, dictionary));
  // Text formats: often at a line start, where keywords and records begin.
  let at = rng.int(b.length + 1);
  if (rng.uniform() < 0.5) {
    const nl = b.lastIndexOf(0x0a, at - 1);
    at = nl + 1;
  }
  return rng.uniform() < 0.5
    ? concat(b.subarray(0, at), token, b.subarray(at))
    : concat(b.subarray(0, at), token, b.subarray(Math.min(b.length, at + token.length)));
}

/** One mutated input: 1 to 4 stacked edits of the seed, chosen by `rng`. */
export function mutate(
  seed: Uint8Array,
  kind: SeedKind,
  rng: Rng,
  donors: readonly Uint8Array[] = [],
  dictionary: readonly string[] = [],
): Uint8Array {
  let b = seed;
  for (let k = 1 + rng.int(4); k > 0; k--) {
    if (dictionary.length > 0 && rng.uniform() < 0.25) {
      b = tokenEdit(b, rng, dictionary);
      continue;
    }
    const r = rng.uniform();
    if (kind === 'json' && r < 0.5) {
      const m = jsonMutation(Buffer.from(b).toString('utf8'), rng);
      if (m !== undefined) {
        b = new Uint8Array(Buffer.from(m, 'utf8'));
        continue;
      }
    }
    if (kind !== 'binary' && r < 0.8) b = latin1(pick(rng, textOps)(decode(b), rng));
    else b = pick(rng, byteOps)(b, rng, donors);
    if (b.length > MAX_INPUT_BYTES) b = b.subarray(0, MAX_INPUT_BYTES);
  }
  return b;
}
