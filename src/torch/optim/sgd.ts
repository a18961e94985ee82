// SGD with momentum, dampening, Nesterov and (L2) weight decay, in exactly PyTorch 1.13's order of
// operations (torch/optim/sgd.py: _single_tensor_sgd, and on CUDA _multi_tensor_sgd, the same
// arithmetic in a few multi-tensor kernels per group), so results match it to float rounding.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import { Optimizer, checkNumber, type ParamGroup, type ParamGroupInput, optionsOf } from './optimizer.js';
import { isSparseHandle } from '../sparse-layout.js';
import { ArgumentError } from '../../util/arguments.js';

/** Hyperparameters of SGD (torch.optim.SGD): lr, momentum, dampening, weightDecay (default 0), nesterov, maximize (default false). */
export interface SGDOptions {
  lr: number;
  momentum: number;
  dampening: number;
  weightDecay: number;
  nesterov: boolean;
  maximize: boolean;
}

/**
 * Stochastic gradient descent with momentum, weight decay and Nesterov (torch.optim.SGD).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * import { nn, optim } from 'tailor/torch';
 * const model = new nn.Linear(4, 2);
 * const opt = new optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9, weightDecay: 5e-4 });
 * // per batch:
 * torch.tidy(() => model.forward(torch.randn([8, 4])).square().mean().backward());
 * opt.step();
 * opt.zeroGrad();
 * ```
 */
export class SGD extends Optimizer<SGDOptions> {
  protected override readonly takesSparseGradients = true;

  constructor(
    params: Tensor[] | ParamGroupInput<SGDOptions>[],
    options: Partial<SGDOptions> & { lr: number },
  ) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr,
      momentum: options.momentum ?? 0,
      dampening: options.dampening ?? 0,
      weightDecay: options.weightDecay ?? 0,
      nesterov: options.nesterov ?? false,
      maximize: options.maximize ?? false,
    });
  }

  protected validate(h: SGDOptions): void {
    checkNumber('SGD', 'lr', h.lr);
    checkNumber('SGD', 'momentum', h.momentum);
    checkNumber('SGD', 'weightDecay', h.weightDecay);
    checkNumber('SGD', 'dampening', h.dampening, -Infinity);
    if (h.nesterov && (h.momentum <= 0 || h.dampening !== 0)) {
      throw new RangeError('SGD: Nesterov momentum requires a momentum > 0 and zero dampening');
    }
  }

  /**
   * The multi-tensor step (PyTorch's `foreach`): each group's update in a few `_foreach_` kernels
   * instead of several per parameter, the same arithmetic. null (the default) uses it where a
   * group's parameters are on a GPU, as PyTorch does, where the per-parameter kernels' launches
   * (and, in a CUDA graph, their minimum run times) add up; the CPU keeps the per-parameter
   * step, so CPU results are unchanged bit for bit. Groups with `maximize` step per parameter.
   */
  foreach: boolean | null = null;

  step(): void {
    // the groups are independent: which form steps each does not depend on the others
    const together = this.paramGroups.filter((g) => this.stepsForeach(g));
    if (together.length > 0) this.stepForeach(together);
    if (together.length < this.paramGroups.length) this.stepEach((g) => !together.includes(g));
  }

  private stepsForeach(group: ParamGroup<SGDOptions>): boolean {
    if (group.maximize || group.params.length === 0) return false;
    // a group's parameters share a device in practice (the _foreach_ kernels need one per list)
    if (!(this.foreach ?? group.params[0]!.device.type === 'cuda')) return false;
    // sparse gradients step per parameter (the _foreach_ kernels take dense tensors only)
    return !group.params.some((p) => {
      const g = p.grad;
      const sparse = g !== null && isSparseHandle(g.handle);
      g?.dispose();
      return sparse;
    });
  }

  /** _multi_tensor_sgd: per group, the parameters with gradients updated together. */
  private stepForeach(groups: ParamGroup<SGDOptions>[]): void {
    noGrad(() =>
      tidy(() => {
        for (const group of groups) {
          const params = group.params.filter((p) => p.grad);
          if (params.length === 0) continue;
          const grads = params.map((p) => p.grad!);
          const { lr, momentum, dampening, weightDecay, nesterov } = group;
          let d = weightDecay !== 0 ? aten._foreach_add_List(grads, params, weightDecay) : grads;
          const owned = weightDecay !== 0;
          if (momentum !== 0) {
            const bufs: Tensor[] = [];
            const updated: Tensor[] = [];
            const updates: Tensor[] = [];
            params.forEach((p, i) => {
              const state = this.stateOf(p);
              const buf = state.momentumBuffer as Tensor | undefined;
              if (buf === undefined) {
                bufs.push(this.setStateTensor(state, 'momentumBuffer', d[i]!.clone().detach()));
              } else {
                bufs.push(buf);
                updated.push(buf);
                updates.push(d[i]!);
              }
            });
            if (updated.length > 0) {
              aten._foreach_mul__Scalar(updated, momentum);
              aten._foreach_add__List(updated, updates, 1 - dampening);
            }
            if (nesterov) {
              if (owned) aten._foreach_add__List(d, bufs, momentum);
              else d = aten._foreach_add_List(d, bufs, momentum);
            } else d = bufs;
          }
          // capturable: p - d * lr, one rounding more than the eager p + (-lr) * d
          const rate = this.rateOf(group);
          if (rate) aten._foreach_addcmul__Scalar(params, d, Array<Tensor>(params.length).fill(rate), -1);
          else aten._foreach_add__List(params, d, -lr);
        }
      }),
    );
  }

  /** _single_tensor_sgd, for the groups `which` accepts. */
  private stepEach(which: (group: ParamGroup<SGDOptions>) => boolean): void {
    this.updateEach((p, grad, group) => {
      if (!which(group)) return;
      const { lr, momentum, dampening, weightDecay, nesterov, maximize } = group;
      if (isSparseHandle(grad.handle)) this.checkSparse(group);
      // In-place arithmetic on d only once it is a temporary of ours (never on p.grad itself):
      // the same kernels on the same values, so the results are unchanged, with fewer allocations.
      const owned = maximize || weightDecay !== 0;
      let d = maximize ? grad.neg() : grad;
      if (weightDecay !== 0) d = maximize ? d.add_(p, weightDecay) : d.add(p, weightDecay);
      if (momentum !== 0) {
        const state = this.stateOf(p);
        let buf = state.momentumBuffer as Tensor | undefined;
        if (buf === undefined) {
          buf = this.setStateTensor(state, 'momentumBuffer', d.clone().detach());
        } else {
          buf.mul_(momentum).add_(d, 1 - dampening);
        }
        d = nesterov ? (owned ? d.add_(buf, momentum) : d.add(buf, momentum)) : buf;
      }
      const rate = this.rateOf(group);
      if (rate) aten.addcmul_(p, d, rate, -1);
      else p.add_(d, -lr);
    });
  }

  /**
   * A sparse gradient takes momentum, dampening, Nesterov and maximize (the buffer is then
   * sparse, as in PyTorch); weight decay adds the dense parameter to it, which PyTorch 1.13
   * refuses too, and the capturable step's addcmul_ takes dense tensors only.
   */
  private checkSparse(group: ParamGroup<SGDOptions>): void {
    if (group.weightDecay !== 0)
      throw new ArgumentError(
        'SGD.step: weightDecay does not work with sparse gradients (as in PyTorch): set weightDecay to 0 for the group of the sparse parameters',
      );
    if (this.rateOf(group))
      throw new ArgumentError(
        'SGD.step: the capturable step takes dense gradients only: set capturable to false',
      );
  }
}
