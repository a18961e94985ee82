// The long-tail losses as functions of plain logits [N, C] and class indices [N], for models
// written with tailor/torch: what a PyTorch user calls as criterion(logits, target). Each checks
// its arguments and then runs the code the trainer's losses run (single.ts, priors.ts).
import { tensor, type DType, type nn, type Tensor } from '../../torch/index.js';
import {
  checkBatch,
  checkBeta,
  checkClassCounts,
  checkLdamMargins,
  checkOptions,
  FLOAT_DTYPES,
  checkReduction,
  checkWeight,
  checksOf,
} from './api-checks.js';
import { classBalancedWeights as balancedWeights, logPrior as logPriorValues } from './priors.js';
import { adjustedCrossEntropy, focalCrossEntropy, ldamCrossEntropy } from './single.js';

/** The reduction of a loss over the batch: the mean (default), the sum, or one value per sample ('none'). */
export interface ReductionOption {
  /** 'mean' (default), 'sum' or 'none' (a tensor [N]). */
  reduction?: nn.functional.Reduction;
}

/** Options of {@link logitAdjustedLoss}. */
export interface LogitAdjustedLossOptions extends ReductionOption {
  /** The strength of the adjustment: CE(z + tau log pi); 1 (default) is balanced softmax. */
  tau?: number;
}

/** The margins and scale of LDAM, shared by {@link ldamLoss} and {@link LDAMLoss}. */
export interface LdamMarginOptions {
  /** The largest margin, that of the rarest class (default 0.5). */
  maxMargin?: number;
  /** The logit scale s (default 30). */
  s?: number;
  /**
   * false (default): the logits are already scaled by s (a cosine classifier times s, as SADE and
   * BalPoE feed LDAM), so s * m_y is subtracted from the target logit. true: the logits are raw
   * cosines and the loss is CE(s * (z - m_y onehot)), as in kaidic/LDAM-DRW.
   */
  scaleLogits?: boolean;
}

/** Options of {@link ldamLoss}. */
export interface LdamLossOptions extends LdamMarginOptions, ReductionOption {
  /** Class weights [C] of the cross-entropy, e.g. {@link classBalancedWeights}; default none. */
  weight?: readonly number[];
}

/** Options of {@link focalLoss}. */
export interface FocalLossOptions extends ReductionOption {
  /** The focusing parameter gamma >= 0; 0 (default, as LDAM-DRW's FocalLoss) is cross-entropy. */
  gamma?: number;
  /** Class weights [C] of the per-sample cross-entropy, e.g. {@link classBalancedWeights}; default none. */
  weight?: readonly number[];
}

/**
 * Balanced softmax (Ren et al., 2020): the cross-entropy of z + log pi, pi the training class
 * prior, so that the model's own logits z estimate the class-balanced posterior. The prior is
 * log(n_c / sum n + 1e-9), as SADE and BalPoE compute it.
 *
 * @param logits float [N, C], one column per class count.
 * @param target int64 class indices [N].
 * @param classCounts the training examples of each class (whole numbers >= 1).
 * @returns the loss: a scalar, or [N] with `reduction: 'none'`.
 * @throws ArgumentError for counts that are not whole numbers >= 1, logits whose class
 *   count differs from the counts, a target that is not int64 [N], an unknown reduction.
 */
export function balancedSoftmaxLoss(
  logits: Tensor,
  target: Tensor,
  classCounts: readonly number[],
  options: ReductionOption = {},
): Tensor {
  return logitAdjusted('balancedSoftmaxLoss', logits, target, classCounts, options, 1);
}

/**
 * The logit-adjusted loss (Menon et al., 2021): the cross-entropy of z + tau log pi, pi the
 * training class prior; tau = 1 is {@link balancedSoftmaxLoss}. Training this way and predicting
 * with argmax z targets the balanced error.
 *
 * @param logits float [N, C], one column per class count.
 * @param target int64 class indices [N].
 * @param classCounts the training examples of each class (whole numbers >= 1).
 * @returns the loss: a scalar, or [N] with `reduction: 'none'`.
 * @throws ArgumentError for bad counts, logits or target (see {@link balancedSoftmaxLoss})
 *   or a tau that is not a finite number.
 */
export function logitAdjustedLoss(
  logits: Tensor,
  target: Tensor,
  classCounts: readonly number[],
  options: LogitAdjustedLossOptions = {},
): Tensor {
  return logitAdjusted('logitAdjustedLoss', logits, target, classCounts, options);
}

/** CE(z + tau log pi), tau from the options unless `fixedTau` (balanced softmax: 1). */
function logitAdjusted(
  fn: string,
  logits: Tensor,
  target: Tensor,
  classCounts: unknown,
  options: unknown,
  fixedTau?: number,
): Tensor {
  const c = checksOf(fn);
  const counts = checkClassCounts(c, classCounts);
  const o = checkOptions(c, options);
  checkBatch(c, logits, target, counts.length);
  const tau = fixedTau ?? (o.tau === undefined ? 1 : c.number(o.tau, 'options.tau'));
  return adjustedCrossEntropy(logits, target, logPriorValues(counts, tau), null, checkReduction(c, o));
}

