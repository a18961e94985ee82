// PyTorch 1.13's further transforms (torch.distributions.transforms): Tanh, Power, Softplus,
// Abs, Softmax, StickBreaking, Reshape and CumulativeDistribution, with its formulas op for op.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { ones, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import { describeValue } from '../../util/arguments.js';
import { Distribution, broadcastShapes, finfoEps, finfoTiny, type Constraint } from './distribution.js';
import * as c from './constraints.js';
import { TransformBase } from './transform-base.js';
import type { Transform } from './transforms.js';

/** Values in [-1, 1] (PyTorch's `Interval(lower_bound=-1.0, upper_bound=1.0)`, Tanh's codomain). */
const symmetricUnitInterval = c.interval(-1, 1);

/** Throws unless shape has at least one dim (the vector transforms' forwardShape). */
function checkVector(who: string, shape: number[]): void {
  if (shape.length < 1)
    throw new Error(`tailor: ${who}: too few dimensions on input (a vector transform needs >= 1)`);
}

/**
 * y = tanh(x) (torch.distributions.transforms.TanhTransform). The inverse is atanh, unclamped
 * as in PyTorch (±1 give ±∞): use cacheSize 1 to invert draws exactly.
 */
export class TanhTransform extends TransformBase {
  readonly name = 'TanhTransform';
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.real;
  }
  get codomain(): Constraint {
    return symmetricUnitInterval;
  }
  override get sign(): number {
    return 1;
  }
  protected call(x: Tensor): Tensor {
    return x.tanh();
  }
  protected override invert(y: Tensor): Tensor {
    return aten.atanh(y);
  }
  /** 2 (log 2 - x - softplus(-2x)), PyTorch's stable form. */
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    return tidy(() =>
      x
        .neg()
        .add(Math.log(2))
        .sub(aten.softplus(x.mul(-2)))
        .mul(2),
    );
  }
  override equals(other: Transform): boolean {
    return other instanceof TanhTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new TanhTransform(cacheSize);
  }
}

/**
 * y = x^exponent on the positive reals (torch.distributions.transforms.PowerTransform): the
 * exponent is a number or a tensor (the caller's), broadcast against x.
 */
export class PowerTransform extends TransformBase {
  readonly name = 'PowerTransform';
  readonly exponent: Tensor | number;
  constructor(exponent: Tensor | number, cacheSize = 0) {
    super(cacheSize);
    if (!(exponent instanceof Tensor) && typeof exponent !== 'number') {
      throw new Error(
        `tailor: PowerTransform: exponent must be a Tensor or a number, got ${describeValue(exponent)}`,
      );
    }
    this.exponent = exponent;
  }
  get domain(): Constraint {
    return c.positive;
  }
  get codomain(): Constraint {
    return c.positive;
  }
  override get sign(): number {
    return 1;
  }
  protected call(x: Tensor): Tensor {
    return x.pow(this.exponent);
  }
  protected override invert(y: Tensor): Tensor {
    const e = this.exponent;
    return tidy(() => y.pow(typeof e === 'number' ? 1 / e : e.reciprocal()));
  }
  /** log |exponent * y / x|. */
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    const e = this.exponent;
    return tidy(() => (typeof e === 'number' ? y.mul(e) : e.mul(y)).div(x).abs().log());
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    return broadcastShapes(
      'PowerTransform',
      shape,
      this.exponent instanceof Tensor ? this.exponent.shape : [],
    );
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return this.forwardShape(shape);
  }
  override equals(other: Transform): boolean {
    if (!(other instanceof PowerTransform)) return false;
    const [a, b] = [this.exponent, other.exponent];
    if (typeof a === 'number' && typeof b === 'number') return a === b;
    return tidy(() => aten.all(a instanceof Tensor ? a.eq(b) : (b as Tensor).eq(a)).item() !== 0);
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new PowerTransform(this.exponent, cacheSize);
  }
}

