// Rprop and ASGD in exactly PyTorch 1.13's order of operations (torch/optim/rprop.py and asgd.py,
// their _single_tensor_ forms, dense gradients). ASGD keeps eta and mu in float32 scalar tensors
// in PyTorch (torch.tensor of a Python float), so here they are JavaScript numbers rounded to
// float32 where PyTorch stores them, to give the same numbers. Neither has a capturable mode in
// PyTorch 1.13.
import type { Tensor } from '../tensor.js';
import { zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Optimizer, checkNumber, type ParamGroupInput, optionsOf } from './optimizer.js';

/** Hyperparameters of Rprop (torch.optim.Rprop, its defaults): lr 1e-2, etas [0.5, 1.2], stepSizes [1e-6, 50], maximize false. */
export interface RpropOptions {
  lr: number;
  /** The factors that shrink and grow a step size, as [etaminus, etaplus] with 0 < etaminus < 1 < etaplus. */
  etas: number[];
  /** The bounds every step size is clamped to, as [min, max]. */
  stepSizes: number[];
  maximize: boolean;
}

/** Hyperparameters of ASGD (torch.optim.ASGD, its defaults): lr 1e-2, lambd 1e-4, alpha 0.75, t0 1e6, weightDecay 0, maximize false. */
export interface ASGDOptions {
  lr: number;
  /** The decay term: the parameters shrink by 1 - lambd eta each step, and eta decays with it. */
  lambd: number;
  /** The power of eta's decay: eta = lr / (1 + lambd lr step)^alpha. */
  alpha: number;
  /** The step after which averaging starts (mu = 1 / max(1, step - t0)). */
  t0: number;
  weightDecay: number;
  maximize: boolean;
}

/**
 * Rprop, resilient backpropagation (torch.optim.Rprop): each element moves by its own step size
 * against the sign of its gradient. A step size grows by etaplus while the gradient keeps its
 * sign, shrinks by etaminus when it flips (and that element then skips the step, its stored
 * gradient zeroed), and stays within stepSizes. The state holds `prev` (the last gradient used),
 * `stepSize` (filled with the group's lr on the first step) and `step`. Meant for full-batch
 * training: the signs of minibatch gradients are noisy.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const model = new torch.nn.Linear(4, 2);
 * const opt = new torch.optim.Rprop(model.parameters(), { lr: 0.01, etas: [0.5, 1.2] });
 * torch.tidy(() => model.forward(torch.randn([8, 4])).square().mean().backward());
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class Rprop extends Optimizer<RpropOptions> {
  protected override readonly capturableRefused = 'PyTorch 1.13 has none for Rprop';

  constructor(params: Tensor[] | ParamGroupInput<RpropOptions>[], options: Partial<RpropOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1e-2,
      etas: options.etas ? [...options.etas] : [0.5, 1.2],
      stepSizes: options.stepSizes ? [...options.stepSizes] : [1e-6, 50],
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: RpropOptions): void {
    checkNumber('Rprop', 'lr', h.lr);
    const etas = h.etas as unknown;
    if (
      !Array.isArray(etas) ||
      etas.length !== 2 ||
      !(typeof etas[0] === 'number' && etas[0] > 0 && etas[0] < 1) ||
      !(typeof etas[1] === 'number' && etas[1] > 1 && Number.isFinite(etas[1]))
    ) {
      throw new RangeError(
        `Rprop: invalid etas [${String(etas)}] (expected [etaminus, etaplus] with 0 < etaminus < 1 < etaplus)`,
      );
    }
    const sizes = h.stepSizes as unknown;
    if (
      !Array.isArray(sizes) ||
      sizes.length !== 2 ||
      !sizes.every((s) => typeof s === 'number' && Number.isFinite(s) && s >= 0) ||
      sizes[0] > sizes[1]
    ) {
      throw new RangeError(
        `Rprop: invalid stepSizes [${String(sizes)}] (expected [min, max], finite numbers with 0 <= min <= max)`,
      );
    }
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const [etaminus, etaplus] = group.etas as [number, number];
      const [min, max] = group.stepSizes as [number, number];
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'prev', zerosLike(p));
        this.setStateTensor(state, 'stepSize', aten.full_like(raw, group.lr));
      }
      state.step = (state.step as number) + 1;
      const grad = group.maximize ? raw.neg() : raw;
      const prev = state.prev as Tensor;
      const stepSize = state.stepSize as Tensor;
      // PyTorch's sequence of masked writes into the sign of grad x prev
      let factor = grad.mul(prev).sign();
      factor = factor.maskedFill(factor.gt(0), etaplus);
      factor = factor.maskedFill(factor.lt(0), etaminus);
      factor = factor.maskedFill(factor.eq(0), 1);
      aten.clamp_(stepSize.mul_(factor), min, max);
      // where the sign flipped the element skips this step and forgets its gradient
      const used = grad.maskedFill(factor.eq(etaminus), 0);
      aten.addcmul_(p, used.sign(), stepSize, -1);
      prev.copy_(used);
    });
  }
}

/**
 * ASGD, averaged stochastic gradient descent (torch.optim.ASGD): SGD whose rate decays as
 * eta = lr / (1 + lambd lr step)^alpha, the parameters shrunk by 1 - lambd eta each step, and a
 * running average of the parameters in the state (`ax`) from step t0 on. The state holds `eta`,
 * `mu` (the averaging weight 1 / max(1, step - t0)), `ax` and `step`; the averaged parameters are
 * `ax`, to copy into a model for evaluation.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const model = new torch.nn.Linear(4, 2);
 * const opt = new torch.optim.ASGD(model.parameters(), { lr: 0.05, t0: 100 });
 * torch.tidy(() => model.forward(torch.randn([8, 4])).square().mean().backward());
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class ASGD extends Optimizer<ASGDOptions> {
  protected override readonly capturableRefused = 'PyTorch 1.13 has none for ASGD';

  constructor(params: Tensor[] | ParamGroupInput<ASGDOptions>[], options: Partial<ASGDOptions> = {}) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1e-2,
      lambd: options.lambd ?? 1e-4,
      alpha: options.alpha ?? 0.75,
      t0: options.t0 ?? 1e6,
      weightDecay: options.weightDecay ?? 0,
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: ASGDOptions): void {
    checkNumber('ASGD', 'lr', h.lr);
    checkNumber('ASGD', 'lambd', h.lambd);
    checkNumber('ASGD', 'alpha', h.alpha);
    checkNumber('ASGD', 't0', h.t0);
    checkNumber('ASGD', 'weightDecay', h.weightDecay);
  }

  step(): void {
    this.updateEach((p, raw, group) => {
      const { lr, lambd, alpha, t0, weightDecay, maximize } = group;
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        state.eta = Math.fround(lr);
        state.mu = 1;
        this.setStateTensor(state, 'ax', zerosLike(p));
      }
      const step = (state.step as number) + 1;
      state.step = step;
      let grad = maximize ? raw.neg() : raw;
      if (weightDecay !== 0) grad = grad.add(p, weightDecay);
      const eta = state.eta as number;
      const mu = state.mu as number;
      p.mul_(1 - lambd * eta);
      p.add_(grad, -eta);
      const ax = state.ax as Tensor;
      if (mu !== 1) ax.add_(p.sub(ax).mul(mu));
      else ax.copy_(p);
      state.eta = Math.fround(lr / Math.pow(1 + lambd * lr * step, alpha));
      state.mu = Math.fround(1 / Math.max(1, step - t0));
    });
  }
}
