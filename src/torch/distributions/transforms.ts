// The Transform interface, PyTorch 1.13's ExpTransform, AffineTransform and SigmoidTransform, and
// TransformedDistribution: the law of f(X) for X of a base distribution, with PyTorch's change
// of variables, cdf/icdf through the transforms, and draws that are the base's, transformed.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { noGrad } from '../autograd.js';
import { full } from '../creation.js';
import * as aten from '../generated/aten.js';
import {
  Distribution,
  broadcastShapes,
  finfoEps,
  finfoTiny,
  type Constraint,
  type DistributionOptions,
} from './distribution.js';
import * as c from './constraints.js';
import { ComposeTransform, TransformBase, checkTransforms, sumRightmost } from './transform-base.js';
import { Independent } from './mixture.js';

/**
 * A map y = f(x) of torch.distributions.transforms (PyTorch 1.13's Transform): its inverse,
 * log |det dy/dx|, the event dims of its domain and codomain, and its cache. Every transform
 * extends TransformBase (transform-base.ts).
 */
export interface Transform {
  /** PyTorch's class name, for errors. */
  readonly name: string;
  /** Where x may lie; its eventDim is how many rightmost dims form one input. */
  readonly domain: Constraint;
  /** Where y = f(x) lies; its eventDim is how many rightmost dims form one output. */
  readonly codomain: Constraint;
  /** +1 where f increases, -1 where it decreases (a tensor when it varies, as PyTorch's). */
  readonly sign: Tensor | number;
  /** Whether f is one-to-one. */
  readonly bijective: boolean;
  /** 0, or 1 where the last forward/inverse pair is cached. */
  readonly cacheSize: 0 | 1;
  /** The inverse transform. */
  readonly inv: Transform;
  /** y = f(x). */
  forward(x: Tensor): Tensor;
  /** x = f⁻¹(y). */
  inverse(y: Tensor): Tensor;
  /** log |det dy/dx| at x (and y = f(x)), of x's shape without the domain's event dims. */
  logAbsDetJacobian(x: Tensor, y: Tensor): Tensor;
  /** The shape of f(x) for x of the given shape (a transform of tensor parameters broadcasts). */
  forwardShape(shape: number[]): number[];
  /** The shape of f⁻¹(y) for y of the given shape. */
  inverseShape(shape: number[]): number[];
  /** Whether other is the same map (PyTorch's __eq__, which klDivergence compares). */
  equals(other: Transform): boolean;
  /** The same map with another cacheSize. */
  withCache(cacheSize?: number): Transform;
  /** Frees the cached views (a transform of cacheSize 0 holds none). */
  dispose(): void;
}

/** y = exp(x) (torch.distributions.transforms.ExpTransform). */
export class ExpTransform extends TransformBase {
  readonly name = 'ExpTransform';
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
    return x.exp();
  }
  protected override invert(y: Tensor): Tensor {
    return y.log();
  }
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    return x;
  }
  override equals(other: Transform): boolean {
    return other instanceof ExpTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new ExpTransform(cacheSize);
  }
}

/**
 * y = loc + scale * x (torch.distributions.transforms.AffineTransform): loc and scale are
 * numbers or tensors, broadcast against x; the tensors stay the caller's. With eventDim > 0 the
 * eventDim rightmost dims form one event, and log |det J| sums log |scale| over them.
 */
