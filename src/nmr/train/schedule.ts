// The two stages of NMR training over epochs: which stage an epoch is in, the SNR curriculum's
// lowest level taking part in consistency, and the loss weights with stage B's late ramps.
import type { NmrTrainConfig, StageConfig } from './config.js';
import type { LossWeights } from './losses.js';

/** Where an epoch falls: its stage, the stage's settings and the epoch within the stage. */
export interface StageState {
  name: 'A' | 'B';
  cfg: StageConfig;
  epochInStage: number;
}

export function stageAt(cfg: NmrTrainConfig, epoch: number): StageState {
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
