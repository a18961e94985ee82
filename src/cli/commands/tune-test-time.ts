// tailor tune-test-time -c TEST_TIME_CONFIG -r CHECKPOINT --grid NAME=V1,V2 ... [--write FILE]
import { readFileSync } from 'node:fs';
import { parse as parseJsonc } from 'jsonc-parser';
import { writeJsonAtomic } from '../../util/fs.js';
import {
  OBJECTIVE_GRIDS,
  applySettings,
  SEARCH_OBJECTIVES,
  TUNABLE,
  loadTestTimeConfig,
  tuneTestTime,
  withTunedSetting,
  type Grid,
  type SearchObjective,
  type TunableName,
} from '../../longtail/index.js';
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand } from '../command.js';
import { numberListArg, numberArg } from '../args.js';
import { CHECKPOINT_OPTIONS, loadRunForEvaluation } from './longtail-common.js';

const HELP = `usage: tailor tune-test-time -c TEST_TIME_CONFIG -r CHECKPOINT --grid NAME=V1,V2[,...] ...
                             [--method aggregation|preference] [--pool-fraction F] [--seed S]
                             [--set PATH=VALUE ...] [--write FILE] [--json] [--threads N]
                             [--device D] [--root DIR]
                             [--train-config FILE (with -r a SADE/RIDE/BalPoE .pth)]

Chooses a test-time method's settings on the run's labelled validation split, never on the test
set. Per class, a share of the validation images (--pool-fraction, default 0.5) forms a tuning
pool; the eleven test distributions are drawn from it, the method runs on them unlabeled and is
scored with their labels, while the other validation images do what the validation split does at
test time (calibration, BBSE, the searches' guard). Every combination of the grids is tried; the
best mean top-1 wins, ties to the earlier combination (list the current values first).
--set PATH=VALUE sets a field of the test-time config before the search (repeatable; dotted path,
JSON or text value, as test-time-train's), e.g. --set trainer.batch_size=64; a grid name given
with --set as well is searched over the grid.
--write FILE writes the test-time config with the chosen values (for test-time-train and suites),
the --set fields included.
The searches step once per batch, so the pool's batch is the config's batch size scaled by the
pool's size over the test set's (its size only is read): an epoch then takes as many steps on the
pool as on the test set, and step sizes and epochs carry over.

grid names: ${Object.keys(TUNABLE).join(', ')}
(the two objectives take words: ${SEARCH_OBJECTIVES.join(', ')}; the others numbers)
method: preference (PRL's preference search through the hypernetwork; PRL runs, the default
there) or aggregation (SADE's expert aggregation over two augmented views; the default otherwise)
objectives (aggregation_objective, preference_objective): consistent (agreement of the two views
plus consistency_weight x KL from the EM estimate of the test prior, with the validation guard)
or stability (agreement of the two views alone, as published)

With 20 validation images per class (the default split) the pool has 10 per class and the
backward and forward distributions a handful of tail images: differences under a few points are
noise. Hold out more for tuning runs (data_loader.args.validation_per_class).`;

function parseGrid(entries: string[]): Grid {
  const grid: Grid = {};
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const name = eq > 0 ? entry.slice(0, eq) : '';
    if (!(name in TUNABLE))
      throw new CliError(
        `--grid ${entry}: give NAME=V1,V2 with NAME one of ${Object.keys(TUNABLE).join(', ')}`,
      );
    if (grid[name as TunableName]) throw new CliError(`--grid ${name} is given twice`);
    if (OBJECTIVE_GRIDS.includes(name as TunableName)) {
      const words = entry.slice(eq + 1).split(',');
      const bad = words.find((w) => !SEARCH_OBJECTIVES.includes(w as SearchObjective));
      if (bad !== undefined)
        throw new CliError(
          `--grid ${name}: '${bad}' is not an objective; give ${SEARCH_OBJECTIVES.join(' or ')}`,
        );
      grid[name as TunableName] = words as SearchObjective[];
      continue;
    }
    const values = numberListArg(`--grid ${name}`, entry.slice(eq + 1), { min: 0 }) ?? [];
    if (values.length === 0) throw new CliError(`--grid ${name} needs at least one value`);
    if (name === 'epochs' && values.some((v) => !Number.isInteger(v) || v < 1))
      throw new CliError(`--grid epochs needs positive integers, got ${entry.slice(eq + 1)}`);
    grid[name as TunableName] = values;
  }
  return grid;
}

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    set: { type: 'string', multiple: true },
    ...CHECKPOINT_OPTIONS,
    grid: { type: 'string', multiple: true, default: [] },
    method: { type: 'string' },
    'pool-fraction': { type: 'string' },
    seed: { type: 'string' },
    write: { type: 'string' },
    ...JSON_OPTION,
  },
  run: async ({ values }) => {
    if (!values.config) throw new CliError(`give the test-time config with -c TEST_TIME_CONFIG\n\n${HELP}`);
    const grid = parseGrid(values.grid);
    if (Object.keys(grid).length === 0) throw new CliError(`give at least one --grid NAME=V1,V2\n\n${HELP}`);
    const poolFraction =
      numberArg('--pool-fraction', values['pool-fraction'], { min: 0.05, max: 0.95 }) ?? 0.5;
    const seed = numberArg('--seed', values.seed, { integer: true, min: 0 }) ?? 0;
    const settings = values.set ?? [];
    const { config } = values;
    // The config is checked before the run loads; the PRL-only checks follow once it has.
    const { loaded } = loadRunForEvaluation(values, HELP, () => loadTestTimeConfig(config, true, settings));
    const isPrl = loaded.session.system.kind === 'prl';
    const method = values.method ?? (isPrl ? 'preference' : 'aggregation');
    if (method !== 'preference' && method !== 'aggregation')
      throw new CliError(`--method must be preference or aggregation, got '${method}'`);
    const base = loadTestTimeConfig(values.config, isPrl, settings);
    const log = (line: string) => console.error(`tailor tune-test-time: ${line}`);
    const result = await tuneTestTime(loaded.session, base, {
      method,
      grid,
      poolFraction,
      seed,
      // The size of the test set, never its images or labels: it sets the pool's batch size.
      testImages: loaded.session.data.test.labels.length,
      // Progress goes to stderr in every mode; --json keeps stdout for the result.
      log,
    });
    if (values.write) {
      // the file as written by the user (comments dropped, key order kept), with --set applied
      const raw = applySettings(parseJsonc(readFileSync(values.config, 'utf8')), settings);
      writeJsonAtomic(values.write, withTunedSetting(raw as Record<string, unknown>, result.best.setting));
    }
    if (values.json) console.log(JSON.stringify(result));
    else {
      const s = Object.entries(result.best.setting)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      console.log(
        `best on the validation pool (${result.pool.counts.join('/')} images per class, batch ${result.pool.batch_size}): ${s}, ` +
          `mean top-1 ${(100 * result.best.mean_top1).toFixed(2)} against ${(100 * result.best.mean_top1_before).toFixed(2)} without a step` +
          (values.write ? `; written to ${values.write}` : ''),
      );
    }
    return 0;
  },
});
