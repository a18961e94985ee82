// PyTorch 1.13's constraints (torch.distributions.constraints) that these distributions use, with
// PyTorch's names so that errors read as PyTorch's. The constraints of bounds, Independent, cat
// and stack carry what they were made of (`kind` and their fields), which bijectTo and
// transformTo read, as PyTorch's registry reads the constraint's class and attributes.
import { Tensor } from '../tensor.js';
import { cat as catTensors, stack as stackTensors } from '../creation.js';
import * as aten from '../generated/aten.js';
import { describeValue } from '../../util/arguments.js';
import type { Constraint } from './distribution.js';
import { makeConstraint } from './constraint-make.js';

export { lowerCholesky, corrCholesky, positiveDefinite } from './constraints-matrix.js';

const make = makeConstraint;
const and = aten.logical_and;
const or = aten.logical_or;
const isInteger = (v: Tensor): Tensor => aten.remainder_Scalar(v, 1).eq(0);

/** A bound of a constraint: a number, or a tensor broadcast against the value. */
export type Bound = Tensor | number;

/**
 * A constraint of bounds (PyTorch's GreaterThan, GreaterThanEq, LessThan, Interval and
 * HalfOpenInterval): `kind` says which, and the bounds are kept (tensors stay the caller's).
 */
export interface BoundedConstraint extends Constraint {
  /** Which of PyTorch's bounded constraints this is. */
  readonly kind: 'greaterThan' | 'greaterThanEq' | 'lessThan' | 'interval' | 'halfOpenInterval';
  /** The lower bound (absent for lessThan). */
  readonly lowerBound?: Bound;
  /** The upper bound (absent for greaterThan and greaterThanEq). */
  readonly upperBound?: Bound;
}

/** A bound as PyTorch prints it: `0.0` for a whole float, the given name for a tensor. */
function boundName(bound: Bound, name: string | undefined, who: string, argument: string): string {
  if (name !== undefined && typeof name !== 'string') {
    throw new Error(
      `tailor: constraints.${who}: ${argument}Name must be a string (the bound's name in the constraint's name), got ${describeValue(name)}`,
    );
  }
  if (bound instanceof Tensor) return name ?? argument;
  if (typeof bound !== 'number') {
    throw new Error(
      `tailor: constraints.${who}: ${argument} must be a Tensor or a number, got ${describeValue(bound)}`,
    );
  }
  return Number.isInteger(bound) ? bound.toFixed(1) : String(bound);
}

/** value > lower (PyTorch's `GreaterThan`, constraints.greater_than). */
export function greaterThan(lower: Bound, lowerName?: string): BoundedConstraint {
  const name = boundName(lower, lowerName, 'greaterThan', 'lower');
  return {
    ...make(`GreaterThan(lower_bound=${name})`, (v) => v.gt(lower)),
    kind: 'greaterThan',
    lowerBound: lower,
  };
}

/** value >= lower (PyTorch's `GreaterThanEq`, constraints.greater_than_eq). */
export function greaterThanEq(lower: Bound, lowerName?: string): BoundedConstraint {
  const name = boundName(lower, lowerName, 'greaterThanEq', 'lower');
  return {
    ...make(`GreaterThanEq(lower_bound=${name})`, (v) => v.ge(lower)),
    kind: 'greaterThanEq',
    lowerBound: lower,
  };
}

/** value < upper (PyTorch's `LessThan`, constraints.less_than). */
export function lessThan(upper: Bound, upperName?: string): BoundedConstraint {
  const name = boundName(upper, upperName, 'lessThan', 'upper');
  return {
    ...make(`LessThan(upper_bound=${name})`, (v) => v.lt(upper)),
    kind: 'lessThan',
    upperBound: upper,
  };
}

/** Values in [low, high] (PyTorch's `Interval`, constraints.interval). */
export function interval(low: Bound, high: Bound, lowName?: string, highName?: string): BoundedConstraint {
  const lo = boundName(low, lowName, 'interval', 'low');
  const hi = boundName(high, highName, 'interval', 'high');
  return {
    ...make(`Interval(lower_bound=${lo}, upper_bound=${hi})`, (v) => and(v.ge(low), v.le(high))),
    kind: 'interval',
    lowerBound: low,
    upperBound: high,
  };
}

/** Values in [low, high) (PyTorch's `HalfOpenInterval`, constraints.half_open_interval). */
export function halfOpenInterval(
  low: Bound,
  high: Bound,
  lowName?: string,
  highName?: string,
): BoundedConstraint {
  const lo = boundName(low, lowName, 'halfOpenInterval', 'low');
  const hi = boundName(high, highName, 'halfOpenInterval', 'high');
  return {
    ...make(`HalfOpenInterval(lower_bound=${lo}, upper_bound=${hi})`, (v) => and(v.ge(low), v.lt(high))),
    kind: 'halfOpenInterval',
    lowerBound: low,
    upperBound: high,
  };
}

