// PyTorch 1.13's transform functors CatTransform and StackTransform
// (torch.distributions.transforms): transforms applied piecewise along a dim, in torch.cat's and
// torch.stack's layouts, with PyTorch's log |det J| (concatenated or summed as 1.13 decides).
import type { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { cat, stack } from '../creation.js';
import { describeValue } from '../../util/arguments.js';
import type { Constraint } from './distribution.js';
import * as c from './constraints.js';
import { TransformBase, checkTransforms, sumRightmost } from './transform-base.js';
import type { Transform } from './transforms.js';

/** A transform's event dims (PyTorch's Transform.event_dim: only where domain and codomain agree). */
function eventDimOf(who: string, t: Transform): number {
  if (t.domain.eventDim !== t.codomain.eventDim) {
    throw new Error(
      `tailor: ${who}: ${t.name} has domain and codomain of different event dims (${t.domain.eventDim} and ${t.codomain.eventDim}), so no single event dim, as in PyTorch 1.13`,
    );
  }
  return t.domain.eventDim;
}

/** Checks the tseq argument of a functor: a non-empty array of transforms. */
function checkSequence(who: string, tseq: unknown): Transform[] {
  if (!Array.isArray(tseq) || tseq.length === 0) {
    throw new Error(
      `tailor: ${who}: tseq must be a non-empty array of Transforms, got ${describeValue(tseq)}`,
    );
  }
  return [...checkTransforms(who, 'tseq', tseq)];
}

/** Throws unless value's dim exists and holds `size` entries (PyTorch asserts both). */
function checkAlong(who: string, value: Tensor, dim: number, size: number, what: string): void {
  if (dim < -value.ndim || dim >= value.ndim) {
    throw new Error(
      `tailor: ${who}: dim ${dim} is out of range for a tensor of shape [${value.shape.join(', ')}]`,
    );
  }
  if (value.size(dim) !== size) {
    throw new Error(
      `tailor: ${who}: the size along dim ${dim} of [${value.shape.join(', ')}] must be ${size} (${what}), got ${value.size(dim)}`,
    );
  }
}

/**
 * The transforms of tseq, the i-th on the i-th piece of lengths[i] along dim, in torch.cat's
 * layout (torch.distributions.transforms.CatTransform); lengths default to 1 each.
 */
export class CatTransform extends TransformBase {
  readonly name = 'CatTransform';
  /** The transforms, one per piece. */
  readonly transforms: readonly Transform[];
  /** The dim along which the pieces lie. */
  readonly dim: number;
  /** The length of each piece along dim. */
  readonly lengths: readonly number[];
  override readonly bijective: boolean;
  constructor(tseq: Transform[], dim = 0, lengths?: number[], cacheSize = 0) {
    super(cacheSize);
    const list = checkSequence('CatTransform', tseq);
    this.dim = c.checkDim('CatTransform', dim);
    const sizes = lengths ?? list.map(() => 1);
    if (
      !Array.isArray(sizes) ||
      sizes.length !== list.length ||
      !sizes.every((n) => Number.isInteger(n) && n >= 0)
    ) {
      throw new Error(
        `tailor: CatTransform: lengths must be ${list.length} integer sizes >= 0 (one per transform), got ${describeValue(lengths)}`,
      );
    }
    this.lengths = [...sizes];
    this.transforms = cacheSize === 0 ? list : list.map((t) => t.withCache(cacheSize));
    this.bijective = this.transforms.every((t) => t.bijective);
  }
  /** The total length along dim. */
  get length(): number {
    return this.lengths.reduce((a, b) => a + b, 0);
  }
  /** The parts' domains, as constraints.cat. */
  get domain(): Constraint {
    return c.cat(
      this.transforms.map((t) => t.domain),
      this.dim,
      [...this.lengths],
    );
  }
  /** The parts' codomains, as constraints.cat. */
  get codomain(): Constraint {
    return c.cat(
      this.transforms.map((t) => t.codomain),
      this.dim,
      [...this.lengths],
    );
  }
  protected call(x: Tensor): Tensor {
    return this.piecewise('forward', x, (t, piece) => t.forward(piece));
  }
  protected override invert(y: Tensor): Tensor {
    return this.piecewise('inverse', y, (t, piece) => t.inverse(piece));
  }
  /**
   * Each part's log |det J| on its piece, summed over the event dims beyond the part's; the
   * pieces concatenated along dim where dim lies in the batch dims, else summed (as PyTorch).
   */
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    const who = 'CatTransform.logAbsDetJacobian';
    checkAlong(who, x, this.dim, this.length, 'the sum of lengths');
    checkAlong(who, y, this.dim, this.length, 'the sum of lengths');
    const eventDim = Math.max(...this.transforms.map((t) => eventDimOf(who, t)));
    return tidy(() => {
      let start = 0;
      const terms = this.transforms.map((t, i) => {
        const length = this.lengths[i];
        const term = t.logAbsDetJacobian(
          x.narrow(this.dim, start, length),
          y.narrow(this.dim, start, length),
        );
        start += length;
        return sumRightmost(term, eventDim - eventDimOf(who, t));
      });
      const dim = (this.dim >= 0 ? this.dim - x.ndim : this.dim) + eventDim;
      return dim < 0 ? cat(terms, dim) : terms.reduce((a, b) => a.add(b));
    });
  }
  override dispose(): void {
    for (const t of this.transforms) t.dispose();
    super.dispose();
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new CatTransform([...this.transforms], this.dim, [...this.lengths], cacheSize);
  }
  private piecewise(method: string, v: Tensor, apply: (t: Transform, piece: Tensor) => Tensor): Tensor {
    checkAlong(`CatTransform.${method}`, v, this.dim, this.length, 'the sum of lengths');
    return tidy(() => {
      let start = 0;
      const pieces = this.transforms.map((t, i) => {
        const piece = apply(t, v.narrow(this.dim, start, this.lengths[i]));
        start += this.lengths[i];
        return piece;
      });
      return cat(pieces, this.dim);
    });
  }
}

