// The losses of torch.nn.functional beyond cross-entropy and the regression losses: each is
// libtorch's ATen operator where PyTorch 1.13 calls one, or PyTorch's own composition of
// operators (multilabel soft margin, Gaussian NLL) written out in the same order, with PyTorch's
// argument checks in front.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import {
  broadcastShapes,
  flag,
  lossOptions,
  optionalTensor,
  reductionCode,
  sameShape,
  show,
  tensorArg,
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
  const c = checksOf('klDiv');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
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
  const c = checksOf('binaryCrossEntropy');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, o.reduction);
  sameShape(c, input, 'input', target, 'target');
  const weight = optionalTensor(c, o.weight, 'options.weight');
  if (!weight) return aten.binary_cross_entropy(input, target, null, code);
  const shape = broadcastShapes(c, [target, 'target'], [weight, 'options.weight']);
  return tidy(() => aten.binary_cross_entropy(input, target, aten.expand(weight, shape), code));
}

/** Options of huberLoss: delta (> 0, default 1), where the loss turns from quadratic to linear, and the reduction. */
export interface HuberOptions {
  delta?: number;
  reduction?: Reduction;
}

/** Huber loss (F.huber_loss): 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) beyond; input and target broadcast. */
export function huberLoss(input: Tensor, target: Tensor, options?: HuberOptions): Tensor {
  const c = checksOf('huberLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
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
  const c = checksOf('softMarginLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
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
  const c = checksOf('multilabelSoftMarginLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const reduction = (o.reduction ?? 'mean') as Reduction;
  reductionCode(c, reduction);
  const weight = optionalTensor(c, o.weight, 'options.weight');
  if (input.ndim === 0) c.fail('input', 'a Tensor of at least 1 dimension (the classes last)', input);
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
  const c = checksOf('cosineEmbeddingLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input1, 'input1');
  tensorArg(c, input2, 'input2');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, o.reduction);
  const margin = c.number(o.margin ?? 0, 'options.margin');
  if (target.ndim > 1) c.fail('target', 'a 0-d or 1-d Tensor (one target per pair)', `shape ${show(target.shape)}`);
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
  const c = checksOf('marginRankingLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input1, 'input1');
  tensorArg(c, input2, 'input2');
  tensorArg(c, target, 'target');
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
  const c = checksOf('hingeEmbeddingLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
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
  const c = checksOf('tripletMarginLoss');
  const o = lossOptions(c, options);
  tensorArg(c, anchor, 'anchor');
  tensorArg(c, positive, 'positive');
  tensorArg(c, negative, 'negative');
  const code = reductionCode(c, o.reduction);
  const margin = c.number(o.margin ?? 1, 'options.margin');
  const p = c.number(o.p ?? 2, 'options.p', { min: 0 });
  const eps = c.number(o.eps ?? 1e-6, 'options.eps');
  const swap = flag(c, o.swap, 'options.swap', false);
  if (anchor.ndim !== positive.ndim || anchor.ndim !== negative.ndim)
    throw new ArgumentError(
      `tripletMarginLoss: anchor ${show(anchor.shape)}, positive ${show(positive.shape)} and negative ${show(negative.shape)} must have one number of dimensions`,
    );
  broadcastShapes(c, [anchor, 'anchor'], [positive, 'positive'], [negative, 'negative']);
  return aten.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, code);
}

/** Options of poissonNllLoss (PyTorch's defaults: logInput true, full false, eps 1e-8). */
export interface PoissonNLLOptions {
  /** The input is the log of the rate: loss exp(x) - y x; otherwise x - y log(x + eps). */
  logInput?: boolean;
  /** Add Stirling's approximation of log(y!) (where y > 1). */
  full?: boolean;
  eps?: number;
  reduction?: Reduction;
}

/** Negative log-likelihood of targets under Poisson distributions of rate `input` (F.poisson_nll_loss). */
export function poissonNllLoss(input: Tensor, target: Tensor, options?: PoissonNLLOptions): Tensor {
  const c = checksOf('poissonNllLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, o.reduction);
  const logInput = flag(c, o.logInput, 'options.logInput', true);
  const full = flag(c, o.full, 'options.full', false);
  const eps = c.number(o.eps ?? 1e-8, 'options.eps');
  broadcastShapes(c, [input, 'input'], [target, 'target']);
  return aten.poisson_nll_loss(input, target, logInput, full, eps, code);
}

/** Options of gaussianNllLoss (PyTorch's defaults: full false, eps 1e-6). */
export interface GaussianNLLOptions {
  /** Add the constant 0.5 log(2 pi). */
  full?: boolean;
  /** The floor of the variance (the gradient still reaches a variance below it, as in PyTorch). */
  eps?: number;
  reduction?: Reduction;
}

/**
 * Gaussian negative log-likelihood 0.5 (log var + (input - target)^2 / var) (F.gaussian_nll_loss).
 * `variance` has the input's shape (one per prediction), or that shape without its last
 * dimension or with it 1 (one per sample); its entries must not be negative.
 */
export function gaussianNllLoss(
  input: Tensor,
  target: Tensor,
  variance: Tensor,
  options?: GaussianNLLOptions,
): Tensor {
  const c = checksOf('gaussianNllLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  tensorArg(c, variance, 'variance');
  const full = flag(c, o.full, 'options.full', false);
  const eps = c.number(o.eps ?? 1e-6, 'options.eps');
  const reduction = (o.reduction ?? 'mean') as Reduction;
  const is = input.shape;
  const vs = variance.shape;
  const same = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => v === b[i]);
  const unsqueeze = !same(vs, is) && same(vs, is.slice(0, -1));
  if (!same(vs, is) && !unsqueeze && !(same(vs.slice(0, -1), is.slice(0, -1)) && vs[vs.length - 1] === 1))
    throw new ArgumentError(
      `gaussianNllLoss: variance ${show(vs)} must have the input's shape ${show(is)}, or that shape with the last dimension 1 or left out`,
    );
  reductionCode(c, reduction);
  broadcastShapes(c, [input, 'input'], [target, 'target']);
  return tidy(() => {
    const negative = noGrad(() => aten.any(aten.lt_Scalar(variance, 0)).item());
    if (negative) throw new ArgumentError('gaussianNllLoss: variance has negative entries: give variances >= 0');
    // PyTorch clamps a copy in place without recording it, so the floor passes the gradient on
    const v = aten.clone(unsqueeze ? aten.unsqueeze(variance, -1) : variance);
    noGrad(() => aten.clamp_(v, { float: eps }, null));
    const diff = aten.sub_Tensor(input, target);
    let loss = aten.mul_Scalar(
      aten.add_Tensor(aten.log(v), aten.div_Tensor(aten.mul_Tensor(diff, diff), v)),
      0.5,
    );
    if (full) loss = aten.add_Scalar(loss, 0.5 * Math.log(2 * Math.PI));
    return reduction === 'none' ? loss : reduction === 'mean' ? aten.mean(loss) : aten.sum(loss);
  });
}

/** Options of multiMarginLoss (PyTorch's defaults: p 1, margin 1, no weight). */
export interface MultiMarginOptions {
  /** 1 or 2: the hinge or the squared hinge. */
  p?: 1 | 2;
  margin?: number;
  /** A weight per class, [C]. */
  weight?: Tensor | null;
  reduction?: Reduction;
}

/** Multi-class hinge loss of scores [N, C] (or [C]) at int64 class indices [N] (F.multi_margin_loss). */
export function multiMarginLoss(input: Tensor, target: Tensor, options?: MultiMarginOptions): Tensor {
  const c = checksOf('multiMarginLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, o.reduction);
  const p = o.p ?? 1;
  if (p !== 1 && p !== 2) c.fail('options.p', '1 or 2 (PyTorch supports no other)', p);
  const margin = c.number(o.margin ?? 1, 'options.margin');
  const weight = optionalTensor(c, o.weight, 'options.weight');
  if (input.ndim > 2 || (input.ndim === 2 && input.shape[0] === 0))
    c.fail('input', 'a 1-d [C] or 2-d [N, C] Tensor', `shape ${show(input.shape)}`);
  const classes = input.ndim === 0 ? 1 : input.shape[input.ndim - 1]!;
  const rows = input.ndim === 2 ? input.shape[0]! : 1;
  if (target.ndim > 1 || target.numel !== rows)
    throw new ArgumentError(
      `multiMarginLoss: target ${show(target.shape)} must hold one class index per row of input ${show(input.shape)}`,
    );
  if (weight && (weight.ndim !== 1 || weight.shape[0] !== classes))
    throw new ArgumentError(
      `multiMarginLoss: options.weight ${show(weight.shape)} must be 1-d with one weight per class (${classes})`,
    );
  return aten.multi_margin_loss(input, target, p, { float: margin }, weight, code);
}

/**
 * Multi-label hinge loss of scores [N, C] (or [C]) against int64 targets of that shape that list
 * each sample's classes and end at the first -1 (F.multilabel_margin_loss).
 */
export function multilabelMarginLoss(input: Tensor, target: Tensor, options?: ReductionOptions): Tensor {
  const c = checksOf('multilabelMarginLoss');
  const o = lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, o.reduction);
  if (input.ndim > 2) c.fail('input', 'a 1-d [C] or 2-d [N, C] Tensor', `shape ${show(input.shape)}`);
  sameShape(c, input, 'input', target, 'target');
  if (target.dtype !== 'int64') c.fail('target', 'an int64 Tensor of class indices (-1 ends a list)', target.dtype);
  return aten.multilabel_margin_loss(input, target, code);
}

/** Options of ctcLoss (PyTorch's defaults: blank 0, reduction 'mean', zeroInfinity false). */
export interface CTCOptions {
  /** The index of the blank label. */
  blank?: number;
  /** 'mean' divides each sample's loss by its target length, then averages over the batch. */
  reduction?: Reduction;
  /** Replace infinite losses (inputs too short for their targets) and their gradients by zeros. */
  zeroInfinity?: boolean;
}

/**
 * Connectionist temporal classification loss (F.ctc_loss): logProbs [T, N, C] (or [T, C]),
 * log-softmax outputs; targets [N, S] padded or the targets of the batch concatenated
 * (int64); the lengths per sample, as arrays of integers or int64 tensors.
 */
export function ctcLoss(
  logProbs: Tensor,
  targets: Tensor,
  inputLengths: Tensor | number[],
  targetLengths: Tensor | number[],
  options?: CTCOptions,
): Tensor {
  const c = checksOf('ctcLoss');
  const o = lossOptions(c, options);
  tensorArg(c, logProbs, 'logProbs');
  tensorArg(c, targets, 'targets');
  const code = reductionCode(c, o.reduction);
  const zeroInfinity = flag(c, o.zeroInfinity, 'options.zeroInfinity', false);
  if (logProbs.ndim !== 2 && logProbs.ndim !== 3)
    c.fail('logProbs', 'a [T, N, C] or [T, C] Tensor', `shape ${show(logProbs.shape)}`);
  const classes = logProbs.shape[logProbs.ndim - 1]!;
  const blank = c.integer(o.blank ?? 0, 'options.blank', { min: 0, max: classes - 1 });
  const batch = logProbs.ndim === 3 ? logProbs.shape[1]! : 1;
  const lengths = (value: Tensor | number[], name: string) => {
    if (Array.isArray(value)) {
      value.forEach((v, i) => c.integer(v, `${name}[${i}]`, { min: 0 }));
      return value.length;
    }
    return tensorArg(c, value, name).numel;
  };
  for (const [value, name] of [
    [inputLengths, 'inputLengths'],
    [targetLengths, 'targetLengths'],
  ] as const)
    if (lengths(value, name) !== batch)
      throw new ArgumentError(`ctcLoss: ${name} must hold one length per sample (${batch})`);
  if (Array.isArray(inputLengths) !== Array.isArray(targetLengths))
    throw new ArgumentError('ctcLoss: give inputLengths and targetLengths both as arrays or both as Tensors');
  if (Array.isArray(inputLengths))
    return aten.ctc_loss_IntList(logProbs, targets, inputLengths, targetLengths as number[], blank, code, zeroInfinity);
  return aten.ctc_loss_Tensor(
    logProbs,
    targets,
    inputLengths,
    targetLengths as Tensor,
    blank,
    code,
    zeroInfinity,
  );
}
