// Adamax, NAdam and RAdam: Adam's relatives, in exactly PyTorch 1.13's order of operations
// (torch/optim/adamax.py, nadam.py and radam.py, their _single_tensor_ forms). Their step counts
// are numbers and their bias corrections are computed in double precision, as Python does;
// NAdam's running product of momentum coefficients is a float32 scalar tensor in PyTorch, so it
// is rounded to float32 here after every multiplication, to give the same numbers. None has a
// capturable mode in PyTorch 1.13.
import type { Tensor } from '../tensor.js';
import { zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Optimizer, checkNumber, type ParamGroupInput, optionsOf } from './optimizer.js';
import { betasOption, betasText } from './adam.js';

/** Hyperparameters of Adamax (torch.optim.Adamax, its defaults): lr 2e-3, betas [0.9, 0.999], eps 1e-8, weightDecay 0, maximize false. */
export interface AdamaxOptions {
  lr: number;
  betas: number[];
  eps: number;
  weightDecay: number;
  maximize: boolean;
}

/** Hyperparameters of NAdam (torch.optim.NAdam, its defaults): lr 2e-3, betas [0.9, 0.999], eps 1e-8, weightDecay 0, momentumDecay 4e-3. */
export interface NAdamOptions {
  lr: number;
  betas: number[];
  eps: number;
  weightDecay: number;
  momentumDecay: number;
}

/** Hyperparameters of RAdam (torch.optim.RAdam, its defaults): lr 1e-3, betas [0.9, 0.999], eps 1e-8, weightDecay 0. */
export interface RAdamOptions {
  lr: number;
  betas: number[];
  eps: number;
  weightDecay: number;
}

function checkBetas(owner: string, betas: unknown): void {
  if (!Array.isArray(betas) || betas.length !== 2 || betas.some((b) => !(b >= 0 && b < 1))) {
    throw new RangeError(`${owner}: invalid betas ${betasText(betas)} (expected two numbers in [0, 1))`);
  }
}

function checkCommon(
  owner: string,
  h: { lr: number; eps: number; weightDecay: number; betas: number[] },
): void {
  checkNumber(owner, 'lr', h.lr);
  checkNumber(owner, 'eps', h.eps);
  checkNumber(owner, 'weightDecay', h.weightDecay);
  checkBetas(owner, h.betas);
}

const noCapturable = 'PyTorch 1.13 has none for it';

/**
 * Adamax (torch.optim.Adamax): Adam with the second moment replaced by an exponentially weighted
 * infinity norm of the gradients (`expInf`).
 */
export class Adamax extends Optimizer<AdamaxOptions> {
  protected override readonly capturableRefused = noCapturable;

  constructor(params: Tensor[] | ParamGroupInput<AdamaxOptions>[], options: Partial<AdamaxOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 2e-3,
      betas: betasOption(options.betas),
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0,
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: AdamaxOptions): void {
    checkCommon('Adamax', h);
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, eps, weightDecay, maximize } = group;
      const [beta1, beta2] = group.betas as [number, number];
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'expAvg', zerosLike(p));
        this.setStateTensor(state, 'expInf', zerosLike(p));
      }
      const step = (state.step as number) + 1;
      state.step = step;
      let grad = maximize ? raw.neg() : raw;
      if (weightDecay !== 0) grad = grad.add(p, weightDecay);
      const expAvg = state.expAvg as Tensor;
      const expInf = state.expInf as Tensor;
      expAvg.mul_(beta1).add_(grad, 1 - beta1);
      // PyTorch takes the amax of the two stacked: the elementwise maximum, the same values
      expInf.copy_(aten.maximum(expInf.mul_(beta2), grad.abs().add_(eps)));
      const clr = lr / (1 - beta1 ** step);
      aten.addcdiv_(p, expAvg, expInf, -clr);
    });
  }
}

/**
 * NAdam (torch.optim.NAdam): Adam with Nesterov momentum, its momentum coefficient warmed up by
 * momentumDecay (Dozat's schedule); `muProduct` holds the running product of the coefficients.
 */
export class NAdam extends Optimizer<NAdamOptions> {
  protected override readonly capturableRefused = noCapturable;

