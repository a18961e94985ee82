// The per-step figures of an epoch (loss sum, correct predictions, the first non-finite loss)
// accumulated on the model's device, so that a training step never waits for the device: the
// host reads them only at a progress tick and at the epoch's end (one read of four numbers).
// The sums are float64 tensors updated in the order of the steps: the sum of the same float32
// losses (each times its batch size, exact in float64) in the same order is bit for bit the sum
// the host used to keep in JS numbers, so the progress line and metrics.jsonl are unchanged.
import * as torch from '../../torch/index.js';

/** What the accumulators hold when read. */
export interface StepFiguresValue {
  /** Sum over the steps of loss x batch size. */
  lossSum: number;
  /** Correctly predicted images. */
  correct: number;
  /** The first step (1-based) whose loss was NaN or infinite; 0 when none was. */
  badStep: number;
  /** That step's loss (NaN, Infinity or -Infinity); 0 when none was. */
  badLoss: number;
}

export class StepFigures {
  /** [lossSum, correct, badStep, badLoss] in float64 on the device. */
  private readonly acc: torch.Tensor;

  constructor(device: torch.DeviceLike) {
    this.acc = torch.keep(torch.zeros([4], 'float64', device));
  }

  /**
   * Adds one step: its mean loss over `n` images, its predictions and targets. Only device
   * work is queued; nothing is read back.
   */
  add(loss: torch.Tensor, pred: torch.Tensor, y: torch.Tensor, n: number, step: number | torch.Tensor): void {
    torch.tidy(() => {
      const stepValue =
        typeof step === 'number' ? torch.scalarTensor(step, 'float64', this.acc.device) : step.to('float64');
      const l = loss.detach().to('float64');
      const correct = pred.eq(y).sum().to('float64');
      // the first non-finite loss: its step and value, kept until read
      const first = torch.aten.logical_and(
        torch.aten.logical_not(torch.aten.isfinite(l)),
        this.acc.select(0, 2).eq(0),
      );
      const bad = torch.where(first, torch.stack([stepValue, l]), this.acc.narrow(0, 2, 2));
      this.acc.narrow(0, 0, 2).add_(torch.stack([l.mul(n), correct]));
      this.acc.narrow(0, 2, 2).copy_(bad);
    });
  }

  /** Starts over (a new epoch): the same tensor, zeroed in place, so a captured step keeps using it. */
  reset(): void {
    this.acc.zero_();
  }

  /** Reads the accumulators (the one point where the host waits for the device). */
  read(): StepFiguresValue {
    const [lossSum, correct, badStep, badLoss] = this.acc.toFloat64Array();
    return { lossSum: lossSum!, correct: correct!, badStep: badStep!, badLoss: badLoss! };
  }

  dispose(): void {
    this.acc.dispose();
  }
}
