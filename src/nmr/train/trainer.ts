// Two-stage training of the U-Net (seed section 6): stage A mainly supervised against the
// pseudo ground truth with 1-2 extra levels for consistency; stage B with larger consistency and
// T-constraint weights, all levels and an SNR curriculum (high-SNR levels first). One AdamW
// (lr 3e-4, wd 1e-4) and one warmup + cosine schedule (per step) span both stages. Checkpoints
// hold weights, optimizer, schedule, epoch and both generators, so a resumed run continues
// exactly as an uninterrupted one would.
import { join } from 'node:path';
import * as torch from '../../torch/index.js';
import { Rng } from '../../util/rng.js';
import { writeJsonAtomic, ensureDir } from '../../util/fs.js';
import { UNet1d, parameterSummary } from '../model/unet.js';
import { checkpointBase, modelMetadata } from '../model/denoise.js';
import type { NmrTrainConfig, StageConfig } from './config.js';
import { drawLevels, makeBatch, prepareRecords, type PreparedSample } from './samples.js';
import { loadRecords, processingOf, type StackRecord } from './sources.js';
import { trainingDomain } from '../model/domain.js';
import { totalLoss, peakWeightedL1, type LossWeights } from './losses.js';
import { CheckpointError, UserError } from '../../util/errors.js';

export interface EpochRecord {
  epoch: number;
  stage: 'A' | 'B';
  lr: number;
  loss: number;
  rec: number;
  deriv: number;
  curv: number;
  cons: number;
  ratio: number;
  minLevel: number;
  val: ValidationScores;
  seconds: number;
}

export interface ValidationScores {
  /** Peak-weighted L1 of the level-0 output against the target (seed 5.1). */
  rec: number;
  /** Mean energy SNR (dB) of the level-0 output and input against the simulator's truth (NaN without truth). */
  energySnrDb: number;
  inputEnergySnrDb: number;
}

export interface TrainResult {
  out: string;
  epochs: number;
  history: EpochRecord[];
  lastCheckpoint: string;
  bestCheckpoint: string;
  parameters: number;
}

export interface TrainOptions {
  resume?: string;
  log?: (line: string) => void;
  /** Stop after this many epochs of this call (tests of resume); default: the configured total. */
  stopAfterEpochs?: number;
}

/** The loss became NaN or infinite or exploded: the message names the stage, epoch and step; exit code 3. */
export class TrainingDivergedError extends UserError {
  constructor(message: string) {
    super(message, { exitCode: 3 });
  }
}

interface StageState {
  name: 'A' | 'B';
  cfg: StageConfig;
  epochInStage: number;
}

function stageAt(cfg: NmrTrainConfig, epoch: number): StageState {
  return epoch < cfg.stageA.epochs
    ? { name: 'A', cfg: cfg.stageA, epochInStage: epoch }
    : { name: 'B', cfg: cfg.stageB, epochInStage: epoch - cfg.stageA.epochs };
}

/** Lowest level taking part in consistency / T at this epoch (the SNR curriculum). */
export function curriculumMinLevel(stage: StageState, K: number): number {
  const n = stage.cfg.curriculumEpochs;
  if (n <= 0) return stage.name === 'A' ? 1 : 0;
  // From K - 1 (the two highest-SNR levels) down to 0 evenly over n epochs.
  return Math.max(0, K - 1 - Math.floor((stage.epochInStage * K) / n));
}

/** The stage's loss weights at this epoch, with the linear late-training ramps of stage B. */
export function stageWeights(stage: StageState): LossWeights {
  const w = { ...stage.cfg.loss };
  const span = Math.max(1, stage.cfg.epochs - 1);
  const f = Math.min(1, stage.epochInStage / span);
  if (stage.cfg.peakWeightEnd !== null) w.peakWeight += (stage.cfg.peakWeightEnd - w.peakWeight) * f;
  if (stage.cfg.curvEnd !== null) w.curv += (stage.cfg.curvEnd - w.curv) * f;
  return w;
}

function energySnrDb(y: ArrayLike<number>, truth: ArrayLike<number>): number {
  let signal = 0;
  let error = 0;
  for (let i = 0; i < truth.length; i++) {
    signal += truth[i]! * truth[i]!;
    error += (y[i]! - truth[i]!) ** 2;
  }
  return 10 * Math.log10(signal / Math.max(error, 1e-300));
}

