// The base of torch.distributions' transforms (PyTorch 1.13's Transform): the forward/inverse
// cache of cacheSize 1, the inverse transform `inv`, and the two transforms built from others,
// ComposeTransform and IndependentTransform, which TransformedDistribution needs for its event
// dimensions.
import { Tensor } from '../tensor.js';
import { keep, tidy } from '../scope.js';
import { zerosLike } from '../creation.js';
import { describeValue } from '../../util/arguments.js';
import type { Constraint } from './distribution.js';
import * as c from './constraints.js';
import type { Transform } from './transforms.js';

/** Sums the n rightmost dimensions out (PyTorch's _sum_rightmost). */
export function sumRightmost(value: Tensor, n: number): Tensor {
  return n <= 0 ? value : value.sum(Array.from({ length: n }, (_, i) => -1 - i));
}

/** The cacheSize argument checked: 0 or 1, as PyTorch 1.13 allows. */
function checkCacheSize(who: string, cacheSize: unknown): 0 | 1 {
  if (cacheSize !== 0 && cacheSize !== 1) {
    throw new Error(
      `tailor: ${who}: cacheSize must be 0 or 1 (as PyTorch 1.13), got ${describeValue(cacheSize)}`,
    );
  }
  return cacheSize;
}

/** The last pair a cacheSize-1 transform saw: the caller's objects, and aliases it owns. */
interface CachedPair {
  x: Tensor;
  y: Tensor;
  xAlias: Tensor;
  yAlias: Tensor;
}

/**
 * What every transform shares (torch.distributions.transforms.Transform): `forward` and
 * `inverse` run the map through the cache, `inv` is the inverse transform, and `withCache`
 * the same map of another cacheSize.
 *
 * Caching (cacheSize 1, as PyTorch's cache_size=1): `inverse(y)` of the very tensor the last
 * `forward(x)` returned gives x again (and `forward(x)` of that x gives y), without recomputing:
 * exact where the inverse would round or clamp (a Tanh at ±1). The cache holds a view of x and
 * of y (the same storage and gradient path) until the next call or `dispose()`, and what it
 * returns is a new view, the caller's to free.
 */
