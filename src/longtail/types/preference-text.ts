// A preference over the experts as text ("a,b,c"), from the command line or the dashboard's query
// string: non-negative weights, one per expert, normalised to the simplex.
import { UserError } from '../../util/errors.js';

/** A preference text that is no preference; the message lacks the flag or field, which callers add. */
export class PreferenceTextError extends UserError {}

/** Longest preference text read (a real one is a few weights). */
const MAX_TEXT = 10_000;

/** Parses `a,b,c`; `experts` (when known) is the number of weights it must have. */
export function parsePreferenceText(text: string, experts: number | null): number[] {
  const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  const parts = text.length > MAX_TEXT ? [''] : text.split(',').map((s) => s.trim());
  const r = parts.map(Number);
  if (parts.some((p) => p === '') || r.some((v) => !Number.isFinite(v) || v < 0))
    throw new PreferenceTextError(`must be non-negative numbers separated by commas, got '${shown}'`);
  if (experts !== null && r.length !== experts)
    throw new PreferenceTextError(
      `has ${r.length} weights but the run has ${experts} experts (one per expert)`,
    );
  const sum = r.reduce((a, b) => a + b, 0);
  if (!(sum > 0)) throw new PreferenceTextError('has weights that sum to 0');
  return r.map((v) => v / sum);
}
