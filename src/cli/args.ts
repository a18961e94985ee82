// Command-line values: numbers, lists, ranges and preferences, parsed the same way by every
// command, with one message shape: `--flag needs <what>, got '<text>'`.
import { CliError } from './errors.js';

export interface NumberRule {
  integer?: boolean;
  min?: number;
  max?: number;
  /** Strictly below this (a fraction in [0, 1): `{ min: 0, below: 1 }`). */
  below?: number;
  /** Strictly greater than 0. */
  positive?: boolean;
  /** An integer power of two (FFT sizes). */
  powerOfTwo?: boolean;
}

/** Most entries a list or range flag expands to (a real one has a handful). */
export const MAX_LIST = 10_000;

const shown = (text: string) => (text.length > 100 ? `${text.slice(0, 100)}…` : text);

function describe(rule: NumberRule): string {
  const kind = rule.integer ? 'integer' : 'number';
  const { min, max, below } = rule;
  if (rule.powerOfTwo) return `a power of two${min !== undefined ? ` >= ${min}` : ''}`;
  if (rule.positive)
    return max !== undefined
      ? `${rule.integer ? 'an integer' : 'a number'} in (0, ${max}]`
      : `a positive ${kind}`;
  if (below !== undefined)
    return min !== undefined ? `a ${kind} in [${min}, ${below})` : `a ${kind} < ${below}`;
  if (min !== undefined && max !== undefined)
    return `${rule.integer ? 'an integer' : 'a number'} in [${min}, ${max}]`;
  if (min === 0) return `a non-negative ${kind}`;
  if (min === 1 && rule.integer) return 'a positive integer';
  if (min !== undefined) return `${rule.integer ? 'an integer' : 'a number'} >= ${min}`;
  if (max !== undefined) return `${rule.integer ? 'an integer' : 'a number'} <= ${max}`;
  return rule.integer ? 'an integer' : 'a number';
}

function isPowerOfTwo(v: number): boolean {
  if (!Number.isSafeInteger(v) || v < 1) return false;
  let x = v;
  while (x % 2 === 0) x /= 2;
  return x === 1;
}

function parseOne(flag: string, text: string, rule: NumberRule, what = describe(rule)): number {
  const v = Number(text);
  if (
    text.trim() === '' ||
    !Number.isFinite(v) ||
    (rule.integer && !Number.isSafeInteger(v)) ||
    (rule.min !== undefined && v < rule.min) ||
    (rule.positive && !(v > 0)) ||
    (rule.max !== undefined && v > rule.max) ||
    (rule.below !== undefined && !(v < rule.below)) ||
    (rule.powerOfTwo && !isPowerOfTwo(v))
  )
    throw new CliError(`${flag} needs ${what}, got '${shown(text)}'`);
  return v;
}

/** A number flag; undefined when absent. */
export function numberArg(flag: string, text: string | undefined, rule: NumberRule = {}): number | undefined {
  return text === undefined ? undefined : parseOne(flag, text, rule);
}

/** A number flag with a default. */
export function numberOr(
  flag: string,
  text: string | undefined,
  fallback: number,
  rule: NumberRule = {},
): number {
  return text === undefined ? fallback : parseOne(flag, text, rule);
}

/** A number flag that must be given (`help` names where to look). */
export function requiredNumber(
  flag: string,
  text: string | undefined,
  rule: NumberRule = {},
  help = '',
): number {
  if (text === undefined || text === '')
    throw new CliError(`${flag} is required${help ? `\n\n${help}` : ''}`);
  return parseOne(flag, text, rule);
}

/** `a,b,c` as trimmed non-empty strings (undefined when absent). */
export function listArg(flag: string, text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const items = text
    .split(',', MAX_LIST + 1)
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length > MAX_LIST) throw new CliError(`${flag} takes at most ${MAX_LIST} entries`);
  return items;
}

/** `a,b,c` as numbers; `length` (when given) is the number of entries it must have. */
export function numberListArg(
  flag: string,
  text: string | undefined,
  rule: NumberRule = {},
  length?: number,
): number[] | undefined {
  const items = listArg(flag, text);
  if (items === undefined) return undefined;
  const what = `${length ? `${length} ` : ''}comma-separated values, each ${describe(rule)}`;
  if (items.length === 0 || (length !== undefined && items.length !== length))
    throw new CliError(`${flag} needs ${what}, got '${shown(text!)}'`);
  return items.map((s) => parseOne(flag, s, rule, what));
}

/** Whole numbers as one (`3`), a list (`1,2,4`) or a range (`1..9`). */
export function rangeListArg(
  flag: string,
  text: string,
  rule: NumberRule = { integer: true, min: 1 },
): number[] {
  const what = `${describe({ ...rule, integer: true })}, a list 1,2,4 or a range 1..9`;
  const range = /^\s*(\d+)\s*\.\.\s*(\d+)\s*$/.exec(text);
  if (!range) return numberListArg(flag, text, { ...rule, integer: true })!;
  const lo = parseOne(flag, range[1]!, { ...rule, integer: true }, what);
  const hi = parseOne(flag, range[2]!, { ...rule, integer: true }, what);
  if (hi < lo) throw new CliError(`${flag} range '${shown(text)}' is empty (write low..high)`);
  if (hi - lo + 1 > MAX_LIST)
    throw new CliError(`${flag} range '${shown(text)}' has more than ${MAX_LIST} values`);
  return Array.from({ length: hi - lo + 1 }, (_, j) => lo + j);
}

/** Each entry one of `choices` (or 'all' for every choice when allowAll). */
export function choiceListArg<C extends string>(
  flag: string,
  text: string,
  choices: readonly C[],
  allowAll = false,
): C[] {
  if (allowAll && text.trim() === 'all') return [...choices];
  const items = listArg(flag, text)!;
  for (const item of items)
    if (!(choices as readonly string[]).includes(item))
      throw new CliError(
        `${flag}: '${shown(item)}' is not one of ${allowAll ? 'all, ' : ''}${choices.join(', ')}`,
      );
  return items as C[];
}
