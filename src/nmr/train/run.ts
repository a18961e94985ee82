// What the NMR trainer's parts share: the record of an epoch, the run (data, model, optimizer,
// schedule, checkpoints, pace) and the state carried from epoch to epoch.
import type * as torch from '../../torch/index.js';
import type { Rng } from '../../util/rng.js';
import type { UNet1d } from '../model/unet.js';
import type { TrainingDomain } from '../model/domain.js';
import type { NmrTrainConfig } from './config.js';
import type { PreparedSample } from './samples.js';
import type { LossWeights } from './losses.js';
import type { StageState } from './schedule.js';
import type { ValidationScores } from './validation.js';

/** One epoch of an NMR training run: stage, learning rate, loss terms and validation scores. */
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

export type Log = (line: string) => void;

/** The prepared samples of a run and what follows from them. */
export interface TrainingData {
  trainSet: PreparedSample[];
  valSet: PreparedSample[];
  /** Index of the highest level: K + 1 levels per sample. */
  K: number;
  /** Points of each training window. */
  crop: number;
  domain: TrainingDomain;
}

/** What every epoch of a run uses. */
export interface TrainingRun {
  cfg: NmrTrainConfig;
  log: Log;
  data: TrainingData;
  model: UNet1d;
  /** The model takes all K + 1 levels as input channels (see buildModel). */
  stackModel: boolean;
  optimizer: torch.optim.AdamW;
  scheduler: torch.optim.WarmupCosineLR;
  stepsPerEpoch: number;
  totalEpochs: number;
  lastBase: string;
  bestBase: string;
  quiet: boolean;
  /** When this call's first step started and which step of the run it was (for rate and ETA). */
  pace: { start: number; firstStep: number; endStep: number };
}

/** What a checkpoint carries from epoch to epoch. */
export interface TrainingState {
  rng: Rng;
  startEpoch: number;
  history: EpochRecord[];
  /** Best checkpoint score so far (higher is better). */
  best: number;
}

/** One epoch's plan: the stage, its loss weights and curriculum, and the sample order. */
export interface EpochPlan {
  epoch: number;
  stage: StageState;
  weights: LossWeights;
  minLevel: number;
  usesOtherLevels: boolean;
  order: number[];
}

/** The loss terms of a step or an epoch (the training part of an {@link EpochRecord}). */
export type LossSums = Pick<EpochRecord, 'loss' | 'rec' | 'deriv' | 'curv' | 'cons' | 'ratio'>;