export function validate(
  model: UNet1d,
  samples: PreparedSample[],
  peakWeight: number,
  batch = 4,
): ValidationScores {
  if (samples.length === 0) return { rec: NaN, energySnrDb: NaN, inputEnergySnrDb: NaN };
  model.eval();
  let rec = 0;
  let snr = 0;
  let snrIn = 0;
  let withTruth = 0;
  // Samples of one length go through together (real samples may differ in length).
  const byLength = new Map<number, PreparedSample[]>();
  for (const s of samples) byLength.set(s.target.length, [...(byLength.get(s.target.length) ?? []), s]);
  for (const [L, list] of byLength) {
    for (let i = 0; i < list.length; i += batch) {
      const group = list.slice(i, i + batch);
      torch.noGrad(() =>
        torch.tidy(() => {
          const stackLevels = model.config.inputLevels;
          const b = makeBatch(
            group,
            Array.from({ length: stackLevels }, (_, k) => k),
            group.map(() => 0),
            L,
          );
          const y = model
            .forward(stackLevels > 1 ? b.x : b.x.reshape(group.length, L))
            .reshape(group.length, L);
          rec += peakWeightedL1(y, b.target, b.peak, peakWeight).item() * group.length;
          const out = y.toFloat32Array();
          group.forEach((s, j) => {
            if (!s.truth) return;
            snr += energySnrDb(out.subarray(j * L, (j + 1) * L), s.truth);
            snrIn += energySnrDb(s.levels[0]!, s.truth);
            withTruth++;
          });
        }),
      );
    }
  }
  model.train();
  return {
    rec: rec / samples.length,
    energySnrDb: withTruth ? snr / withTruth : NaN,
    inputEnergySnrDb: withTruth ? snrIn / withTruth : NaN,
  };
}

/** Global L2 norm of the gradients, clipped to maxNorm (when > 0) in place. */
function clipGradients(params: torch.Tensor[], maxNorm: number): number {
  return torch.noGrad(() =>
    torch.tidy(() => {
      const grads = params.map((p) => p.grad).filter((g): g is torch.Tensor => g !== null);
      let sq = 0;
      for (const g of grads) sq += g.square().sum().item();
      const norm = Math.sqrt(sq);
      if (maxNorm > 0 && norm > maxNorm) for (const g of grads) g.mul_(maxNorm / (norm + 1e-6));
      return norm;
    }),
  );
}

function split<T>(cfg: NmrTrainConfig, all: T[]): { train: T[]; val: T[] } {
  if (cfg.data.val !== null) return { train: all, val: [] };
  const n = all.length;
  const nVal = cfg.data.valFraction > 0 && n > 1 ? Math.max(1, Math.round(n * cfg.data.valFraction)) : 0;
  return { train: all.slice(0, n - nVal), val: all.slice(n - nVal) };
}

const fmt = (v: number): string => (Number.isFinite(v) ? v.toPrecision(4) : String(v));

