// A preference over the experts as text ("a,b,c"), from the command line or the dashboard's query
// string: non-negative numbers separated by commas. What makes them a preference of a model (one
// weight per expert, not all zero, normalised to the simplex) is Preference.of's to check.
import { UserError } from '../../util/errors.js';

/** A preference text that is no preference; the message lacks the flag or field, which callers add. */
export class PreferenceTextError extends UserError {}

/** Longest preference text read (a real one is a few weights). */
const MAX_TEXT = 10_000;

/** A decimal number (Number() also takes hexadecimal, binary and octal forms, which no weight is written in). */
const DECIMAL = /^[+]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** Reads `a,b,c` into its numbers. */
export function parsePreferenceText(text: string): number[] {
  const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  const parts = text.length > MAX_TEXT ? [''] : text.split(',').map((s) => s.trim());
  const r = parts.map(Number);
  if (parts.some((p) => !DECIMAL.test(p)) || r.some((v) => !Number.isFinite(v) || v < 0))
    throw new PreferenceTextError(`must be non-negative numbers separated by commas, got '${shown}'`);
  return r;
}
