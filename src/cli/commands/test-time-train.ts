// tailor test-time-train -c TEST_TIME_CONFIG -r CHECKPOINT [--json]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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

const HELP = `usage: tailor test-time-train -c TEST_TIME_CONFIG -r CHECKPOINT [--set PATH=VALUE] [--json]
                              [--save] [--threads N] [--device D] [--root DIR] [--quiet]

On each of the eleven test distributions (unlabeled), runs the test-time methods and reports
each one's top-1 and many/medium/few, with the weights, preference or prior it chose. The
methods, by the names results.json and benchmark suites use:
  none            the model as trained, no test-time step (printed as "before")
  aggregation     SADE's expert aggregation: expert weights learned on two augmented views of
                  the test images
  preference      PRL's preference search through the hypernetwork (PRL checkpoints only)
  prior           prior matching: the most likely test prior the experts' weights (or the PRL
                  preference) can express given their balanced scores, and the weights that give it
  prior_adjusted  the balanced scores plus the log of prior matching's EM estimate of the prior
  em              EM (MLLS) estimate of the test prior on the uncalibrated scores
  em_ts           EM after temperature scaling fitted on the validation split
  em_bcts         EM after bias-corrected temperature scaling (BCTS) on the validation split
  bbse            BBSE (black-box shift estimation) with the validation split's confusion matrix
  oracle          the log of the true test prior added to the balanced scores (uses the test
                  labels: an upper bound, reported apart, not a method)

The config's "method" chooses the searches: aggregation, preference, prior, both (aggregation
and, for PRL checkpoints, preference; the default) or all (both and prior); "methods" lists
them by name instead (aggregation, preference, prior, em, em_ts, em_bcts, bbse). With "method",
em, em_ts, em_bcts and bbse always run (one pass over the validation split; skipped when the run
has none); none and oracle are always reported.
Objectives of the two searches (aggregation_objective, preference_objective): consistent (the
default: agreement of the two views plus consistency_weight x KL from the estimated test prior,
with a guard on the validation split that keeps the uniform start when the search does worse
there) or stability (agreement of the two views alone, as published). prior_fit: likelihood
(the default) or least_squares (the prior nearest an EM estimate).

options:
  -c, --config FILE      test-time config, e.g. configs/fmnist_test_time.json    [required]
  -r, --resume CKPT      a run directory (its checkpoint-last) or a checkpoint .json, or a
                         SADE/RIDE/BalPoE .pth with --train-config                [required]
      --train-config FILE  the training config that builds a .pth's model (arch, data_loader)
      --set PATH=VALUE   set a field of the test-time config (repeatable; dotted path, JSON or
                         text value), e.g. --set trainer.epochs=2 --set method=all
      --json             print the results as one JSON object
      --save             write the results into the run's results.json (section test_time)
      --threads N        libtorch threads
      --device D         cpu, cuda or cuda:N
      --root DIR         data directory (overrides the run's data_loader.args.data_dir)
      --quiet            no progress on stderr
  -h, --help             this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    set: { type: 'string', multiple: true },
    ...CHECKPOINT_OPTIONS,
    ...JSON_OPTION,
    save: { type: 'boolean', default: false },
    quiet: { type: 'boolean', default: false },
  },
  run: async ({ values }) => {
    if (!values.config || !(values.resume ?? values.checkpoint))
      throw new CliError(`give both -c TEST_TIME_CONFIG and -r CHECKPOINT\n\n${HELP}`);
    const { config } = values;
    // The config is checked before the run loads (seconds of work); the checks that depend on
    // the model (PRL's preference search) follow once it has.
    const { loaded } = loadRunForEvaluation(values, HELP, () =>
      loadTestTimeConfig(config, true, values.set ?? []),
    );
    // Checked before the searches run: a weights file of another trainer has no results.json of
    // its own (one beside it belongs to some other run).
    if (values.save && loaded.layout)
      throw new CliError(
        `--save writes into a tailor run's results.json; ${values.resume ?? values.checkpoint} is a weights file, not a tailor run: keep the summary with --json > FILE`,
      );
    if (values.save && !existsSync(join(loaded.runDir, 'results.json')))
      throw new CliError(
        `--save adds to the run's results.json, which ${loaded.runDir} lacks (its training stopped before the final evaluation): write it with 'tailor test-all -r ${loaded.runDir} --save' first, or keep the summary with --json > FILE`,
      );
    const isPrl = loaded.session.system.kind === 'prl';
    const options = loadTestTimeConfig(values.config, isPrl, values.set ?? []);
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
