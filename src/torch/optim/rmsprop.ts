// RMSprop in exactly PyTorch 1.13's order of operations (torch/optim/rmsprop.py,
// _single_tensor_rmsprop): a running mean of squared gradients (and of gradients, centered),
// optional momentum and L2 weight decay. Capturable mode reads the learning rate from a device
// tensor, as the other optimizers do.
import type { Tensor } from '../tensor.js';
import { zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Optimizer, checkNumber, type ParamGroupInput, optionsOf } from './optimizer.js';

/** Hyperparameters of RMSprop (torch.optim.RMSprop, its defaults): lr 1e-2, alpha 0.99, eps 1e-8, weightDecay 0, momentum 0, centered and maximize false. */
export interface RMSpropOptions {
  lr: number;
  alpha: number;
  eps: number;
  weightDecay: number;
  momentum: number;
  centered: boolean;
  maximize: boolean;
}

/**
 * RMSprop (torch.optim.RMSprop): each step divides the gradient by the root of a running mean of
 * its squares (less the squared running mean of the gradient, when centered).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const model = new torch.nn.Linear(4, 2);
 * const opt = new torch.optim.RMSprop(model.parameters(), { lr: 1e-3, momentum: 0.9 });
 * torch.tidy(() => model.forward(torch.randn([8, 4])).square().mean().backward());
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class RMSprop extends Optimizer<RMSpropOptions> {
  constructor(params: Tensor[] | ParamGroupInput<RMSpropOptions>[], options: Partial<RMSpropOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1e-2,
      alpha: options.alpha ?? 0.99,
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0,
      momentum: options.momentum ?? 0,
      centered: options.centered ?? false,
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: RMSpropOptions): void {
    checkNumber('RMSprop', 'lr', h.lr);
    checkNumber('RMSprop', 'alpha', h.alpha);
    checkNumber('RMSprop', 'eps', h.eps);
    checkNumber('RMSprop', 'weightDecay', h.weightDecay);
    checkNumber('RMSprop', 'momentum', h.momentum);
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, alpha, eps, weightDecay, momentum, centered, maximize } = group;
      let grad = maximize ? raw.neg() : raw;
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'squareAvg', zerosLike(p));
        if (momentum > 0) this.setStateTensor(state, 'momentumBuffer', zerosLike(p));
        if (centered) this.setStateTensor(state, 'gradAvg', zerosLike(p));
      }
      state.step = (state.step as number) + 1;
      if (weightDecay !== 0) grad = grad.add(p, weightDecay);
      const squareAvg = state.squareAvg as Tensor;
      aten.addcmul_(squareAvg.mul_(alpha), grad, grad, 1 - alpha);
      let avg: Tensor;
      if (centered) {
        // a group switched to centered after state existed starts its mean at zero
        const gradAvg =
          (state.gradAvg as Tensor | undefined) ?? this.setStateTensor(state, 'gradAvg', zerosLike(p));
        gradAvg.mul_(alpha).add_(grad, 1 - alpha);
        avg = aten.sqrt_(aten.addcmul_(squareAvg.clone(), gradAvg, gradAvg, -1)).add_(eps);
      } else avg = squareAvg.sqrt().add_(eps);
      const rate = this.rateOf(group);
      if (momentum > 0) {
        const buf =
          (state.momentumBuffer as Tensor | undefined) ??
          this.setStateTensor(state, 'momentumBuffer', zerosLike(p));
        aten.addcdiv_(buf.mul_(momentum), grad, avg, 1);
        if (rate) aten.addcmul_(p, buf, rate, -1);
        else p.add_(buf, -lr);
      } else if (rate) aten.addcmul_(p, grad.div(avg), rate, -1);
      else aten.addcdiv_(p, grad, avg, -lr);
    });
  }
}
