// One training step of the long-tail loop: the batch as tensors on the model's device (built on
// the host, or drawn and mixed up on the device), forward (under autocast where asked), backward,
// the gradient average of data-parallel runs and the optimizer step. Loss and accuracy go to the
// device-side step figures; nothing is read back to the host.
import * as torch from '../../torch/index.js';
import type { Rng } from '../../util/rng.js';
import type { Batch, MixedBatch } from '../data/batches.js';
import { mixupOnDevice, type DeviceBatch, type DeviceBatchSource } from '../data/device-batches.js';
import { mixupLoss } from '../losses/mixup.js';
import type { StepFigures } from './step-figures.js';
import { batchLayout } from './channels-last.js';
import type { GraphedSteps } from './graph-step.js';
import type { TrainOptions } from './train-options.js';

/** How one epoch trains: the DDP wrapper (data-parallel runs), autocast and its gradient scaler. */
export interface StepContext {
  ddp: torch.distributed.DistributedDataParallel<torch.distributed.Replica> | null;
  amp: torch.AmpMode | null;
  scaler: torch.GradScaler | null;
  /** The device-resident training set, when batches are drawn on the device. */
  source: DeviceBatchSource | null;
  /** The epoch's loss and accuracy sums on the device (one set for the run, reset per epoch). */
  figures: StepFigures;
  /** Graph mode's stepper (null: eager steps). */
  graphed: GraphedSteps | null;
}

/** One step's inputs as tensors on the model's device: images, targets, mixup partners. */
export interface StepInput {
  x: torch.Tensor;
  /** The batch's labels (the first image's targets under mixup). */
  yA: torch.Tensor;
  /** Mixup: the partner images' targets, mixed with weight 1 - lam (null: no mixup). */
  yB: torch.Tensor | null;
  /** Mixup's weight: a number, or in graph mode a 0-d tensor on the device. */
  lam: number | torch.Tensor;
  n: number;
}

/** A host-built batch (and its mixup) as step tensors. */
export function hostInput(batch: Batch, mixed: MixedBatch | null): StepInput {
  const x = torch.tensor(mixed ? mixed.x : batch.x, { shape: [batch.n, ...batch.shape] });
  const yA = torch.tensor(mixed ? mixed.yA : batch.y).long();
  const lam = mixed ? mixed.lam : 1;
  return { x, yA, yB: mixed && lam < 1 ? torch.tensor(mixed.yB).long() : null, lam, n: batch.n };
}

/** A device-drawn batch (mixed up on the device where the config says so) as step tensors. */
export function deviceInput(batch: DeviceBatch, mixupAlpha: number | undefined, rng: Rng): StepInput {
  if (!mixupAlpha) return { x: batch.x, yA: batch.y, yB: null, lam: 1, n: batch.n };
  const m = mixupOnDevice(batch.x, batch.y, mixupAlpha, rng);
  return { x: m.x, yA: batch.y, yB: m.lam < 1 ? m.yB : null, lam: m.lam, n: batch.n };
}

/**
 * Forward (under autocast where asked) and backward of one batch; its loss and correct
 * predictions go to the device-side figures. `step` is the 1-based step number, or a device
 * tensor holding it (graph mode: a number would be frozen into the capture).
 */
export function forwardBackward(
  o: TrainOptions,
  ctx: StepContext,
  input: StepInput,
  s: { rng: Rng; step: number | torch.Tensor; draws?: torch.Tensor | null },
): void {
  const { yA, yB, lam, n } = input;
  const x = batchLayout(input.x, o.channelsLast);
  const forward = () => {
    const { hostDraws } = o.system;
    const { out, extra } =
      s.draws && hostDraws ? hostDraws.forward(x, s.draws) : o.system.trainForward(x, s.rng);
    const loss = yB
      ? mixupLoss(o.system.loss, out, yA, yB, lam, extra)
      : o.system.loss.forward(out, yA, extra);
    return { out, loss };
  };
  const { out, loss } = ctx.amp ? torch.autocast(ctx.amp, o.system.device, forward) : forward();
  o.phases?.lap('forward');
  (ctx.scaler ? ctx.scaler.scaleLoss(loss) : loss).backward();
  ctx.figures.add(loss, out.output.argmax(1), yA, n, s.step);
}

/**
 * Forward, backward and optimizer step on one batch; its loss and correct predictions go to the
 * device-side figures (nothing is read back).
 */
export function trainStep(
  o: TrainOptions,
  ctx: StepContext,
  s: { input: () => StepInput; rng: Rng; step: number; draws?: torch.Tensor | null },
): void {
  const phases = o.phases;
  torch.tidy(() => {
    const input = s.input();
    phases?.lap('data');
    forwardBackward(o, ctx, input, s);
  });
  phases?.lap('backward');
  ctx.ddp?.syncGradients();
  if (ctx.scaler) ctx.scaler.step(o.optimizer);
  else o.optimizer.step();
  o.optimizer.zeroGrad();
  phases?.lap('optimizer');
}
