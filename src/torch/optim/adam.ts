// Adam and AdamW in exactly PyTorch 1.13's order of operations (torch/optim/adam.py and adamw.py,
// _single_tensor_adam(w), capturable=False): the step count is a number and the bias corrections
// are computed in double precision, as Python does. Capturable mode (CUDA graphs) follows
// PyTorch's capturable=True: the step count and the learning rate live in device tensors and the
// bias corrections are computed there, in float32. The two differ only in weight decay: Adam adds
// it to the gradient (L2), AdamW shrinks the weights apart from the gradient (decoupled).
import { Tensor } from '../tensor.js';
import { scalarTensor, zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { describeValue } from '../../util/arguments.js';
import {
  Optimizer,
  checkNumber,
  type OptimizerStateDict,
  type ParamGroup,
  type ParamGroupInput,
  type ParamState,
  optionsOf,
} from './optimizer.js';

/** betas as a message shows them: the numbers, or what was given instead of two. */
export function betasText(betas: unknown): string {
  return Array.isArray(betas) && betas.every((b) => typeof b === 'number')
    ? `[${betas.join(', ')}]`
    : describeValue(betas);
}

/**
 * The betas an optimizer keeps: a copy of the given array (the caller's is not shared), what was
 * given when it is no array (the optimizer's check then names it), or the default.
 */
export function betasOption(betas: unknown, fallback: number[] = [0.9, 0.999]): number[] {
  if (!betas) return fallback;
  return Array.isArray(betas) ? [...(betas as number[])] : (betas as number[]);
}

/** Hyperparameters of Adam (torch.optim.Adam): lr, betas, eps, weightDecay (L2, added to the gradient), amsgrad, maximize. */
export interface AdamOptions {
  lr: number;
  betas: number[];
  eps: number;
  weightDecay: number;
  amsgrad: boolean;
  maximize: boolean;
}

/** Hyperparameters of AdamW (torch.optim.AdamW): as Adam's, with weightDecay decoupled from the gradient. */
export type AdamWOptions = AdamOptions;

function defaults(options: Partial<AdamOptions>, weightDecay: number): AdamOptions {
  return {
    lr: optionsOf(weightDecay === 0 ? 'Adam' : 'AdamW', options).lr ?? 1e-3,
    betas: betasOption(options.betas),
    eps: options.eps ?? 1e-8,
    weightDecay: options.weightDecay ?? weightDecay,
    amsgrad: options.amsgrad ?? false,
    maximize: options.maximize ?? false,
  };
}

/** What Adam and AdamW share: the moments, AMSGrad, the bias corrections, capturable mode. */
abstract class AdamBase extends Optimizer<AdamOptions> {
  /** AdamW's weight decay: shrink the weights by lr x weightDecay before the update. */
  protected abstract readonly decoupled: boolean;

  protected validate(h: AdamOptions): void {
    const owner = this.constructor.name;
    checkNumber(owner, 'lr', h.lr);
    checkNumber(owner, 'eps', h.eps);
    checkNumber(owner, 'weightDecay', h.weightDecay);
    if (!Array.isArray(h.betas) || h.betas.length !== 2 || h.betas.some((b) => !(b >= 0 && b < 1))) {
      throw new RangeError(`${owner}: invalid betas ${betasText(h.betas)} (expected two numbers in [0, 1))`);
    }
  }

  step(): void {
    this.updateEach((p, raw, group) => this.update(p, raw, group));
  }

  private update(p: Tensor, raw: Tensor, group: ParamGroup<AdamOptions>): void {
    const { eps, weightDecay, amsgrad, maximize } = group;
    const [beta1, beta2] = group.betas as [number, number];
    let grad = maximize ? raw.neg() : raw;
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

    if (weightDecay !== 0) {
      if (!this.decoupled) grad = grad.add(p, weightDecay);
      else if (rate) p.mul_(rate.mul(-weightDecay).add_(1));
      else p.mul_(1 - group.lr * weightDecay);
    }
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

/**
 * Adam (torch.optim.Adam), with PyTorch's defaults: lr 1e-3, betas [0.9, 0.999], eps 1e-8, no
 * weight decay. A weightDecay here is L2 regularisation (added to the gradient, so it passes
 * through the moments); AdamW decouples it.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const w = torch.keep(torch.zeros([3]).requiresGrad_());
 * const opt = new torch.optim.Adam([w], { lr: 0.1 });
 * for (let i = 0; i < 100; i++) {
 *   torch.tidy(() => w.sub(torch.tensor([1, 2, 3])).square().sum().backward());
 *   opt.step();
 *   opt.zeroGrad();
 * }
 * console.log(w.toArray()); // close to [1, 2, 3]
 * ```
 */
export class Adam extends AdamBase {
  protected readonly decoupled = false;

  constructor(params: Tensor[] | ParamGroupInput<AdamOptions>[], options: Partial<AdamOptions> = {}) {
    super(params, defaults(options, 0));
  }
}

/** Adam with decoupled weight decay (torch.optim.AdamW), with PyTorch's defaults (weightDecay 1e-2). */
export class AdamW extends AdamBase {
  protected readonly decoupled = true;

  constructor(params: Tensor[] | ParamGroupInput<AdamWOptions>[], options: Partial<AdamWOptions> = {}) {
    super(params, defaults(options, 1e-2));
  }
}
