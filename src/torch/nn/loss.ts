// The loss modules of torch.nn: each holds PyTorch's constructor options and calls its
// functional form (nn.functional). The options are checked when the module is built, so a bad
// reduction or margin fails where it is written, not at the first batch. A weight given to a loss
// is copied into a buffer named as PyTorch's (`weight`, `pos_weight`): the module owns the copy,
// `to(device)` moves it and `dispose()` frees it.
import type { Tensor } from '../tensor.js';
import { Module } from './module.js';
import { tidy } from '../scope.js';
import { checksOf } from '../../util/arguments.js';
import { flag, lossOptions, optionalTensor, reductionCode, type Reduction } from './loss-checks.js';
import * as F from './functional.js';

/** The base of the loss modules: the reduction ('none', 'mean' (default) or 'sum'). */
export abstract class Loss extends Module {
  readonly reduction: Reduction;

  constructor(options: { reduction?: Reduction } | undefined) {
    super();
    const c = checksOf(new.target.name);
    const o = lossOptions(c, options);
    reductionCode(c, o.reduction);
    this.reduction = o.reduction ?? 'mean';
  }

  /** A weight option copied into a buffer (null: none). */
  protected weightBuffer(name: string, value: unknown, option: string): Tensor | null {
    const t = optionalTensor(checksOf(this.constructor.name), value, `options.${option}`);
    return this.registerBuffer(name, t ? tidy(() => t.detach().clone()) : null);
  }
}

/** Mean squared error (torch.nn.MSELoss); input and target broadcast. */
export class MSELoss extends Loss {
  constructor(options: F.ReductionOptions = {}) {
    super(options);
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.mseLoss(input, target, this.reduction);
  }
}

/** Mean absolute error (torch.nn.L1Loss); input and target broadcast. */
export class L1Loss extends Loss {
  constructor(options: F.ReductionOptions = {}) {
    super(options);
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.l1Loss(input, target, this.reduction);
  }
}

/** Smooth L1 loss (torch.nn.SmoothL1Loss): quadratic below beta (default 1), linear above. */
export class SmoothL1Loss extends Loss {
  readonly beta: number;
  constructor(options: { beta?: number; reduction?: Reduction } = {}) {
    super(options);
    this.beta = checksOf('SmoothL1Loss').number(options.beta ?? 1, 'options.beta', { min: 0 });
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.smoothL1Loss(input, target, this.beta, this.reduction);
  }
}

/** Huber loss (torch.nn.HuberLoss): quadratic below delta (> 0, default 1), linear above. */
export class HuberLoss extends Loss {
  readonly delta: number;
  constructor(options: F.HuberOptions = {}) {
    super(options);
    this.delta = checksOf('HuberLoss').number(options.delta ?? 1, 'options.delta', { above: 0 });
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.huberLoss(input, target, { delta: this.delta, reduction: this.reduction });
  }
}

/** Cross-entropy of logits against class indices or probabilities (torch.nn.CrossEntropyLoss). */
export class CrossEntropyLoss extends Loss {
  readonly weight: Tensor | null;
  readonly ignoreIndex: number;
  readonly labelSmoothing: number;
  constructor(options: F.CrossEntropyOptions = {}) {
    super(options);
    const c = checksOf('CrossEntropyLoss');
    this.ignoreIndex = c.integer(options.ignoreIndex ?? -100, 'options.ignoreIndex');
    this.labelSmoothing = c.number(options.labelSmoothing ?? 0, 'options.labelSmoothing', { min: 0, max: 1 });
    this.weight = this.weightBuffer('weight', options.weight, 'weight');
  }
  /** The loss of `logits` [N, C, ...] against `target`. */
  forward(logits: Tensor, target: Tensor): Tensor {
    const { weight, ignoreIndex, labelSmoothing, reduction } = this;
    return F.crossEntropy(logits, target, { weight, ignoreIndex, labelSmoothing, reduction });
  }
}

/** Negative log-likelihood of log-probabilities at class indices (torch.nn.NLLLoss). */
export class NLLLoss extends Loss {
  readonly weight: Tensor | null;
  readonly ignoreIndex: number;
  constructor(options: F.NLLOptions = {}) {
    super(options);
    this.ignoreIndex = checksOf('NLLLoss').integer(options.ignoreIndex ?? -100, 'options.ignoreIndex');
    this.weight = this.weightBuffer('weight', options.weight, 'weight');
  }
  /** The loss of `logProbs` [N, C, ...] at `target` [N, ...]. */
  forward(logProbs: Tensor, target: Tensor): Tensor {
    const { weight, ignoreIndex, reduction } = this;
    return F.nllLoss(logProbs, target, { weight, ignoreIndex, reduction });
  }
}