export abstract class TransformBase implements Transform {
  /** PyTorch's class name, for errors. */
  abstract readonly name: string;
  /** Whether the map is one-to-one (an inverse and log |det J| exist). */
  readonly bijective: boolean = true;
  /** 0 (no cache) or 1 (the last pair is cached). */
  readonly cacheSize: 0 | 1;
  #cache: CachedPair | undefined;
  #inv: Transform | undefined;
  protected constructor(cacheSize: number = 0) {
    this.cacheSize = checkCacheSize(new.target.name, cacheSize);
  }
  /** Where x may lie (its eventDim is the transform's input event dims). */
  abstract get domain(): Constraint;
  /** Where y = f(x) lies (its eventDim is the output event dims). */
  abstract get codomain(): Constraint;
  /** +1 where f increases, -1 where it decreases; only elementwise bijections have one. */
  get sign(): Tensor | number {
    throw new Error(
      `tailor: ${this.name} has no sign, as in PyTorch 1.13 (only elementwise bijections have one)`,
    );
  }
  /** The inverse transform (PyTorch's `inv`): its forward is this inverse. */
  get inv(): Transform {
    this.#inv ??= new InverseTransform(this);
    return this.#inv;
  }
  /** y = f(x), through the cache. */
  forward(x: Tensor): Tensor {
    this.checkTensor(x, 'forward', 'x');
    const hit = this.#cache;
    if (hit !== undefined && hit.x === x) return hit.yAlias.view(...hit.yAlias.shape);
    const y = this.call(x);
    this.remember(x, y);
    return y;
  }
  /** x = f⁻¹(y), through the cache. */
  inverse(y: Tensor): Tensor {
    this.checkTensor(y, 'inverse', 'y');
    const hit = this.#cache;
    if (hit !== undefined && hit.y === y) return hit.xAlias.view(...hit.xAlias.shape);
    const x = this.invert(y);
    this.remember(x, y);
    return x;
  }
  /** log |det dy/dx| at x and y = f(x), without the domain's event dims. */
  logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    void x;
    void y;
    throw new Error(`tailor: ${this.name} has no logAbsDetJacobian, as in PyTorch 1.13`);
  }
  /** The shape of f(x) for x of the given shape. */
  forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    return shape;
  }
  /** The shape of f⁻¹(y) for y of the given shape. */
  inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return shape;
  }
  /** Whether other is the same map (PyTorch's __eq__: the same object unless a subclass says more). */
  equals(other: Transform): boolean {
    return other === this;
  }
  /** This map with another cacheSize (this one where it has that cacheSize already). */
  withCache(cacheSize = 1): Transform {
    const size = checkCacheSize(`${this.name}.withCache`, cacheSize);
    return size === this.cacheSize ? this : this.rebuild(size);
  }
  /** Frees the views the cache holds (nothing else: parameters stay the caller's). */
  dispose(): void {
    const hit = this.#cache;
    this.#cache = undefined;
    if (hit) for (const t of [hit.xAlias, hit.yAlias]) if (!t.isDisposed) t.dispose();
  }
  /** The map itself, without the cache (PyTorch's _call). */
  protected abstract call(x: Tensor): Tensor;
  /** The inverse map itself (PyTorch's _inverse); a named error where there is none. */
  protected invert(y: Tensor): Tensor {
    void y;
    throw new Error(`tailor: ${this.name} has no inverse, as in PyTorch 1.13`);
  }
  /** A copy of this transform with another cacheSize (PyTorch's with_cache). */
  protected abstract rebuild(cacheSize: 0 | 1): Transform;
  protected checkTensor(value: unknown, method: string, argument: string): asserts value is Tensor {
    if (!(value instanceof Tensor)) {
      throw new Error(
        `tailor: ${this.name}.${method}: ${argument} must be a Tensor, got ${describeValue(value)}`,
      );
    }
  }
  /** Throws unless shape is an array of sizes (the argument of forwardShape and inverseShape). */
  protected checkShape(shape: unknown, method: string): asserts shape is number[] {
    if (!Array.isArray(shape) || !shape.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) {
      throw new Error(
        `tailor: ${this.name}.${method}: shape must be an array of sizes (integers >= 0), got ${describeValue(shape)}`,
      );
    }
  }
  private remember(x: Tensor, y: Tensor): void {
    if (this.cacheSize === 0) return;
    this.dispose();
    const [xAlias, yAlias] = keep(tidy(() => [x.view(...x.shape), y.view(...y.shape)]));
    this.#cache = { x, y, xAlias, yAlias };
  }
}

/**
 * The inverse of a transform (PyTorch's _InverseTransform, what `t.inv` returns): forward is
 * t's inverse (through t's cache), and log |det J| is minus t's at the swapped pair.
 */
export class InverseTransform extends TransformBase {
  readonly name: string;
  /** The transform this inverts. */
  readonly base: Transform;
  constructor(base: Transform) {
    // The cache is the base's (forward and inverse run through it): the size is reported only.
    super(checkTransforms('InverseTransform', 'base', [base])[0].cacheSize);
    this.base = base;
    this.name = `${base.name}.inv`;
    this.bijective = base.bijective;
  }
  override readonly bijective: boolean;
  get domain(): Constraint {
    return this.base.codomain;
  }
  get codomain(): Constraint {
    return this.base.domain;
  }
  override get sign(): Tensor | number {
    return this.base.sign;
  }
  override get inv(): Transform {
    return this.base;
  }
  override forward(x: Tensor): Tensor {
    return this.base.inverse(x);
  }
  override inverse(y: Tensor): Tensor {
    return this.base.forward(y);
  }
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    return tidy(() => this.base.logAbsDetJacobian(y, x).neg());
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    return this.base.inverseShape(shape);
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return this.base.forwardShape(shape);
  }
  override equals(other: Transform): boolean {
    return other instanceof InverseTransform && this.base.equals(other.base);
  }
  override withCache(cacheSize = 1): Transform {
    return this.base.withCache(cacheSize).inv;
  }
  protected call(x: Tensor): Tensor {
    return this.base.inverse(x);
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return this.base.withCache(cacheSize).inv;
  }
}

