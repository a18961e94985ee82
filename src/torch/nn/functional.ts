// Stateless functions (torch.nn.functional).
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { additiveMask, attentionWeights } from './attention.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
export {
  prelu,
  relu6,
  hardtanh,
  hardswish,
  hardsigmoid,
  mish,
  logsigmoid,
  softsign,
  softmin,
  glu,
  selu,
  celu,
  threshold,
} from './functional-activation.js';
export {
  pixelShuffle,
  pixelUnshuffle,
  channelShuffle,
  dropout1d,
  dropout2d,
  dropout3d,
} from './functional-shape.js';
import {
  broadcastShapes,
  lossOptions,
  optionalTensor,
  reductionCode,
  tensorArg,
  type Reduction,
} from './loss-checks.js';

export type { Reduction } from './loss-checks.js';
export * from './functional-losses.js';
export * from './functional-nll.js';
export {
  embedding,
  embeddingBag,
  type EmbeddingFunctionalOptions,
  type EmbeddingBagFunctionalOptions,
  type EmbeddingBagMode,
} from './functional-embedding.js';
export {
  pairwiseDistance,
  tripletMarginWithDistanceLoss,
  type DistanceFunction,
  type TripletMarginWithDistanceOptions,
} from './functional-losses-more.js';

/** Options of crossEntropy: class weights, ignored index, label smoothing, reduction. */
export interface CrossEntropyOptions {
  weight?: Tensor | null;
  reduction?: Reduction;
  ignoreIndex?: number;
  labelSmoothing?: number;
}

/**
 * Cross-entropy of logits [N, C, ...] against class indices [N, ...] (int64) or class
 * probabilities of the logits' shape (soft targets, for mixup), as F.cross_entropy.
 */
export function crossEntropy(logits: Tensor, target: Tensor, options: CrossEntropyOptions = {}): Tensor {
  const c = checksOf('crossEntropy');
  const o = lossOptions(c, options);
  tensorArg(c, logits, 'logits');
  tensorArg(c, target, 'target');
  return aten.cross_entropy_loss(
    logits,
    target,
    optionalTensor(c, o.weight, 'options.weight'),
    reductionCode(c, o.reduction),
    c.integer(o.ignoreIndex ?? -100, 'options.ignoreIndex'),
    c.number(o.labelSmoothing ?? 0, 'options.labelSmoothing', { min: 0, max: 1 }),
  );
}

/** Options of nllLoss: class weights [C], the ignored target index (default -100) and the reduction. */
export interface NLLOptions {
  weight?: Tensor | null;
  reduction?: Reduction;
  ignoreIndex?: number;
}

/** Negative log-likelihood of log-probabilities [N, C, ...] (or [C]) at int64 targets [N, ...] (F.nll_loss). */
export function nllLoss(logProbs: Tensor, target: Tensor, options: NLLOptions = {}): Tensor {
  const c = checksOf('nllLoss');
  const o = lossOptions(c, options);
  tensorArg(c, logProbs, 'logProbs');
  tensorArg(c, target, 'target');
  return aten.nll_loss_nd(
    logProbs,
    target,
    optionalTensor(c, o.weight, 'options.weight'),
    reductionCode(c, o.reduction),
    c.integer(o.ignoreIndex ?? -100, 'options.ignoreIndex'),
  );
}

/** input and target broadcast to one shape, as PyTorch's elementwise regression losses do. */
function regression(
  fn: string,
  input: Tensor,
  target: Tensor,
  reduction: unknown,
  op: (a: Tensor, b: Tensor, code: number) => Tensor,
  check?: (c: ReturnType<typeof checksOf>) => void,
): Tensor {
  const c = checksOf(fn);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, reduction);
  check?.(c);
  const shape = broadcastShapes(c, [input, 'input'], [target, 'target']);
  const same = (t: Tensor) => t.shape.length === shape.length && t.shape.every((v, i) => v === shape[i]);
  if (same(input) && same(target)) return op(input, target, code);
  return tidy(() => op(aten.expand(input, shape), aten.expand(target, shape), code));
}

/** Mean squared error (F.mse_loss); input and target broadcast. */
export function mseLoss(input: Tensor, target: Tensor, reduction: Reduction = 'mean'): Tensor {
  return regression('mseLoss', input, target, reduction, aten.mse_loss);
}

/** Mean absolute error (F.l1_loss); input and target broadcast. */
export function l1Loss(input: Tensor, target: Tensor, reduction: Reduction = 'mean'): Tensor {
  return regression('l1Loss', input, target, reduction, aten.l1_loss);
}

/** Huber-like loss: quadratic below `beta` (>= 0), linear above (F.smooth_l1_loss). */
export function smoothL1Loss(input: Tensor, target: Tensor, beta = 1, reduction: Reduction = 'mean'): Tensor {
  return regression(
    'smoothL1Loss',
    input,
    target,
    reduction,
    (a, b, code) => aten.smooth_l1_loss(a, b, code, beta),
    (c) => c.number(beta, 'beta', { min: 0 }),
  );
}