/**
 * The transforms of tseq, the i-th on the i-th slice along dim, in torch.stack's layout
 * (torch.distributions.transforms.StackTransform).
 */
export class StackTransform extends TransformBase {
  readonly name = 'StackTransform';
  /** The transforms, one per slice. */
  readonly transforms: readonly Transform[];
  /** The dim whose slices they transform. */
  readonly dim: number;
  override readonly bijective: boolean;
  constructor(tseq: Transform[], dim = 0, cacheSize = 0) {
    super(cacheSize);
    const list = checkSequence('StackTransform', tseq);
    this.dim = c.checkDim('StackTransform', dim);
    this.transforms = cacheSize === 0 ? list : list.map((t) => t.withCache(cacheSize));
    this.bijective = this.transforms.every((t) => t.bijective);
  }
  /** The parts' domains, as constraints.stack. */
  get domain(): Constraint {
    return c.stack(
      this.transforms.map((t) => t.domain),
      this.dim,
    );
  }
  /** The parts' codomains, as constraints.stack. */
  get codomain(): Constraint {
    return c.stack(
      this.transforms.map((t) => t.codomain),
      this.dim,
    );
  }
  protected call(x: Tensor): Tensor {
    return this.slicewise('forward', [x], (t, [slice]) => t.forward(slice));
  }
  protected override invert(y: Tensor): Tensor {
    return this.slicewise('inverse', [y], (t, [slice]) => t.inverse(slice));
  }
  /** Each part's log |det J| on its slice, stacked along dim. */
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    return this.slicewise('logAbsDetJacobian', [x, y], (t, [xs, ys]) => t.logAbsDetJacobian(xs, ys));
  }
  override dispose(): void {
    for (const t of this.transforms) t.dispose();
    super.dispose();
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new StackTransform([...this.transforms], this.dim, cacheSize);
  }
  private slicewise(
    method: string,
    values: Tensor[],
    apply: (t: Transform, slices: Tensor[]) => Tensor,
  ): Tensor {
    const count = this.transforms.length;
    for (const v of values)
      checkAlong(`StackTransform.${method}`, v, this.dim, count, 'one slice per transform');
    return tidy(() =>
      stack(
        this.transforms.map((t, i) =>
          apply(
            t,
            values.map((v) => v.select(this.dim, i)),
          ),
        ),
        this.dim,
      ),
    );
  }
}
