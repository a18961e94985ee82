// The loss modules over a distance of one's own (torch.nn.TripletMarginWithDistanceLoss), next
// to loss.ts's, and PairwiseDistance, its default distance as a module: options checked when the
// module is built, the forward the functional form.
import type { Tensor } from '../tensor.js';
import { checksOf } from '../../util/arguments.js';
import { flag, lossOptions } from './loss-checks.js';
import { Loss } from './loss.js';
import { Module } from './module.js';
import {
  pairwiseDistance,
  tripletDistanceOptions,
  tripletMarginWithDistanceLoss,
  type DistanceFunction,
  type TripletMarginWithDistanceOptions,
} from './functional-losses-more.js';

/**
 * Triplet margin loss over a distance of one's own (torch.nn.TripletMarginWithDistanceLoss:
 * the pairwise distance, margin 1, swap false by default).
 */
export class TripletMarginWithDistanceLoss extends Loss {
  /** The distance; null: the pairwise (Euclidean) distance, PyTorch's PairwiseDistance(). */
  readonly distanceFunction: DistanceFunction | null;
  readonly margin: number;
  readonly swap: boolean;
  constructor(options: TripletMarginWithDistanceOptions = {}) {
    super(options);
    const c = checksOf('TripletMarginWithDistanceLoss');
    ({
      distanceFunction: this.distanceFunction,
      margin: this.margin,
      swap: this.swap,
    } = tripletDistanceOptions(c, lossOptions(c, options)));
  }
  /** The loss of the triplets. */
  forward(anchor: Tensor, positive: Tensor, negative: Tensor): Tensor {
    const { distanceFunction, margin, swap, reduction } = this;
    return tripletMarginWithDistanceLoss(anchor, positive, negative, {
      distanceFunction,
      margin,
      swap,
      reduction,
    });
  }
}

/** Options of PairwiseDistance (PyTorch's defaults: p 2, eps 1e-6, keepdim false). */
export interface PairwiseDistanceOptions {
  /** The order of the norm: a number >= 0. */
  p?: number;
  /** Added to the differences before the norm. */
  eps?: number;
  /** Keep the last dimension (of size 1). */
  keepdim?: boolean;
}

/** The p-norm distance between the rows of two inputs (torch.nn.PairwiseDistance; F.pairwiseDistance). */
export class PairwiseDistance extends Module {
  readonly p: number;
  readonly eps: number;
  readonly keepdim: boolean;
  constructor(options: PairwiseDistanceOptions = {}) {
    super();
    const c = checksOf('PairwiseDistance');
    const o = lossOptions(c, options);
    this.p = c.number(o.p ?? 2, 'options.p', { min: 0 });
    this.eps = c.number(o.eps ?? 1e-6, 'options.eps', { min: 0 });
    this.keepdim = flag(c, o.keepdim, 'options.keepdim', false);
  }
  /** The distance of each row of x1 to the row of x2 (the two broadcast). */
  forward(x1: Tensor, x2: Tensor): Tensor {
    return pairwiseDistance(x1, x2, this.p, this.eps, this.keepdim);
  }
}