/** Options of binaryCrossEntropyWithLogits: a weight broadcast to the target's shape, the positive class's weight per class (posWeight), the reduction. */
export interface BCEWithLogitsOptions {
  weight?: Tensor | null;
  posWeight?: Tensor | null;
  reduction?: Reduction;
}

/**
 * Binary cross-entropy of logits against targets in [0, 1] of the logits' shape, computed stably
 * (F.binary_cross_entropy_with_logits); the third argument is the reduction or the options.
 */
export function binaryCrossEntropyWithLogits(
  input: Tensor,
  target: Tensor,
  options: Reduction | BCEWithLogitsOptions = 'mean',
): Tensor {
  const c = checksOf('binaryCrossEntropyWithLogits');
  const o = typeof options === 'string' ? { reduction: options } : lossOptions(c, options);
  tensorArg(c, input, 'input');
  tensorArg(c, target, 'target');
  const code = reductionCode(c, o.reduction);
  if (input.shape.length !== target.shape.length || input.shape.some((v, i) => v !== target.shape[i]))
    throw new ArgumentError(
      `binaryCrossEntropyWithLogits: target [${target.shape.join(', ')}] must have the shape of input [${input.shape.join(', ')}]`,
    );
  const weight = optionalTensor(c, o.weight, 'options.weight');
  const posWeight = optionalTensor(c, o.posWeight, 'options.posWeight');
  if (weight) broadcastShapes(c, [input, 'input'], [weight, 'options.weight']);
  if (posWeight) broadcastShapes(c, [input, 'input'], [posWeight, 'options.posWeight']);
  return aten.binary_cross_entropy_with_logits(input, target, weight, posWeight, code);
}

/** Log-softmax along `dim` (default -1). */
export function logSoftmax(x: Tensor, dim = -1): Tensor {
  return aten.log_softmax_int(x, dim);
}

/** Softmax along `dim` (default -1). */
export function softmax(x: Tensor, dim = -1): Tensor {
  return aten.softmax_int(x, dim);
}

/** x / max(||x||_p, eps) along dim, as F.normalize. */
export function normalize(x: Tensor, p = 2, dim = 1, eps = 1e-12): Tensor {
  const norm = aten.linalg_vector_norm(x, p, [dim], true);
  const clamped = aten.clamp_min(norm, { float: eps });
  const out = aten.div_Tensor(x, clamped);
  norm.dispose();
  clamped.dispose();
  return out;
}

/** Cosine similarity of a and b along `dim` (F.cosine_similarity). */
export function cosineSimilarity(a: Tensor, b: Tensor, dim = 1, eps = 1e-8): Tensor {
  return aten.cosine_similarity(a, b, dim, eps);
}

/** One-hot encodes int64 labels (numClasses -1: the largest label + 1), as F.one_hot. */
export function oneHot(labels: Tensor, numClasses = -1): Tensor {
  return aten.one_hot(labels, numClasses);
}

/** Elementwise max(x, 0). */
export function relu(x: Tensor): Tensor {
  return aten.relu(x);
}

/** max(x, 0) + negativeSlope min(x, 0) (F.leaky_relu; default slope 0.01). */
export function leakyRelu(x: Tensor, negativeSlope = 0.01): Tensor {
  return aten.leaky_relu(x, negativeSlope);
}

/** x sigmoid(x), the sigmoid linear unit or swish (F.silu). */
export function silu(x: Tensor): Tensor {
  return aten.silu(x);
}

/** x for x > 0, alpha (exp(x) - 1) otherwise (F.elu; default alpha 1). */
export function elu(x: Tensor, alpha = 1): Tensor {
  return aten.elu(x, alpha);
}

/** log(1 + exp(beta x)) / beta, linear where beta x > threshold (F.softplus; defaults 1 and 20). */
export function softplus(x: Tensor, beta = 1, threshold = 20): Tensor {
  return aten.softplus(x, beta, threshold);
}

/** The Gaussian error linear unit (exact, or the 'tanh' approximation). */
export function gelu(x: Tensor, approximate: 'none' | 'tanh' = 'none'): Tensor {
  return aten.gelu(x, approximate);
}

/** x W^T + b (F.linear). */
export function linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
  return aten.linear(x, weight, bias ?? null);
}

/** Dropout with probability p when `training`, the identity otherwise (F.dropout). */
export function dropout(x: Tensor, p: number, training: boolean): Tensor {
  return aten.dropout(x, p, training);
}

/** Pads the last dimensions: pad = [left, right, (top, bottom, ...)] as F.pad. */
export function pad(
  x: Tensor,
  padding: number[],
  mode: 'constant' | 'reflect' | 'replicate' | 'circular' = 'constant',
  value = 0,
): Tensor {
  return aten.pad(x, padding, mode, mode === 'constant' ? value : null);
}

/** Options of interpolate: the output size or the scale factor per spatial dimension, the mode (default nearest), alignCorners. */
export interface InterpolateOptions {
  size?: number[];
  scaleFactor?: number[];
  mode?: 'nearest' | 'linear' | 'bilinear';
  alignCorners?: boolean;
}

