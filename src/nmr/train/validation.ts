// Validation of an NMR training run after each epoch: the reconstruction loss of the level-0
// output and, where the simulator's truth is known, the energy SNR of output and input.
import * as torch from '../../torch/index.js';
import type { UNet1d } from '../model/unet.js';
import { makeBatch, type PreparedSample } from './samples.js';
import { peakWeightedL1 } from './losses.js';
import { energySnrDb } from '../eval/metrics.js';

export interface ValidationScores {
  /** Peak-weighted L1 of the level-0 output against the target (the reconstruction loss). */
  rec: number;
  /** Mean energy SNR (dB) of the level-0 output and input against the simulator's truth (NaN without truth). */
  energySnrDb: number;
  inputEnergySnrDb: number;
}

/** The validation scores of the model on the held-out samples (the model is left in training mode). */
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
            snr += energySnrDb(out.subarray(j * L, (j + 1) * L), s.truth, 1e-300);
            snrIn += energySnrDb(s.levels[0]!, s.truth, 1e-300);
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
