// The adaptive softmax of Grave et al. (torch.nn.AdaptiveLogSoftmaxWithLoss): a head over the
// frequent classes and one entry per cluster of rarer ones, each cluster a low-rank tail. The
// forward follows PyTorch 1.13's step by step (each tail sees only the rows whose target is in
// its cluster), so the values, the gradients and the seeded initialisation are PyTorch's.
import type { Tensor } from '../tensor.js';
import { zeros } from '../creation.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { Linear } from './layers.js';
import { ModuleList, Sequential } from './activation.js';
import { size } from './layer-util.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { flag, lossOptions, show, tensorArg } from './loss-checks.js';

/** Options of AdaptiveLogSoftmaxWithLoss (PyTorch's defaults: divValue 4, no head bias). */
export interface AdaptiveLogSoftmaxOptions {
  /** Cluster i's projection has inFeatures // divValue^(i+1) features: a number > 0. */
  divValue?: number;
  /** Whether the head Linear has a bias. */
  headBias?: boolean;
}

/** What AdaptiveLogSoftmaxWithLoss's forward returns (PyTorch's _ASMoutput). */
export interface AdaptiveLogSoftmaxOutput {
  /** The log-probability of each row's target: [N] (a 0-d tensor for an unbatched input). */
  output: Tensor;
  /** The mean negative log-likelihood, 0-d. */
  loss: Tensor;
}

/** Python's float `a // b` for a, b > 0 (PyTorch sizes the tails with it; 6 // 0.1 is 59, not 60). */
function pyFloorDiv(a: number, b: number): number {
  const mod = a % b;
  const div = (a - mod) / b;
  const floor = Math.floor(div);
  return div - floor > 0.5 ? floor + 1 : floor;
}

/**
 * Adaptive log-softmax with loss (torch.nn.AdaptiveLogSoftmaxWithLoss) for many classes sorted
 * by frequency: classes below cutoffs[0] are in the head, the rest in clusters [cutoffs[i],
 * cutoffs[i+1]) (the last ending at nClasses), each reached through the head's entry for it and
 * a tail `Sequential(Linear(inFeatures, hsz), Linear(hsz, size))` without biases. Parameters as
 * PyTorch's (`head.weight`, `head.bias`, `tail.0.0.weight`, `tail.0.1.weight`...), initialised as
 * PyTorch's Linear layers in that order.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const asm = new torch.nn.AdaptiveLogSoftmaxWithLoss(64, 10000, [100, 1000], { divValue: 4 });
 * const x = torch.randn([32, 64]);
 * const target = torch.randint(0, 10000, [32]);
 * const { output, loss } = asm.forward(x, target); // [32] log-probabilities, 0-d loss
 * const classes = asm.predict(x); // [32]
 * ```
 */
export class AdaptiveLogSoftmaxWithLoss extends Module {
  readonly head: Linear;
  readonly tail: ModuleList<Sequential>;
  /** The cutoffs as given, then nClasses (PyTorch's `cutoffs`). */
  readonly cutoffs: number[];
  readonly divValue: number;
  readonly headBias: boolean;
  /** The classes the head holds: cutoffs[0]. */
  readonly shortlistSize: number;
  readonly nClusters: number;
  /** The head's outputs: the shortlist, then one per cluster. */
  readonly headSize: number;

  constructor(
    readonly inFeatures: number,
    readonly nClasses: number,
    cutoffs: number[],
    options: AdaptiveLogSoftmaxOptions = {},
  ) {
    super();
    const c = checksOf('AdaptiveLogSoftmaxWithLoss');
    size(c, inFeatures, 'inFeatures');
    c.integer(nClasses, 'nClasses', { min: 2 });
    const given = c.array(cutoffs, 'cutoffs', { minLength: 1 });
    given.forEach((v, i) => {
      c.integer(v, `cutoffs[${i}]`, { min: 1, max: nClasses - 1 });
      if (i > 0 && (v as number) <= (given[i - 1] as number))
        throw new ArgumentError(
          `AdaptiveLogSoftmaxWithLoss: cutoffs must increase strictly (each cluster holds at least one class), got [${given.join(', ')}]`,
        );
    });
    const o = lossOptions(c, options);
    this.divValue = c.number(o.divValue ?? 4, 'options.divValue', { above: 0 });
    this.headBias = flag(c, o.headBias, 'options.headBias', false);
    this.cutoffs = [...(given as number[]), nClasses];
    this.shortlistSize = this.cutoffs[0]!;
    this.nClusters = this.cutoffs.length - 1;
    this.headSize = this.shortlistSize + this.nClusters;
    const hidden = Array.from({ length: this.nClusters }, (_, i) =>
      pyFloorDiv(inFeatures, this.divValue ** (i + 1)),
    );
    const empty = hidden.findIndex((h) => h < 1);
    if (empty >= 0)
      throw new ArgumentError(
        `AdaptiveLogSoftmaxWithLoss: cluster ${empty}'s projection would have inFeatures // divValue^${empty + 1} = 0 features: lower options.divValue or use fewer cutoffs`,
      );
    // Built in PyTorch's order (head, then each tail's two layers), so the same seed draws the same weights.
    this.head = this.registerModule('head', new Linear(inFeatures, this.headSize, { bias: this.headBias }));
    const tails = hidden.map(
      (h, i) =>
        new Sequential(
          new Linear(inFeatures, h, { bias: false }),
          new Linear(h, this.cutoffs[i + 1]! - this.cutoffs[i]!, { bias: false }),
        ),
    );
    this.tail = this.registerModule('tail', new ModuleList(tails));
  }

