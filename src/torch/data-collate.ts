// default_collate (torch.utils.data): a batch's items merged into one value of the same structure,
// tensors and numbers stacked along a new first dimension; and the walk over the tensors inside an
// item, which the loader uses to free what a batch did not take over.
import { Tensor } from './tensor.js';
import { stack, tensor } from './creation.js';
import { TYPED_ARRAYS, type NumericArray } from './dtype.js';
import { tidy } from './scope.js';
import { ArgumentError } from '../util/arguments.js';

/**
 * The type {@link defaultCollate} makes of items of type T: a tensor, number, boolean or typed
 * array becomes one tensor, a string an array of strings, and arrays (tuples) and plain objects
 * keep their structure, each field collated.
 */
export type Collated<T> = T extends Tensor
  ? Tensor
  : T extends number | boolean | NumericArray
    ? Tensor
    : T extends string
      ? string[]
      : T extends readonly unknown[]
        ? { -readonly [K in keyof T]: Collated<T[K]> }
        : T extends object
          ? { [K in keyof T]: Collated<T[K]> }
          : never;

/**
 * Merges a batch's items into one value, as torch.utils.data.default_collate:
 *
 * - tensors of one shape `[...s]` are stacked into one tensor `[n, ...s]` (different shapes are an
 *   error naming the item and both shapes; pass a `collate` function to pad or keep them apart);
 * - numbers become a tensor `[n]`: int64 when every one is an integer (within 2^53), float64
 *   otherwise, as Python's ints and floats do (so a real-valued target that happens to be whole in
 *   every item of a batch comes out int64: return such values as tensors or a Float64Array);
 * - booleans become a bool tensor `[n]`, strings stay an array of the n strings;
 * - typed arrays (Float32Array, Float64Array, Int32Array, BigInt64Array, Uint8Array, Int8Array,
 *   Int16Array) of one length `m` become one tensor `[n, m]` of their dtype, as default_collate
 *   turns numpy arrays into tensors (one copy, no tensor per item);
 * - arrays (tuples) of one length are collated position by position, plain objects with the same
 *   keys key by key, at any depth.
 *
 * Anything else (null, Maps, class instances other than Tensor, mixed kinds) is an error naming
 * its place (`items[3].label`). The new tensors are the caller's (or the open scope's); the items
 * are left as they are. Tensors go on their own device, the others on the default device.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const items = [0, 1, 2].map((i) => ({ x: torch.full([2, 3], i), label: i, name: `s${i}` }));
 * const batch = torch.data.defaultCollate(items);
 * console.log(batch.x.shape, batch.label.dtype, batch.name); // [3, 2, 3] int64 ['s0', 's1', 's2']
 * torch.dispose([items, batch]);
 * ```
 */
export function defaultCollate<T>(items: readonly T[]): Collated<T> {
  if (!Array.isArray(items) || items.length === 0)
    throw new ArgumentError(
      `defaultCollate: items must be a non-empty array of a batch's items, got ${Array.isArray(items) ? 'an empty array' : typeof items}`,
    );
  // On an error half-way, the tensors already made for other fields are freed.
  return tidy(() => collate(items, '')) as Collated<T>;
}

function kindOf(value: unknown): string {
  if (value instanceof Tensor) return 'tensor';
  if (ArrayBuffer.isView(value)) return TYPED_ARRAYS.some((T) => value instanceof T) ? 'typed' : 'other';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string')
    return typeof value;
  if (value !== null && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto === Object.prototype || proto === null) return 'object';
  }
  return 'other';
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (typeof value === 'object') return `an instance of ${value.constructor?.name ?? 'an unnamed class'}`;
  return `a ${typeof value}`;
}

// `field` is where the values sit inside each item ('' for the items themselves, '[1].x' deeper).
/** Deeper nesting than any batch has: an item that refers to itself. */
const MAX_DEPTH = 64;

