// The base of torch.distributions (PyTorch 1.13's Distribution): shapes, the sample/rsample split,
// and the argument and support checks every distribution shares, on unless validateArgs: false.
import { describeValue } from '../../util/arguments.js';
import { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import { empty, full } from '../creation.js';
import * as aten from '../generated/aten.js';
import { checksOf } from '../../util/arguments.js';

/** A parameter: a tensor, or a number (made a tensor of the other parameters' dtype). */
export type Param = Tensor | number;

/** A support or parameter constraint: its PyTorch name and an elementwise (or per-event) check. */
export interface Constraint {
  /** PyTorch's repr of the constraint, such as `GreaterThan(lower_bound=0.0)`. */
  readonly name: string;
  /** How many rightmost dimensions form one event of the check (1 for a simplex). */
  readonly eventDim: number;
  /** A boolean tensor, true where the value satisfies the constraint. */
  check(value: Tensor): Tensor;
}

/** What every distribution's constructor takes besides its parameters. */
export interface DistributionOptions {
  /**
   * Whether to check the parameters against their constraints and the values of logProb, cdf
   * and the like against the support (PyTorch's `validate_args`); without it, a value outside
   * gives what the formulas give (NaN, -Infinity, garbage) instead of an error. Default:
   * `Distribution.defaultValidateArgs` (true unless `Distribution.setDefaultValidateArgs(false)`).
   * The checks of types and shapes stay on either way.
   */
  validateArgs?: boolean;
}

/**
 * Whether a distribution `who` of these options validates its arguments: options.validateArgs,
 * or the default (Distribution.defaultValidateArgs); a named error unless it is a boolean.
 */
export function resolveValidateArgs(who: string, options: DistributionOptions | undefined): boolean {
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw new Error(
      `tailor: ${who}: the options must be an object such as { validateArgs: false }, got ${describeValue(options)}`,
    );
  }
  const value = options?.validateArgs;
  if (value === undefined) return Distribution.defaultValidateArgs;
  if (typeof value !== 'boolean') {
    throw new Error(`tailor: ${who}: validateArgs must be true or false, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * A probability distribution (torch.distributions.Distribution). Parameters and values follow
 * PyTorch's broadcasting: `batchShape` is the shape of independent distributions,
 * `eventShape` the shape of one draw. Arguments are validated as PyTorch's default
 * `validate_args=True`: a parameter outside its constraint or a value outside the support is a
 * `tailor:` error naming it. `{ validateArgs: false }` (the constructors' last argument, or a
 * field of their options object) skips those checks, as PyTorch's `validate_args=False`;
 * `Distribution.setDefaultValidateArgs(false)` makes that the default of later constructions.
 *
 * Memory: a distribution holds references to the tensors it is given and never disposes them.
 * Tensors it derives itself (a number parameter made a tensor, probabilities from logits, a
 * Cholesky factor) belong to the scope it was created in, like any other tensor, and are public
 * fields, so `tidy` returning the distribution or `keep(dist)` keeps them; `dispose()` frees
 * only those. Every tensor a method returns belongs to the caller's scope.
 */
export abstract class Distribution {
  /** The shape of the batch of independent distributions. */
  readonly batchShape: number[];
  /** The shape of one draw. */
  readonly eventShape: number[];
  /** Whether rsample (reparameterised, differentiable sampling) exists. */
  readonly hasRsample: boolean = false;
  readonly #created: Tensor[] = [];
  #validateArgs: boolean;
  static #defaultValidateArgs = true;

  protected constructor(batchShape: number[], eventShape: number[] = [], options?: DistributionOptions) {
    this.batchShape = batchShape;
    this.eventShape = eventShape;
    this.#validateArgs = resolveValidateArgs(new.target.name, options);
  }

  /**
   * Sets whether distributions constructed from now on, without a validateArgs option of their
   * own, check their arguments (PyTorch's `Distribution.set_default_validate_args`; initially
   * true). Existing distributions keep their setting.
   */
  static setDefaultValidateArgs(value: boolean): void {
    if (typeof value !== 'boolean') {
      throw new Error(
        `tailor: Distribution.setDefaultValidateArgs: value must be true or false, got ${describeValue(value)}`,
      );
    }
    Distribution.#defaultValidateArgs = value;
  }

  /** The validateArgs of constructions that do not give one (see setDefaultValidateArgs). */
  static get defaultValidateArgs(): boolean {
    return Distribution.#defaultValidateArgs;
  }

  /** Whether this distribution checks parameters and values against their constraints. */
  get validateArgs(): boolean {
    return this.#validateArgs;
  }

  /** The distribution's name in errors (its class name). */
  get name(): string {
    return this.constructor.name;
  }

  /** The set of values with positive density or mass. */
  abstract get support(): Constraint;
  /** The mean, of shape batchShape + eventShape. */
  abstract get mean(): Tensor;
  /** The variance, of shape batchShape + eventShape. */
  abstract get variance(): Tensor;
  /** The standard deviation: the variance's square root. */
  get stddev(): Tensor {
    return tidy(() => this.variance.sqrt());
  }

  /** sampleShape + batchShape + eventShape. */
  extendedShape(sampleShape: number[] = []): number[] {
    const c = checksOf(`${this.constructor.name}.sample`);
    c.numbers(sampleShape, 'sampleShape');
    sampleShape.forEach((n, i) => c.integer(n, `sampleShape[${i}]`, { min: 0 }));
    return [...sampleShape, ...this.batchShape, ...this.eventShape];
  }

  /** Draws of shape sampleShape + batchShape + eventShape, without a gradient path. */
  sample(sampleShape: number[] = []): Tensor {
    if (!this.hasRsample) throw this.missing('sample');
    return noGrad(() => this.rsample(sampleShape));
  }

  /** Reparameterised draws: differentiable with respect to the parameters. */
  rsample(sampleShape: number[] = []): Tensor {
    void sampleShape;
    throw new Error(
      `tailor: ${this.name} has no reparameterised sampling (rsample), as in PyTorch; use sample() (no gradient)`,
    );
  }

  /** The log density (or log mass) of value, of shape broadcast(value) without the event dims. */
  logProb(value: Tensor): Tensor {
    void value;
    throw this.missing('logProb');
  }

  /** The entropy of each distribution of the batch. */
  entropy(): Tensor {
    throw this.missing('entropy');
  }

  /** Whether enumerateSupport exists (the discrete families of finite support). */
  readonly hasEnumerateSupport: boolean = false;

  /**
   * Every value of the support, along a new first dim (PyTorch's enumerate_support): of shape
   * [n, ...batchShape, ...eventShape] with expand (views), or with the batch dims 1 without.
   */
  enumerateSupport(expand = true): Tensor {
    void expand;
    throw this.missing('enumerateSupport');
  }

  /** The cumulative distribution function at value. */
  cdf(value: Tensor): Tensor {
    void value;
    throw this.missing('cdf');
  }

  /** The inverse cumulative distribution function at probabilities value. */
  icdf(value: Tensor): Tensor {
    void value;
    throw this.missing('icdf');
  }

  /**
   * The same distribution with its batch broadcast to batchShape (PyTorch's expand): the
   * parameters become expanded views, owned by the new distribution. batchShape must be a
   * broadcast of this batchShape; families without a simple expansion throw a named error.
   */
  expand(batchShape: number[]): this {
    const ok =
      Array.isArray(batchShape) &&
      batchShape.every((s) => Number.isInteger(s) && s >= 0) &&
      batchShape.length >= this.batchShape.length &&
      this.batchShape.every(
        (s, i) => s === 1 || s === batchShape[batchShape.length - this.batchShape.length + i],
      );
    if (!ok) {
      throw new Error(
        `tailor: ${this.name}.expand: batchShape ${Array.isArray(batchShape) && batchShape.every((n) => typeof n === 'number') ? `[${batchShape.join(', ')}]` : describeValue(batchShape)} must be a list of sizes that the batchShape [${this.batchShape.join(', ')}] broadcasts to`,
      );
    }
    // The expansion validates as this distribution does (as PyTorch's expand hands
    // _validate_args on): the default is this one's while the constructors in expanded() run.
    const saved = Distribution.#defaultValidateArgs;
    Distribution.#defaultValidateArgs = this.#validateArgs;
    let out: Distribution;
    try {
      out = tidy(() => this.expanded(batchShape));
    } finally {
      Distribution.#defaultValidateArgs = saved;
    }
    out.#validateArgs = this.#validateArgs;
    return out as this;
  }

  /** A new distribution of the expanded parameters (see expandParam); the hook of expand(). */
  protected expanded(batchShape: number[]): Distribution {
    void batchShape;
    throw this.missing('expand');
  }

  /** A parameter (batchShape + its own trailing dims) expanded to batchShape + those dims. */
  protected expandParam(param: Tensor, batchShape: number[]): Tensor {
    return param.expand(...batchShape, ...param.shape.slice(this.batchShape.length));
  }

  /** Frees the tensors this distribution created itself (never the parameters it was given). */
  dispose(): void {
    for (const t of this.#created) if (!t.isDisposed) t.dispose();
    this.#created.length = 0;
  }

  /** Records a tensor this distribution created, for dispose(). */
  protected own(t: Tensor): Tensor {
    this.#created.push(t);
    return t;
  }

  /** Throws a named error unless every element of value satisfies the constraint. */
  protected checkParam(argument: string, value: Tensor, constraint: Constraint): void {
    if (!this.#validateArgs) return;
    const ok = tidy(() => aten.all(constraint.check(value)).item() !== 0);
    if (!ok) {
      const message = `tailor: ${this.name}: parameter ${argument} (shape [${value.shape.join(', ')}]) must satisfy ${constraint.name}, as PyTorch's validate_args requires; found values outside it`;
      // A failed construction frees what it made so far: the caller never gets the object.
      this.dispose();
      throw new Error(message);
    }
  }

  /** Throws unless `value` (a method's argument) is a Tensor. */
  protected checkValue(value: unknown, method: string): asserts value is Tensor {
    if (!(value instanceof Tensor)) {
      throw new Error(`tailor: ${this.name}.${method}: the value argument must be a Tensor`);
    }
  }

  /**
   * PyTorch's _validate_sample: the value's rightmost dims must be eventShape, the rest
   * broadcastable with batchShape, and (unless validateArgs is off) every element in the support.
   */
  protected validateSample(value: Tensor, method = 'logProb'): void {
    this.checkValue(value, method);
    const shape = value.shape;
    const ev = this.eventShape;
    const tail = shape.slice(shape.length - ev.length);
    if (shape.length < ev.length || tail.some((s, i) => s !== ev[i])) {
      throw new Error(
        `tailor: ${this.name}.${method}: the rightmost sizes of value [${shape.join(', ')}] must equal eventShape [${ev.join(', ')}]`,
      );
    }
    const expected = [...this.batchShape, ...ev];
    for (let i = 1; i <= Math.min(shape.length, expected.length); i++) {
      const a = shape[shape.length - i];
      const b = expected[expected.length - i];
      if (a !== 1 && b !== 1 && a !== b) {
        throw new Error(
          `tailor: ${this.name}.${method}: value [${shape.join(', ')}] is not broadcastable with batchShape + eventShape [${expected.join(', ')}]`,
        );
      }
    }
    if (!this.#validateArgs) return;
    const support = this.support;
    const ok = tidy(() => aten.all(support.check(value)).item() !== 0);
    if (!ok) {
      throw new Error(
        `tailor: ${this.name}.${method}: the value argument (shape [${shape.join(', ')}]) must lie in the support ${support.name}; found values outside it`,
      );
    }
  }

  private missing(method: string): Error {
    return new Error(`tailor: ${this.name} has no ${method}, as in PyTorch 1.13`);
  }
}

/** The broadcast of several shapes (PyTorch's rules), or a named error. */
export function broadcastShapes(who: string, ...shapes: number[][]): number[] {
  const n = Math.max(0, ...shapes.map((s) => s.length));
  const out: number[] = [];
  for (let i = 1; i <= n; i++) {
    let size = 1;
    for (const s of shapes) {
      const d = s.length - i >= 0 ? s[s.length - i] : 1;
      if (d === 1) continue;
      if (size !== 1 && size !== d) {
        throw new Error(
          `tailor: ${who}: parameter shapes ${shapes.map((x) => `[${x.join(', ')}]`).join(', ')} do not broadcast`,
        );
      }
      size = d;
    }
    out.unshift(size);
  }
  return out;
}

/** A standard normal tensor of the given shape, dtype and device (normal_ on the global generator). */
export function standardNormal(shape: number[], like: Tensor): Tensor {
  return aten.normal_(empty(shape, like.dtype, like.device));
}

/** The machine epsilon of a float dtype (torch.finfo(dtype).eps). */
export function finfoEps(t: Tensor): number {
  return t.dtype === 'float64'
    ? 2.220446049250313e-16
    : t.dtype === 'float16'
      ? 0.0009765625
      : 1.1920928955078125e-7;
}

/** The smallest normal number of a float dtype (torch.finfo(dtype).tiny). */
export function finfoTiny(t: Tensor): number {
  return t.dtype === 'float64' ? 2.2250738585072014e-308 : 1.1754943508222875e-38;
}

/**
 * PyTorch's broadcast_all: the parameters as tensors broadcast to one shape (numbers take the
 * dtype and device of the first tensor, float32 when there is none). Every returned tensor is a
 * new view, for the distribution to own.
 */
export function broadcastAll(who: string, ...params: Param[]): Tensor[] {
  const like = params.find((p): p is Tensor => p instanceof Tensor);
  for (const [i, p] of params.entries()) {
    if (!(p instanceof Tensor) && typeof p !== 'number') {
      throw new Error(`tailor: ${who}: parameter ${i} must be a Tensor or a number`);
    }
  }
  const shape = broadcastShapes(who, ...params.map((p) => (p instanceof Tensor ? p.shape : [])));
  return tidy(() =>
    params.map((p) =>
      (p instanceof Tensor ? p : full([], p, like?.dtype ?? 'float32', like?.device)).expand(...shape),
    ),
  );
}
