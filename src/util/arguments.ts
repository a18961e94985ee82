// Run-time checks of the arguments of the public functions. TypeScript callers get these from the
// compiler; JavaScript callers (and values parsed from JSON) do not, and without a check a string
// where a number belongs fails deep inside with a TypeError, or worse, runs on with NaN.
import { UserError } from './errors.js';

/**
 * An invalid argument to a public function of tailor: a value of the wrong type from a JavaScript
 * caller, a number out of range, arrays of mismatched lengths. Its message names the function, the
 * argument and the value; `exitCode` is 2, like the CLI's errors.
 *
 * @example
 * ```ts
 * import { ArgumentError } from 'tailor';
 * import { inverseVarianceFusion } from 'tailor/nmr';
 * try {
 *   inverseVarianceFusion([new Float64Array(4)], [0]);
 * } catch (error) {
 *   if (error instanceof ArgumentError) console.error(error.message);
 *   // inverseVarianceFusion: sigmas[0] must be a finite number > 0, got 0
 * }
 * ```
 */
export class ArgumentError extends UserError {}

/** `value` as it reads in a message: strings quoted, the type for objects. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `'${value.length > 40 ? `${value.slice(0, 40)}...` : value}'`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (value === null) return 'null';
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  if (typeof value === 'function') return 'a function';
  return String(value);
}

/** Checks of one function's arguments; each names `fn` and the argument in its error. */
export class ArgumentChecks {
  constructor(readonly fn: string) {}

  fail(name: string, expected: string, value: unknown): never {
    throw new ArgumentError(`${this.fn}: ${name} must be ${expected}, got ${describeValue(value)}`);
  }

  /** A number; finite and within [min, max] unless told otherwise. */
  number(value: unknown, name: string, o: { min?: number; max?: number; above?: number } = {}): number {
    const range = [
      o.min !== undefined ? `>= ${o.min}` : '',
      o.above !== undefined ? `> ${o.above}` : '',
      o.max !== undefined ? `<= ${o.max}` : '',
    ]
      .filter(Boolean)
      .join(' and ');
    const expected = `a finite number${range ? ` ${range}` : ''}`;
    if (typeof value !== 'number' || !Number.isFinite(value)) this.fail(name, expected, value);
    const v = value as number;
    if (
      (o.min !== undefined && v < o.min) ||
      (o.max !== undefined && v > o.max) ||
      (o.above !== undefined && v <= o.above)
    )
      this.fail(name, expected, value);
    return v;
  }

  /** An integer within [min, max]. */
  integer(value: unknown, name: string, o: { min?: number; max?: number } = {}): number {
    const range = [o.min !== undefined ? `>= ${o.min}` : '', o.max !== undefined ? `<= ${o.max}` : '']
      .filter(Boolean)
      .join(' and ');
    if (
      typeof value !== 'number' ||
      !Number.isSafeInteger(value) ||
      (o.min !== undefined && value < o.min) ||
      (o.max !== undefined && value > o.max)
    )
      this.fail(name, `an integer${range ? ` ${range}` : ''}`, value);
    return value as number;
  }

  /** A non-empty string. */
  string(value: unknown, name: string): string {
    if (typeof value !== 'string' || value === '') this.fail(name, 'a non-empty string', value);
    return value as string;
  }

  /** One of the given strings. */
  oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[]): T {
    if (typeof value !== 'string' || !allowed.includes(value as T))
      this.fail(name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
    return value as T;
  }

  /** A plain object (options), or undefined when `optional`. */
  object(value: unknown, name: string): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value))
      this.fail(name, 'an object', value);
    return value as Record<string, unknown>;
  }

  /** An array or typed array of finite numbers, at least `minLength` long (checks every value). */
  numbers(value: unknown, name: string, o: { minLength?: number; length?: number } = {}): ArrayLike<number> {
    const ok =
      Array.isArray(value) ||
      (ArrayBuffer.isView(value) &&
        !(value instanceof DataView) &&
        !(value instanceof BigInt64Array) &&
        !(value instanceof BigUint64Array));
    if (!ok) this.fail(name, 'an array or typed array of numbers', value);
    const a = value as ArrayLike<unknown>;
    if (o.length !== undefined && a.length !== o.length) this.fail(name, `of length ${o.length}`, value);
    if (o.minLength !== undefined && a.length < o.minLength)
      this.fail(name, `at least ${o.minLength} long`, value);
    for (let i = 0; i < a.length; i++)
      if (typeof a[i] !== 'number' || !Number.isFinite(a[i]))
        this.fail(`${name}[${i}]`, 'a finite number', a[i]);
    return a as ArrayLike<number>;
  }

  /** An array (of anything: the caller checks the items), at least `minLength` long. */
  array(value: unknown, name: string, o: { minLength?: number } = {}): unknown[] {
    if (!Array.isArray(value)) this.fail(name, 'an array', value);
    const a = value as unknown[];
    if (o.minLength !== undefined && a.length < o.minLength)
      this.fail(name, `an array of at least ${o.minLength}`, value);
    return a;
  }
}

/** The checks of the function named `fn`. */
export function checksOf(fn: string): ArgumentChecks {
  return new ArgumentChecks(fn);
}