/** y = log(1 + exp(x)) (torch.distributions.transforms.SoftplusTransform). */
export class SoftplusTransform extends TransformBase {
  readonly name = 'SoftplusTransform';
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.real;
  }
  get codomain(): Constraint {
    return c.positive;
  }
  override get sign(): number {
    return 1;
  }
  protected call(x: Tensor): Tensor {
    return aten.softplus(x);
  }
  /** log(-expm1(-y)) + y. */
  protected override invert(y: Tensor): Tensor {
    return tidy(() => aten.expm1(y.neg()).neg().log().add(y));
  }
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    return tidy(() => aten.softplus(x.neg()).neg());
  }
  override equals(other: Transform): boolean {
    return other instanceof SoftplusTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new SoftplusTransform(cacheSize);
  }
}

/** y = |x| (torch.distributions.transforms.AbsTransform): not a bijection; its "inverse" is y. */
export class AbsTransform extends TransformBase {
  readonly name = 'AbsTransform';
  override readonly bijective = false;
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.real;
  }
  get codomain(): Constraint {
    return c.positive;
  }
  protected call(x: Tensor): Tensor {
    return x.abs();
  }
  protected override invert(y: Tensor): Tensor {
    return y;
  }
  override equals(other: Transform): boolean {
    return other instanceof AbsTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new AbsTransform(cacheSize);
  }
}

/**
 * Real vectors to the simplex by softmax (torch.distributions.transforms.SoftmaxTransform): not a
 * bijection (the inverse is the log, up to a constant) and without a log |det J|.
 */
export class SoftmaxTransform extends TransformBase {
  readonly name = 'SoftmaxTransform';
  override readonly bijective = false;
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.realVector;
  }
  get codomain(): Constraint {
    return c.simplex;
  }
  protected call(x: Tensor): Tensor {
    return tidy(() => {
      const probs = x.sub(x.amax(-1, true)).exp();
      return probs.div(probs.sum(-1, true));
    });
  }
  protected override invert(y: Tensor): Tensor {
    return y.log();
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    checkVector('SoftmaxTransform', shape);
    return shape;
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    checkVector('SoftmaxTransform', shape);
    return shape;
  }
  override equals(other: Transform): boolean {
    return other instanceof SoftmaxTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new SoftmaxTransform(cacheSize);
  }
}

/** K - k for k = 0..K-1 as x's dtype (PyTorch's `K + 1 - ones(K).cumsum(-1)` with K + 1 = size). */
function stickOffset(x: Tensor, size: number, count: number): Tensor {
  return aten
    .cumsum(ones([count], x.dtype, x.device), -1)
    .neg()
    .add(size);
}

/**
 * Real vectors of K - 1 to the simplex of K by stick breaking
 * (torch.distributions.transforms.StickBreakingTransform): a bijection, with log |det J|.
 */
export class StickBreakingTransform extends TransformBase {
  readonly name = 'StickBreakingTransform';
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.realVector;
  }
  get codomain(): Constraint {
    return c.simplex;
  }
  protected call(x: Tensor): Tensor {
    return tidy(() => {
      const k = x.size(-1);
      const z = x
        .sub(stickOffset(x, k + 1, k).log())
        .sigmoid()
        .clamp(finfoTiny(x), 1 - finfoEps(x));
      const zCumprod = aten.cumprod(z.neg().add(1), -1);
      return aten.constant_pad_nd(z, [0, 1], 1).mul(aten.constant_pad_nd(zCumprod, [1, 0], 1));
    });
  }
  protected override invert(y: Tensor): Tensor {
    return tidy(() => {
      const k = y.size(-1);
      const yCrop = y.narrow(-1, 0, k - 1);
      const offset = stickOffset(y, k, k - 1);
      // Clamped so that sf stays positive where y[-1] ~ 0 or the sum of the rest ~ 1 (as PyTorch).
      const sf = aten.cumsum(yCrop, -1).neg().add(1).clamp(finfoTiny(y));
      return yCrop.log().sub(sf.log()).add(offset.log());
    });
  }
  /** Σ (-x' + log σ(x') + log y_k) over the vector, x' = x - log(offset). */
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    return tidy(() => {
      const k = x.size(-1);
      const shifted = x.sub(stickOffset(x, k + 1, k).log());
      return shifted
        .neg()
        .add(aten.log_sigmoid(shifted))
        .add(y.narrow(-1, 0, y.size(-1) - 1).log())
        .sum(-1);
    });
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    checkVector('StickBreakingTransform', shape);
    return [...shape.slice(0, -1), shape[shape.length - 1] + 1];
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    checkVector('StickBreakingTransform', shape);
    return [...shape.slice(0, -1), shape[shape.length - 1] - 1];
  }
  override equals(other: Transform): boolean {
    return other instanceof StickBreakingTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new StickBreakingTransform(cacheSize);
  }
}

