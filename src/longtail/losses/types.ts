// What every long-tail loss looks like to the trainer, and the small helpers they share.
import { Tensor } from '../../torch/index.js';
import type { DType } from '../../torch/index.js';

/** A model's result: the combined output [N, C] and, for multi-expert models, each expert's logits. */
export interface ModelOutput {
  output: Tensor;
  /** Per-expert logits [E, N, C] (the reference code's `extra_info['logits']`). */
  logits?: Tensor;
  /** Per-expert pooled features [E, N, D] (RIDE-EA's routers read them). */
  features?: Tensor;
}

export interface LossExtra {
  /** PRL: the batch's preference over experts (one weight per expert, on the simplex). */
  preference?: number[] | Tensor;
  /**
   * PRL with several preferences drawn per batch: each draw's preference and the outputs of the
   * experts generated for it. The loss is the mean of the draws' scalarized losses.
   */
  draws?: { preference: number[] | Tensor; out: ModelOutput }[];
  /** Distillation (RIDE): the teacher's combined output [N, C] for the batch, not differentiated. */
  teacher?: Tensor;
}

export interface Loss {
  /** The loss type, as written in configs. */
  readonly type: string;
  /**
   * The scalar loss. target: class indices (int64 [N]) or class probabilities [N, C] (soft
   * targets, e.g. mixup written as soft labels) where the loss supports them.
   */
  forward(out: ModelOutput, target: Tensor, extra?: LossExtra): Tensor;
  /**
   * lam * L(ya) + (1 - lam) * L(yb), where the loss needs to mix below the top level (PRL mixes the
   * per-expert losses before scalarizing). mixupLoss() uses it when present.
   */
  forwardMixup?(out: ModelOutput, ya: Tensor, yb: Tensor, lam: number | Tensor, extra?: LossExtra): Tensor;
  /** Called by the trainer before each epoch (1-based, as the reference trainers count). */
  setEpoch?(epoch: number): void;
  /**
   * For losses whose computation setEpoch changes: a string that changes exactly when it does
   * (graph mode captures the step again then). Absent: the computation never changes.
   */
  captureKey?(): string;
  /**
   * When the loss is CE(z_e + b_e) per expert (one entry per expert, or one for the combined
   * output; null = no bias): the biases b_e, from which test time reads the log prior each
   * expert's logits carry. Absent for losses that are not a logit-adjusted CE (LDAM, focal,
   * class-weighted CE).
   */
  readonly logitBiases?: readonly (readonly number[] | null)[];
}

/** A loss made of one term per expert (SADE, BalPoE, PRL). */
export interface ExpertLoss extends Loss {
  /** The per-expert losses L_e (a 1-d tensor [E]), before they are combined. */
  expertLosses(out: ModelOutput, target: Tensor): Tensor;
}

/** A float dtype for constants that must match the logits (float64 in golden tests). */
export function floatDtype(t: Tensor): DType {
  const d = t.dtype;
  return d === 'float64' || d === 'float16' || d === 'bfloat16' ? d : 'float32';
}

export function isSoftTarget(target: Tensor): boolean {
  return target.dtype !== 'int64' && target.dtype !== 'int32';
}

/** Refuses soft targets for a loss whose margin sits on the target class (LDAM, RIDE). */
export function requireClassIndices(lossName: string, target: Tensor): void {
  if (isSoftTarget(target)) {
    throw new Error(
      `${lossName} needs class indices (its LDAM margin is on the target class); for mixup use mixupLoss(loss, out, ya, yb, lam)`,
    );
  }
}

/** The per-expert logits of out, checked against the number of experts a loss was built for. */
export function expertLogits(out: ModelOutput, experts: number, lossName: string): Tensor {
  const logits = out.logits;
  if (!logits) {
    throw new Error(
      `${lossName} needs the per-expert logits [E, N, C] (out.logits); set "add_extra_info": true in the config`,
    );
  }
  const shape = logits.shape;
  if (shape.length !== 3 || shape[0] !== experts) {
    throw new Error(`${lossName}: expected per-expert logits of shape [${experts}, N, C], got [${shape}]`);
  }
  return logits;
}
