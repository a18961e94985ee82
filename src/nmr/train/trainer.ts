// Two-stage training of the U-Net: stage A mainly supervised against the pseudo ground truth with
// 1-2 extra levels for consistency; stage B with larger consistency and T-constraint weights, all
// levels and an SNR curriculum (high-SNR levels first). One AdamW (lr 3e-4, wd 1e-4) and one warmup
// + cosine schedule (per step) span both stages. Checkpoints hold weights, optimizer, schedule,
// epoch and both generators, so a resumed run continues exactly as an uninterrupted one would.
import { join } from 'node:path';
import * as torch from '../../torch/index.js';
import { Rng } from '../../util/rng.js';
import { writeJsonAtomic, ensureDir } from '../../util/fs.js';
import { UNet1d, parameterSummary } from '../model/unet.js';
import { checkpointBase } from '../model/denoise.js';
import type { NmrTrainConfig } from './config.js';
import { drawLevels, makeBatch, prepareRecords, type PreparedSample } from './samples.js';
import { loadRecords, processingOf, scanOrderWarnings, type StackRecord } from './sources.js';
import { trainingDomain } from '../model/domain.js';
import { totalLoss, type LossWeights } from './losses.js';
import { curriculumMinLevel, stageAt, stageWeights } from './schedule.js';
import { validate } from './validation.js';
import { CheckpointError, UserError } from '../../util/errors.js';
import type {
  EpochPlan,
  EpochRecord,
  Log,
  LossSums,
  TrainingData,
  TrainingRun,
  TrainingState,
} from './run.js';
import { fmt, logEpoch, pace, saveCheckpoints } from './epoch-output.js';

export type { EpochRecord } from './run.js';

/** What {@link trainNmr} returns. */
export interface TrainResult {
  out: string;
  epochs: number;
  history: EpochRecord[];
  lastCheckpoint: string;
  bestCheckpoint: string;
  parameters: number;
}

/** How {@link trainNmr} runs: logging, device, resumption. */
export interface TrainOptions {
  resume?: string;
  /** Progress lines (default: standard output). */
  log?: (line: string) => void;
  /** No step lines within an epoch (the epoch lines stay), as `nmr train --quiet`. */
  quiet?: boolean;
  /** Stop after this many epochs of this call (tests of resume); default: the configured total. */
  stopAfterEpochs?: number;
}

/** The loss became NaN or infinite or exploded: the message names the stage, epoch and step; exit code 3. */
export class TrainingDivergedError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 3 });
  }
}

function split<T>(cfg: NmrTrainConfig, all: T[]): { train: T[]; val: T[] } {
  if (cfg.data.val !== null) return { train: all, val: [] };
  const n = all.length;
  const nVal = cfg.data.valFraction > 0 && n > 1 ? Math.max(1, Math.round(n * cfg.data.valFraction)) : 0;
  return { train: all.slice(0, n - nVal), val: all.slice(n - nVal) };
}

/**
 * Trains the denoiser of a config (see {@link loadConfig}): simulated or stored multi-SNR samples,
 * the loss terms of the config, checkpoints (last and best) in the run directory. Needs libtorch.
 * @returns The run directory, the epochs and their history, the last and best checkpoints, the parameter count.
 * @throws {@link TrainingDivergedError} when the loss becomes non-finite.
 */
export function trainNmr(cfg: NmrTrainConfig, options: TrainOptions = {}): TrainResult {
  const log = options.log ?? ((line: string) => console.log(line));
  torch.setNumThreads(cfg.threads);
  torch.manualSeed(cfg.seed);
  ensureDir(cfg.out);
  const data = loadTrainingData(cfg, log);
  if (data.valSet.length === 0)
    log('no validation samples: best.json follows the schedule to its last epoch');
  const { model, parameters, stackModel } = buildModel(cfg, data.K, log);
  const { optimizer, scheduler, stepsPerEpoch, totalEpochs } = createOptimizer(
    cfg,
    model,
    data.trainSet.length,
  );
  const state: TrainingState = options.resume
    ? resumeTraining(options.resume, cfg, model, optimizer, scheduler, totalEpochs, log)
    : { rng: new Rng(cfg.seed), startEpoch: 0, history: [], best: -Infinity };
  const endEpoch = Math.min(totalEpochs, state.startEpoch + (options.stopAfterEpochs ?? totalEpochs));
  const run: TrainingRun = {
    cfg,
    log,
    data,
    model,
    stackModel,
    optimizer,
    scheduler,
    stepsPerEpoch,
    totalEpochs,
    lastBase: join(cfg.out, 'last'),
    bestBase: join(cfg.out, 'best'),
    quiet: options.quiet ?? false,
    pace: {
      start: performance.now(),
      firstStep: state.startEpoch * stepsPerEpoch,
      endStep: endEpoch * stepsPerEpoch,
    },
  };
  for (let epoch = state.startEpoch; epoch < endEpoch; epoch++) runEpoch(run, state, epoch, endEpoch);
  model.dispose();
  return {
    out: cfg.out,
    epochs: endEpoch,
    history: state.history,
    lastCheckpoint: `${run.lastBase}.json`,
    bestCheckpoint: `${run.bestBase}.json`,
    parameters,
  };
}

