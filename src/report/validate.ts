// Type checks for what a report reads from a run's files: every field a page shows or computes
// with is checked where the file is read, so the renderers work on typed values only. A failure
// is an InputError naming the file and the dotted field.
import { InputError } from '../util/errors.js';

export type Json = Record<string, unknown>;

/** Report inputs are kilobytes to a few megabytes; anything larger is not one. */
export const MAX_RESULTS_BYTES = 256 * 1024 * 1024;

export class Fields {
  constructor(
    readonly source: string,
    readonly expected: string,
  ) {}

  fail(field: string, problem: string): never {
    throw new InputError(
      `${this.source}: ${field ? `field '${field}' ` : ''}${problem} (expected ${this.expected})`,
    );
  }

  object(v: unknown, field: string): Json {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail(field, 'is not an object');
    return v as Json;
  }

  array(v: unknown, field: string, max = 10_000_000): unknown[] {
    if (!Array.isArray(v)) this.fail(field, 'is not an array');
    if ((v as unknown[]).length > max) this.fail(field, `has more than ${max} entries`);
    return v as unknown[];
  }

  /** A number (finite unless `nonFinite`) within the bounds given. */
  number(
    v: unknown,
    field: string,
    o: { integer?: boolean; min?: number; max?: number; nonFinite?: boolean } = {},
  ): number {
    if (typeof v !== 'number' || Number.isNaN(v) || (!o.nonFinite && !Number.isFinite(v)))
      this.fail(field, `is ${describe(v)}, not a number`);
    const n = v as number;
    if (o.integer && !Number.isInteger(n)) this.fail(field, `is ${n}, not an integer`);
    if (o.min !== undefined && n < o.min) this.fail(field, `is ${n}, below ${o.min}`);
    if (o.max !== undefined && n > o.max) this.fail(field, `is ${n}, above ${o.max}`);
    return n;
  }

  numberOrNull(v: unknown, field: string, o: Parameters<Fields['number']>[2] = {}): number | null {
    return v === null ? null : this.number(v, field, o);
  }

  numbers(v: unknown, field: string, o: Parameters<Fields['number']>[2] = {}): number[] {
    return this.array(v, field).map((x, i) => this.number(x, `${field}[${i}]`, o));
  }

  string(v: unknown, field: string): string {
    if (typeof v !== 'string') this.fail(field, `is ${describe(v)}, not a string`);
    return v as string;
  }

  strings(v: unknown, field: string): string[] {
    return this.array(v, field).map((x, i) => this.string(x, `${field}[${i}]`));
  }

  boolean(v: unknown, field: string): boolean {
    if (typeof v !== 'boolean') this.fail(field, `is ${describe(v)}, not true or false`);
    return v as boolean;
  }

  optional<T>(v: unknown, check: (v: unknown) => T): T | undefined {
    return v === undefined ? undefined : check(v);
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the text '${v.slice(0, 30)}${v.length > 30 ? '...' : ''}'`;
  return typeof v === 'object' ? 'an object' : String(v);
}