/** Checks a list of transforms (an argument named `argument` of `who`). */
export function checkTransforms(who: string, argument: string, list: unknown[]): Transform[] {
  for (const [i, t] of list.entries()) {
    if (!(t instanceof TransformBase)) {
      throw new Error(
        `tailor: ${who}: ${argument}[${i}] must be a Transform (such as new ExpTransform()), got ${describeValue(t)}`,
      );
    }
  }
  return list as Transform[];
}

/**
 * The transforms applied first to last (torch.distributions.transforms.ComposeTransform): its
 * domain and codomain carry the largest event dims the chain needs, and log |det J| sums each
 * part's over the event dims beyond its own. `new ComposeTransform([])` is the identity.
 */
export class ComposeTransform extends TransformBase {
  readonly name = 'ComposeTransform';
  /** The transforms, first applied first. */
  readonly parts: readonly Transform[];
  override readonly bijective: boolean;
  #inv: ComposeTransform | undefined;
  constructor(parts: Transform[], cacheSize = 0) {
    super(cacheSize);
    if (!Array.isArray(parts)) {
      throw new Error(
        `tailor: ComposeTransform: parts must be an array of Transforms, got ${describeValue(parts)}`,
      );
    }
    const list = checkTransforms('ComposeTransform', 'parts', parts);
    this.parts = cacheSize === 0 ? [...list] : list.map((p) => p.withCache(cacheSize));
    this.bijective = this.parts.every((p) => p.bijective);
  }
  get domain(): Constraint {
    const parts = this.parts;
    if (parts.length === 0) return c.real;
    const domain = parts[0].domain;
    let eventDim = parts[parts.length - 1].codomain.eventDim;
    for (const part of [...parts].reverse()) {
      eventDim += part.domain.eventDim - part.codomain.eventDim;
      eventDim = Math.max(eventDim, part.domain.eventDim);
    }
    return eventDim > domain.eventDim ? c.independent(domain, eventDim - domain.eventDim) : domain;
  }
  get codomain(): Constraint {
    const parts = this.parts;
    if (parts.length === 0) return c.real;
    const codomain = parts[parts.length - 1].codomain;
    let eventDim = parts[0].domain.eventDim;
    for (const part of parts) {
      eventDim += part.codomain.eventDim - part.domain.eventDim;
      eventDim = Math.max(eventDim, part.codomain.eventDim);
    }
    return eventDim > codomain.eventDim ? c.independent(codomain, eventDim - codomain.eventDim) : codomain;
  }
  /** The product of the parts' signs. */
  override get sign(): Tensor | number {
    let sign: Tensor | number = 1;
    for (const part of this.parts) {
      const s = part.sign;
      sign =
        typeof sign === 'number' && typeof s === 'number'
          ? sign * s
          : tidy(() => (s instanceof Tensor ? s.mul(sign) : (sign as Tensor).mul(s)));
    }
    return sign;
  }
  /** The inverses of the parts, last first. */
  override get inv(): Transform {
    if (this.#inv === undefined) {
      const inverse = new ComposeTransform(this.parts.map((p) => p.inv).reverse());
      inverse.#inv = this;
      this.#inv = inverse;
    }
    return this.#inv;
  }
  override forward(x: Tensor): Tensor {
    this.checkTensor(x, 'forward', 'x');
    return tidy(() => this.parts.reduce((v, p) => p.forward(v), x));
  }
  override inverse(y: Tensor): Tensor {
    this.checkTensor(y, 'inverse', 'y');
    return tidy(() => [...this.parts].reverse().reduce((v, p) => p.inverse(v), y));
  }
  /** Each part's at its own input and output (the intermediates recomputed, or read from the parts' caches). */
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    if (this.parts.length === 0) return zerosLike(x);
    return tidy(() => {
      const xs = [x];
      for (const part of this.parts.slice(0, -1)) xs.push(part.forward(xs[xs.length - 1]));
      xs.push(y);
      let eventDim = this.domain.eventDim;
      let total: Tensor | undefined;
      for (const [i, part] of this.parts.entries()) {
        const term = sumRightmost(part.logAbsDetJacobian(xs[i], xs[i + 1]), eventDim - part.domain.eventDim);
        total = total === undefined ? term : total.add(term);
        eventDim += part.codomain.eventDim - part.domain.eventDim;
      }
      return total as Tensor;
    });
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    return this.parts.reduce((s, p) => p.forwardShape(s), shape);
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return [...this.parts].reverse().reduce((s, p) => p.inverseShape(s), shape);
  }
  override equals(other: Transform): boolean {
    return (
      other instanceof ComposeTransform &&
      other.parts.length === this.parts.length &&
      this.parts.every((p, i) => p.equals(other.parts[i]))
    );
  }
  /** Frees the parts' caches. */
  override dispose(): void {
    for (const p of this.parts) p.dispose();
    super.dispose();
  }
  protected call(x: Tensor): Tensor {
    return this.forward(x);
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new ComposeTransform([...this.parts], cacheSize);
  }
}

