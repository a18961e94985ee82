// tailor compare RUN_DIR... [--json]: the eleven distributions of several long-tail runs side by side.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand } from '../command.js';
import type { LongtailResults } from '../../longtail/index.js';

interface TestTimeSummary {
  mean_top1?: number;
  mean_top1_aggregation?: number;
  mean_top1_preference?: number;
  mean_top1_prior?: number;
  mean_top1_prior_adjusted?: number;
  mean_top1_oracle?: number;
  distributions?: Record<string, { top1: number | null }>;
}

const HELP =
  'usage: tailor compare RUN_DIR... [--json]\n\n' +
  'Top-1 on the eleven test distributions of each run (from results.json) and its mean; where\n' +
  "'tailor test-time-train --save' stored test-time results, also the mean top-1 after SADE\n" +
  'aggregation, the PRL preference search, prior matching and the prior-adjusted scores, and with\n' +
  'the oracle prior. --json prints each run with its whole test_time section (which also holds\n' +
  'EM, EM after temperature scaling or BCTS, and BBSE, in mean_top1_methods).';

export const run = defineCommand({
  help: HELP,
  options: JSON_OPTION,
  allowPositionals: true,
  run: ({ values, positionals }) => {
    if (positionals.length === 0) {
      console.log(HELP);
      return 2;
    }
    const runs = positionals.map((dir) => {
      const path = join(dir, 'results.json');
      if (!existsSync(path))
        throw new CliError(
          `${path} is missing: train the run first (tailor train) or run 'tailor test-all -r ${dir} --save'`,
        );
      return {
        dir,
        results: JSON.parse(readFileSync(path, 'utf8')) as LongtailResults & { test_time?: TestTimeSummary },
      };
    });
    const names = Object.keys(runs[0]!.results.distributions);
    if (values.json) {
      console.log(
        JSON.stringify(
          runs.map((r) => ({
            run: r.dir,
            method: r.results.method,
            uniform: {
              top1: r.results.uniform.top1,
              many: r.results.uniform.many,
              medium: r.results.uniform.medium,
              few: r.results.uniform.few,
            },
            distributions: Object.fromEntries(
              names.map((n) => [n, r.results.distributions[n]?.top1 ?? null]),
            ),
            mean_top1: r.results.mean_top1,
            ...(r.results.test_time ? { test_time: r.results.test_time } : {}),
          })),
        ),
      );
      return 0;
    }
    const pct = (v: number | null | undefined) =>
      v === null || v === undefined ? '-' : (100 * v).toFixed(2);
    // each column as wide as its method's name ('SADE (DiverseExpertLoss)') or its run directory's, so
    // that neither is cut; the run directory tells apart runs of one method
    const widths = runs.map((r) => Math.max(8, r.results.method.length, basename(resolve(r.dir)).length));
    const labelWidth = 13;
    const line = (label: string, cells: string[]) =>
      [label.padEnd(labelWidth), ...cells.map((c, k) => c.padStart(widths[k]!))].join(' ');
    const rows = [
      line(
        'distribution',
        runs.map((r) => r.results.method),
      ),
      line(
        'run',
        runs.map((r) => basename(resolve(r.dir))),
      ),
    ];
    for (const n of names)
      rows.push(
        line(
          n,
          runs.map((r) => pct(r.results.distributions[n]?.top1)),
        ),
      );
    rows.push(
      line(
        'mean',
        runs.map((r) => pct(r.results.mean_top1)),
      ),
    );
    for (const [label, key] of [
      ['+aggregation', 'mean_top1_aggregation'],
      ['+preference', 'mean_top1_preference'],
      ['+prior match', 'mean_top1_prior'],
      ['+prior adjust', 'mean_top1_prior_adjusted'],
      ['oracle prior', 'mean_top1_oracle'],
    ] as const) {
      if (runs.some((r) => r.results.test_time?.[key] !== undefined))
        rows.push(
          line(
            label,
            runs.map((r) => pct(r.results.test_time?.[key])),
          ),
        );
    }
    console.log(rows.join('\n'));
    return 0;
  },
});
