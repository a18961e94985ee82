// PyTorch 1.13's constraints (torch.distributions.constraints) that these distributions use, with
// PyTorch's names so that errors read as PyTorch's.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import type { Constraint } from './distribution.js';

const make = (name: string, check: (v: Tensor) => Tensor, eventDim = 0): Constraint => ({
  name,
  eventDim,
  check,
});
const and = aten.logical_and;
const or = aten.logical_or;
const isInteger = (v: Tensor): Tensor => aten.remainder_Scalar(v, 1).eq(0);

/** Any number but NaN (PyTorch's `Real()`). */
export const real = make('Real()', (v) => v.eq(v));
/** Vectors of reals (PyTorch's `IndependentConstraint(Real(), 1)`). */
export const realVector = make('IndependentConstraint(Real(), 1)', (v) => aten.all_dim(v.eq(v), -1), 1);
/** Values > 0. */
export const positive = make('GreaterThan(lower_bound=0.0)', (v) => v.gt(0));
/** Values >= 0. */
export const nonnegative = make('GreaterThanEq(lower_bound=0.0)', (v) => v.ge(0));
/** Values in [0, 1]. */
export const unitInterval = make('Interval(lower_bound=0.0, upper_bound=1.0)', (v) => and(v.ge(0), v.le(1)));
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
export function integerInterval(
  lower: number,
  upper: Tensor | number,
  upperName = String(upper),
): Constraint {
  return make(`IntegerInterval(lower_bound=${lower}, upper_bound=${upperName})`, (v) =>
    and(and(isInteger(v), v.ge(lower)), v.le(upper)),
  );
}

/** Values in [low, high] (tensors broadcast against the value). */
export function interval(low: Tensor, high: Tensor): Constraint {
  return make('Interval(lower_bound=low, upper_bound=high)', (v) => and(v.ge(low), v.le(high)));
}

/** Values >= lower (a tensor broadcast against the value; PyTorch's `GreaterThanEq`). */
export function greaterThanEq(lower: Tensor, lowerName = 'lower'): Constraint {
  return make(`GreaterThanEq(lower_bound=${lowerName})`, (v) => v.ge(lower));
}

/**
 * Count vectors of at most totalCount in all (PyTorch 1.13's `multinomial` constraint: entries
 * >= 0 and a sum <= totalCount, integrality unchecked, as there).
 */
export function multinomial(totalCount: number): Constraint {
  return make(
    `Multinomial(upper_bound=${totalCount})`,
    (v) => and(aten.all_dim(v.ge(0), -1), v.sum(-1).le(totalCount)),
    1,
  );
}

/**
 * The constraint `base` on each element, reinterpreted so that the `reinterpreted` rightmost
 * dimensions form one event (PyTorch's `IndependentConstraint`).
 */
export function independent(base: Constraint, reinterpreted: number): Constraint {
  return make(
    `IndependentConstraint(${base.name}, ${reinterpreted})`,
    (v) => {
      let ok = base.check(v);
      for (let i = 0; i < reinterpreted; i++) ok = aten.all_dim(ok, -1);
      return ok;
    },
    base.eventDim + reinterpreted,
  );
}
