// AdamW (decoupled weight decay, optional AMSGrad) in exactly PyTorch 1.13's order of operations
// (torch/optim/adamw.py, _single_tensor_adamw, capturable=False): the step count is a number and
// the bias corrections are computed in double precision, as Python does.
import type { Tensor } from '../tensor.js';
import { zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Optimizer, checkNumber, type ParamGroupInput } from './optimizer.js';

/** Hyperparameters of AdamW (torch.optim.AdamW): lr, betas, eps, weightDecay, amsgrad, maximize (PyTorch's defaults). */
export interface AdamWOptions {
  lr: number;
  betas: number[];
  eps: number;
  weightDecay: number;
  amsgrad: boolean;
  maximize: boolean;
}

/** Adam with decoupled weight decay (torch.optim.AdamW). */
export class AdamW extends Optimizer<AdamWOptions> {
  constructor(params: Tensor[] | ParamGroupInput<AdamWOptions>[], options: Partial<AdamWOptions> = {}) {
    super(params, {
      lr: options.lr ?? 1e-3,
      betas: options.betas ? [...options.betas] : [0.9, 0.999],
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 1e-2,
      amsgrad: options.amsgrad ?? false,
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: AdamWOptions): void {
    checkNumber('AdamW', 'lr', h.lr);
    checkNumber('AdamW', 'eps', h.eps);
    checkNumber('AdamW', 'weightDecay', h.weightDecay);
    if (!Array.isArray(h.betas) || h.betas.length !== 2 || h.betas.some((b) => !(b >= 0 && b < 1))) {
      throw new RangeError(`AdamW: invalid betas [${String(h.betas)}] (expected two numbers in [0, 1))`);
    }
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, eps, weightDecay, amsgrad, maximize } = group;
      const [beta1, beta2] = group.betas as [number, number];
      const grad = maximize ? raw.neg() : raw;
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'expAvg', zerosLike(p));
        this.setStateTensor(state, 'expAvgSq', zerosLike(p));
        if (amsgrad) this.setStateTensor(state, 'maxExpAvgSq', zerosLike(p));
      }
      const expAvg = state.expAvg as Tensor;
      const expAvgSq = state.expAvgSq as Tensor;
      const step = (state.step as number) + 1;
      state.step = step;

      p.mul_(1 - lr * weightDecay);
      expAvg.mul_(beta1).add_(grad, 1 - beta1);
      aten.addcmul_(expAvgSq.mul_(beta2), grad, grad, 1 - beta2);

      const biasCorrection1 = 1 - beta1 ** step;
      const biasCorrection2 = 1 - beta2 ** step;
      const stepSize = lr / biasCorrection1;
      const biasCorrection2Sqrt = Math.sqrt(biasCorrection2);
      let second = expAvgSq;
      if (amsgrad) {
        let max = state.maxExpAvgSq as Tensor | undefined;
        // A group switched to amsgrad after state existed starts its maximum at zero.
        if (max === undefined) max = this.setStateTensor(state, 'maxExpAvgSq', zerosLike(p));
        max.copy_(aten.maximum(max, expAvgSq));
        second = max;
      }
      const denom = aten.div__Scalar(second.sqrt(), biasCorrection2Sqrt).add_(eps);
      aten.addcdiv_(p, expAvg, denom, -stepSize);
    });
  }
}
