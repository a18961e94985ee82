// `tailor nmr train -c CONFIG [-r CHECKPOINT]`: two-stage training of the multi-SNR denoising
// U-Net (seed sections 4-6) on a data set written by `tailor nmr simulate`.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { CliError } from '../errors.js';
import { numberListArg } from '../args.js';
import { loadConfig } from '../../nmr/train/config.js';
import { trainNmr, TrainingDivergedError } from '../../nmr/train/trainer.js';
import { UNet1d, formatParameterSummary } from '../../nmr/model/unet.js';
import { NmrFormatError } from '../../nmr/io/errors.js';

const HELP = `usage: tailor nmr train -c CONFIG [-r CHECKPOINT] [options]

Trains the residual 1D U-Net on a multi-SNR data set: stage A (pseudo ground truth, peak-weighted
L1 + derivative + baseline curvature, consistency on 1-2 extra levels), then stage B (stronger
consistency and T residual-ratio constraint, SNR curriculum). Writes OUT/last.{json,safetensors,
optim.safetensors} every checkpointEvery epochs, OUT/best.* (best validation energy SNR) and
OUT/history.json. See configs/nmr_unet.json (the seed's settings) and configs/nmr_tiny.json.

options:
  -c, --config FILE      JSON config                                              [required]
  -r, --resume FILE      continue from a checkpoint (OUT/last.json) exactly where it stopped
      --out DIR          override the config's output folder
      --data DIR         override data.train
      --epochs A,B       override the epochs of stage A and stage B
      --params           print the model's parameter table and exit
  -h, --help             this text`;

export async function run(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        config: { type: 'string', short: 'c' },
        resume: { type: 'string', short: 'r' },
        out: { type: 'string' },
        data: { type: 'string' },
        epochs: { type: 'string' },
        params: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n\n${HELP}`);
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (!values.config) throw new CliError(`-c/--config is required\n\n${HELP}`);
  let cfg;
  try {
    cfg = loadConfig(values.config);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  if (values.out) cfg.out = resolve(values.out);
  if (values.data) cfg.data.train = resolve(values.data);
  if (values.epochs) {
    const parts = numberListArg('--epochs', values.epochs, { integer: true, min: 0 }, 2)!;
    [cfg.stageA.epochs, cfg.stageB.epochs] = parts as [number, number];
  }
  if (values.params) {
    const model = new UNet1d(cfg.model);
    console.log(formatParameterSummary(model));
    model.dispose();
    return 0;
  }
  try {
    const result = trainNmr(cfg, values.resume ? { resume: values.resume } : {});
    const last = result.history[result.history.length - 1];
    console.log(
      `done: ${result.epochs} epochs, ${result.parameters.toLocaleString('en-US')} parameters` +
        (last ? `, final validation energy SNR ${last.val.energySnrDb.toFixed(2)} dB` : '') +
        `; checkpoints ${result.lastCheckpoint}, ${result.bestCheckpoint}`,
    );
    return 0;
  } catch (e) {
    if (e instanceof TrainingDivergedError) throw new CliError(e.message, 3);
    if (e instanceof NmrFormatError) throw new CliError(e.message);
    throw e;
  }
}
