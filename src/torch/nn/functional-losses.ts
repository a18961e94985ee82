// The embedding, margin and binary losses of torch.nn.functional: each is
// libtorch's ATen operator where PyTorch 1.13 calls one, or PyTorch's own composition of
// operators (multilabel soft margin) written out in the same order, with PyTorch's
// argument checks in front.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { ArgumentError } from '../../util/arguments.js';
import {
  broadcastShapes,
  flag,
  lossStart,
  optionalTensor,
  reductionCode,
  sameShape,
  shapeFail,
  show,
  type Reduction,
} from './loss-checks.js';

/** Options of klDiv: the reduction ('batchmean' divides the sum by the batch size: the divergence's definition) and whether the target is given as log-probabilities. */
export interface KLDivOptions {
  reduction?: Reduction | 'batchmean';
  logTarget?: boolean;
}

/**
 * Kullback-Leibler divergence of `target` from `input`, the input as log-probabilities
 * (F.kl_div): target (log target - input) elementwise. 'mean' averages over every element,
 * as PyTorch 1.13 does; 'batchmean' gives the divergence per sample.
 */
export function klDiv(input: Tensor, target: Tensor, options?: KLDivOptions): Tensor {
  const { c, o } = lossStart('klDiv', options, { input, target });
  const batchmean = o.reduction === 'batchmean';
  const code = batchmean ? 2 : reductionCode(c, o.reduction);
  const logTarget = flag(c, o.logTarget, 'options.logTarget', false);
  broadcastShapes(c, [input, 'input'], [target, 'target']);
  if (!batchmean || input.ndim === 0) return aten.kl_div(input, target, code, logTarget);
  return tidy(() => aten.div_Scalar(aten.kl_div(input, target, code, logTarget), input.shape[0]!));
}

/** Options of binaryCrossEntropy: a weight broadcast to the target's shape, and the reduction. */
export interface BCEOptions {
  weight?: Tensor | null;
  reduction?: Reduction;
}

/** Binary cross-entropy of probabilities `input` (in [0, 1]) against targets of its shape (F.binary_cross_entropy). */
export function binaryCrossEntropy(input: Tensor, target: Tensor, options?: BCEOptions): Tensor {
  const { c, o } = lossStart('binaryCrossEntropy', options, { input, target });
  const code = reductionCode(c, o.reduction);
  sameShape(c, input, 'input', target, 'target');
  const weight = optionalTensor(c, o.weight, 'options.weight');
  if (!weight) return aten.binary_cross_entropy(input, target, null, code);
  const shape = broadcastShapes(c, [target, 'target'], [weight, 'options.weight']);
  if (shape.length !== target.ndim || shape.some((v, i) => v !== target.shape[i]))
    shapeFail(c, 'options.weight', `broadcastable to the target's shape ${show(target.shape)}`, weight);
  return tidy(() => aten.binary_cross_entropy(input, target, aten.expand(weight, shape), code));
}

/** Options of huberLoss: delta (> 0, default 1), where the loss turns from quadratic to linear, and the reduction. */
export interface HuberOptions {
  delta?: number;
  reduction?: Reduction;
}

/** Huber loss (F.huber_loss): 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) beyond; input and target broadcast. */
export function huberLoss(input: Tensor, target: Tensor, options?: HuberOptions): Tensor {
  const { c, o } = lossStart('huberLoss', options, { input, target });
  const code = reductionCode(c, o.reduction);
  const delta = c.number(o.delta ?? 1, 'options.delta', { above: 0 });
  const shape = broadcastShapes(c, [input, 'input'], [target, 'target']);
  return tidy(() => aten.huber_loss(aten.expand(input, shape), aten.expand(target, shape), code, delta));
}

/** Options of the losses whose only option is the reduction. */
export interface ReductionOptions {
  reduction?: Reduction;
}

/** Two-class logistic loss log(1 + exp(-y x)) with targets 1 or -1 (F.soft_margin_loss). */
export function softMarginLoss(input: Tensor, target: Tensor, options?: ReductionOptions): Tensor {
  const { c, o } = lossStart('softMarginLoss', options, { input, target });
  const code = reductionCode(c, o.reduction);
  broadcastShapes(c, [input, 'input'], [target, 'target']);
  return aten.soft_margin_loss(input, target, code);
}

/** Options of multilabelSoftMarginLoss: a weight per class (broadcast), and the reduction. */
export interface MultilabelSoftMarginOptions {
  weight?: Tensor | null;
  reduction?: Reduction;
}

/**
 * Multi-label one-versus-all logistic loss of scores [N, C] against 0/1 targets of that shape
 * (F.multilabel_soft_margin_loss): the per-class losses averaged over the classes, one value per
 * sample before the reduction.
 */
export function multilabelSoftMarginLoss(
  input: Tensor,
  target: Tensor,
  options?: MultilabelSoftMarginOptions,
): Tensor {
  const { c, o } = lossStart('multilabelSoftMarginLoss', options, { input, target });
  const reduction = (o.reduction ?? 'mean') as Reduction;
  reductionCode(c, reduction);
  const weight = optionalTensor(c, o.weight, 'options.weight');
  if (input.ndim === 0) shapeFail(c, 'input', 'a Tensor of at least 1 dimension (the classes last)', input);
  broadcastShapes(
    c,
    [input, 'input'],
    [target, 'target'],
    ...(weight ? [[weight, 'options.weight'] as [Tensor, string]] : []),
  );
  return tidy(() => {
    // -(y log sigmoid(x) + (1 - y) log sigmoid(-x)), as PyTorch writes it
    const pos = aten.mul_Tensor(target, aten.log_sigmoid(input));
    const neg = aten.mul_Tensor(aten.neg(target).add(1), aten.log_sigmoid(aten.neg(input)));
    let loss = aten.neg(aten.add_Tensor(pos, neg));
    if (weight) loss = aten.mul_Tensor(loss, weight);
    const classDim = input.ndim - 1;
    loss = aten.div_Scalar(aten.sum_dim_IntList(loss, [classDim]), input.shape[classDim]!);
    return reduction === 'none' ? loss : reduction === 'mean' ? aten.mean(loss) : aten.sum(loss);
  });
}