/** Any number but NaN (PyTorch's `Real()`). */
export const real = make('Real()', (v) => v.eq(v));
/** Values > 0 (PyTorch's `GreaterThan(lower_bound=0.0)`). */
export const positive = greaterThan(0);
/** Values >= 0 (PyTorch's `GreaterThanEq(lower_bound=0.0)`). */
export const nonnegative = greaterThanEq(0);
/** Values in [0, 1] (PyTorch's `Interval(lower_bound=0.0, upper_bound=1.0)`). */
export const unitInterval = interval(0, 1);
/** 0 or 1. */
export const boolean = make('Boolean()', (v) => or(v.eq(0), v.eq(1)));
/** Integers >= 0. */
export const nonnegativeInteger = make('IntegerGreaterThan(lower_bound=0)', (v) =>
  and(isInteger(v), v.ge(0)),
);
/** Vectors of nonnegative entries summing to 1 (to 1e-6). */
export const simplex = make(
  'Simplex()',
  (v) => and(aten.all_dim(v.ge(0), -1), v.sum(-1).sub(1).abs().lt(1e-6)),
  1,
);
/** One-hot vectors. */
export const oneHot = make(
  'OneHot()',
  (v) => and(aten.all_dim(or(v.eq(0), v.eq(1)), -1), v.sum(-1).eq(1)),
  1,
);

/** Integers in [lower, upper] (upper may be a tensor, broadcast against the value). */
export function integerInterval(lower: number, upper: Tensor | number, upperName?: string): Constraint {
  if (typeof lower !== 'number') {
    throw new Error(
      `tailor: constraints.integerInterval: lower must be a number, got ${describeValue(lower)}`,
    );
  }
  boundName(upper, upperName, 'integerInterval', 'upper');
  const name = upperName ?? String(upper);
  return make(`IntegerInterval(lower_bound=${lower}, upper_bound=${name})`, (v) =>
    and(and(isInteger(v), v.ge(lower)), v.le(upper)),
  );
}

/**
 * Count vectors of at most totalCount in all (PyTorch 1.13's `multinomial` constraint: entries
 * >= 0 and a sum <= totalCount, integrality unchecked, as there).
 */
export function multinomial(totalCount: number): Constraint {
  if (typeof totalCount !== 'number') {
    throw new Error(
      `tailor: constraints.multinomial: totalCount must be a number, got ${describeValue(totalCount)}`,
    );
  }
  return make(
    `Multinomial(upper_bound=${totalCount})`,
    (v) => and(aten.all_dim(v.ge(0), -1), v.sum(-1).le(totalCount)),
    1,
  );
}

/** A constraint reinterpreted over more dims (PyTorch's `IndependentConstraint`). */
export interface IndependentConstraint extends Constraint {
  readonly kind: 'independent';
  /** The constraint on each element. */
  readonly baseConstraint: Constraint;
  /** How many rightmost dims join the event. */
  readonly reinterpretedBatchNdims: number;
}

/**
 * The constraint `base` on each element, reinterpreted so that the `reinterpreted` rightmost
 * dimensions form one event (PyTorch's `IndependentConstraint`, constraints.independent).
 */
export function independent(base: Constraint, reinterpreted: number): IndependentConstraint {
  checkConstraint('independent', 'base', base);
  if (!Number.isInteger(reinterpreted) || reinterpreted < 0) {
    throw new Error(
      `tailor: constraints.independent: reinterpreted must be an integer >= 0, got ${describeValue(reinterpreted)}`,
    );
  }
  const check = (v: Tensor): Tensor => {
    let ok = base.check(v);
    // as PyTorch: a value with too few dims is an error (reducing a 0-d result again would loop
    // `reinterpreted` times, for ever with a huge one)
    if (ok.ndim < reinterpreted)
      throw new Error(
        `tailor: constraints.independent(...).check: expected value.dim >= ${base.eventDim + reinterpreted}, got ${v.ndim}`,
      );
    for (let i = 0; i < reinterpreted; i++) ok = aten.all_dim(ok, -1);
    return ok;
  };
  return {
    ...make(`IndependentConstraint(${base.name}, ${reinterpreted})`, check, base.eventDim + reinterpreted),
    kind: 'independent',
    baseConstraint: base,
    reinterpretedBatchNdims: reinterpreted,
  };
}

/** Vectors of reals (PyTorch's `IndependentConstraint(Real(), 1)`). */
export const realVector = independent(real, 1);

/** Throws unless value is a constraint (an argument of constraints.who). */
function checkConstraint(who: string, argument: string, value: unknown): asserts value is Constraint {
  const ok =
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Constraint).check === 'function' &&
    typeof (value as Constraint).eventDim === 'number';
  if (!ok) {
    throw new Error(
      `tailor: constraints.${who}: ${argument} must be a constraint (such as constraints.real), got ${describeValue(value)}`,
    );
  }
}

