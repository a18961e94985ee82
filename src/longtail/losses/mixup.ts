// Mixup as SADE / BalPoE's Combiner computes it: the model sees lam * x_a + (1 - lam) * x_b and
// the loss is lam * L(y_a) + (1 - lam) * L(y_b).
import { tidy, type Tensor } from '../../torch/index.js';
import type { Loss, LossExtra, ModelOutput } from './types.js';

export function mixupLoss(
  loss: Loss,
  out: ModelOutput,
  ya: Tensor,
  yb: Tensor,
  lam: number,
  extra?: LossExtra,
): Tensor {
  if (!(lam >= 0 && lam <= 1)) throw new Error(`mixup: lambda must be in [0, 1], got ${lam}`);
  if (loss.forwardMixup) return loss.forwardMixup(out, ya, yb, lam, extra);
  return tidy(() =>
    loss
      .forward(out, ya, extra)
      .mul(lam)
      .add(loss.forward(out, yb, extra).mul(1 - lam)),
  );
}
