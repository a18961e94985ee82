// The NMR trainer's output per epoch: the progress line with its pace, and the checkpoints
// (best.json when the epoch scores best, last.json every checkpointEvery epochs).
import * as torch from '../../torch/index.js';
import { formatSeconds } from '../../util/progress.js';
import { modelMetadata } from '../model/denoise.js';
import type { EpochRecord, TrainingRun, TrainingState } from './run.js';

/** A loss or score as the progress lines print it. */
export const fmt = (v: number): string => (Number.isFinite(v) ? v.toPrecision(4) : String(v));

/** The line of a finished epoch: its losses, validation scores, time and the run's pace. */
export function logEpoch(run: TrainingRun, record: EpochRecord): void {
  const { val } = record;
  run.log(
    `[${record.stage}] epoch ${record.epoch}/${run.totalEpochs} loss ${fmt(record.loss)} (rec ${fmt(record.rec)} deriv ${fmt(record.deriv)} ` +
      `curv ${fmt(record.curv)} cons ${fmt(record.cons)} T ${fmt(record.ratio)}; k >= ${record.minLevel}) | ` +
      // one sample has none to hold out (nor has valFraction 0): see saveCheckpoints
      (!Number.isFinite(val.rec)
        ? 'no validation'
        : `val rec ${fmt(val.rec)} ` +
          (Number.isFinite(val.energySnrDb)
            ? `energy SNR ${val.energySnrDb.toFixed(2)} dB (input ${val.inputEnergySnrDb.toFixed(2)})`
            : 'no ground truth')) +
      ` | ${record.seconds.toFixed(1)} s` +
      (record.epoch * run.stepsPerEpoch < run.pace.endStep
        ? `, ${pace(run, record.epoch * run.stepsPerEpoch)}`
        : ''),
  );
}

/**
 * The run's pace after `stepsDone` of its steps: steps per second over this call so far (the
 * validations and checkpoints included, so that the ETA holds) and the time to its last epoch.
 */
export function pace(run: TrainingRun, stepsDone: number): string {
  const { start, firstStep, endStep } = run.pace;
  const seconds = (performance.now() - start) / 1000;
  const rate = (stepsDone - firstStep) / Math.max(seconds, 1e-9);
  return `${rate.toFixed(1)} steps/s, ETA ${formatSeconds(rate > 0 ? (endStep - stepsDone) / rate : Infinity)}`;
}

/** Saves best.json when the epoch scores best so far, and last.json every checkpointEvery epochs. */
export function saveCheckpoints(
  run: TrainingRun,
  state: TrainingState,
  record: EpochRecord,
  endEpoch: number,
): void {
  const { cfg, model } = run;
  const { val } = record;
  const epoch = record.epoch - 1;
  // Without truth the validation loss decides. Without validation samples nothing held out can
  // choose, and the training losses of the stages weigh different terms (stage B adds the T
  // constraint and noisier levels), so a lower one is no better model: best.json follows the
  // schedule to its last epoch.
  const score = Number.isFinite(val.energySnrDb)
    ? val.energySnrDb
    : Number.isFinite(val.rec)
      ? -val.rec
      : record.epoch;
  const extra = {
    config: cfg,
    history: state.history,
    best: Math.max(state.best, Number.isFinite(score) ? score : -Infinity),
  };
  if (Number.isFinite(score) && score > state.best) {
    state.best = score;
    torch.saveCheckpoint(run.bestBase, {
      weights: model.stateDict(),
      metadata: modelMetadata(cfg.model, run.data.domain),
      epoch,
      torchRng: false,
      extra,
    });
  }
  if ((epoch + 1) % cfg.checkpointEvery === 0 || epoch + 1 === endEpoch) {
    torch.saveCheckpoint(run.lastBase, {
      weights: model.stateDict(),
      metadata: modelMetadata(cfg.model, run.data.domain),
      optimizer: run.optimizer.stateDict(),
      scheduler: run.scheduler.stateDict(),
      epoch,
      step: (epoch + 1) * run.stepsPerEpoch,
      rng: { data: state.rng.state() },
      extra,
    });
  }
}
