// Config schemas are zod schemas (the parsed output is the config's type); this module turns
// zod's issues into tailor's errors: the file, the dotted path of the field, and for an unknown
// key or value the closest valid one. It also bounds what a hostile file can make the checker do:
// nesting depth before JSON.parse, key length and edit distance in the spelling suggestion.
import { z } from 'zod';
import { InputError } from '../../util/errors.js';

/** A config that cannot be read or used: names the file, the dotted path of the field and the problem. */
export class ConfigError extends InputError {
  constructor(
    readonly file: string,
    readonly path: string,
    detail: string,
  ) {
    super(`${file}: ${path ? `${path}: ` : ''}${detail}`);
  }
}

/** Deeper JSON than this is no config (ours nest 4 levels); checked before parsing. */
export const MAX_DEPTH = 32;
/** Keys longer than this get no spelling suggestion and are shown shortened. */
export const MAX_KEY_LENGTH = 64;

/**
 * Edit distance counting a swap of two neighbouring letters as one edit (a common typo), stopping
 * once it exceeds `bound` (returns bound + 1 then): a misspelling is a few edits away, so a long
 * key costs a few rows, not length squared.
 */
export function levenshtein(a: string, b: string, bound = Infinity): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > bound) return bound + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1])
        v = Math.min(v, prev2[j - 2]! + 1);
      row.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > bound) return bound + 1;
    prev2 = prev;
    prev = row;
  }
  return Math.min(prev[y.length]!, bound + 1);
}

/** The closest candidate to word, if it is close enough to be a plausible misspelling. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  if (word.length > MAX_KEY_LENGTH) return undefined;
  const bound = Math.max(2, Math.ceil(word.length / 3));
  let best: string | undefined;
  let bestDistance = bound + 1;
  for (const c of candidates) {
    const d = levenshtein(word, c, bound);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best;
}

export function suggestion(word: string, candidates: Iterable<string>): string {
  const list = [...candidates];
  const near = closest(word, list);
  return near ? `; did you mean '${near}'?` : `; valid: ${list.join(', ')}`;
}

/** A key or value as shown in a message: long ones are shortened. */
export function shown(word: string): string {
  return word.length > MAX_KEY_LENGTH
    ? `${word.slice(0, MAX_KEY_LENGTH)}… (${word.length} characters)`
    : word;
}

/**
 * Rejects JSON text nested deeper than maxDepth, with its line and column, before anything
 * recursive (JSON.parse, the error locator, the schema) sees it.
 */
export function checkDepth(text: string, file: string, maxDepth = MAX_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) {
        const before = text.slice(0, i);
        const line = before.split('\n').length;
        const column = i - before.lastIndexOf('\n');
        throw new ConfigError(`${file}:${line}:${column}`, '', `nested deeper than ${maxDepth} levels`);
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `string ${JSON.stringify(shown(value))}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

/** The input at a path of issue (own properties only, so `__proto__` is data, not the prototype). */
function at(value: unknown, path: PropertyKey[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, key))
      return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

function dotted(base: string, path: PropertyKey[]): string {
  let s = base;
  for (const key of path) {
    if (typeof key === 'number') s += `[${key}]`;
    else s += s ? `.${shown(String(key))}` : shown(String(key));
  }
  return s;
}

type Issue = z.core.$ZodIssue;

function detail(issue: Issue, value: unknown): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.message.startsWith('unknown key') ? issue.message : 'unknown key';
    case 'invalid_type':
      if (value === undefined) return 'missing required field';
      if (issue.expected === 'int' && typeof value === 'number') return `expected an integer, got ${value}`;
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describe(value)}`;
    case 'invalid_value': {
      const values = issue.values.map(String);
      if (typeof value === 'string') return `unknown value '${shown(value)}'${suggestion(value, values)}`;
      return `expected one of ${values.join(', ')}, got ${describe(value)}`;
    }
    case 'invalid_union':
      if ((issue as { note?: string }).note === 'No matching discriminator') {
        const options = ((issue as { options?: unknown[] }).options ?? []).map(String);
        return typeof value === 'string'
          ? `unknown value '${shown(value)}'${suggestion(value, options)}`
          : `expected one of ${options.join(', ')}, got ${describe(value)}`;
      }
      return issue.message.startsWith('expected ')
        ? `${issue.message}, got ${describe(value)}`
        : `no accepted form matches ${describe(value)}`;
    case 'too_small':
      if (issue.origin === 'array') return `needs at least ${String(issue.minimum)} entries`;
      return `must be ${issue.inclusive === false ? '>' : '>='} ${String(issue.minimum)}, got ${String(value)}`;
    case 'too_big':
      if (issue.origin === 'array') return `takes at most ${String(issue.maximum)} entries`;
      return `must be ${issue.inclusive === false ? '<' : '<='} ${String(issue.maximum)}, got ${String(value)}`;
    default:
      return issue.message;
  }
}

/**
 * Parses value with schema; the first problem is a ConfigError naming file and dotted path (base
 * is the path of value inside the file). An unknown key is reported before anything else in the
 * same object, so a misspelled required key reads as the misspelling it is.
 */
export function parseWith<T>(schema: z.ZodType<T>, value: unknown, file: string, base = ''): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const issue = issues.find((i) => i.code === 'unrecognized_keys') ?? issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
  throw new ConfigError(file, dotted(base, path), detail(issue, at(value, issue.path)));
}

/**
 * A strict object: unknown keys (including `__proto__`, `constructor`, `toString`) are errors
 * naming the closest valid key.
 */
export function obj<T extends z.core.$ZodLooseShape>(fields: T) {
  const keys = Object.keys(fields);
  return z.strictObject(fields, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown key${suggestion(String(issue.keys[0]), keys)}`
        : undefined,
  });
}

/** A union that reports one `expected ...` line rather than each option's failure. */
export function oneOf<T extends readonly [z.ZodType, ...z.ZodType[]]>(options: T, expected: string) {
  return z.union(options, { error: () => `expected ${expected}` });
}

export const num = (doc?: string, extra: { min?: number; max?: number } = {}) => {
  let s = z.number();
  if (extra.min !== undefined) s = s.min(extra.min);
  if (extra.max !== undefined) s = s.max(extra.max);
  return (doc ? s.describe(doc) : s).optional();
};
export const int = (doc?: string, min = 0) => {
  const s = z.int().min(min);
  return (doc ? s.describe(doc) : s).optional();
};
export const bool = (doc?: string) => (doc ? z.boolean().describe(doc) : z.boolean()).optional();
export const text = (doc?: string) => (doc ? z.string().describe(doc) : z.string()).optional();
export const oneOfValues = <const V extends readonly [string, ...string[]]>(values: V, doc?: string) =>
  (doc ? z.enum(values).describe(doc) : z.enum(values)).optional();