/**
 * LDAM (Cao et al., 2019): the cross-entropy after the target class's logit loses a margin m_y
 * proportional to n_y^(-1/4), the rarest class's margin being `maxMargin`; with `weight` (e.g.
 * {@link classBalancedWeights}) it is the second stage of LDAM-DRW. For the switch of weights at
 * an epoch, see {@link LDAMLoss}.
 *
 * @param logits float [N, C], one column per class count (see `scaleLogits`).
 * @param target int64 class indices [N].
 * @param classCounts the training examples of each class (whole numbers >= 1).
 * @returns the loss: a scalar (the weighted mean when weighted, as PyTorch's cross_entropy), or
 *   [N] with `reduction: 'none'`.
 * @throws ArgumentError for bad counts, logits or target (see {@link balancedSoftmaxLoss}),
 *   maxMargin or s not > 0, weights that are not one number >= 0 per class.
 */
export function ldamLoss(
  logits: Tensor,
  target: Tensor,
  classCounts: readonly number[],
  options: LdamLossOptions = {},
): Tensor {
  const c = checksOf('ldamLoss');
  const counts = checkClassCounts(c, classCounts);
  const o = checkOptions(c, options);
  checkBatch(c, logits, target, counts.length);
  const ldam = checkLdamMargins(c, counts, o);
  return ldamCrossEntropy(
    'ldamLoss',
    logits,
    target,
    ldam,
    checkWeight(c, o, counts.length),
    checkReduction(c, o),
  );
}

/**
 * The focal loss (Lin et al., 2017) as LDAM-DRW writes it: (1 - p)^gamma * ce per sample, ce the
 * (optionally class-weighted) cross-entropy and p = exp(-ce); it down-weights the samples the
 * model already gets right. The mean is over the batch, not over the weights.
 *
 * @param logits float [N, C].
 * @param target int64 class indices [N].
 * @returns the loss: a scalar, or [N] with `reduction: 'none'`.
 * @throws ArgumentError for logits that are not float [N, C], a target that is not int64
 *   [N], a gamma < 0, weights that are not one number >= 0 per class, an unknown reduction.
 */
export function focalLoss(logits: Tensor, target: Tensor, options: FocalLossOptions = {}): Tensor {
  const c = checksOf('focalLoss');
  const o = checkOptions(c, options);
  const classes = checkBatch(c, logits, target, null);
  const gamma = o.gamma === undefined ? 0 : c.number(o.gamma, 'options.gamma', { min: 0 });
  return focalCrossEntropy(logits, target, gamma, checkWeight(c, o, classes), checkReduction(c, o));
}

/**
 * Class-balanced weights (Cui et al., 2019): (1 - beta) / (1 - beta^n_c), the inverse "effective
 * number" of examples of each class, normalised to sum to the number of classes, as LDAM-DRW's
 * deferred re-weighting uses them (beta 0.9999). Pass them as `weight` to {@link ldamLoss} or
 * {@link focalLoss}, or as a Tensor to `nn.functional.crossEntropy`.
 *
 * @param classCounts the training examples of each class (whole numbers >= 1).
 * @param beta in [0, 1): 0 weighs every class 1, towards 1 the weights approach 1 / n_c.
 * @throws ArgumentError for bad counts or a beta outside [0, 1).
 */
export function classBalancedWeights(classCounts: readonly number[], beta = 0.9999): number[] {
  const c = checksOf('classBalancedWeights');
  return balancedWeights(checkClassCounts(c, classCounts), checkBeta(c, beta, 'beta'));
}

/**
 * tau * log(pi_c + 1e-9), pi_c = n_c / sum n: the training prior's log, scaled; the bias that
 * {@link logitAdjustedLoss} adds during training. As numbers; {@link logitAdjustment} gives it as
 * a tensor.
 *
 * @param classCounts the training examples of each class (whole numbers >= 1).
 * @param tau the scale (default 1).
 * @throws ArgumentError for bad counts or a tau that is not a finite number.
 */
export function logPrior(classCounts: readonly number[], tau = 1): number[] {
  const c = checksOf('logPrior');
  return logPriorValues(checkClassCounts(c, classCounts), c.number(tau, 'tau'));
}

/** Options of {@link logitAdjustment}. */
export interface LogitAdjustmentOptions {
  /** The scale tau of the log prior (default 1). */
  tau?: number;
  /** The dtype of the result (default 'float32'; use the logits' dtype). */
  dtype?: DType;
}

/**
 * Post-hoc logit adjustment (Menon et al., 2021): tau * log pi as a tensor [C] on the default
 * device. Subtracting it from the logits of a model trained with plain cross-entropy,
 * `logits.sub(logitAdjustment(counts))`, moves its predictions towards the balanced error: the
 * tail classes gain what the prior took from them.
 *
 * @param classCounts the training examples of each class (whole numbers >= 1).
 * @throws ArgumentError for bad counts, a tau that is not a finite number, a dtype that is
 *   not a floating-point one.
 */
export function logitAdjustment(
  classCounts: readonly number[],
  options: LogitAdjustmentOptions = {},
): Tensor {
  const c = checksOf('logitAdjustment');
  const counts = checkClassCounts(c, classCounts);
  const o = checkOptions(c, options);
  const tau = o.tau === undefined ? 1 : c.number(o.tau, 'options.tau');
  const dtype = o.dtype === undefined ? 'float32' : c.oneOf(o.dtype, 'options.dtype', FLOAT_DTYPES);
  return tensor(Float64Array.from(logPriorValues(counts, tau)), { dtype });
}
