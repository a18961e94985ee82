// AdamW (decoupled weight decay, optional AMSGrad) in exactly PyTorch 1.13's order of operations
// (torch/optim/adamw.py, _single_tensor_adamw, capturable=False): the step count is a number and
// the bias corrections are computed in double precision, as Python does. Capturable mode (CUDA
// graphs) follows PyTorch's capturable=True: the step count and the learning rate live in device
// tensors and the bias corrections are computed there, in float32.
import { Tensor } from '../tensor.js';
import { scalarTensor, zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Optimizer,
  checkNumber,
  type OptimizerStateDict,
  type ParamGroupInput,
  type ParamState,
} from './optimizer.js';

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
      const { eps, weightDecay, amsgrad, maximize } = group;
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
      let second = expAvgSq;
      // capturable mode: the learning rate and the step count in device tensors
      const rate = this.rateOf(group);
      const stepTensor = rate ? this.stepTensor(state, p) : null;
      let step = 0;
      if (stepTensor) stepTensor.add_(1);
      else state.step = step = this.stepNumber(state) + 1;

      if (rate) {
        if (weightDecay !== 0) p.mul_(rate.mul(-weightDecay).add_(1));
      } else p.mul_(1 - group.lr * weightDecay);
      expAvg.mul_(beta1).add_(grad, 1 - beta1);
      aten.addcmul_(expAvgSq.mul_(beta2), grad, grad, 1 - beta2);
      if (amsgrad) {
        let max = state.maxExpAvgSq as Tensor | undefined;
        // A group switched to amsgrad after state existed starts its maximum at zero.
        if (max === undefined) max = this.setStateTensor(state, 'maxExpAvgSq', zerosLike(p));
        max.copy_(aten.maximum(max, expAvgSq));
        second = max;
      }
      if (rate && stepTensor) {
        // PyTorch's capturable form: the bias corrections from the step tensor, on the device
        const biasCorrection1 = aten.pow_Scalar(beta1, stepTensor).neg().add_(1);
        const biasCorrection2 = aten.pow_Scalar(beta2, stepTensor).neg().add_(1);
        const stepSizeNeg = rate.div(biasCorrection1).neg();
        const denom = second
          .sqrt()
          .div(biasCorrection2.sqrt().mul(stepSizeNeg))
          .add_(stepSizeNeg.reciprocal().mul(eps));
        aten.addcdiv_(p, expAvg, denom, 1);
        return;
      }
      const biasCorrection1 = 1 - beta1 ** step;
      const biasCorrection2 = 1 - beta2 ** step;
      const stepSize = group.lr / biasCorrection1;
      const biasCorrection2Sqrt = Math.sqrt(biasCorrection2);
      const denom = aten.div__Scalar(second.sqrt(), biasCorrection2Sqrt).add_(eps);
      aten.addcdiv_(p, expAvg, denom, -stepSize);
    });
  }

  /**
   * The step count as a number: a count kept in a device tensor by capturable mode is read back
   * once (a wait for the device) when the eager form takes over again.
   */
  private stepNumber(state: ParamState): number {
    const step = state.step;
    if (!(step instanceof Tensor)) return step as number;
    const n = step.item();
    step.dispose();
    state.step = n;
    return n;
  }

  /** Capturable mode's step count: a float32 device tensor, made from the count once. */
  private stepTensor(state: ParamState, p: Tensor): Tensor {
    const step = state.step;
    if (step instanceof Tensor) return step;
    return this.setStateTensor(state, 'step', scalarTensor(step as number, 'float32', p.device));
  }

  /** The state with step counts as numbers (capturable mode's device counts read back), as checkpoints store them. */
  override stateDict(): OptimizerStateDict {
    const dict = super.stateDict();
    for (const s of Object.values(dict.state)) if (s.step instanceof Tensor) s.step = s.step.item();
    return dict;
  }
}
