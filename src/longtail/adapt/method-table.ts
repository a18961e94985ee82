// One row per test-time method of a distribution's results, by the names of methods.ts: its
// top-1 and shot groups, and where the method estimates the test prior, that estimate and its
// error against the true prior (from the distribution's class counts).
import type { GroupResult } from '../train/evaluate.js';
import { priorError } from './label-shift.js';
import type { TestTimeMethodName } from './methods.js';
import type { DistributionTestTime } from './testtime.js';

/**
 * One method's row in {@link methodTable}: top-1 and per-shot-group accuracy (null for an empty group) and its prior error.
 */
export interface MethodRow {
  top1: number | null;
  many: number | null;
  medium: number | null;
  few: number | null;
  estimated_prior?: number[];
  prior_error?: { l1: number; kl: number };
  weights?: number[];
  preference?: number[];
}

const group = (r: GroupResult) => ({ top1: r.top1, many: r.many, medium: r.medium, few: r.few });

/**
 * The rows of one distribution's test-time results: each method's accuracy (overall and per shot group) and, where it estimates one, the error of its prior against the true one.
 */
export function methodTable(entry: DistributionTestTime): Partial<Record<TestTimeMethodName, MethodRow>> {
  const total = entry.counts.reduce((a, b) => a + b, 0);
  const truth = entry.counts.map((v) => v / total);
  const withPrior = (r: GroupResult, prior: number[]): MethodRow => ({
    ...group(r),
    estimated_prior: prior,
    prior_error: priorError(prior, truth),
  });
  const rows: Partial<Record<TestTimeMethodName, MethodRow>> = { none: group(entry.before) };
  if (entry.aggregation)
    rows.aggregation = { ...group(entry.aggregation), weights: entry.aggregation.weights };
  if (entry.preference)
    rows.preference = { ...group(entry.preference), preference: entry.preference.preference };
  if (entry.prior) {
    const p = entry.prior;
    rows.prior = {
      ...withPrior(p, p.family_prior ?? p.estimated_prior),
      ...(p.preference ? { preference: p.preference } : { weights: p.weights ?? [] }),
    };
    rows.prior_adjusted = withPrior(p.adjusted, p.estimated_prior);
  }
  for (const [m, r] of Object.entries(entry.label_shift ?? {}))
    rows[m as TestTimeMethodName] = withPrior(r, r.estimated_prior);
  rows.oracle = withPrior(entry.oracle, truth);
  return rows;
}

/** Mean top-1 over distributions per method (only methods present on every distribution). */
export function methodMeans(
  tables: Partial<Record<TestTimeMethodName, MethodRow>>[],
): Partial<Record<TestTimeMethodName, number>> {
  const out: Partial<Record<TestTimeMethodName, number>> = {};
  if (tables.length === 0) return out;
  for (const m of Object.keys(tables[0]!) as TestTimeMethodName[]) {
    if (tables.every((t) => t[m] !== undefined))
      out[m] = tables.reduce((s, t) => s + (t[m]!.top1 ?? 0), 0) / tables.length;
  }
  return out;
}
