// Adagrad and Adadelta in exactly PyTorch 1.13's order of operations (torch/optim/adagrad.py,
// _single_tensor_adagrad, its sparse branch included, and adadelta.py, _single_tensor_adadelta). Neither has
// a capturable mode in PyTorch: Adagrad's decayed rate is a number computed from the step count
// on the host, which a captured CUDA graph would freeze.
import type { Tensor } from '../tensor.js';
import { zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Optimizer, checkNumber, type ParamGroupInput, optionsOf } from './optimizer.js';
import { isSparseHandle } from '../sparse-layout.js';
import { sparseLike } from './sparse-adam.js';
import { ArgumentError } from '../../util/arguments.js';

/** Hyperparameters of Adagrad (torch.optim.Adagrad, its defaults): lr 1e-2, lrDecay 0, weightDecay 0, initialAccumulatorValue 0, eps 1e-10, maximize false. */
export interface AdagradOptions {
  lr: number;
  lrDecay: number;
  weightDecay: number;
  initialAccumulatorValue: number;
  eps: number;
  maximize: boolean;
}

/**
 * Adagrad (torch.optim.Adagrad): each step divides the gradient by the root of the sum of all its
 * squares so far, with the rate decayed as lr / (1 + (step - 1) x lrDecay). As in PyTorch the
 * state (`sum`, filled with initialAccumulatorValue, and `step`) exists from construction, so a
 * state dict taken before the first step already holds it.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const model = new torch.nn.Linear(4, 2);
 * const opt = new torch.optim.Adagrad(model.parameters(), { lr: 0.1, lrDecay: 1e-3 });
 * torch.tidy(() => model.forward(torch.randn([8, 4])).square().mean().backward());
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class Adagrad extends Optimizer<AdagradOptions> {
  protected override readonly takesSparseGradients = true;
  protected override readonly capturableRefused =
    'its decayed learning rate is computed from the step count on the host (PyTorch 1.13 has none either)';

  constructor(params: Tensor[] | ParamGroupInput<AdagradOptions>[], options: Partial<AdagradOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1e-2,
      lrDecay: options.lrDecay ?? 0,
      weightDecay: options.weightDecay ?? 0,
      initialAccumulatorValue: options.initialAccumulatorValue ?? 0,
      eps: options.eps ?? 1e-10,
      maximize: options.maximize ?? false,
    });
    for (const group of this.paramGroups) {
      for (const p of group.params) this.initState(p, group.initialAccumulatorValue);
    }
  }

  protected validate(h: AdagradOptions): void {
    checkNumber('Adagrad', 'lr', h.lr);
    checkNumber('Adagrad', 'lrDecay', h.lrDecay);
    checkNumber('Adagrad', 'weightDecay', h.weightDecay);
    checkNumber('Adagrad', 'initialAccumulatorValue', h.initialAccumulatorValue);
    checkNumber('Adagrad', 'eps', h.eps);
  }

  private initState(p: Tensor, initial: number): void {
    const state = this.stateOf(p);
    if (state.sum !== undefined) return;
    state.step = 0;
    this.setStateTensor(state, 'sum', aten.full_like(p, initial));
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, lrDecay, weightDecay, eps, maximize } = group;
      // a group added after construction (or state freed by disposeState) starts here
      this.initState(p, group.initialAccumulatorValue);
      const state = this.stateOf(p);
      const step = (state.step as number) + 1;
      state.step = step;
      let grad = maximize ? raw.neg() : raw;
      const clr = lr / (1 + (step - 1) * lrDecay);
      const sum = state.sum as Tensor;
      if (isSparseHandle(grad.handle)) {
        if (weightDecay !== 0)
          throw new ArgumentError(
            'Adagrad.step: weightDecay does not work with sparse gradients (as in PyTorch): set weightDecay to 0 for the group of the sparse parameters',
          );
        // PyTorch's sparse branch: the update is not linear, so duplicate indices are summed first
        const g = grad.coalesce();
        const values = aten._values(g);
        sum.add_(sparseLike(g, values.pow(2)));
        const std = aten.sqrt_(aten._values(sum.sparseMask(g))).add_(eps);
        p.add_(sparseLike(g, values.div(std)), -clr);
        return;
      }
      if (weightDecay !== 0) grad = grad.add(p, weightDecay);
      aten.addcmul_(sum, grad, grad, 1);
      aten.addcdiv_(p, grad, sum.sqrt().add_(eps), -clr);
    });
  }
}

/** Hyperparameters of Adadelta (torch.optim.Adadelta, its defaults): lr 1, rho 0.9, eps 1e-6, weightDecay 0, maximize false. */
export interface AdadeltaOptions {
  lr: number;
  rho: number;
  eps: number;
  weightDecay: number;
  maximize: boolean;
}

/**
 * Adadelta (torch.optim.Adadelta): the step is the gradient scaled by the ratio of the roots of
 * running means of squared updates (`accDelta`) and squared gradients (`squareAvg`), times lr.
 */
export class Adadelta extends Optimizer<AdadeltaOptions> {
  protected override readonly capturableRefused = 'PyTorch 1.13 has none for Adadelta';

  constructor(params: Tensor[] | ParamGroupInput<AdadeltaOptions>[], options: Partial<AdadeltaOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1.0,
      rho: options.rho ?? 0.9,
      eps: options.eps ?? 1e-6,
      weightDecay: options.weightDecay ?? 0,
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: AdadeltaOptions): void {
    checkNumber('Adadelta', 'lr', h.lr);
    checkNumber('Adadelta', 'eps', h.eps);
    checkNumber('Adadelta', 'weightDecay', h.weightDecay);
    if (!(typeof h.rho === 'number' && h.rho >= 0 && h.rho <= 1)) {
      throw new RangeError(`Adadelta: invalid rho ${String(h.rho)} (expected a number in [0, 1])`);
    }
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, rho, eps, weightDecay, maximize } = group;
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'squareAvg', zerosLike(p));
        this.setStateTensor(state, 'accDelta', zerosLike(p));
      }
      state.step = (state.step as number) + 1;
      let grad = maximize ? raw.neg() : raw;
      if (weightDecay !== 0) grad = grad.add(p, weightDecay);
      const squareAvg = state.squareAvg as Tensor;
      const accDelta = state.accDelta as Tensor;
      aten.addcmul_(squareAvg.mul_(rho), grad, grad, 1 - rho);
      const std = aten.sqrt_(squareAvg.add(eps));
      const delta = aten.sqrt_(accDelta.add(eps)).div(std).mul_(grad);
      aten.addcmul_(accDelta.mul_(rho), delta, delta, 1 - rho);
      p.add_(delta, -lr);
    });
  }
}