/** Options of the margin losses: the margin (default 0 for the cosine and ranking losses, 1 for the hinge loss) and the reduction. */
export interface MarginOptions {
  margin?: number;
  reduction?: Reduction;
}

/**
 * Cosine embedding loss (F.cosine_embedding_loss): 1 - cos(x1, x2) where the target is 1, max(0,
 * cos(x1, x2) - margin) where it is -1. Inputs [N, D] with targets [N], or [D] with a 0-d target.
 */
export function cosineEmbeddingLoss(
  input1: Tensor,
  input2: Tensor,
  target: Tensor,
  options?: MarginOptions,
): Tensor {
  const { c, o } = lossStart('cosineEmbeddingLoss', options, { input1, input2, target });
  const code = reductionCode(c, o.reduction);
  const margin = c.number(o.margin ?? 0, 'options.margin');
  if (target.ndim > 1) shapeFail(c, 'target', 'a 0-d or 1-d Tensor (one target per pair)', target);
  if (input1.ndim !== target.ndim + 1)
    throw new ArgumentError(
      `cosineEmbeddingLoss: a ${target.ndim}-d target needs ${target.ndim + 1}-d inputs, got input1 ${show(input1.shape)}`,
    );
  sameShape(c, input1, 'input1', input2, 'input2');
  if (target.ndim === 1 && target.shape[0] !== input1.shape[0])
    throw new ArgumentError(
      `cosineEmbeddingLoss: target ${show(target.shape)} must hold one value per row of input1 ${show(input1.shape)}`,
    );
  return aten.cosine_embedding_loss(input1, input2, target, margin, code);
}

/** Margin ranking loss max(0, -y (x1 - x2) + margin) with targets 1 or -1 (F.margin_ranking_loss); the three of one number of dimensions. */
export function marginRankingLoss(
  input1: Tensor,
  input2: Tensor,
  target: Tensor,
  options?: MarginOptions,
): Tensor {
  const { c, o } = lossStart('marginRankingLoss', options, { input1, input2, target });
  const code = reductionCode(c, o.reduction);
  const margin = c.number(o.margin ?? 0, 'options.margin');
  if (input1.ndim !== input2.ndim || input1.ndim !== target.ndim)
    throw new ArgumentError(
      `marginRankingLoss: input1 ${show(input1.shape)}, input2 ${show(input2.shape)} and target ${show(target.shape)} must have one number of dimensions`,
    );
  broadcastShapes(c, [input1, 'input1'], [input2, 'input2'], [target, 'target']);
  return aten.margin_ranking_loss(input1, input2, target, margin, code);
}

/** Hinge embedding loss (F.hinge_embedding_loss): x where the target is 1, max(0, margin - x) where it is -1 (margin default 1). */
export function hingeEmbeddingLoss(input: Tensor, target: Tensor, options?: MarginOptions): Tensor {
  const { c, o } = lossStart('hingeEmbeddingLoss', options, { input, target });
  const code = reductionCode(c, o.reduction);
  const margin = c.number(o.margin ?? 1, 'options.margin');
  broadcastShapes(c, [input, 'input'], [target, 'target']);
  return aten.hinge_embedding_loss(input, target, margin, code);
}

/** Options of tripletMarginLoss (PyTorch's defaults: margin 1, p 2, eps 1e-6, swap false). */
export interface TripletMarginOptions {
  margin?: number;
  /** The order of the pairwise distance. */
  p?: number;
  /** Added to the differences before the norm. */
  eps?: number;
  /** Use the smaller of d(anchor, negative) and d(positive, negative) (the distance swap). */
  swap?: boolean;
  reduction?: Reduction;
}

/** Triplet margin loss max(d(a, p) - d(a, n) + margin, 0) with the p-norm distance (F.triplet_margin_loss). */
export function tripletMarginLoss(
  anchor: Tensor,
  positive: Tensor,
  negative: Tensor,
  options?: TripletMarginOptions,
): Tensor {
  const { c, o } = lossStart('tripletMarginLoss', options, { anchor, positive, negative });
  const code = reductionCode(c, o.reduction);
  const margin = c.number(o.margin ?? 1, 'options.margin');
  const p = c.number(o.p ?? 2, 'options.p');
  const eps = c.number(o.eps ?? 1e-6, 'options.eps');
  const swap = flag(c, o.swap, 'options.swap', false);
  if (anchor.ndim !== positive.ndim || anchor.ndim !== negative.ndim)
    throw new ArgumentError(
      `tripletMarginLoss: anchor ${show(anchor.shape)}, positive ${show(positive.shape)} and negative ${show(negative.shape)} must have one number of dimensions`,
    );
  broadcastShapes(c, [anchor, 'anchor'], [positive, 'positive'], [negative, 'negative']);
  return aten.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, code);
}
