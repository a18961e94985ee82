// The benchmarks' option values, checked as the CLI checks its flags (src/cli/args.ts): a bad
// value ends the run with `tailor: bench NAME: --flag needs ..., got '...'` (bench/lib/user-errors.ts),
// never a NaN in a table, an empty run or a loop that never ends.
import { choiceListArg, numberArg, numberListArg, type NumberRule } from '../../src/cli/args.js';
import { CliError } from '../../src/cli/errors.js';

const COUNT: NumberRule = { integer: true, min: 1 };

/** `--flag`'s whole number >= 1 (a count, a size, a number of threads). */
export function count(flag: string, text: string): number {
  return numberArg(`--${flag}`, text, COUNT)!;
}

/** `--flag`'s whole number >= 1, or undefined when the option was not given. */
export function optionalCount(flag: string, text: string | undefined): number | undefined {
  return numberArg(`--${flag}`, text, COUNT);
}

/** `--flag`'s number under `rule` (`{ min: 0 }`, `{ positive: true }`, ...). */
export function number(flag: string, text: string, rule: NumberRule): number {
  return numberArg(`--${flag}`, text, rule)!;
}

/** `--flag`'s comma list of whole numbers >= 1. */
export function counts(flag: string, text: string): number[] {
  return numberListArg(`--${flag}`, text, COUNT)!;
}

/** `--flag`'s comma list, each entry one of `choices`. */
export function choices<C extends string>(flag: string, text: string, allowed: readonly C[]): C[] {
  const items = choiceListArg(`--${flag}`, text, allowed);
  if (items.length === 0) throw new CliError(`--${flag} needs one or more of ${allowed.join(', ')}`);
  return items;
}

/** `--flag`'s value, one of `choices`. */
export function choice<C extends string>(flag: string, text: string, allowed: readonly C[]): C {
  if (!(allowed as readonly string[]).includes(text))
    throw new CliError(`--${flag} needs one of ${allowed.join(', ')}, got '${text.slice(0, 100)}'`);
  return text as C;
}
