// The long-tail losses as objects for a user's training loop: built once from the class counts,
// told the epoch (deferred re-weighting switches class weights on after a given epoch), called on
// plain logits. Each wraps the loss the trainer builds from a config (single.ts), so the two
// cannot drift apart; the wrappers add the argument checks and the logits-only call.
import type { Tensor } from '../../torch/index.js';
import {
  checkBatch,
  checkClassCounts,
  checkLdamMargins,
  checkOptions,
  checkReweighting,
  checksOf,
} from './api-checks.js';
import type { LdamMarginOptions } from './functional.js';
import * as single from './single.js';
import type { Loss } from './types.js';

/** Class-balanced re-weighting of {@link CrossEntropyLoss} and {@link FocalLoss}. */
export interface ReweightingOptions {
  /** Class-balanced weights from the first epoch on (LDAM-DRW's "Reweight"); default false. */
  reweight?: boolean;
  /**
   * Deferred re-weighting (DRW): class-balanced weights for the epochs after this one (epochs
   * count from 1, as `setEpoch` is told them); absent or -1: never. LDAM-DRW on CIFAR uses 160 of 200.
   */
  reweightEpoch?: number;
  /** The beta of {@link classBalancedWeights} (default 0.9999). */
  beta?: number;
}

/** Options of {@link FocalLoss}. */
export interface FocalLossClassOptions extends ReweightingOptions {
  /** The focusing parameter gamma >= 0 (default 0, cross-entropy). */
  gamma?: number;
}

/** Options of {@link LDAMLoss}: the margins and, for LDAM-DRW, the epoch of the re-weighting. */
export interface LdamDrwOptions extends LdamMarginOptions {
  /** DRW: class-balanced weights for the epochs after this one (1-based); absent or -1: never. */
  reweightEpoch?: number;
  /** The beta of {@link classBalancedWeights} (default 0.9999). */
  beta?: number;
}

/**
 * What the long-tail loss objects share: built from the class counts, told each epoch before it
 * starts ({@link LongTailLoss.setEpoch}), called on a batch of logits ({@link LongTailLoss.forward}).
 */
export abstract class LongTailLoss {
  readonly #loss: Loss;
  readonly #reweighting: () => boolean;
  readonly #fn: string;
  /** The number of classes (the length of the class counts). */
  readonly classes: number;

  protected constructor(fn: string, classes: number, loss: Loss, reweighting: () => boolean = () => false) {
    this.#fn = fn;
    this.#loss = loss;
    this.#reweighting = reweighting;
    this.classes = classes;
  }

  /**
   * Tells the loss the epoch about to start (1-based); deferred re-weighting switches its class
   * weights on for the epochs after `reweightEpoch`. Losses without it ignore the call.
   */
  setEpoch(epoch: number): void {
    checksOf(`${this.#fn}.setEpoch`).integer(epoch, 'epoch', { min: 0 });
    this.#loss.setEpoch?.(epoch);
  }

  /** Whether class weights are in use for the current epoch. */
  get reweighting(): boolean {
    return this.#reweighting();
  }

  /**
   * The mean loss of a batch.
   *
   * @param logits float [N, C], C the number of class counts.
   * @param target int64 class indices [N].
   * @throws ArgumentError for logits or a target of the wrong shape or dtype.
   */
  forward(logits: Tensor, target: Tensor): Tensor {
    checkBatch(checksOf(`${this.#fn}.forward`), logits, target, this.classes);
    return this.#loss.forward({ output: logits }, target);
  }
}

/**
 * Cross-entropy with class-balanced weights, throughout (`reweight`) or deferred (`reweightEpoch`,
 * CE-DRW); without either, plain cross-entropy.
 *
 * @example
 * ```ts
 * import { CrossEntropyLoss } from 'tailor/longtail';
 * import * as torch from 'tailor/torch';
 * const loss = new CrossEntropyLoss([500, 50, 5], { reweightEpoch: 1 });
 * loss.setEpoch(2); // weights on from epoch 2
 * const value = loss.forward(torch.randn([4, 3]), torch.tensor(BigInt64Array.from([0n, 1n, 2n, 2n])));
 * console.log(value.item());
 * ```
 */