  constructor(params: Tensor[] | ParamGroupInput<NAdamOptions>[], options: Partial<NAdamOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 2e-3,
      betas: betasOption(options.betas),
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0,
      momentumDecay: options.momentumDecay ?? 4e-3,
    });
  }

  protected validate(h: NAdamOptions): void {
    checkCommon('NAdam', h);
    checkNumber('NAdam', 'momentumDecay', h.momentumDecay);
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, eps, weightDecay, momentumDecay } = group;
      const [beta1, beta2] = group.betas as [number, number];
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        state.muProduct = 1;
        this.setStateTensor(state, 'expAvg', zerosLike(p));
        this.setStateTensor(state, 'expAvgSq', zerosLike(p));
      }
      const step = (state.step as number) + 1;
      state.step = step;
      const biasCorrection2 = 1 - beta2 ** step;
      const grad = weightDecay !== 0 ? raw.add(p, weightDecay) : raw;
      const mu = beta1 * (1 - 0.5 * 0.96 ** (step * momentumDecay));
      const muNext = beta1 * (1 - 0.5 * 0.96 ** ((step + 1) * momentumDecay));
      // float32 arithmetic, as on PyTorch's scalar tensor (the coefficients cast to float32
      // first); PyTorch's next product multiplies by mu once more, and so does this one
      const muProduct = Math.fround((state.muProduct as number) * Math.fround(mu));
      const muProductNext = Math.fround(Math.fround(muProduct * Math.fround(mu)) * Math.fround(muNext));
      state.muProduct = muProduct;
      const expAvg = state.expAvg as Tensor;
      const expAvgSq = state.expAvgSq as Tensor;
      expAvg.mul_(beta1).add_(grad, 1 - beta1);
      aten.addcmul_(expAvgSq.mul_(beta2), grad, grad, 1 - beta2);
      const denom = aten.div_Scalar(expAvgSq, biasCorrection2).sqrt().add_(eps);
      aten.addcdiv_(p, grad, denom, (-lr * (1 - mu)) / (1 - muProduct));
      aten.addcdiv_(p, expAvg, denom, (-lr * muNext) / (1 - muProductNext));
    });
  }
}

/**
 * RAdam (torch.optim.RAdam): Adam with its adaptive rate rectified for the variance of the
 * second moment early on; while the approximated simple moving average is 5 steps long or
 * less, the step is plain momentum.
 */
export class RAdam extends Optimizer<RAdamOptions> {
  protected override readonly capturableRefused = noCapturable;

  constructor(params: Tensor[] | ParamGroupInput<RAdamOptions>[], options: Partial<RAdamOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1e-3,
      betas: betasOption(options.betas),
      eps: options.eps ?? 1e-8,
      weightDecay: options.weightDecay ?? 0,
    });
  }

  protected validate(h: RAdamOptions): void {
    checkCommon('RAdam', h);
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, eps, weightDecay } = group;
      const [beta1, beta2] = group.betas as [number, number];
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'expAvg', zerosLike(p));
        this.setStateTensor(state, 'expAvgSq', zerosLike(p));
      }
      const step = (state.step as number) + 1;
      state.step = step;
      const biasCorrection1 = 1 - beta1 ** step;
      const biasCorrection2 = 1 - beta2 ** step;
      const grad = weightDecay !== 0 ? raw.add(p, weightDecay) : raw;
      const expAvg = state.expAvg as Tensor;
      const expAvgSq = state.expAvgSq as Tensor;
      expAvg.mul_(beta1).add_(grad, 1 - beta1);
      aten.addcmul_(expAvgSq.mul_(beta2), grad, grad, 1 - beta2);
      const corrected = expAvg.div(biasCorrection1);
      const rhoInf = 2 / (1 - beta2) - 1;
      const rhoT = rhoInf - (2 * step * beta2 ** step) / biasCorrection2;
      if (rhoT > 5) {
        const rect = Math.sqrt(((rhoT - 4) * (rhoT - 2) * rhoInf) / ((rhoInf - 4) * (rhoInf - 2) * rhoT));
        // Python's number / tensor is the tensor's reciprocal times the number
        const adaptiveLr = expAvgSq.sqrt().add_(eps).reciprocal().mul(Math.sqrt(biasCorrection2));
        p.add_(corrected.mul(lr).mul(adaptiveLr).mul(rect), -1);
      } else p.add_(corrected.mul(lr), -1);
    });
  }
}
