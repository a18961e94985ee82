// SparseAdam in exactly PyTorch 1.13's order of operations (torch/optim/sparse_adam.py and
// _functional.sparse_adam): a lazy Adam for sparse gradients (Embedding's `sparse: true`) that
// updates the moments and the parameter only at the rows a step's gradient touches.
import type { Tensor } from '../tensor.js';
import { zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import { ArgumentError } from '../../util/arguments.js';
import { isSparseHandle } from '../sparse-layout.js';
import { betasOption, betasText } from './adam.js';
import { Optimizer, checkNumber, optionsOf, type ParamGroupInput } from './optimizer.js';

/** Hyperparameters of SparseAdam (torch.optim.SparseAdam): lr 1e-3, betas [0.9, 0.999], eps 1e-8, maximize false. */
export interface SparseAdamOptions {
  lr: number;
  betas: number[];
  eps: number;
  maximize: boolean;
}

/**
 * A sparse tensor with the indices of the sparse `like` and these `values` (PyTorch's
 * make_sparse / _make_sparse): an empty one of `like`'s shape when either is empty.
 */
export function sparseLike(like: Tensor, values: Tensor): Tensor {
  const indices = aten._indices(like);
  if (indices.numel === 0 || values.numel === 0)
    return aten.sparse_coo_tensor_size(like.shape, values.dtype, null, like.device.name);
  return aten.sparse_coo_tensor_indices_size(
    indices,
    values,
    like.shape,
    values.dtype,
    null,
    like.device.name,
  );
}

/**
 * Adam for sparse gradients (torch.optim.SparseAdam): only the moments and the rows of the
 * parameter that a step's gradient touches change, with the bias corrections of each parameter's
 * step count. The parameters must be dense and their gradients sparse (an Embedding or
 * EmbeddingBag made with `sparse: true`); a dense gradient is refused, as in PyTorch (use Adam).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const emb = new torch.nn.Embedding(1000, 16, { sparse: true });
 * const opt = new torch.optim.SparseAdam(emb.parameters(), { lr: 0.01 });
 * torch.tidy(() => emb.forward(torch.tensor([3, 7, 3], { dtype: 'int64' })).square().sum().backward());
 * opt.step(); // rows 3 and 7 move; the other 998 and their moments stay as they were
 * opt.zeroGrad();
 * ```
 */
export class SparseAdam extends Optimizer<SparseAdamOptions> {
  protected override readonly takesSparseGradients = true;

  constructor(
    params: Tensor[] | ParamGroupInput<SparseAdamOptions>[],
    options: Partial<SparseAdamOptions> = {},
  ) {
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1e-3,
      betas: betasOption(options.betas),
      eps: options.eps ?? 1e-8,
      maximize: options.maximize ?? false,
    });
    const sparse: number[] = [];
    this.paramGroups.flatMap((g) => g.params).forEach((p, i) => isSparseHandle(p.handle) && sparse.push(i));
    if (sparse.length > 0)
      throw new ArgumentError(
        `SparseAdam: the parameters at indices [${sparse.join(', ')}] are sparse; SparseAdam needs dense parameters (with sparse gradients)`,
      );
  }

  protected validate(h: SparseAdamOptions): void {
    checkNumber('SparseAdam', 'lr', h.lr);
    checkNumber('SparseAdam', 'eps', h.eps);
    if (!Array.isArray(h.betas) || h.betas.length !== 2 || h.betas.some((b) => !(b >= 0 && b < 1)))
      throw new RangeError(
        `SparseAdam: invalid betas ${betasText(h.betas)} (expected two numbers in [0, 1))`,
      );
  }

  step(): void {
    let index = 0;
    this.updateEach((p, raw, group) => {
      index++;
      if (!isSparseHandle(raw.handle))
        throw new ArgumentError(
          `SparseAdam.step: parameter ${index - 1} has a dense gradient, which SparseAdam does not support (as in PyTorch): ` +
            'use Adam for it, or make the gradient sparse (an Embedding with sparse: true)',
        );
      const { lr, eps, maximize } = group;
      const [beta1, beta2] = group.betas as [number, number];
      const state = this.stateOf(p);
      if (state.step === undefined) {
        state.step = 0;
        this.setStateTensor(state, 'expAvg', zerosLike(p));
        this.setStateTensor(state, 'expAvgSq', zerosLike(p));
      }
      const step = (state.step as number) + 1;
      state.step = step;
      const expAvg = state.expAvg as Tensor;
      const expAvgSq = state.expAvgSq as Tensor;
      // the update is not linear, so the indices must be unique
      const grad = (maximize ? raw.neg() : raw).coalesce();
      const values = aten._values(grad);
      // old <- b * old + (1 - b) * new, as old += (1 - b) * (new - old) at the touched rows
      const oldExpAvg = aten._values(expAvg.sparseMask(grad));
      const expAvgUpdate = values.sub(oldExpAvg).mul_(1 - beta1);
      expAvg.add_(sparseLike(grad, expAvgUpdate));
      const oldExpAvgSq = aten._values(expAvgSq.sparseMask(grad));
      const expAvgSqUpdate = aten.sub__Tensor(values.pow(2), oldExpAvgSq).mul_(1 - beta2);
      expAvgSq.add_(sparseLike(grad, expAvgSqUpdate));
      // dense additions again, as PyTorch, sparing another sparse_mask
      const numer = expAvgUpdate.add_(oldExpAvg);
      expAvgSqUpdate.add_(oldExpAvgSq);
      const denom = aten.sqrt_(expAvgSqUpdate).add_(eps);
      const biasCorrection1 = 1 - beta1 ** step;
      const biasCorrection2 = 1 - beta2 ** step;
      const stepSize = (lr * Math.sqrt(biasCorrection2)) / biasCorrection1;
      p.add_(sparseLike(grad, aten.div__Tensor(numer, denom).mul_(-stepSize)));
    });
  }
}