export class CrossEntropyLoss extends LongTailLoss {
  /**
   * @param classCounts the training examples of each class (whole numbers >= 1).
   * @throws ArgumentError for bad counts, both `reweight` and `reweightEpoch`, a beta outside [0, 1).
   */
  constructor(classCounts: readonly number[], options: ReweightingOptions = {}) {
    const c = checksOf('CrossEntropyLoss');
    const counts = checkClassCounts(c, classCounts);
    const loss = new single.CrossEntropyLoss(counts, checkReweighting(c, checkOptions(c, options)));
    super(c.fn, counts.length, loss, () => loss.weighting.current !== null);
  }
}

/**
 * Focal loss (see {@link focalLoss}), optionally with class-balanced weights, throughout or
 * deferred (LDAM-DRW's "Focal" with DRW).
 */
export class FocalLoss extends LongTailLoss {
  /**
   * @param classCounts the training examples of each class (whole numbers >= 1).
   * @throws ArgumentError for bad counts, a gamma < 0, both `reweight` and `reweightEpoch`.
   */
  constructor(classCounts: readonly number[], options: FocalLossClassOptions = {}) {
    const c = checksOf('FocalLoss');
    const counts = checkClassCounts(c, classCounts);
    const o = checkOptions(c, options);
    const gamma = o.gamma === undefined ? 0 : c.number(o.gamma, 'options.gamma', { min: 0 });
    const loss = single.FocalLoss.withReweighting(counts, gamma, checkReweighting(c, o));
    super(c.fn, counts.length, loss, () => loss.weighting.current !== null);
  }
}

/**
 * LDAM with deferred re-weighting (LDAM-DRW, Cao et al., 2019): see {@link ldamLoss} for the
 * margins; class-balanced weights switch on for the epochs after `reweightEpoch`.
 *
 * @example
 * ```ts
 * import { LDAMLoss } from 'tailor/longtail';
 * import * as torch from 'tailor/torch';
 * const loss = new LDAMLoss([500, 50, 5], { reweightEpoch: 160 });
 * for (let epoch = 1; epoch <= 2; epoch++) {
 *   loss.setEpoch(epoch);
 *   torch.tidy(() => {
 *     const logits = torch.randn([4, 3]).requiresGrad_();
 *     loss.forward(logits, torch.tensor(BigInt64Array.from([0n, 1n, 2n, 2n]))).backward();
 *   });
 * }
 * ```
 */
export class LDAMLoss extends LongTailLoss {
  /** The margin of each class: maxMargin * (n_min / n_c)^(1/4). */
  readonly margins: readonly number[];
  /**
   * @param classCounts the training examples of each class (whole numbers >= 1).
   * @throws ArgumentError for bad counts, maxMargin or s not > 0, a reweightEpoch < -1.
   */
  constructor(classCounts: readonly number[], options: LdamDrwOptions = {}) {
    const c = checksOf('LDAMLoss');
    const counts = checkClassCounts(c, classCounts);
    const o = checkOptions(c, options);
    const { s, scaleLogits } = checkLdamMargins(c, counts, o);
    const { reweightEpoch, beta } = checkReweighting(c, { reweightEpoch: o.reweightEpoch, beta: o.beta });
    const maxMargin = o.maxMargin as number | undefined;
    const loss = new single.LDAMLoss(counts, { maxMargin, s, scaleLogits, reweightEpoch, beta });
    super(c.fn, counts.length, loss, () => loss.weighting.current !== null);
    this.margins = loss.margins;
  }
}

/** Balanced softmax as an object (see {@link balancedSoftmaxLoss}); `setEpoch` changes nothing. */
export class BalancedSoftmaxLoss extends LongTailLoss {
  /** @param classCounts the training examples of each class (whole numbers >= 1). */
  constructor(classCounts: readonly number[]) {
    const c = checksOf('BalancedSoftmaxLoss');
    const counts = checkClassCounts(c, classCounts);
    super(c.fn, counts.length, new single.BalancedSoftmaxLoss(counts));
  }
}

/** The logit-adjusted loss as an object (see {@link logitAdjustedLoss}); `setEpoch` changes nothing. */
export class LogitAdjustLoss extends LongTailLoss {
  /** @param classCounts the training examples of each class (whole numbers >= 1). */
  constructor(classCounts: readonly number[], options: { tau?: number } = {}) {
    const c = checksOf('LogitAdjustLoss');
    const counts = checkClassCounts(c, classCounts);
    const o = checkOptions(c, options);
    const tau = o.tau === undefined ? 1 : c.number(o.tau, 'options.tau');
    super(c.fn, counts.length, new single.LogitAdjustLoss(counts, tau));
  }
}
