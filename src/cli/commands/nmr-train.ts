// `tailor nmr train -c CONFIG [-r CHECKPOINT]`: two-stage training of the multi-SNR denoising
// U-Net on a data set written by `tailor nmr simulate`.
import { resolve } from 'node:path';
import { CliError, asUserError } from '../errors.js';
import { defineCommand } from '../command.js';
import { numberArg, numberListArg } from '../args.js';
import { useDevice } from '../runtime.js';
import {
  loadConfig,
  resolveConfig,
  checkLevels,
  experimentsFileOf,
  parseExperimentsArg,
  readExperimentsFile,
  type ExperimentsFile,
  trainNmr,
  UNet1d,
  formatParameterSummary,
} from '../../nmr/index.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeJsonAtomic } from '../../util/fs.js';

const HELP = `usage: tailor nmr train -c CONFIG [-r CHECKPOINT] [options]
       tailor nmr train --experiments LIST [--experiments LIST ...] [-c CONFIG] [options]
       tailor nmr train --samples FILE.json [-c CONFIG] [options]

Trains on your own measurements without ground truth: per sample, its K+1 experiments from the
lowest to the highest SNR (Bruker, VnmrJ or Spinsolve folders, JCAMP-DX, NMRPipe or CSV). Each
sample is processed alike (FIDs: same size, line broadening, phase source), aligned, rescaled, and
its pseudo ground truth is the SNR-weighted fusion of its other levels (an experiment is never
fused into its own target). The model then denoises one new low-SNR scan: tailor nmr denoise.

Trains the residual 1D U-Net on a multi-SNR data set: stage A (pseudo ground truth, peak-weighted
L1 + derivative + baseline curvature, consistency on 1-2 extra levels), then stage B (stronger
consistency and T residual-ratio constraint, SNR curriculum). Optional terms: loss.recOthers (the
L1 on the other levels' outputs too) and loss.mse (a peak-weighted squared error). data.target:
pseudo (the default), last (level K alone) or truth (simulated data); data.rescale: huber,
inverse, seed or none; model.inputLevels = K+1 trains the stack model (all levels in).
Writes OUT/last.{json,safetensors,optim.safetensors} every checkpointEvery epochs, OUT/best.*
(the epoch of best validation energy SNR; without ground truth, of lowest validation loss, with
stage A's peak weight in every epoch; without validation samples, as with one sample or
data.valFraction 0, the last epoch) and OUT/history.json. See configs/nmr_unet.json (the
full-size network and schedule) and configs/nmr_tiny.json.

options:
  -c, --config FILE      JSON config                                              [required]
  -r, --resume FILE      continue from a checkpoint (OUT/last.json) exactly where it stopped
      --out DIR          override the config's output folder
      --data DIR         override data.train
      --epochs A,B       override the epochs of stage A and stage B
      --params           print the model's parameter table and exit
      --quiet            no step lines within an epoch (each epoch's line, with the pace and
                         the ETA, stays)
      --device D         cpu (default), cuda or cuda:N (also "device" in the config)

your own measurements (instead of the config's data.train; -c is then optional and defaults to a
CPU-sized run, 16-32-64-64 channels, stage A 10 + stage B 10 epochs of 25 steps):
      --experiments LIST one sample's experiments, lowest SNR first, comma-separated; '+' co-adds
                         files of one experiment (a,b+c,d); PATH#R is row R of a pseudo-2D set,
                         e.g. an arrayed VnmrJ fid (x.fid#0,x.fid#1+x.fid#2); repeat per sample
                         (same K+1 each)
      --samples FILE     an experiments JSON file (schema: configs/schema/nmr-experiments.schema.json)
      --size N           spectrum points for FIDs (power of two)
      --lb HZ            exponential line broadening for FIDs
      --ppm LO,HI        keep only this ppm window
  -h, --help             this text`;