/** Throws unless dim is an integer (an argument of constraints.who or a transform). */
export function checkDim(who: string, dim: unknown): number {
  if (!Number.isInteger(dim)) {
    throw new Error(`tailor: ${who}: dim must be an integer, got ${describeValue(dim)}`);
  }
  return dim as number;
}

/** Throws unless -ndim <= dim < ndim for the value checked (PyTorch asserts it). */
function checkDimIn(who: string, dim: number, value: Tensor): void {
  if (dim < -value.ndim || dim >= value.ndim) {
    throw new Error(
      `tailor: ${who}: dim ${dim} is out of range for a value of ${value.ndim} dims [${value.shape.join(', ')}]`,
    );
  }
}

/** Constraints on consecutive pieces along a dim (PyTorch's `_Cat`, constraints.cat). */
export interface CatConstraint extends Constraint {
  readonly kind: 'cat';
  /** The constraint of each piece. */
  readonly cseq: readonly Constraint[];
  /** The dim along which the pieces lie. */
  readonly dim: number;
  /** The length of each piece along dim. */
  readonly lengths: readonly number[];
}

/**
 * The constraints of cseq, each on its piece of lengths[i] along dim, in torch.cat's layout
 * (PyTorch's constraints.cat); lengths default to 1 each. The event dims are the largest of cseq.
 */
export function cat(cseq: Constraint[], dim = 0, lengths?: number[]): CatConstraint {
  if (!Array.isArray(cseq) || cseq.length === 0) {
    throw new Error(
      `tailor: constraints.cat: cseq must be a non-empty array of constraints, got ${describeValue(cseq)}`,
    );
  }
  cseq.forEach((x, i) => checkConstraint('cat', `cseq[${i}]`, x));
  checkDim('constraints.cat', dim);
  const sizes = lengths ?? cseq.map(() => 1);
  if (
    !Array.isArray(sizes) ||
    sizes.length !== cseq.length ||
    !sizes.every((n) => Number.isInteger(n) && n >= 0)
  ) {
    throw new Error(
      `tailor: constraints.cat: lengths must be ${cseq.length} integer sizes >= 0 (one per constraint), got ${describeValue(lengths)}`,
    );
  }
  const parts = [...cseq];
  const check = (v: Tensor): Tensor => {
    checkDimIn('constraints.cat', dim, v);
    let start = 0;
    const checks = parts.map((part, i) => {
      const piece = part.check(v.narrow(dim, start, sizes[i]));
      start += sizes[i];
      return piece;
    });
    return catTensors(checks, dim);
  };
  const name = `Cat([${parts.map((p) => p.name).join(', ')}], dim=${dim}, lengths=[${sizes.join(', ')}])`;
  return {
    ...make(name, check, Math.max(...parts.map((p) => p.eventDim))),
    kind: 'cat',
    cseq: parts,
    dim,
    lengths: [...sizes],
  };
}

/** Constraints on the slices along a dim (PyTorch's `_Stack`, constraints.stack). */
export interface StackConstraint extends Constraint {
  readonly kind: 'stack';
  /** The constraint of each slice. */
  readonly cseq: readonly Constraint[];
  /** The dim whose slices they constrain. */
  readonly dim: number;
}

/**
 * The constraints of cseq, the i-th on the i-th slice along dim, in torch.stack's layout
 * (PyTorch's constraints.stack). The event dims are the largest of cseq, plus one where dim
 * counts from the end into them.
 */
export function stack(cseq: Constraint[], dim = 0): StackConstraint {
  if (!Array.isArray(cseq) || cseq.length === 0) {
    throw new Error(
      `tailor: constraints.stack: cseq must be a non-empty array of constraints, got ${describeValue(cseq)}`,
    );
  }
  cseq.forEach((x, i) => checkConstraint('stack', `cseq[${i}]`, x));
  checkDim('constraints.stack', dim);
  const parts = [...cseq];
  const check = (v: Tensor): Tensor => {
    checkDimIn('constraints.stack', dim, v);
    if (v.size(dim) !== parts.length) {
      throw new Error(
        `tailor: constraints.stack: the value has ${v.size(dim)} slices along dim ${dim}, expected ${parts.length} (one per constraint)`,
      );
    }
    return stackTensors(
      parts.map((part, i) => part.check(v.select(dim, i))),
      dim,
    );
  };
  let eventDim = Math.max(...parts.map((p) => p.eventDim));
  if (dim + eventDim < 0) eventDim += 1;
  const name = `Stack([${parts.map((p) => p.name).join(', ')}], dim=${dim})`;
  return { ...make(name, check, eventDim), kind: 'stack', cseq: parts, dim };
}