  /** Refuses an input of another rank than `rank` or whose last dimension is not inFeatures; `layout` says what it must be. */
  private checkInput(fn: string, input: Tensor, rank: number, layout: string): void {
    tensorArg(checksOf(`AdaptiveLogSoftmaxWithLoss.${fn}`), input, 'input');
    if (input.ndim !== rank || input.shape[rank - 1] !== this.inFeatures)
      throw new ArgumentError(
        `AdaptiveLogSoftmaxWithLoss.${fn}: input must be ${layout} with inFeatures ${this.inFeatures}, got ${show(input.shape)}`,
      );
  }

  /**
   * The log-probability of each row's target class, and their mean negative as the loss:
   * input [N, inFeatures] with int64 target [N], or [inFeatures] with a 0-d target.
   */
  forward(input: Tensor, target: Tensor): AdaptiveLogSoftmaxOutput {
    const fn = 'AdaptiveLogSoftmaxWithLoss.forward';
    tensorArg(checksOf(fn), target, 'target');
    if (target.ndim > 1)
      throw new ArgumentError(
        `${fn}: target must be 1-d [N] or 0-d (one class per row), got ${show(target.shape)}`,
      );
    if (target.dtype !== 'int64')
      throw new ArgumentError(
        `${fn}: target must hold int64 class indices, got ${target.dtype}: convert it with .long()`,
      );
    this.checkInput(
      'forward',
      input,
      target.ndim + 1,
      target.ndim === 1 ? '[N, inFeatures] for a 1-d target' : '[inFeatures] for a 0-d target',
    );
    if (target.ndim === 1 && input.shape[0] !== target.shape[0])
      throw new ArgumentError(
        `${fn}: input ${show(input.shape)} and target ${show(target.shape)} must have one batch size`,
      );
    return tidy(() => {
      const batched = target.ndim > 0;
      const x = batched ? input : input.unsqueeze(0);
      const t = batched ? target : target.unsqueeze(0);
      let output = zeros([t.shape[0]!], x.dtype, x.device);
      let gatherIndices = t;
      let used = 0;
      const bounds = [0, ...this.cutoffs];
      for (let i = 0; i + 1 < bounds.length; i++) {
        const [low, high] = [bounds[i]!, bounds[i + 1]!];
        const mask = aten.logical_and(t.ge(low), t.lt(high));
        const rows = aten.nonzero(mask).flatten();
        if (rows.numel === 0) continue;
        used += rows.numel;
        // the head's shortlist rows gather their own class; a cluster's rows gather the cluster's entry
        if (i === 0) continue;
        const relative = aten.index_select(t, 0, rows).sub(low);
        const clusterOutput = this.tail.at(i - 1).forward(aten.index_select(x, 0, rows));
        gatherIndices = aten.masked_fill_Scalar(gatherIndices, mask, this.shortlistSize + i - 1);
        const local = aten.log_softmax_int(clusterOutput, 1).gather(1, relative.unsqueeze(1));
        output = aten.index_add(output, 0, rows, local.squeeze(1));
      }
      if (used !== t.shape[0])
        throw new ArgumentError(
          `${fn}: target values must be in [0, ${this.nClasses - 1}] (nClasses ${this.nClasses}), got values in [${t.min().item()}, ${t.max().item()}]`,
        );
      const headLogprob = aten.log_softmax_int(this.head.forward(x), 1);
      output = output.add(headLogprob.gather(1, gatherIndices.unsqueeze(1)).squeeze(1));
      const loss = output.neg().mean();
      return { output: batched ? output : output.squeeze(0), loss };
    });
  }

  /** The log-probabilities of every class [N, nClasses] from the input and the head's output. */
  private fullLogProb(x: Tensor, headOutput: Tensor): Tensor {
    return tidy(() => {
      const headLogprob = aten.log_softmax_int(headOutput, 1);
      const parts = [headLogprob.narrow(1, 0, this.shortlistSize)];
      this.tail.items.forEach((tail, i) => {
        const clusterLogprob = aten.log_softmax_int(tail.forward(x), 1);
        parts.push(clusterLogprob.add(headLogprob.narrow(1, this.shortlistSize + i, 1)));
      });
      return aten.cat(parts, 1);
    });
  }

  /** The log-probability of every class, [N, nClasses], for input [N, inFeatures] (PyTorch's log_prob). */
  logProb(input: Tensor): Tensor {
    this.checkInput('logProb', input, 2, '[N, inFeatures]');
    return tidy(() => this.fullLogProb(input, this.head.forward(input)));
  }

  /**
   * The most probable class of each row, int64 [N], for input [N, inFeatures]: logProb's argmax,
   * with the tails run only for the rows whose best head entry is a cluster (PyTorch's predict).
   */
  predict(input: Tensor): Tensor {
    this.checkInput('predict', input, 2, '[N, inFeatures]');
    return tidy(() =>
      noGrad(() => {
        const headOutput = this.head.forward(input);
        const output = aten.argmax(headOutput, 1);
        const notInShortlist = output.ge(this.shortlistSize);
        const rows = aten.nonzero(notInShortlist).flatten();
        if (rows.numel === 0) return output;
        if (rows.numel === output.shape[0]) return aten.argmax(this.fullLogProb(input, headOutput), 1);
        const logProb = this.fullLogProb(
          aten.index_select(input, 0, rows),
          aten.index_select(headOutput, 0, rows),
        );
        return aten.index_put(output, [rows], aten.argmax(logProb, 1));
      }),
    );
  }
}