export function trainNmr(cfg: NmrTrainConfig, options: TrainOptions = {}): TrainResult {
  const log = options.log ?? ((line: string) => console.log(line));
  torch.setNumThreads(cfg.threads);
  torch.manualSeed(cfg.seed);
  ensureDir(cfg.out);
  const t0 = Date.now();
  const records = loadRecords(cfg.data.train, cfg.data.maxSamples ?? undefined);
  const parts = split(cfg, records);
  if (parts.train.length === 0)
    throw new Error(`${cfg.data.train.join(', ')}: no training samples left after the validation split`);
  const trainSet = prepareRecords(parts.train, cfg.data);
  let valRecords: StackRecord[] = parts.val;
  if (cfg.data.val !== null) valRecords = loadRecords(cfg.data.val);
  if (valRecords.length && valRecords[0]!.spectra.length !== records[0]!.spectra.length)
    throw new Error(
      `${cfg.data.val?.join(', ')}: ${valRecords[0]!.spectra.length} levels per sample, the training set has ${records[0]!.spectra.length}`,
    );
  const valSet = prepareRecords(valRecords, cfg.data);
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
  const optimizer = new torch.optim.AdamW(model.parameters(), {
    lr: cfg.optim.lr,
    weightDecay: cfg.optim.weightDecay,
  });
  const stepsPerEpoch = cfg.stepsPerEpoch || Math.ceil(trainSet.length / cfg.batchSamples);
  const totalEpochs = cfg.stageA.epochs + cfg.stageB.epochs;
  const scheduler = new torch.optim.WarmupCosineLR(optimizer, {
    warmupSteps: cfg.optim.warmupEpochs * stepsPerEpoch,
    totalSteps: totalEpochs * stepsPerEpoch,
    minFactor: cfg.optim.minLrFactor,
  });
  let rng = new Rng(cfg.seed);
  let startEpoch = 0;
  let history: EpochRecord[] = [];
  let best = -Infinity;
  if (options.resume) {
    const ck = torch.loadCheckpoint(checkpointBase(options.resume));
    const saved = (ck.extra ?? {}) as { config?: NmrTrainConfig; history?: EpochRecord[]; best?: number };
    if (saved.config && JSON.stringify(saved.config.model) !== JSON.stringify(cfg.model))
      throw new CheckpointError(
        `${options.resume}: the checkpoint's model (${JSON.stringify(saved.config.model)}) differs from the config's`,
      );
    try {
      torch.restoreFrom(ck, 'the weights', () => model.loadStateDict(ck.weights));
    } finally {
      torch.dispose(ck.weights);
    }
    if (!ck.optimizer || !ck.scheduler || ck.epoch === undefined || !ck.rng?.data)
      throw new CheckpointError(
        `${options.resume}: not a training checkpoint (no optimizer, schedule, epoch or generator state); use last.json`,
      );
    try {
      torch.restoreFrom(ck, 'the optimizer state', () => optimizer.loadStateDict(ck.optimizer!));
    } finally {
      torch.dispose(ck.optimizer.state);
    }
    torch.restoreFrom(ck, 'the schedule', () => scheduler.loadStateDict(ck.scheduler!));
    rng = new Rng(ck.rng.data);
    torch.restoreTorchRng(ck);
    startEpoch = ck.epoch + 1;
    history = Array.isArray(saved.history) ? saved.history : [];
    best = typeof saved.best === 'number' ? saved.best : -Infinity;
    log(`resumed from ${options.resume} after epoch ${ck.epoch + 1}/${totalEpochs}`);
  }

  const lastBase = join(cfg.out, 'last');
  const bestBase = join(cfg.out, 'best');
  const endEpoch = Math.min(totalEpochs, startEpoch + (options.stopAfterEpochs ?? totalEpochs));
  const indices = trainSet.map((_, i) => i);
  for (let epoch = startEpoch; epoch < endEpoch; epoch++) {
    const tEpoch = Date.now();
    const stage = stageAt(cfg, epoch);
    const weights = stageWeights(stage);
    const minLevel = curriculumMinLevel(stage, K);
    const usesOtherLevels = weights.cons !== 0 || weights.ratio !== 0 || weights.recOthers !== 0;
    const order = rng.shuffle(indices.slice());
    const sums = { loss: 0, rec: 0, deriv: 0, curv: 0, cons: 0, ratio: 0 };
    model.train();
    for (let step = 0; step < stepsPerEpoch; step++) {
      const picked: PreparedSample[] = [];
      for (let b = 0; b < Math.min(cfg.batchSamples, trainSet.length); b++)
        picked.push(trainSet[order[(step * cfg.batchSamples + b) % order.length]!]!);
      const starts = picked.map((p) => rng.int(p.target.length - crop + 1));
      const levels = stackModel
        ? Array.from({ length: K + 1 }, (_, k) => k)
        : usesOtherLevels
          ? drawLevels(K, stage.cfg.extraLevels, minLevel, rng)
          : [0];
      const values = torch.tidy(() => {
        const batch = makeBatch(picked, levels, starts, crop);
        const B = picked.length;
        const G = levels.length;
        const parts = stackModel
          ? totalLoss(
              // One output group (level 0's slot), scored against the target like a level-0 output.
              { ...batch, x: batch.x.narrow(1, 0, 1), y: model.forward(batch.x), levels: [0] },
              weights,
            )
          : totalLoss(
              {
                ...batch,
                y: model.forward(batch.x.reshape(B * G, crop)).reshape(B, G, crop),
                consFrom: minLevel === 0 ? 0 : 1,
              },
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
        if (!Number.isFinite(v.loss))
          throw new TrainingDivergedError(
            `training stopped: the loss is ${v.loss} at epoch ${epoch + 1} step ${step + 1} (stage ${stage.name}; ` +
              `rec ${v.rec}, deriv ${v.deriv}, curv ${v.curv}, cons ${v.cons}, T ${v.ratio}). Lower optim.lr or set ` +
              `optim.gradClip, and check the data set for non-finite values; the last good checkpoint is ${lastBase}.json`,
          );
        model.zeroGrad();
        parts.total.backward();
        const norm = clipGradients(model.parameters(), cfg.optim.gradClip);
        if (!Number.isFinite(norm))
          throw new TrainingDivergedError(
            `training stopped: the gradient norm is ${norm} at epoch ${epoch + 1} step ${step + 1}; lower optim.lr ` +
              `or set optim.gradClip (the last good checkpoint is ${lastBase}.json)`,
          );
        optimizer.step();
        return v;
      });
      scheduler.step();
      for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += values[k];
      if ((step + 1) % cfg.logEvery === 0 && step + 1 < stepsPerEpoch)
        log(
          `  [${stage.name}] epoch ${epoch + 1}/${totalEpochs} step ${step + 1}/${stepsPerEpoch} loss ${fmt(values.loss)} ` +
            `lr ${optimizer.paramGroups[0]!.lr.toExponential(2)}`,
        );
    }
    const val = validate(model, valSet, weights.peakWeight);
    const record: EpochRecord = {
      epoch: epoch + 1,
      stage: stage.name,
      lr: optimizer.paramGroups[0]!.lr,
      loss: sums.loss / stepsPerEpoch,
      rec: sums.rec / stepsPerEpoch,
      deriv: sums.deriv / stepsPerEpoch,
      curv: sums.curv / stepsPerEpoch,
      cons: sums.cons / stepsPerEpoch,
      ratio: sums.ratio / stepsPerEpoch,
      minLevel,
      val,
      seconds: (Date.now() - tEpoch) / 1000,
    };
    history.push(record);
    log(
      `[${stage.name}] epoch ${epoch + 1}/${totalEpochs} loss ${fmt(record.loss)} (rec ${fmt(record.rec)} deriv ${fmt(record.deriv)} ` +
        `curv ${fmt(record.curv)} cons ${fmt(record.cons)} T ${fmt(record.ratio)}; k >= ${minLevel}) | val rec ${fmt(val.rec)} ` +
        (Number.isFinite(val.energySnrDb)
          ? `energy SNR ${val.energySnrDb.toFixed(2)} dB (input ${val.inputEnergySnrDb.toFixed(2)})`
          : 'no ground truth') +
        ` | ${record.seconds.toFixed(1)} s`,
    );
    // Without truth the validation loss decides; without validation samples, the training loss.
    const score = Number.isFinite(val.energySnrDb)
      ? val.energySnrDb
      : Number.isFinite(val.rec)
        ? -val.rec
        : -record.loss;
    const extra = { config: cfg, history, best: Math.max(best, Number.isFinite(score) ? score : -Infinity) };
    if (Number.isFinite(score) && score > best) {
      best = score;
      torch.saveCheckpoint(bestBase, {
        weights: model.stateDict(),
        metadata: modelMetadata(cfg.model, domain),
        epoch,
        torchRng: false,
        extra,
      });
    }
    if ((epoch + 1) % cfg.checkpointEvery === 0 || epoch + 1 === endEpoch) {
      torch.saveCheckpoint(lastBase, {
        weights: model.stateDict(),
        metadata: modelMetadata(cfg.model, domain),
        optimizer: optimizer.stateDict(),
        scheduler: scheduler.stateDict(),
        epoch,
        step: (epoch + 1) * stepsPerEpoch,
        rng: { data: rng.state() },
        extra,
      });
    }
    writeJsonAtomic(join(cfg.out, 'history.json'), history);
  }
  model.dispose();
  return {
    out: cfg.out,
    epochs: endEpoch,
    history,
    lastCheckpoint: `${lastBase}.json`,
    bestCheckpoint: `${bestBase}.json`,
    parameters,
  };
}