/** Binary cross-entropy of probabilities (torch.nn.BCELoss), with an optional weight. */
export class BCELoss extends Loss {
  readonly weight: Tensor | null;
  constructor(options: F.BCEOptions = {}) {
    super(options);
    this.weight = this.weightBuffer('weight', options.weight, 'weight');
  }
  /** The loss of `input` (probabilities) against `target` of its shape. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.binaryCrossEntropy(input, target, { weight: this.weight, reduction: this.reduction });
  }
}

/** Binary cross-entropy of logits (torch.nn.BCEWithLogitsLoss), with an optional weight and posWeight. */
export class BCEWithLogitsLoss extends Loss {
  readonly weight: Tensor | null;
  readonly posWeight: Tensor | null;
  constructor(options: F.BCEWithLogitsOptions = {}) {
    super(options);
    this.weight = this.weightBuffer('weight', options.weight, 'weight');
    this.posWeight = this.weightBuffer('pos_weight', options.posWeight, 'posWeight');
  }
  /** The loss of `input` (logits) against `target` of its shape. */
  forward(input: Tensor, target: Tensor): Tensor {
    const { weight, posWeight, reduction } = this;
    return F.binaryCrossEntropyWithLogits(input, target, { weight, posWeight, reduction });
  }
}

/** Kullback-Leibler divergence (torch.nn.KLDivLoss): input log-probabilities; reduction may be 'batchmean'. */
export class KLDivLoss extends Module {
  readonly reduction: Reduction | 'batchmean';
  readonly logTarget: boolean;
  constructor(options: F.KLDivOptions = {}) {
    super();
    const c = checksOf('KLDivLoss');
    const o = lossOptions(c, options);
    if (o.reduction !== 'batchmean') reductionCode(c, o.reduction);
    this.reduction = o.reduction ?? 'mean';
    this.logTarget = flag(c, o.logTarget, 'options.logTarget', false);
  }
  /** The divergence of `target` from `input`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.klDiv(input, target, { reduction: this.reduction, logTarget: this.logTarget });
  }
}

/** Two-class logistic loss with targets 1 or -1 (torch.nn.SoftMarginLoss). */
export class SoftMarginLoss extends Loss {
  constructor(options: F.ReductionOptions = {}) {
    super(options);
  }
  /** The loss of `input` against `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.softMarginLoss(input, target, { reduction: this.reduction });
  }
}

/** Multi-label one-versus-all logistic loss (torch.nn.MultiLabelSoftMarginLoss), with a weight per class. */
export class MultiLabelSoftMarginLoss extends Loss {
  readonly weight: Tensor | null;
  constructor(options: F.MultilabelSoftMarginOptions = {}) {
    super(options);
    this.weight = this.weightBuffer('weight', options.weight, 'weight');
  }
  /** The loss of scores [N, C] against 0/1 targets [N, C]. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.multilabelSoftMarginLoss(input, target, { weight: this.weight, reduction: this.reduction });
  }
}

/** options.margin, checked, or the loss's default. */
const marginOf = (fn: string, options: { margin?: number } | undefined, fallback: number) =>
  checksOf(fn).number(options?.margin ?? fallback, 'options.margin');

/** Cosine embedding loss (torch.nn.CosineEmbeddingLoss; margin default 0). */
export class CosineEmbeddingLoss extends Loss {
  readonly margin: number;
  constructor(options: F.MarginOptions = {}) {
    super(options);
    this.margin = marginOf('CosineEmbeddingLoss', options, 0);
  }
  /** The loss of the pairs (input1, input2) with targets 1 (similar) or -1. */
  forward(input1: Tensor, input2: Tensor, target: Tensor): Tensor {
    return F.cosineEmbeddingLoss(input1, input2, target, { margin: this.margin, reduction: this.reduction });
  }
}

/** Margin ranking loss (torch.nn.MarginRankingLoss; margin default 0). */
export class MarginRankingLoss extends Loss {
  readonly margin: number;
  constructor(options: F.MarginOptions = {}) {
    super(options);
    this.margin = marginOf('MarginRankingLoss', options, 0);
  }
  /** The loss of ranking input1 above input2 where the target is 1 (below where -1). */
  forward(input1: Tensor, input2: Tensor, target: Tensor): Tensor {
    return F.marginRankingLoss(input1, input2, target, { margin: this.margin, reduction: this.reduction });
  }
}

/** Hinge embedding loss (torch.nn.HingeEmbeddingLoss; margin default 1). */
export class HingeEmbeddingLoss extends Loss {
  readonly margin: number;
  constructor(options: F.MarginOptions = {}) {
    super(options);
    this.margin = marginOf('HingeEmbeddingLoss', options, 1);
  }
  /** The loss of distances `input` with targets 1 or -1. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.hingeEmbeddingLoss(input, target, { margin: this.margin, reduction: this.reduction });
  }
}

/** Triplet margin loss (torch.nn.TripletMarginLoss: margin 1, p 2, eps 1e-6, swap false). */
export class TripletMarginLoss extends Loss {
  readonly margin: number;
  readonly p: number;
  readonly eps: number;
  readonly swap: boolean;
  constructor(options: F.TripletMarginOptions = {}) {
    super(options);
    this.margin = marginOf('TripletMarginLoss', options, 1);
    const c = checksOf('TripletMarginLoss');
    this.p = c.number(options.p ?? 2, 'options.p');
    this.eps = c.number(options.eps ?? 1e-6, 'options.eps');
    this.swap = flag(c, options.swap, 'options.swap', false);
  }
  /** The loss of the triplets. */
  forward(anchor: Tensor, positive: Tensor, negative: Tensor): Tensor {
    const { margin, p, eps, swap, reduction } = this;
    return F.tripletMarginLoss(anchor, positive, negative, { margin, p, eps, swap, reduction });
  }
}

/** Poisson negative log-likelihood (torch.nn.PoissonNLLLoss: logInput true, full false, eps 1e-8). */
export class PoissonNLLLoss extends Loss {
  readonly logInput: boolean;
  readonly full: boolean;
  readonly eps: number;
  constructor(options: F.PoissonNLLOptions = {}) {
    super(options);
    const c = checksOf('PoissonNLLLoss');
    this.logInput = flag(c, options.logInput, 'options.logInput', true);
    this.full = flag(c, options.full, 'options.full', false);
    this.eps = c.number(options.eps ?? 1e-8, 'options.eps');
  }
  /** The loss of rates `input` at counts `target`. */
  forward(input: Tensor, target: Tensor): Tensor {
    const { logInput, full, eps, reduction } = this;
    return F.poissonNllLoss(input, target, { logInput, full, eps, reduction });
  }
}

/** Gaussian negative log-likelihood (torch.nn.GaussianNLLLoss: full false, eps 1e-6). */
export class GaussianNLLLoss extends Loss {
  readonly full: boolean;
  readonly eps: number;
  constructor(options: F.GaussianNLLOptions = {}) {
    super(options);
    const c = checksOf('GaussianNLLLoss');
    this.full = flag(c, options.full, 'options.full', false);
    this.eps = c.number(options.eps ?? 1e-6, 'options.eps');
  }
  /** The loss of means `input` and variances `variance` at `target`. */
  forward(input: Tensor, target: Tensor, variance: Tensor): Tensor {
    const { full, eps, reduction } = this;
    return F.gaussianNllLoss(input, target, variance, { full, eps, reduction });
  }
}

/** Multi-class hinge loss (torch.nn.MultiMarginLoss: p 1 or 2, margin 1, a weight per class). */
export class MultiMarginLoss extends Loss {
  readonly margin: number;
  readonly p: 1 | 2;
  readonly weight: Tensor | null;
  constructor(options: F.MultiMarginOptions = {}) {
    super(options);
    this.margin = marginOf('MultiMarginLoss', options, 1);
    const p = options.p ?? 1;
    if (p !== 1 && p !== 2)
      checksOf('MultiMarginLoss').fail('options.p', '1 or 2 (PyTorch supports no other)', p);
    this.p = p;
    const w = optionalTensor(checksOf('MultiMarginLoss'), options.weight, 'options.weight');
    if (w && w.ndim !== 1)
      checksOf('MultiMarginLoss').fail('options.weight', 'a 1-d Tensor (one weight per class)', w);
    this.weight = this.weightBuffer('weight', w, 'weight');
  }
  /** The loss of scores [N, C] at class indices [N]. */
  forward(input: Tensor, target: Tensor): Tensor {
    const { p, margin, weight, reduction } = this;
    return F.multiMarginLoss(input, target, { p, margin, weight, reduction });
  }
}

/** Multi-label hinge loss (torch.nn.MultiLabelMarginLoss); targets list class indices, -1 ending each list. */
export class MultiLabelMarginLoss extends Loss {
  constructor(options: F.ReductionOptions = {}) {
    super(options);
  }
  /** The loss of scores [N, C] against int64 targets [N, C]. */
  forward(input: Tensor, target: Tensor): Tensor {
    return F.multilabelMarginLoss(input, target, { reduction: this.reduction });
  }
}

/** Connectionist temporal classification loss (torch.nn.CTCLoss: blank 0, zeroInfinity false). */
export class CTCLoss extends Loss {
  readonly blank: number;
  readonly zeroInfinity: boolean;
  constructor(options: F.CTCOptions = {}) {
    super(options);
    const c = checksOf('CTCLoss');
    this.blank = c.integer(options.blank ?? 0, 'options.blank', { min: 0 });
    this.zeroInfinity = flag(c, options.zeroInfinity, 'options.zeroInfinity', false);
  }
  /** The loss of logProbs [T, N, C] for the targets and lengths (see nn.functional.ctcLoss). */
  forward(
    logProbs: Tensor,
    targets: Tensor,
    inputLengths: Tensor | number[],
    targetLengths: Tensor | number[],
  ): Tensor {
    const { blank, zeroInfinity, reduction } = this;
    return F.ctcLoss(logProbs, targets, inputLengths, targetLengths, { blank, zeroInfinity, reduction });
  }
}
