// The likelihood and classification losses of torch.nn.functional: Poisson and Gaussian NLL,
// the multi-class and multi-label hinge losses, CTC. Each is libtorch's ATen operator where
// PyTorch 1.13 calls one, or PyTorch's own composition (Gaussian NLL) in the same order.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
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
  tensorArg,
  type Reduction,
} from './loss-checks.js';
import type { ReductionOptions } from './functional-losses.js';

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
  const { c, o } = lossStart('poissonNllLoss', options, { input, target });
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
  const { c, o } = lossStart('gaussianNllLoss', options, { input, target, variance });
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
    if (negative)
      throw new ArgumentError('gaussianNllLoss: variance has negative entries: give variances >= 0');
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
  const { c, o } = lossStart('multiMarginLoss', options, { input, target });
  const code = reductionCode(c, o.reduction);
  const p = o.p ?? 1;
  if (p !== 1 && p !== 2) c.fail('options.p', '1 or 2 (PyTorch supports no other)', p);
  const margin = c.number(o.margin ?? 1, 'options.margin');
  const weight = optionalTensor(c, o.weight, 'options.weight');
  if (input.ndim > 2 || (input.ndim === 2 && input.shape[0] === 0))
    shapeFail(c, 'input', 'a 1-d [C] or 2-d [N, C] Tensor', input);
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
  const { c, o } = lossStart('multilabelMarginLoss', options, { input, target });
  const code = reductionCode(c, o.reduction);
  if (input.ndim > 2) shapeFail(c, 'input', 'a 1-d [C] or 2-d [N, C] Tensor', input);
  sameShape(c, input, 'input', target, 'target');
  if (target.dtype !== 'int64')
    c.fail('target', 'an int64 Tensor of class indices (-1 ends a list)', target.dtype);
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
  const { c, o } = lossStart('ctcLoss', options, { logProbs, targets });
  const code = reductionCode(c, o.reduction);
  const zeroInfinity = flag(c, o.zeroInfinity, 'options.zeroInfinity', false);
  if (logProbs.ndim !== 2 && logProbs.ndim !== 3)
    shapeFail(c, 'logProbs', 'a [T, N, C] or [T, C] Tensor', logProbs);
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
    return aten.ctc_loss_IntList(
      logProbs,
      targets,
      inputLengths,
      targetLengths as number[],
      blank,
      code,
      zeroInfinity,
    );
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
