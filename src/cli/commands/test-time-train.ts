// tailor test-time-train -c TEST_TIME_CONFIG -r CHECKPOINT [--json]
import {
  adaptInput,
  loadTestTimeConfig,
  runTestTime,
  saveTestTimeSummary,
  testTimeSummary,
} from '../../longtail/index.js';
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand } from '../command.js';
import { CHECKPOINT_OPTIONS, loadRunForEvaluation } from './longtail-common.js';

const HELP = `usage: tailor test-time-train -c TEST_TIME_CONFIG -r CHECKPOINT [--json] [--save] [--threads N] [--device D]

On each of the eleven test distributions (unlabeled), runs the config's methods: SADE's expert
aggregation weights learned by self-supervised prediction stability of two augmented views; for
PRL checkpoints also the preference (through the hypernetwork); prior matching (the most likely
test prior the experts' weights can express, given their balanced scores, and the weights or
preference that give it; prior_fit "least_squares": the one nearest an EM estimate).
Prints the chosen weights/preference and accuracies, and separately an oracle that adds the log
of the true test prior to the balanced scores.
--save writes the results into the run's results.json (section test_time).`;

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    ...CHECKPOINT_OPTIONS,
    ...JSON_OPTION,
    save: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
  run: async ({ values }) => {
    if (!values.config || !values.resume)
      throw new CliError(`give both -c TEST_TIME_CONFIG and -r CHECKPOINT\n\n${HELP}`);
    const { loaded } = loadRunForEvaluation(values, HELP);
    const isPrl = loaded.session.system.kind === 'prl';
    const options = loadTestTimeConfig(values.config, isPrl);
    const { results, calibration } = await runTestTime(adaptInput(loaded.session), {
      ...options,
      // --json keeps stdout for the summary; progress stays on stderr unless --quiet.
      quiet: values.quiet,
    });
    const summary = testTimeSummary(results, options.methods, isPrl, calibration);
    if (values.save) saveTestTimeSummary(loaded.runDir, summary);
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
          ...(['em', 'em_ts', 'em_bcts', 'bbse'] as const).map(
            (m) => [m, summary.mean_top1_methods[m]] as const,
          ),
        ] as const
      ).filter(([, v]) => v !== undefined);
      console.log(
        `mean top-1: before ${pct(summary.mean_top1_before)}` +
          methods.map(([name, v]) => `  ${name} ${pct(v)}`).join('') +
          `  (oracle prior ${pct(summary.mean_top1_oracle)})`,
      );
    }
    return 0;
  },
});