/** Loads and preprocesses the training and validation samples; picks the window length. */
function loadTrainingData(cfg: NmrTrainConfig, log: Log): TrainingData {
  const t0 = Date.now();
  const records = loadRecords(cfg.data.train, cfg.data.maxSamples ?? undefined);
  scanOrderWarnings(records).forEach((line) => log(line));
  const parts = split(cfg, records);
  if (parts.train.length === 0)
    throw new Error(`${cfg.data.train.join(', ')}: no training samples left after the validation split`);
  const trainSet = prepareRecords(parts.train, cfg.data);
  const valSet = prepareRecords(validationRecords(cfg, parts.val, records), cfg.data);
  const K = records[0]!.spectra.length - 1;
  const lengths = trainSet.map((s) => s.target.length);
  const minLength = Math.min(...lengths);
  const crop = cfg.data.crop === 0 || cfg.data.crop >= minLength ? minLength : cfg.data.crop;
  if (cfg.data.crop === 0 && Math.max(...lengths) !== minLength)
    log(
      `data.crop 0: the samples differ in length (${minLength}..${Math.max(...lengths)} points); training windows of ${minLength}`,
    );
  const domain = trainingDomain(parts.train, trainSet, processingOf(cfg.data.train));
  log(
    `data: ${trainSet.length} training / ${valSet.length} validation samples, K+1 = ${K + 1} levels, ${minLength === Math.max(...lengths) ? minLength : `${minLength}..${Math.max(...lengths)}`} points ` +
      `(windows of ${crop}), prepared in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  return { trainSet, valSet, K, crop, domain };
}

/** The validation records: data.val's, else those split off; with as many levels as training's. */
function validationRecords(
  cfg: NmrTrainConfig,
  splitOff: StackRecord[],
  records: StackRecord[],
): StackRecord[] {
  const valRecords = cfg.data.val !== null ? loadRecords(cfg.data.val) : splitOff;
  if (valRecords.length && valRecords[0]!.spectra.length !== records[0]!.spectra.length)
    throw new Error(
      `${cfg.data.val?.join(', ')}: ${valRecords[0]!.spectra.length} levels per sample, the training set has ${records[0]!.spectra.length}`,
    );
  return valRecords;
}

function buildModel(
  cfg: NmrTrainConfig,
  K: number,
  log: Log,
): { model: UNet1d; parameters: number; stackModel: boolean } {
  // A stack model takes every level as input channels and gives one output per sample: the
  // supervised terms apply to it; consistency and the T constraint compare outputs of separate
  // levels, which a stack model does not produce, so they are left out (logged below).
  const stackModel = cfg.model.inputLevels > 1;
  if (stackModel && cfg.model.inputLevels !== K + 1)
    throw new Error(
      `config.model.inputLevels: ${cfg.model.inputLevels}, but ${cfg.data.train.join(', ')} has K+1 = ${K + 1} levels per sample`,
    );
  const model = new UNet1d(cfg.model);
  const parameters = parameterSummary(model).total;
  log(
    `model: residual 1D U-Net, channels ${cfg.model.channels.join('-')}, ${parameters.toLocaleString('en-US')} parameters`,
  );
  if (stackModel)
    log(`stack input: the model sees all ${K + 1} levels; consistency and T-constraint weights are not used`);
  return { model, parameters, stackModel };
}

/** One AdamW and one per-step warmup + cosine schedule over both stages. */
function createOptimizer(
  cfg: NmrTrainConfig,
  model: UNet1d,
  trainSamples: number,
): {
  optimizer: torch.optim.AdamW;
  scheduler: torch.optim.WarmupCosineLR;
  stepsPerEpoch: number;
  totalEpochs: number;
} {
  const optimizer = new torch.optim.AdamW(model.parameters(), {
    lr: cfg.optim.lr,
    weightDecay: cfg.optim.weightDecay,
  });
  const stepsPerEpoch = cfg.stepsPerEpoch || Math.ceil(trainSamples / cfg.batchSamples);
  const totalEpochs = cfg.stageA.epochs + cfg.stageB.epochs;
  const scheduler = new torch.optim.WarmupCosineLR(optimizer, {
    warmupSteps: cfg.optim.warmupEpochs * stepsPerEpoch,
    totalSteps: totalEpochs * stepsPerEpoch,
    minFactor: cfg.optim.minLrFactor,
  });
  return { optimizer, scheduler, stepsPerEpoch, totalEpochs };
}

/** Restores weights, optimizer, schedule and generators from a training checkpoint (last.json). */
function resumeTraining(
  file: string,
  cfg: NmrTrainConfig,
  model: UNet1d,
  optimizer: torch.optim.AdamW,
  scheduler: torch.optim.WarmupCosineLR,
  totalEpochs: number,
  log: Log,
): TrainingState {
  const ck = torch.loadCheckpoint(checkpointBase(file));
  const saved = (ck.extra ?? {}) as { config?: NmrTrainConfig; history?: EpochRecord[]; best?: number };
  if (saved.config && JSON.stringify(saved.config.model) !== JSON.stringify(cfg.model))
    throw new CheckpointError(
      `${file}: the checkpoint's model (${JSON.stringify(saved.config.model)}) differs from the config's`,
    );
  try {
    torch.restoreFrom(ck, 'the weights', () => model.loadStateDict(ck.weights));
  } finally {
    torch.dispose(ck.weights);
  }
  if (!ck.optimizer || !ck.scheduler || ck.epoch === undefined || !ck.rng?.data)
    throw new CheckpointError(
      `${file}: not a training checkpoint (no optimizer, schedule, epoch or generator state); use last.json`,
    );
  try {
    torch.restoreFrom(ck, 'the optimizer state', () => optimizer.loadStateDict(ck.optimizer!));
  } finally {
    torch.dispose(ck.optimizer.state);
  }
  torch.restoreFrom(ck, 'the schedule', () => scheduler.loadStateDict(ck.scheduler!));
  const rng = new Rng(ck.rng.data);
  torch.restoreTorchRng(ck);
  log(`resumed from ${file} after epoch ${ck.epoch + 1}/${totalEpochs}`);
  return {
    rng,
    startEpoch: ck.epoch + 1,
    history: Array.isArray(saved.history) ? saved.history : [],
    best: typeof saved.best === 'number' ? saved.best : -Infinity,
  };
}

/** Trains one epoch, validates, logs, checkpoints and writes the history. */
function runEpoch(run: TrainingRun, state: TrainingState, epoch: number, endEpoch: number): void {
  const tEpoch = Date.now();
  const stage = stageAt(run.cfg, epoch);
  const weights = stageWeights(stage);
  const plan: EpochPlan = {
    epoch,
    stage,
    weights,
    minLevel: curriculumMinLevel(stage, run.data.K),
    usesOtherLevels: weights.cons !== 0 || weights.ratio !== 0 || weights.recOthers !== 0,
    order: state.rng.shuffle(run.data.trainSet.map((_, i) => i)),
  };
  run.model.train();
  const sums: LossSums = { loss: 0, rec: 0, deriv: 0, curv: 0, cons: 0, ratio: 0 };
  for (let step = 0; step < run.stepsPerEpoch; step++) {
    const values = trainStep(run, state.rng, plan, step);
    run.scheduler.step();
    for (const k of Object.keys(sums) as (keyof LossSums)[]) sums[k] += values[k];
    if (!run.quiet && (step + 1) % run.cfg.logEvery === 0 && step + 1 < run.stepsPerEpoch)
      run.log(
        `  [${stage.name}] epoch ${epoch + 1}/${run.totalEpochs} step ${step + 1}/${run.stepsPerEpoch} loss ${fmt(values.loss)} ` +
          `lr ${run.optimizer.paramGroups[0]!.lr.toExponential(2)} | ${pace(run, epoch * run.stepsPerEpoch + step + 1)}`,
      );
  }
  // One yardstick for every epoch: stage A's peak weight, not the stage's own (stage B may ramp it,
  // peakWeightEnd), so that the validation losses that choose best.json compare across epochs.
  const val = validate(run.model, run.data.valSet, run.cfg.stageA.loss.peakWeight);
  const n = run.stepsPerEpoch;
  const record: EpochRecord = {
    epoch: epoch + 1,
    stage: stage.name,
    lr: run.optimizer.paramGroups[0]!.lr,
    loss: sums.loss / n,
    rec: sums.rec / n,
    deriv: sums.deriv / n,
    curv: sums.curv / n,
    cons: sums.cons / n,
    ratio: sums.ratio / n,
    minLevel: plan.minLevel,
    val,
    seconds: (Date.now() - tEpoch) / 1000,
  };
  state.history.push(record);
  logEpoch(run, record);
  saveCheckpoints(run, state, record, endEpoch);
  writeJsonAtomic(join(run.cfg.out, 'history.json'), state.history);
}

/**
 * The samples of a step (in the epoch's order), a window start per sample, and the levels: level
 * 0 and the drawn levels k > 0 (all levels for a stack model).
 */
function drawBatch(
  run: TrainingRun,
  rng: Rng,
  plan: EpochPlan,
  step: number,
): { picked: PreparedSample[]; starts: number[]; levels: number[] } {
  const { batchSamples } = run.cfg;
  const { trainSet, K, crop } = run.data;
  const picked: PreparedSample[] = [];
  for (let b = 0; b < Math.min(batchSamples, trainSet.length); b++)
    picked.push(trainSet[plan.order[(step * batchSamples + b) % plan.order.length]!]!);
  const starts = picked.map((p) => rng.int(p.target.length - crop + 1));
  const levels = run.stackModel
    ? Array.from({ length: K + 1 }, (_, k) => k)
    : plan.usesOtherLevels
      ? drawLevels(K, plan.stage.cfg.extraLevels, plan.minLevel, rng)
      : [0];
  return { picked, starts, levels };
}

/**
 * A single-spectrum model's outputs for the [B, G, L] inputs, and with a scale head trained by the
 * NLL, the log-scale of the level-0 outputs [B, L].
 */
function singleOutputs(
  model: UNet1d,
  x: torch.Tensor,
  weights: LossWeights,
): { y: torch.Tensor; logScale: torch.Tensor | null } {
  const [B, G, L] = x.shape as [number, number, number];
  if (!(model.scale && (weights.nll ?? 0) !== 0))
    return { y: model.forward(x.reshape(B * G, L)).reshape(B, G, L), logScale: null };
  const { mean, logScale } = model.forwardWithScale(x.reshape(B * G, L));
  return { y: mean.reshape(B, G, L), logScale: logScale.reshape(B, G, L).select(1, 0) };
}

/** One optimizer step on a batch; stops the run on a non-finite loss or gradient norm. */
function trainStep(run: TrainingRun, rng: Rng, plan: EpochPlan, step: number): LossSums {
  const { cfg, model, stackModel } = run;
  const { crop } = run.data;
  const { weights, minLevel } = plan;
  const { picked, starts, levels } = drawBatch(run, rng, plan, step);
  return torch.tidy(() => {
    const batch = makeBatch(picked, levels, starts, crop);
    const parts = stackModel
      ? totalLoss(
          // One output group (level 0's slot), scored against the target like a level-0 output.
          { ...batch, x: batch.x.narrow(1, 0, 1), y: model.forward(batch.x), levels: [0] },
          weights,
        )
      : totalLoss(
          { ...batch, ...singleOutputs(model, batch.x, weights), consFrom: minLevel === 0 ? 0 : 1 },
          weights,
        );
    const v = {
      loss: parts.total.item(),
      rec: parts.rec.item(),
      deriv: parts.deriv.item(),
      curv: parts.curv.item(),
      cons: parts.cons.item(),
      ratio: parts.ratio.item(),
    };
    const at = `epoch ${plan.epoch + 1} step ${step + 1}`;
    if (!Number.isFinite(v.loss))
      throw new TrainingDivergedError(
        `training stopped: the loss is ${v.loss} at ${at} (stage ${plan.stage.name}; ` +
          `rec ${v.rec}, deriv ${v.deriv}, curv ${v.curv}, cons ${v.cons}, T ${v.ratio}). Lower optim.lr or set ` +
          `optim.gradClip, and check the data set for non-finite values; the last good checkpoint is ${run.lastBase}.json`,
      );
    model.zeroGrad();
    parts.total.backward();
    // gradClip 0: no clipping, but the norm is still checked
    const maxNorm = cfg.optim.gradClip > 0 ? cfg.optim.gradClip : Infinity;
    const norm = torch.nn.utils.clipGradNorm_(model.parameters(), maxNorm).item();
    if (!Number.isFinite(norm))
      throw new TrainingDivergedError(
        `training stopped: the gradient norm is ${norm} at ${at}; lower optim.lr ` +
          `or set optim.gradClip (the last good checkpoint is ${run.lastBase}.json)`,
      );
    run.optimizer.step();
    return v;
  });
}
