// Distances and the losses over a distance of one's own: pairwiseDistance (F.pairwise_distance)
// and tripletMarginWithDistanceLoss (F.triplet_margin_with_distance_loss), the latter PyTorch
// 1.13's composition of operators written out in the same order.
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { tidy } from '../scope.js';
import { checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { flag, lossStart, reductionCode, tensorArg, type Reduction } from './loss-checks.js';

/**
 * The p-norm distance between the rows of x1 and x2 (F.pairwise_distance): ||x1 - x2 + eps||_p
 * over the last dimension (eps keeps the gradient finite where the two are equal); the inputs
 * broadcast. keepdim keeps that dimension (of size 1).
 */
export function pairwiseDistance(x1: Tensor, x2: Tensor, p = 2, eps = 1e-6, keepdim = false): Tensor {
  const c = checksOf('pairwiseDistance');
  tensorArg(c, x1, 'x1');
  tensorArg(c, x2, 'x2');
  c.number(p, 'p', { min: 0 });
  c.number(eps, 'eps', { min: 0 });
  return aten.pairwise_distance(x1, x2, p, eps, flag(c, keepdim, 'keepdim', false));
}

/** A distance between the rows of two tensors: one value per row (or per pair the inputs broadcast to). */
export type DistanceFunction = (x1: Tensor, x2: Tensor) => Tensor;

/** Options of tripletMarginWithDistanceLoss (PyTorch's defaults: pairwise distance, margin 1, no swap, 'mean'). */
export interface TripletMarginWithDistanceOptions {
  /**
   * The distance (default: pairwiseDistance, the Euclidean one). It may be any function of two
   * tensors: the temporaries it creates are freed when the loss returns.
   */
  distanceFunction?: DistanceFunction | null;
  /** The least gap wanted between d(anchor, negative) and d(anchor, positive): a number >= 0. */
  margin?: number;
  /** Use the smaller of d(anchor, negative) and d(positive, negative) (the distance swap). */
  swap?: boolean;
  reduction?: Reduction;
}

/** The checked options: the distance (null: the default), the margin and the swap. */
export function tripletDistanceOptions(
  c: ArgumentChecks,
  o: TripletMarginWithDistanceOptions,
): { distanceFunction: DistanceFunction | null; margin: number; swap: boolean } {
  const distanceFunction = o.distanceFunction ?? null;
  if (distanceFunction !== null && typeof distanceFunction !== 'function')
    c.fail(
      'options.distanceFunction',
      'a function (x1, x2) => Tensor, or null for the pairwise distance',
      distanceFunction,
    );
  const margin = c.number(o.margin ?? 1, 'options.margin', { min: 0 });
  return { distanceFunction, margin, swap: flag(c, o.swap, 'options.swap', false) };
}

/**
 * Triplet margin loss max(d(a, p) - d(a, n) + margin, 0) with a distance of one's own
 * (F.triplet_margin_with_distance_loss; default the pairwise distance). With swap, d(a, n) is
 * the smaller of d(a, n) and d(p, n).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const F = torch.nn.functional;
 * const [a, p, n] = [torch.randn([8, 16]), torch.randn([8, 16]), torch.randn([8, 16])];
 * const cosine = (x: torch.Tensor, y: torch.Tensor) => F.cosineSimilarity(x, y).neg().add(1);
 * const loss = F.tripletMarginWithDistanceLoss(a, p, n, { distanceFunction: cosine, margin: 0.5 });
 * ```
 */
export function tripletMarginWithDistanceLoss(
  anchor: Tensor,
  positive: Tensor,
  negative: Tensor,
  options?: TripletMarginWithDistanceOptions,
): Tensor {
  const { c, o } = lossStart('tripletMarginWithDistanceLoss', options, { anchor, positive, negative });
  const code = reductionCode(c, o.reduction);
  const { distanceFunction, margin, swap } = tripletDistanceOptions(c, o);
  const distance = (x1: Tensor, x2: Tensor, what: string): Tensor => {
    const d = distanceFunction ? distanceFunction(x1, x2) : aten.pairwise_distance(x1, x2);
    if (!(d instanceof Tensor)) c.fail(`options.distanceFunction(${what})`, 'a Tensor', d);
    return d;
  };
  return tidy(() => {
    const positiveDistance = distance(anchor, positive, 'anchor, positive');
    let negativeDistance = distance(anchor, negative, 'anchor, negative');
    if (swap)
      negativeDistance = aten.minimum(negativeDistance, distance(positive, negative, 'positive, negative'));
    const gap = aten.add_Scalar(aten.sub_Tensor(positiveDistance, negativeDistance), { float: margin });
    const output = aten.clamp_min(gap, { float: 0 });
    return code === 1 ? aten.mean(output) : code === 2 ? aten.sum(output) : output;
  });
}
