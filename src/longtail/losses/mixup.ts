// Mixup as SADE / BalPoE's Combiner computes it: the model sees lam * x_a + (1 - lam) * x_b and
// the loss is lam * L(y_a) + (1 - lam) * L(y_b). lam is a number, or (graph mode, where a
// number would be frozen into the capture) a 0-d tensor on the loss's device.
import { Tensor, tidy } from '../../torch/index.js';
import type { Loss, LossExtra, ModelOutput } from './types.js';

export function mixupLoss(
  loss: Loss,
  out: ModelOutput,
  ya: Tensor,
  yb: Tensor,
  lam: number | Tensor,
  extra?: LossExtra,
): Tensor {
  if (typeof lam === 'number' && !(lam >= 0 && lam <= 1))
    throw new Error(`mixup: lambda must be in [0, 1], got ${lam}`);
  if (loss.forwardMixup) return loss.forwardMixup(out, ya, yb, lam, extra);
  return tidy(() => mixed(lam, loss.forward(out, ya, extra), loss.forward(out, yb, extra)));
}

/** lam * a + (1 - lam) * b, with lam a number or a 0-d tensor. */
export function mixed(lam: number | Tensor, a: Tensor, b: Tensor): Tensor {
  if (lam instanceof Tensor) return tidy(() => a.mul(lam).add(b.mul(lam.neg().add(1))));
  return a.mul(lam).add(b.mul(1 - lam));
}
