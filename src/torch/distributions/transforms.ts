// Elementwise transforms (PyTorch 1.13's ExpTransform, AffineTransform and SigmoidTransform) and
// TransformedDistribution: the law of f(X) for X of a base distribution, with PyTorch's change
// of variables, cdf/icdf through the transforms, and draws that are the base's, transformed.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { full } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Distribution, broadcastShapes, finfoEps, finfoTiny, type Constraint } from './distribution.js';
import * as c from './constraints.js';

/**
 * An invertible elementwise map y = f(x) (torch.distributions.transforms.Transform with
 * event_dim 0): its inverse, log |dy/dx|, and whether it increases (sign).
 */
export interface Transform {
  /** PyTorch's class name, for errors. */
  readonly name: string;
  /** Where x may lie. */
  readonly domain: Constraint;
  /** Where y = f(x) lies. */
  readonly codomain: Constraint;
  /** +1 where f increases, -1 where it decreases (a tensor when it varies, as PyTorch's). */
  readonly sign: Tensor | number;
  /** y = f(x). */
  forward(x: Tensor): Tensor;
  /** x = f⁻¹(y). */
  inverse(y: Tensor): Tensor;
  /** log |dy/dx| at x (and y = f(x)), of x's shape. */
  logAbsDetJacobian(x: Tensor, y: Tensor): Tensor;
  /** The shape of f(x) for x of the given shape (a transform of tensor parameters broadcasts). */
  forwardShape(shape: number[]): number[];
  /** Whether other is the same map (PyTorch's __eq__, which klDivergence compares). */
  equals(other: Transform): boolean;
}

/** y = exp(x) (torch.distributions.transforms.ExpTransform). */
export class ExpTransform implements Transform {
  readonly name = 'ExpTransform';
  readonly domain = c.real;
  readonly codomain = c.positive;
  readonly sign = 1;
  forward(x: Tensor): Tensor {
    return x.exp();
  }
  inverse(y: Tensor): Tensor {
    return y.log();
  }
  logAbsDetJacobian(x: Tensor): Tensor {
    return x;
  }
  forwardShape(shape: number[]): number[] {
    return shape;
  }
  equals(other: Transform): boolean {
    return other instanceof ExpTransform;
  }
}

/**
 * y = loc + scale * x (torch.distributions.transforms.AffineTransform with event_dim 0): loc
 * and scale are numbers or tensors, broadcast against x; the tensors stay the caller's.
 */
export class AffineTransform implements Transform {
  readonly name = 'AffineTransform';
  readonly domain = c.real;
  readonly codomain = c.real;
  readonly loc: Tensor | number;
  readonly scale: Tensor | number;
  constructor(loc: Tensor | number, scale: Tensor | number) {
    for (const [argument, v] of [
      ['loc', loc],
      ['scale', scale],
    ] as const) {
      if (!(v instanceof Tensor) && typeof v !== 'number') {
        throw new Error(`tailor: AffineTransform: ${argument} must be a Tensor or a number`);
      }
    }
    this.loc = loc;
    this.scale = scale;
  }
  get sign(): Tensor | number {
    const s = this.scale;
    return typeof s === 'number' ? Math.sign(s) : s.sign();
  }
  forward(x: Tensor): Tensor {
    return tidy(() => {
      const scaled = typeof this.scale === 'number' ? x.mul(this.scale) : this.scale.mul(x);
      return typeof this.loc === 'number' ? scaled.add(this.loc) : this.loc.add(scaled);
    });
  }
  inverse(y: Tensor): Tensor {
    return tidy(() => y.sub(this.loc).div(this.scale));
  }
  logAbsDetJacobian(x: Tensor): Tensor {
    const s = this.scale;
    return typeof s === 'number'
      ? full(x.shape, Math.log(Math.abs(s)), x.dtype, x.device)
      : tidy(() =>
          s
            .abs()
            .log()
            .expand(...x.shape),
        );
  }
  forwardShape(shape: number[]): number[] {
    const shapeOf = (v: Tensor | number): number[] => (v instanceof Tensor ? v.shape : []);
    return broadcastShapes('AffineTransform', shape, shapeOf(this.loc), shapeOf(this.scale));
  }
  equals(other: Transform): boolean {
    if (!(other instanceof AffineTransform)) return false;
    const same = (a: Tensor | number, b: Tensor | number): boolean =>
      typeof a === 'number' && typeof b === 'number'
        ? a === b
        : tidy(() => aten.all(a instanceof Tensor ? a.eq(b) : (b as Tensor).eq(a)).item() !== 0);
    return same(this.loc, other.loc) && same(this.scale, other.scale);
  }
}

/** y = σ(x), clamped to [tiny, 1 - eps] (torch.distributions.transforms.SigmoidTransform). */
export class SigmoidTransform implements Transform {
  readonly name = 'SigmoidTransform';
  readonly domain = c.real;
  readonly codomain = c.unitInterval;
  readonly sign = 1;
  forward(x: Tensor): Tensor {
    return tidy(() => x.sigmoid().clamp(finfoTiny(x), 1 - finfoEps(x)));
  }
  inverse(y: Tensor): Tensor {
    return tidy(() => {
      const z = y.clamp(finfoTiny(y), 1 - finfoEps(y));
      return z.log().sub(z.neg().log1p());
    });
  }
  logAbsDetJacobian(x: Tensor): Tensor {
    return tidy(() => aten.softplus(x.neg()).neg().sub(aten.softplus(x)));
  }
  forwardShape(shape: number[]): number[] {
    return shape;
  }
  equals(other: Transform): boolean {
    return other instanceof SigmoidTransform;
  }
}