/** The run used with --experiments when no -c is given: small enough for a laptop CPU. */
const EXPERIMENTS_RUN = {
  name: 'nmr-experiments',
  threads: 1,
  data: { crop: 1024, valFraction: 0.2, target: 'pseudo' },
  model: { channels: [16, 32, 64, 64], se: 'bottleneck+shallow', seReduction: 8 },
  stageA: { epochs: 10, loss: { recOthers: 1 }, extraLevels: [1, 2] },
  stageB: { epochs: 10, curriculumEpochs: 4, loss: { recOthers: 1, cons: 1, ratio: 0.5 } },
  optim: { lr: 0.001, warmupEpochs: 1, minLrFactor: 0.02 },
  batchSamples: 4,
  stepsPerEpoch: 25,
  logEvery: 25,
};

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    resume: { type: 'string', short: 'r' },
    out: { type: 'string' },
    data: { type: 'string' },
    epochs: { type: 'string' },
    params: { type: 'boolean' },
    quiet: { type: 'boolean' },
    device: { type: 'string' },
    experiments: { type: 'string', multiple: true },
    samples: { type: 'string' },
    size: { type: 'string' },
    lb: { type: 'string' },
    ppm: { type: 'string' },
  },
  helpOnParseError: true,
  run: ({ values }) => {
    // Flags are checked before any file is read.
    const processing = processingArgs(values);
    const own = Boolean(values.experiments?.length || values.samples);
    if (!values.config && !own)
      throw new CliError(`-c/--config (or --experiments / --samples) is required\n\n${HELP}`);
    const cfg = values.config
      ? loadConfig(values.config)
      : resolveConfig(
          { ...EXPERIMENTS_RUN, data: { ...EXPERIMENTS_RUN.data, train: '.' } },
          process.cwd(),
          'built-in run',
        );
    if (values.out) cfg.out = resolve(values.out);
    if (values.data) cfg.data.train = [resolve(values.data)];
    if (own) {
      if (values.experiments?.length && values.samples)
        throw new CliError('give either --experiments or --samples, not both');
      // The samples are written next to the checkpoints: the run records what it was trained on.
      const file = join(cfg.out, 'experiments.json');
      try {
        const spec = values.samples
          ? readExperimentsFile(values.samples)
          : { samples: values.experiments!.map((a, i) => parseExperimentsArg(a, i)), options: {} };
        checkLevels(spec.samples, values.samples ?? '--experiments');
        mkdirSync(cfg.out, { recursive: true });
        writeJsonAtomic(file, experimentsFileOf(spec, processing));
      } catch (e) {
        // The experiments readers report some problems as plain Errors.
        throw asUserError(e);
      }
      cfg.data.train = [file];
      if (!values.config) cfg.data.val = null;
    }
    if (values.epochs) {
      const parts = numberListArg('--epochs', values.epochs, { integer: true, min: 0 }, 2)!;
      [cfg.stageA.epochs, cfg.stageB.epochs] = parts as [number, number];
    }
    // The model, its batches and the optimizer state live on the run's device (a checkpoint
    // resumes on any device: its tensors are copied into the model's).
    useDevice(values.device, cfg);
    if (values.params) {
      const model = new UNet1d(cfg.model);
      console.log(formatParameterSummary(model));
      model.dispose();
      return 0;
    }
    const result = trainNmr(cfg, {
      ...(values.resume ? { resume: values.resume } : {}),
      quiet: values.quiet ?? false,
    });
    const last = result.history[result.history.length - 1];
    console.log(
      `done: ${result.epochs} epochs, ${result.parameters.toLocaleString('en-US')} parameters` +
        (last && Number.isFinite(last.val.energySnrDb)
          ? `, final validation energy SNR ${last.val.energySnrDb.toFixed(2)} dB`
          : last && Number.isFinite(last.val.rec)
            ? `, final validation loss ${last.val.rec.toPrecision(4)} (against the pseudo ground truth)`
            : '') +
        `; checkpoints ${result.lastCheckpoint}, ${result.bestCheckpoint}`,
    );
    return 0;
  },
});

/** --size, --lb, --ppm as experiments-file fields. */
function processingArgs(values: { size?: string; lb?: string; ppm?: string }): Partial<ExperimentsFile> {
  const out: Partial<ExperimentsFile> = {};
  if (values.size !== undefined) {
    out.size = numberArg('--size', values.size, { integer: true, min: 64, powerOfTwo: true })!;
  }
  if (values.lb !== undefined) {
    out.lb = numberArg('--lb', values.lb, { min: 0 })!;
  }
  if (values.ppm !== undefined) {
    const parts = numberListArg('--ppm', values.ppm, {}, 2)!;
    out.ppm = [parts[0]!, parts[1]!];
  }
  return out;
}
