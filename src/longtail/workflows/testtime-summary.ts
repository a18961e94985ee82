// The summary of a test-time run (`tailor test-time-train`): per distribution the accuracy of the
// best method it ran, each method's accuracy and what it chose, and the means over distributions;
// stored as the `test_time` section of results.json.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DistributionTestTime } from '../adapt/testtime.js';
import type { TestTimeMethod } from '../adapt/methods.js';
import { methodMeans, methodTable } from '../adapt/method-table.js';
import type { ValidationFit } from '../adapt/baselines.js';
import { writeResults, type LongtailResults } from './results.js';

const group = (r: {
  top1: number | null;
  many: number | null;
  medium: number | null;
  few: number | null;
}) => ({
  top1: r.top1,
  many: r.many,
  medium: r.medium,
  few: r.few,
});

const searchCheck = (v: { searched: number; start: number }, keptStart: boolean | undefined) => ({
  ...v,
  kept_start: keptStart ?? false,
});

/**
 * The summary of test-time results that `results.json` keeps as `test_time`: per distribution, the table of methods.
 */
export function testTimeSummary(
  results: Record<string, DistributionTestTime>,
  methods: readonly TestTimeMethod[],
  isPrl: boolean,
  calibration: ValidationFit | null = null,
) {
  const distributions = Object.fromEntries(
    Object.entries(results).map(([name, r]) => {
      const best = r.preference ?? r.aggregation ?? r.prior ?? r.before;
      return [
        name,
        {
          ...group(best),
          ...(r.aggregation ? { weights: r.aggregation.weights, aggregation: group(r.aggregation) } : {}),
          // The searches' check on the validation split at the estimated prior (and whether the
          // guard kept the uniform start): how a collapse shows without test labels.
          ...(r.aggregation?.validation
            ? { aggregation_validation: searchCheck(r.aggregation.validation, r.aggregation.kept_start) }
            : {}),
          ...(r.preference
            ? { preference: r.preference.preference, preference_search: group(r.preference) }
            : {}),
          ...(r.preference?.validation
            ? { preference_validation: searchCheck(r.preference.validation, r.preference.kept_start) }
            : {}),
          ...(r.prior
            ? {
                prior_matching: {
                  ...group(r.prior),
                  ...(r.prior.preference ? { preference: r.prior.preference } : { weights: r.prior.weights }),
                  fit: r.prior.fit,
                  ...(r.prior.family_prior ? { family_prior: r.prior.family_prior } : {}),
                  estimated_prior: r.prior.estimated_prior,
                  em_iterations: r.prior.em_iterations,
                },
                prior_adjusted: group(r.prior.adjusted),
              }
            : {}),
          before: group(r.before),
          oracle: group(r.oracle),
          methods: methodTable(r),
        },
      ];
    }),
  );
  const names = Object.keys(distributions);
  const mean = (pick: (r: DistributionTestTime) => number | null | undefined) =>
    names.reduce((s, n) => s + (pick(results[n]!) ?? 0), 0) / names.length;
  return {
    distributions,
    mean_top1: mean((r) => (r.preference ?? r.aggregation ?? r.prior ?? r.before).top1),
    mean_top1_before: mean((r) => r.before.top1),
    ...(methods.includes('aggregation') ? { mean_top1_aggregation: mean((r) => r.aggregation?.top1) } : {}),
    ...(isPrl && methods.includes('preference')
      ? { mean_top1_preference: mean((r) => r.preference?.top1) }
      : {}),
    ...(methods.includes('prior') && names.some((n) => results[n]!.prior)
      ? {
          mean_top1_prior: mean((r) => r.prior?.top1),
          mean_top1_prior_adjusted: mean((r) => r.prior?.adjusted.top1),
        }
      : {}),
    mean_top1_oracle: mean((r) => r.oracle.top1),
    mean_top1_methods: methodMeans(names.map((n) => distributions[n]!.methods)),
    ...(calibration ? { calibration } : {}),
  };
}

/** What {@link testTimeSummary} returns. */
export type TestTimeSummary = ReturnType<typeof testTimeSummary>;

/**
 * Adds the summary to the run's results.json as `test_time` (nothing to add to when it has none:
 * `tailor test-time-train --save` says so before it runs).
 */
export function saveTestTimeSummary(runDir: string, summary: TestTimeSummary): void {
  const path = join(runDir, 'results.json');
  if (!existsSync(path)) return;
  const old = JSON.parse(readFileSync(path, 'utf8')) as LongtailResults;
  writeResults(runDir, { ...old, test_time: summary });
}