/** A shape argument checked: a list of integer sizes >= 0. */
function checkShape(argument: string, shape: unknown): number[] {
  if (!Array.isArray(shape) || !shape.every((n) => Number.isInteger(n) && n >= 0)) {
    throw new Error(
      `tailor: ReshapeTransform: ${argument} must be a list of integer sizes >= 0, got ${describeValue(shape)}`,
    );
  }
  return [...(shape as number[])];
}

/**
 * The rightmost dims of shape inShape reshaped to outShape
 * (torch.distributions.transforms.ReshapeTransform): a bijection of log |det J| 0.
 */
export class ReshapeTransform extends TransformBase {
  readonly name = 'ReshapeTransform';
  readonly inShape: number[];
  readonly outShape: number[];
  constructor(inShape: number[], outShape: number[], cacheSize = 0) {
    super(cacheSize);
    this.inShape = checkShape('inShape', inShape);
    this.outShape = checkShape('outShape', outShape);
    const numel = (s: number[]): number => s.reduce((a, b) => a * b, 1);
    if (numel(this.inShape) !== numel(this.outShape)) {
      throw new Error(
        `tailor: ReshapeTransform: inShape [${this.inShape.join(', ')}] and outShape [${this.outShape.join(', ')}] have different numbers of elements`,
      );
    }
  }
  get domain(): Constraint {
    return c.independent(c.real, this.inShape.length);
  }
  get codomain(): Constraint {
    return c.independent(c.real, this.outShape.length);
  }
  protected call(x: Tensor): Tensor {
    return x.reshape(...this.forwardShape(x.shape));
  }
  protected override invert(y: Tensor): Tensor {
    return y.reshape(...this.inverseShape(y.shape));
  }
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    return zeros(x.shape.slice(0, x.ndim - this.inShape.length), x.dtype, x.device);
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    return this.swap(shape, this.inShape, this.outShape);
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return this.swap(shape, this.outShape, this.inShape);
  }
  override equals(other: Transform): boolean {
    const same = (a: number[], b: number[]): boolean =>
      a.length === b.length && a.every((s, i) => s === b[i]);
    return (
      other instanceof ReshapeTransform &&
      same(this.inShape, other.inShape) &&
      same(this.outShape, other.outShape)
    );
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new ReshapeTransform(this.inShape, this.outShape, cacheSize);
  }
  private swap(shape: number[], from: number[], to: number[]): number[] {
    const cut = shape.length - from.length;
    if (cut < 0 || shape.slice(cut).some((s, i) => s !== from[i])) {
      throw new Error(
        `tailor: ReshapeTransform: shape mismatch: expected a shape ending in [${from.join(', ')}], got [${shape.join(', ')}]`,
      );
    }
    return [...shape.slice(0, cut), ...to];
  }
}

/**
 * y = F(x), the cdf of a distribution (torch.distributions.transforms.CumulativeDistributionTransform):
 * the inverse is its icdf and log |det J| its logProb. The distribution stays the caller's.
 */
export class CumulativeDistributionTransform extends TransformBase {
  readonly name = 'CumulativeDistributionTransform';
  readonly distribution: Distribution;
  constructor(distribution: Distribution, cacheSize = 0) {
    super(cacheSize);
    if (!(distribution instanceof Distribution)) {
      throw new Error(
        `tailor: CumulativeDistributionTransform: distribution must be a Distribution, got ${describeValue(distribution)}`,
      );
    }
    this.distribution = distribution;
  }
  get domain(): Constraint {
    return this.distribution.support;
  }
  get codomain(): Constraint {
    return c.unitInterval;
  }
  override get sign(): number {
    return 1;
  }
  protected call(x: Tensor): Tensor {
    return this.distribution.cdf(x);
  }
  protected override invert(y: Tensor): Tensor {
    return this.distribution.icdf(y);
  }
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    return this.distribution.logProb(x);
  }
  override equals(other: Transform): boolean {
    return other === this;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new CumulativeDistributionTransform(this.distribution, cacheSize);
  }
}