export class AffineTransform extends TransformBase {
  readonly name = 'AffineTransform';
  readonly loc: Tensor | number;
  readonly scale: Tensor | number;
  /** How many rightmost dims form one event (0: elementwise). */
  readonly eventDim: number;
  constructor(loc: Tensor | number, scale: Tensor | number, eventDim = 0, cacheSize = 0) {
    super(cacheSize);
    for (const [argument, v] of [
      ['loc', loc],
      ['scale', scale],
    ] as const) {
      if (!(v instanceof Tensor) && typeof v !== 'number') {
        throw new Error(`tailor: AffineTransform: ${argument} must be a Tensor or a number`);
      }
    }
    if (!Number.isInteger(eventDim) || eventDim < 0) {
      throw new Error(`tailor: AffineTransform: eventDim must be an integer >= 0, got ${String(eventDim)}`);
    }
    this.loc = loc;
    this.scale = scale;
    this.eventDim = eventDim;
  }
  get domain(): Constraint {
    return this.eventDim === 0 ? c.real : c.independent(c.real, this.eventDim);
  }
  get codomain(): Constraint {
    return this.domain;
  }
  override get sign(): Tensor | number {
    const s = this.scale;
    return typeof s === 'number' ? Math.sign(s) : s.sign();
  }
  protected call(x: Tensor): Tensor {
    return tidy(() => {
      const scaled = typeof this.scale === 'number' ? x.mul(this.scale) : this.scale.mul(x);
      return typeof this.loc === 'number' ? scaled.add(this.loc) : this.loc.add(scaled);
    });
  }
  protected override invert(y: Tensor): Tensor {
    return tidy(() => y.sub(this.loc).div(this.scale));
  }
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    const s = this.scale;
    const n = this.eventDim;
    return tidy(() => {
      let result =
        typeof s === 'number' ? full(x.shape, Math.log(Math.abs(s)), x.dtype, x.device) : s.abs().log();
      let shape = x.shape;
      if (n > 0) {
        if (result.ndim < n || shape.length < n) {
          throw new Error(
            `tailor: AffineTransform.logAbsDetJacobian: eventDim ${n} needs x and scale of at least ${n} dims (PyTorch's view fails there too); got x [${x.shape.join(', ')}] and scale [${result.shape.join(', ')}]`,
          );
        }
        result = result.reshape(...result.shape.slice(0, result.ndim - n), -1).sum(-1);
        shape = shape.slice(0, shape.length - n);
      }
      return result.expand(...shape);
    });
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    const shapeOf = (v: Tensor | number): number[] => (v instanceof Tensor ? v.shape : []);
    return broadcastShapes('AffineTransform', shape, shapeOf(this.loc), shapeOf(this.scale));
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return this.forwardShape(shape);
  }
  override equals(other: Transform): boolean {
    if (!(other instanceof AffineTransform)) return false;
    const same = (a: Tensor | number, b: Tensor | number): boolean =>
      typeof a === 'number' && typeof b === 'number'
        ? a === b
        : tidy(() => aten.all(a instanceof Tensor ? a.eq(b) : (b as Tensor).eq(a)).item() !== 0);
    return same(this.loc, other.loc) && same(this.scale, other.scale);
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new AffineTransform(this.loc, this.scale, this.eventDim, cacheSize);
  }
}

/** y = σ(x), clamped to [tiny, 1 - eps] (torch.distributions.transforms.SigmoidTransform). */
export class SigmoidTransform extends TransformBase {
  readonly name = 'SigmoidTransform';
  constructor(cacheSize = 0) {
    super(cacheSize);
  }
  get domain(): Constraint {
    return c.real;
  }
  get codomain(): Constraint {
    return c.unitInterval;
  }
  override get sign(): number {
    return 1;
  }
  protected call(x: Tensor): Tensor {
    return tidy(() => x.sigmoid().clamp(finfoTiny(x), 1 - finfoEps(x)));
  }
  protected override invert(y: Tensor): Tensor {
    return tidy(() => {
      const z = y.clamp(finfoTiny(y), 1 - finfoEps(y));
      return z.log().sub(z.neg().log1p());
    });
  }
  override logAbsDetJacobian(x: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    return tidy(() => aten.softplus(x.neg()).neg().sub(aten.softplus(x)));
  }
  override equals(other: Transform): boolean {
    return other instanceof SigmoidTransform;
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new SigmoidTransform(cacheSize);
  }
}

/**
 * The distribution of f(X) for X of baseDistribution and f the transforms applied in order
 * (torch.distributions.TransformedDistribution). As in PyTorch, a transform of tensor
 * parameters that broadcast the shape expands the base (which needs expand()), and a base of
 * fewer event dims than the transforms' domain is made an Independent of the rest. The base and
 * the transforms stay the caller's, except a base made by that expansion or Independent.
 */
