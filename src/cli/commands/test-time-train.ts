// tailor test-time-train -c TEST_TIME_CONFIG -r CHECKPOINT [--json]
import { parseArgs } from 'node:util';
import * as torch from '../../torch/index.js';
import {
  ConfigError,
  adaptInput,
  loadTestTimeConfig,
  runTestTime,
  writeResults,
  type LongtailResults,
} from '../../longtail/index.js';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../errors.js';
import { loadRun } from './longtail-common.js';

const HELP = `usage: tailor test-time-train -c TEST_TIME_CONFIG -r CHECKPOINT [--json] [--save] [--threads N]

On each of the eleven test distributions (unlabeled), runs the config's methods: SADE's expert
aggregation weights learned by self-supervised prediction stability of two augmented views; for
PRL checkpoints also the preference (through the hypernetwork); prior matching (the most likely
test prior the experts' weights can express, given their balanced scores, and the weights or
preference that give it; prior_fit "least_squares": the one nearest an EM estimate).
Prints the chosen weights/preference and accuracies, and separately an oracle that adds the log
of the true test prior to the balanced scores.
--save writes the results into the run's results.json (section test_time).`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      resume: { type: 'string', short: 'r' },
      json: { type: 'boolean', default: false },
      save: { type: 'boolean', default: false },
      threads: { type: 'string', default: '2' },
      root: { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.config || !values.resume)
    throw new CliError(`give both -c TEST_TIME_CONFIG and -r CHECKPOINT\n\n${HELP}`);
  torch.setNumThreads(Number(values.threads));
  const loaded = loadRun(values.resume, values.root ? { root: values.root } : {});
  const isPrl = loaded.session.system.kind === 'prl';
  let options;
  try {
    options = loadTestTimeConfig(values.config, isPrl);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
  const { results } = await runTestTime(adaptInput(loaded.session), {
    ...options,
    quiet: values.quiet || values.json,
  });
  const group = (r: {
    top1: number | null;
    many: number | null;
    medium: number | null;
    few: number | null;
  }) => ({ top1: r.top1, many: r.many, medium: r.medium, few: r.few });
  const distributions = Object.fromEntries(
    Object.entries(results).map(([name, r]) => {
      const best = r.preference ?? r.aggregation ?? r.prior ?? r.before;
      return [
        name,
        {
          ...group(best),
          ...(r.aggregation ? { weights: r.aggregation.weights, aggregation: group(r.aggregation) } : {}),
          ...(r.preference
            ? { preference: r.preference.preference, preference_search: group(r.preference) }
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
        },
      ];
    }),
  );
  const names = Object.keys(distributions);
  const mean = (pick: (r: (typeof results)[string]) => number | null | undefined) =>
    names.reduce((s, n) => s + (pick(results[n]!) ?? 0), 0) / names.length;
  const summary = {
    distributions,
    mean_top1: mean((r) => (r.preference ?? r.aggregation ?? r.prior ?? r.before).top1),
    mean_top1_before: mean((r) => r.before.top1),
    ...(options.methods.includes('aggregation')
      ? { mean_top1_aggregation: mean((r) => r.aggregation?.top1) }
      : {}),
    ...(isPrl && options.methods.includes('preference')
      ? { mean_top1_preference: mean((r) => r.preference?.top1) }
      : {}),
    ...(options.methods.includes('prior') && names.some((n) => results[n]!.prior)
      ? {
          mean_top1_prior: mean((r) => r.prior?.top1),
          mean_top1_prior_adjusted: mean((r) => r.prior?.adjusted.top1),
        }
      : {}),
    mean_top1_oracle: mean((r) => r.oracle.top1),
  };
  if (values.save) {
    const path = join(loaded.runDir, 'results.json');
    if (existsSync(path)) {
      const old = JSON.parse(readFileSync(path, 'utf8')) as LongtailResults;
      writeResults(loaded.runDir, { ...old, test_time: summary });
    }
  }
  if (values.json) {
    console.log(JSON.stringify(summary));
  } else {
    const pct = (v: number | null | undefined) =>
      v === null || v === undefined ? '-' : (100 * v).toFixed(2);
    const methods = (
      [
        ['aggregation', summary.mean_top1_aggregation],
        ['preference', summary.mean_top1_preference],
        ['prior', summary.mean_top1_prior],
        ['prior-adjusted', summary.mean_top1_prior_adjusted],
      ] as const
    ).filter(([, v]) => v !== undefined);
    console.log(
      `mean top-1: before ${pct(summary.mean_top1_before)}` +
        methods.map(([name, v]) => `  ${name} ${pct(v)}`).join('') +
        `  (oracle prior ${pct(summary.mean_top1_oracle)})`,
    );
  }
  return 0;
}