function collate(items: readonly unknown[], field: string, depth = 0): unknown {
  const first = items[0];
  const kind = kindOf(first);
  const at = (i: number) => `items[${i}]${field}`;
  if (depth > MAX_DEPTH)
    throw new ArgumentError(
      `defaultCollate: items[0] is nested deeper than ${MAX_DEPTH} levels (does an item contain itself?)`,
    );
  if (kind === 'other')
    throw new ArgumentError(
      `defaultCollate: ${at(0)} is ${describe(first)}; an item is collated from tensors, numbers, booleans, strings, typed arrays, arrays and plain objects (pass a collate function for others)`,
    );
  items.forEach((item, i) => {
    const k = kindOf(item);
    if (k !== kind)
      throw new ArgumentError(
        `defaultCollate: ${at(i)} is ${k === 'other' ? describe(item) : `a ${k}`} and ${at(0)} a ${kind}; every item needs the same structure`,
      );
  });
  switch (kind) {
    case 'tensor': {
      const tensors = items as Tensor[];
      const shape = tensors[0]!.shape;
      tensors.forEach((t, i) => {
        if (t.isDisposed) throw new ArgumentError(`defaultCollate: ${at(i)} is a disposed tensor`);
        const s = t.shape;
        if (s.length !== shape.length || s.some((d, j) => d !== shape[j]))
          throw new ArgumentError(
            `defaultCollate: ${at(i)} has shape [${s.join(', ')}] and ${at(0)} [${shape.join(', ')}]; stacking needs one shape (pass a collate function that pads them)`,
          );
      });
      return stack(tensors, 0);
    }
    case 'number': {
      const numbers = items as number[];
      if (numbers.every((v) => Number.isSafeInteger(v)))
        return tensor(BigInt64Array.from(numbers, (v) => BigInt(v)));
      return tensor(Float64Array.from(numbers));
    }
    case 'boolean':
      return tensor(items as boolean[]);
    case 'string':
      return [...(items as string[])];
    case 'typed': {
      const arrays = items as NumericArray[];
      const Type = TYPED_ARRAYS.find((T) => first instanceof T)!;
      const m = arrays[0]!.length;
      arrays.forEach((a, i) => {
        if (!(a instanceof Type))
          throw new ArgumentError(
            `defaultCollate: ${at(i)} is a ${a.constructor.name} and ${at(0)} a ${Type.name}; every item needs the same type`,
          );
        if (a.length !== m)
          throw new ArgumentError(
            `defaultCollate: ${at(i)} has length ${a.length} and ${at(0)} ${m}; stacking needs one length`,
          );
      });
      const all = new Type(arrays.length * m);
      // Each item is the same typed-array class as `all`, so the element-wise set cannot fail.
      arrays.forEach((a, i) => (all as { set(a: ArrayLike<unknown>, at: number): void }).set(a, i * m));
      return tensor(all, { shape: [arrays.length, m] });
    }
    case 'array': {
      const arrays = items as unknown[][];
      const m = arrays[0]!.length;
      arrays.forEach((a, i) => {
        if (a.length !== m)
          throw new ArgumentError(
            `defaultCollate: ${at(i)} has ${a.length} fields and ${at(0)} ${m}; every item needs the same length`,
          );
      });
      return Array.from({ length: m }, (_, j) =>
        collate(
          arrays.map((a) => a[j]),
          `${field}[${j}]`,
          depth + 1,
        ),
      );
    }
    default: {
      const objects = items as Record<string, unknown>[];
      const keys = Object.keys(objects[0]!);
      objects.forEach((o, i) => {
        const own = Object.keys(o);
        const missing = keys.find((k) => !Object.hasOwn(o, k));
        const extra = own.find((k) => !Object.hasOwn(objects[0]!, k));
        if (missing !== undefined || extra !== undefined)
          throw new ArgumentError(
            `defaultCollate: ${at(i)} ${missing !== undefined ? `lacks the key '${missing}'` : `has the key '${extra}'`} that ${at(0)} ${missing !== undefined ? 'has' : 'lacks'}; every item needs the same keys`,
          );
      });
      const out: Record<string, unknown> = {};
      for (const k of keys)
        out[k] = collate(
          objects.map((o) => o[k]),
          `${field}.${k}`,
          depth + 1,
        );
      return out;
    }
  }
}

/** Calls fn on every tensor in value: arrays, Sets, Maps and plain objects are searched. */
export function forEachTensor(value: unknown, fn: (t: Tensor) => void, seen = new Set<unknown>()): void {
  if (value === null || typeof value !== 'object' || seen.has(value)) return;
  seen.add(value);
  if (value instanceof Tensor) fn(value);
  else if (Array.isArray(value) || value instanceof Set) for (const v of value) forEachTensor(v, fn, seen);
  else if (value instanceof Map) for (const v of value.values()) forEachTensor(v, fn, seen);
  else if (kindOf(value) === 'object') for (const v of Object.values(value)) forEachTensor(v, fn, seen);
}

/**
 * Frees the tensors in `items` that `batch` does not hold: what the collate function stacked
 * (copied) is no longer needed, what it passed through (a list of tensors) now belongs to the batch.
 */
export function disposeUnused(items: unknown, batch: unknown): void {
  const held = new Set<Tensor>();
  forEachTensor(batch, (t) => held.add(t));
  forEachTensor(items, (t) => {
    if (!held.has(t) && !t.isDisposed) t.dispose();
  });
}