export class TransformedDistribution extends Distribution {
  /** The distribution of X (expanded, or made Independent, where the transforms need it). */
  readonly baseDist: Distribution;
  /** The transforms, applied first to last. */
  readonly transforms: readonly Transform[];
  override readonly hasRsample: boolean;
  /** The distributions the constructor made (an expansion, an Independent), for dispose(). */
  readonly #made: Distribution[] = [];
  constructor(
    baseDistribution: Distribution,
    transforms: Transform | Transform[],
    options?: DistributionOptions,
  ) {
    if (!(baseDistribution instanceof Distribution)) {
      throw new Error('tailor: TransformedDistribution: baseDistribution must be a Distribution');
    }
    const list = checkTransforms(
      'TransformedDistribution',
      'transforms',
      Array.isArray(transforms) ? [...transforms] : [transforms],
    );
    const baseShape = [...baseDistribution.batchShape, ...baseDistribution.eventShape];
    const baseEventDim = baseDistribution.eventShape.length;
    const chain = new ComposeTransform(list);
    const domainEventDim = chain.domain.eventDim;
    if (baseShape.length < domainEventDim) {
      throw new Error(
        `tailor: TransformedDistribution: baseDistribution needs at least ${domainEventDim} dims (batchShape + eventShape) for the transforms' domain, got [${baseShape.join(', ')}]`,
      );
    }
    const forward = chain.forwardShape(baseShape);
    const expandedBase = chain.inverseShape(forward);
    const made: Distribution[] = [];
    let base = baseDistribution;
    if (expandedBase.length !== baseShape.length || expandedBase.some((s, i) => s !== baseShape[i])) {
      base = base.expand(expandedBase.slice(0, expandedBase.length - baseEventDim));
      made.push(base);
    }
    if (domainEventDim > baseEventDim) {
      base = new Independent(base, domainEventDim - baseEventDim);
      made.push(base);
    }
    const eventDim = Math.max(
      chain.codomain.eventDim,
      baseEventDim + chain.codomain.eventDim - domainEventDim,
    );
    const cut = forward.length - eventDim;
    super(forward.slice(0, cut), forward.slice(cut), options);
    this.baseDist = base;
    this.#made.push(...made);
    this.transforms = list;
    this.hasRsample = base.hasRsample;
  }
  /**
   * The base expanded to the batch shape the transforms map the new shape back to (PyTorch 1.13's
   * expand: batchShape + eventShape through each transform's inverseShape, last first), under the
   * same transforms; the new distribution owns that base.
   */
  protected override expanded(batchShape: number[]): Distribution {
    const shape = new ComposeTransform([...this.transforms]).inverseShape([
      ...batchShape,
      ...this.eventShape,
    ]);
    const base = this.baseDist.expand(shape.slice(0, shape.length - this.baseDist.eventShape.length));
    const out = new TransformedDistribution(base, [...this.transforms]);
    out.#made.push(base);
    return out;
  }
  /** The last transform's codomain, made Independent over the event dims beyond its own. */
  get support(): Constraint {
    const last = this.transforms[this.transforms.length - 1];
    if (!last) return this.baseDist.support;
    const support = last.codomain;
    const extra = this.eventShape.length - support.eventDim;
    return extra > 0 ? c.independent(support, extra) : support;
  }
  /** PyTorch 1.13 has no mean for a TransformedDistribution: a named error. */
  get mean(): Tensor {
    throw new Error(`tailor: ${this.name} has no mean, as in PyTorch 1.13`);
  }
  /** PyTorch 1.13 has no variance for a TransformedDistribution: a named error. */
  get variance(): Tensor {
    throw new Error(`tailor: ${this.name} has no variance, as in PyTorch 1.13`);
  }
  override sample(sampleShape: number[] = []): Tensor {
    return noGrad(() => tidy(() => this.applyAll(this.baseDist.sample(sampleShape))));
  }
  override rsample(sampleShape: number[] = []): Tensor {
    return tidy(() => this.applyAll(this.baseDist.rsample(sampleShape)));
  }
  /** The base's log density at f⁻¹(value) minus each transform's log |det J|, last first. */
  override logProb(value: Tensor): Tensor {
    this.validateSample(value);
    return tidy(() => {
      let eventDim = this.eventShape.length;
      let logProb: Tensor | undefined;
      let y = value;
      for (const t of [...this.transforms].reverse()) {
        const x = t.inverse(y);
        eventDim += t.domain.eventDim - t.codomain.eventDim;
        const ladj = sumRightmost(t.logAbsDetJacobian(x, y), eventDim - t.domain.eventDim);
        logProb = logProb === undefined ? ladj.neg() : logProb.sub(ladj);
        y = x;
      }
      const base = sumRightmost(this.baseDist.logProb(y), eventDim - this.baseDist.eventShape.length);
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
    for (const d of this.#made.reverse()) d.dispose();
    this.#made.length = 0;
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