/**
 * The distribution of f(X) for X of baseDistribution and f the transforms applied in order
 * (torch.distributions.TransformedDistribution), for elementwise transforms. A transform of
 * tensor parameters that broadcast the shape expands the base (which needs expand()). The base
 * and the transforms stay the caller's, except a base made by that expansion.
 */
export class TransformedDistribution extends Distribution {
  /** The distribution of X (expanded to the transforms' broadcast, where they broadcast it). */
  readonly baseDist: Distribution;
  /** The transforms, applied first to last. */
  readonly transforms: readonly Transform[];
  override readonly hasRsample: boolean;
  #ownsBase: boolean;
  constructor(baseDistribution: Distribution, transforms: Transform | Transform[]) {
    if (!(baseDistribution instanceof Distribution)) {
      throw new Error('tailor: TransformedDistribution: baseDistribution must be a Distribution');
    }
    const list = Array.isArray(transforms) ? [...transforms] : [transforms];
    for (const [i, t] of list.entries()) {
      if (!(t instanceof ExpTransform || t instanceof AffineTransform || t instanceof SigmoidTransform)) {
        throw new Error(
          `tailor: TransformedDistribution: transforms[${i}] must be an ExpTransform, AffineTransform or SigmoidTransform`,
        );
      }
    }
    const baseShape = [...baseDistribution.batchShape, ...baseDistribution.eventShape];
    const forward = list.reduce((shape, t) => t.forwardShape(shape), baseShape);
    const eventNdims = baseDistribution.eventShape.length;
    const expands = forward.length !== baseShape.length || forward.some((s, i) => s !== baseShape[i]);
    const base = expands
      ? baseDistribution.expand(forward.slice(0, forward.length - eventNdims))
      : baseDistribution;
    super(forward.slice(0, forward.length - eventNdims), forward.slice(forward.length - eventNdims));
    this.baseDist = base;
    this.#ownsBase = expands;
    this.transforms = list;
    this.hasRsample = base.hasRsample;
  }
  /**
   * The base expanded to batchShape (its own event dims kept) under the same transforms
   * (PyTorch 1.13's expand, whose elementwise inverse shapes are the shape itself); the new
   * distribution owns that base.
   */
  protected override expanded(batchShape: number[]): Distribution {
    const shape = [...batchShape, ...this.eventShape];
    const baseBatch = shape.slice(0, shape.length - this.baseDist.eventShape.length);
    const out = new TransformedDistribution(this.baseDist.expand(baseBatch), [...this.transforms]);
    out.#ownsBase = true;
    return out;
  }
  /** The last transform's codomain (the base's support without transforms). */
  get support(): Constraint {
    const last = this.transforms[this.transforms.length - 1];
    return last ? last.codomain : this.baseDist.support;
  }
  /** PyTorch 1.13 has no mean for a TransformedDistribution: a named error. */
  get mean(): Tensor {
    throw new Error(`tailor: TransformedDistribution has no mean, as in PyTorch 1.13`);
  }
  /** PyTorch 1.13 has no variance for a TransformedDistribution: a named error. */
  get variance(): Tensor {
    throw new Error(`tailor: TransformedDistribution has no variance, as in PyTorch 1.13`);
  }
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() => tidy(() => this.applyAll(this.baseDist.sample(sampleShape))));
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.applyAll(this.baseDist.rsample(sampleShape)));
  }
  /** The base's log density at f⁻¹(value) minus each transform's log |Jacobian|, last first. */
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      const eventNdims = this.eventShape.length;
      const sumEvent = (t: Tensor): Tensor =>
        eventNdims === 0 ? t : t.sum(Array.from({ length: eventNdims }, (_, i) => -1 - i));
      let logProb: Tensor | undefined;
      let y = value;
      for (const t of [...this.transforms].reverse()) {
        const x = t.inverse(y);
        const ladj = sumEvent(t.logAbsDetJacobian(x, y));
        logProb = logProb === undefined ? ladj.neg() : logProb.sub(ladj);
        y = x;
      }
      const base = this.baseDist.logProb(y);
      return logProb === undefined ? base : logProb.add(base);
    });
  }
  override cdf(value: Tensor): Tensor {
    this.checkValue(value, 'cdf');
    return tidy(() => {
      let x = value;
      for (const t of [...this.transforms].reverse()) x = t.inverse(x);
      return this.monotonize(this.baseDist.cdf(x));
    });
  }
  override icdf(value: Tensor): Tensor {
    this.checkValue(value, 'icdf');
    return tidy(() => this.applyAll(this.baseDist.icdf(this.monotonize(value))));
  }
  override dispose(): void {
    if (this.#ownsBase) this.baseDist.dispose();
    super.dispose();
  }
  private applyAll(x: Tensor): Tensor {
    return this.transforms.reduce((v, t) => t.forward(v), x);
  }
  /** PyTorch's _monotonize_cdf: 1 - F where the transforms decrease (the sign product is -1). */
  private monotonize(value: Tensor): Tensor {
    let sign: Tensor | number = 1;
    for (const t of this.transforms) {
      const s = t.sign;
      if (typeof sign === 'number' && typeof s === 'number') sign *= s;
      else if (typeof sign === 'number') sign = (s as Tensor).mul(sign);
      else sign = sign.mul(s);
    }
    if (sign === 1) return value;
    return typeof sign === 'number' ? value.sub(0.5).mul(sign).add(0.5) : sign.mul(value.sub(0.5)).add(0.5);
  }
}