/**
 * A transform whose reinterpretedBatchNdims rightmost batch dims are read as event dims
 * (torch.distributions.transforms.IndependentTransform): the same map, log |det J| summed over
 * them.
 */
export class IndependentTransform extends TransformBase {
  readonly name = 'IndependentTransform';
  /** The transform applied. */
  readonly baseTransform: Transform;
  /** How many rightmost dims join the event. */
  readonly reinterpretedBatchNdims: number;
  override readonly bijective: boolean;
  constructor(baseTransform: Transform, reinterpretedBatchNdims: number, cacheSize = 0) {
    super(cacheSize);
    checkTransforms('IndependentTransform', 'baseTransform', [baseTransform]);
    if (!Number.isInteger(reinterpretedBatchNdims) || reinterpretedBatchNdims < 0) {
      throw new Error(
        `tailor: IndependentTransform: reinterpretedBatchNdims must be an integer >= 0, got ${describeValue(reinterpretedBatchNdims)}`,
      );
    }
    this.baseTransform = baseTransform.withCache(cacheSize);
    this.reinterpretedBatchNdims = reinterpretedBatchNdims;
    this.bijective = baseTransform.bijective;
  }
  get domain(): Constraint {
    return c.independent(this.baseTransform.domain, this.reinterpretedBatchNdims);
  }
  get codomain(): Constraint {
    return c.independent(this.baseTransform.codomain, this.reinterpretedBatchNdims);
  }
  override get sign(): Tensor | number {
    return this.baseTransform.sign;
  }
  override logAbsDetJacobian(x: Tensor, y: Tensor): Tensor {
    this.checkTensor(x, 'logAbsDetJacobian', 'x');
    this.checkTensor(y, 'logAbsDetJacobian', 'y');
    return tidy(() => sumRightmost(this.baseTransform.logAbsDetJacobian(x, y), this.reinterpretedBatchNdims));
  }
  override forwardShape(shape: number[]): number[] {
    this.checkShape(shape, 'forwardShape');
    return this.baseTransform.forwardShape(shape);
  }
  override inverseShape(shape: number[]): number[] {
    this.checkShape(shape, 'inverseShape');
    return this.baseTransform.inverseShape(shape);
  }
  override equals(other: Transform): boolean {
    return (
      other instanceof IndependentTransform &&
      other.reinterpretedBatchNdims === this.reinterpretedBatchNdims &&
      this.baseTransform.equals(other.baseTransform)
    );
  }
  override dispose(): void {
    this.baseTransform.dispose();
    super.dispose();
  }
  protected call(x: Tensor): Tensor {
    return this.baseTransform.forward(x);
  }
  protected override invert(y: Tensor): Tensor {
    return this.baseTransform.inverse(y);
  }
  protected rebuild(cacheSize: 0 | 1): Transform {
    return new IndependentTransform(this.baseTransform, this.reinterpretedBatchNdims, cacheSize);
  }
}