/** Resizes [N, C, L] (nearest/linear) or [N, C, H, W] (nearest/bilinear) inputs, as F.interpolate. */
export function interpolate(x: Tensor, options: InterpolateOptions): Tensor {
  checksOf('interpolate').object(options, 'options');
  const mode = options.mode ?? 'nearest';
  const size = options.size ?? null;
  const scales = options.scaleFactor ?? null;
  if (x.ndim === 3 && mode === 'linear')
    return aten.upsample_linear1d_vec(x, size, options.alignCorners ?? false, scales);
  if (x.ndim === 3 && mode === 'nearest') return aten.upsample_nearest1d_vec(x, size, scales);
  if (x.ndim === 4 && mode === 'bilinear')
    return aten.upsample_bilinear2d_vec(x, size, options.alignCorners ?? false, scales);
  if (x.ndim === 4 && mode === 'nearest') return aten.upsample_nearest2d_vec(x, size, scales);
  throw new Error(`interpolate: mode '${mode}' does not apply to a ${x.ndim}-d input`);
}

/** Options of scaledDotProductAttention (PyTorch 2.x's F.scaled_dot_product_attention, camelCase). */
export interface AttentionOptions {
  /**
   * A mask broadcastable to [..., L, S]: boolean (true: the query may attend to the key) or
   * floating point (added to the scores, -Infinity to block).
   */
  attnMask?: Tensor | null;
  /** Dropout on the attention weights (default 0); applied whenever > 0, as PyTorch's function does. */
  dropoutP?: number;
  /** Lets query i attend to keys 0..i only (the upper triangle masked); not with attnMask (default false). */
  isCausal?: boolean;
  /** The factor of the scores (default 1 / sqrt(E), E the last dimension of the query). */
  scale?: number;
}

/**
 * Attention softmax(q k^T / sqrt(E) + mask) v over the last two dimensions, as PyTorch 2.x's
 * F.scaled_dot_product_attention (libtorch 1.13 has no fused kernel; this is its definition in
 * matmul and softmax). Shapes: q [..., L, E], k [..., S, E], v [..., S, Ev] (the leading
 * dimensions broadcast: [batch, heads] typically); returns [..., L, Ev]. A boolean attnMask is
 * true where attention is allowed (the opposite of MultiheadAttention's masks); a float one is
 * added to the scores. A query row with every key masked gives NaN, as in PyTorch.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * torch.tidy(() => {
 *   const [q, k, v] = [torch.randn([2, 4, 5, 8]), torch.randn([2, 4, 7, 8]), torch.randn([2, 4, 7, 8])];
 *   const out = torch.nn.functional.scaledDotProductAttention(q, k, v); // [2, 4, 5, 8]
 *   const causal = torch.nn.functional.scaledDotProductAttention(q, q, q, { isCausal: true });
 * });
 * ```
 */
export function scaledDotProductAttention(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  options: AttentionOptions = {},
): Tensor {
  const fn = 'scaledDotProductAttention';
  const c = checksOf(fn);
  for (const [t, name] of [
    [q, 'q'],
    [k, 'k'],
    [v, 'v'],
  ] as const)
    if (!(t instanceof Tensor) || t.ndim < 2) c.fail(name, 'a Tensor of at least 2 dimensions', t);
  c.object(options, 'options');
  const dropoutP = c.number(options.dropoutP ?? 0, 'options.dropoutP', { min: 0, max: 1 });
  const scale = c.number(options.scale ?? 1 / Math.sqrt(q.shape[q.ndim - 1]!), 'options.scale');
  const isCausal = options.isCausal ?? false;
  if (typeof isCausal !== 'boolean') c.fail('options.isCausal', 'true or false', isCausal);
  const mask = options.attnMask ?? null;
  if (mask !== null && !(mask instanceof Tensor)) c.fail('options.attnMask', 'a Tensor or null', mask);
  if (isCausal && mask)
    throw new ArgumentError(`${fn}: options.isCausal and options.attnMask exclude each other`);
  const E = q.shape[q.ndim - 1];
  if (k.shape[k.ndim - 1] !== E || k.shape[k.ndim - 2] !== v.shape[v.ndim - 2])
    throw new ArgumentError(
      `${fn}: q [..., L, E], k [..., S, E] and v [..., S, Ev] disagree: [${q.shape.join(', ')}], [${k.shape.join(', ')}], [${v.shape.join(', ')}]`,
    );
  return tidy(() => {
    let bias: Tensor | null = null;
    if (isCausal) {
      const L = q.shape[q.ndim - 2]!;
      const S = k.shape[k.ndim - 2]!;
      const ones = aten.ones([L, S], 'bool', null, q.device.name);
      bias = additiveMask(aten.triu(ones, 1), q.dtype, true, `${fn}: options.attnMask`);
    } else if (mask) bias = additiveMask(mask, q.dtype, false, `${fn}: options.attnMask`);
    return attentionWeights(q, k, v, bias, dropoutP, scale)[0];
  });
}
