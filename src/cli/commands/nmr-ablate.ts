// `tailor nmr ablate -c CONFIG --data DIR`: the ablations of the training, each trained like the
// config and scored on a held-out data set; writes OUT/ablation/ablation.{json,md}.
import { resolve } from 'node:path';
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { listArg, numberArg, numberListArg } from '../args.js';
import {
  loadConfig,
  ABLATIONS,
  formatAblationSpread,
  formatAblationTable,
  runAblation,
  NmrFormatError,
} from '../../nmr/index.js';

const HELP = `usage: tailor nmr ablate -c CONFIG --data DIR [options]

Trains one model per variant below (each leaves out or changes one ingredient of the configured
training) and scores each on DIR (a data set with ground truth, e.g. from 'tailor nmr simulate')
with the yardstick of 'tailor nmr yardstick': x0 in, against the truth, with the raw level it
matches, weak-peak recall, integrals and FWHM.

variants:
${Object.entries(ABLATIONS)
  .map(([k, v]) => `  ${k.padEnd(16)} ${v.description}`)
  .join('\n')}

options:
  -c, --config FILE      training config (as for 'tailor nmr train')                 [required]
      --data DIR         held-out evaluation set                                      [required]
      --variants LIST    comma list of variants (default: all)
      --epochs A,B       override the epochs of stage A and stage B for every variant
      --seeds LIST       train every variant once per seed (comma list, e.g. 0,1,2; default:
                         the config's seed) and add each variant's mean ± sample standard
                         deviation over them; runs go to OUT/ablation/VARIANT-seedS
      --max-samples N    score only the first N samples of DIR
      --out DIR          override the config's output folder (results go to DIR/ablation)
  -h, --help             this text`;

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    data: { type: 'string' },
    variants: { type: 'string' },
    epochs: { type: 'string' },
    seeds: { type: 'string' },
    'max-samples': { type: 'string' },
    out: { type: 'string' },
  },
  helpOnParseError: true,
  run: ({ values }) => {
    if (!values.config) throw new CliError(`-c/--config is required\n\n${HELP}`);
    if (!values.data) throw new CliError(`--data is required\n\n${HELP}`);
    const cfg = loadConfig(values.config);
    if (values.out) cfg.out = resolve(values.out);
    if (values.epochs) {
      const parts = numberListArg('--epochs', values.epochs, { integer: true, min: 0 }, 2)!;
      [cfg.stageA.epochs, cfg.stageB.epochs] = parts as [number, number];
    }
    const variants = listArg('--variants', values.variants);
    for (const v of variants ?? [])
      if (!ABLATIONS[v])
        throw new CliError(
          `--variants: unknown variant '${v}' (known: ${Object.keys(ABLATIONS).join(', ')})`,
        );
    const seeds = numberListArg('--seeds', values.seeds, { integer: true, min: 0, max: 2 ** 31 - 1 });
    if (seeds && new Set(seeds).size !== seeds.length)
      throw new CliError(`--seeds ${values.seeds}: a seed is given twice`);
    const maxSamples = numberArg('--max-samples', values['max-samples'], { integer: true, min: 1 });
    try {
      const rows = runAblation(cfg, {
        data: resolve(values.data),
        ...(variants ? { variants } : {}),
        ...(seeds ? { seeds } : {}),
        ...(maxSamples ? { maxSamples } : {}),
      });
      console.log(formatAblationTable(rows));
      if (seeds && seeds.length > 1) console.log(formatAblationSpread(rows));
      return 0;
    } catch (e) {
      // A data set that fails while the variants train ends the run like a divergence (exit 3).
      if (e instanceof NmrFormatError) throw new CliError(e.message, 3);
      throw e;
    }
  },
});
