// biject_to and transform_to of PyTorch 1.13 (torch.distributions.constraint_registry): the
// transform from the reals onto each constraint that PyTorch registers for it, found from the
// constraint's kind and fields (its bounds, its base, its pieces) as PyTorch's from its class.
import { Tensor } from '../tensor.js';
import { describeValue } from '../../util/arguments.js';
import type { Constraint } from './distribution.js';
import * as c from './constraints.js';
import { ComposeTransform, IndependentTransform } from './transform-base.js';
import { AffineTransform, ExpTransform, SigmoidTransform, type Transform } from './transforms.js';
import { SoftmaxTransform, StickBreakingTransform } from './transforms-more.js';
import { CatTransform, StackTransform } from './transforms-cat.js';
import {
  CorrCholeskyTransform,
  LowerCholeskyTransform,
  PositiveDefiniteTransform,
} from './transforms-matrix.js';

type Registry = (constraint: Constraint) => Transform;

/** The constraint's kind, where it has one (the bounded, independent, cat and stack ones). */
function kindOf(constraint: Constraint): string | undefined {
  const kind = (constraint as { kind?: unknown }).kind;
  return typeof kind === 'string' ? kind : undefined;
}

/** upper - lower: a number of two numbers, else a tensor (of the caller's scope). */
function width(lower: c.Bound, upper: c.Bound): c.Bound {
  if (typeof upper === 'number' && typeof lower === 'number') return upper - lower;
  return upper instanceof Tensor ? upper.sub(lower) : (lower as Tensor).neg().add(upper);
}

/**
 * The transforms both registries share (PyTorch registers them for biject_to and transform_to
 * alike), with `recurse` the registry itself for the constraints built of others; undefined where
 * the constraint is not among them.
 */
function shared(constraint: Constraint, recurse: Registry): Transform | undefined {
  if (constraint === c.real) return new ComposeTransform([]);
  // PyTorch composes Exp with Affine(0, 1) here; the plain Exp is the same map.
  if (constraint === c.positive || constraint === c.nonnegative) return new ExpTransform();
  if (constraint === c.corrCholesky) return new CorrCholeskyTransform();
  const bounded = constraint as c.BoundedConstraint;
  switch (kindOf(constraint)) {
    case 'independent': {
      const ind = constraint as c.IndependentConstraint;
      return new IndependentTransform(recurse(ind.baseConstraint), ind.reinterpretedBatchNdims);
    }
    case 'greaterThan':
    case 'greaterThanEq':
      return new ComposeTransform([
        new ExpTransform(),
        new AffineTransform(bounded.lowerBound as c.Bound, 1),
      ]);
    case 'lessThan':
      return new ComposeTransform([
        new ExpTransform(),
        new AffineTransform(bounded.upperBound as c.Bound, -1),
      ]);
    case 'interval':
    case 'halfOpenInterval': {
      const lower = bounded.lowerBound as c.Bound;
      const upper = bounded.upperBound as c.Bound;
      // The unit interval of number bounds is a plain Sigmoid, as PyTorch special-cases it.
      if (lower === 0 && upper === 1) return new SigmoidTransform();
      return new ComposeTransform([new SigmoidTransform(), new AffineTransform(lower, width(lower, upper))]);
    }
    case 'cat': {
      const pieces = constraint as c.CatConstraint;
      return new CatTransform(pieces.cseq.map(recurse), pieces.dim, [...pieces.lengths]);
    }
    case 'stack': {
      const slices = constraint as c.StackConstraint;
      return new StackTransform(slices.cseq.map(recurse), slices.dim);
    }
  }
  return undefined;
}

/** A named error: no transform registered for the constraint. */
function unregistered(who: string, constraint: Constraint, known: string): Error {
  const name =
    constraint && typeof constraint === 'object' && 'name' in constraint
      ? constraint.name
      : describeValue(constraint);
  return new Error(
    `tailor: ${who}: no transform is registered for the constraint ${String(name)}; ${who} knows ${known}`,
  );
}

const BOTH =
  'real, realVector, positive, nonnegative, greaterThan, greaterThanEq, lessThan, interval, halfOpenInterval (unitInterval), independent, cat, stack, corrCholesky';

/**
 * A bijection from the reals (of the constraint's event dims) onto the constraint, as PyTorch's
 * `biject_to`: the identity for real; Exp for positive and nonnegative, composed with
 * Affine(bound, ±1) for the other half lines; Sigmoid (and an Affine onto other bounds) for an
 * interval; StickBreaking for the simplex; CorrCholesky for corrCholesky; and an Independent,
 * Cat or Stack transform of the parts' bijections for independent, cat and stack constraints.
 * A tensor bound's width (upper - lower) belongs to the caller's scope.
 */
export function bijectTo(constraint: Constraint): Transform {
  const recurse: Registry = (x) => bijectTo(x);
  if (constraint === c.simplex) return new StickBreakingTransform();
  const found = shared(constraint, recurse);
  if (found) return found;
  throw unregistered('bijectTo', constraint, `${BOTH} and simplex`);
}

/**
 * A transform from the reals onto the constraint, not necessarily one-to-one, as PyTorch's
 * `transform_to`: as bijectTo, but Softmax for the simplex, LowerCholesky for lowerCholesky,
 * and PositiveDefinite for positiveDefinite (as PyTorch 2.0 registers it).
 */
export function transformTo(constraint: Constraint): Transform {
  const recurse: Registry = (x) => transformTo(x);
  if (constraint === c.simplex) return new SoftmaxTransform();
  if (constraint === c.lowerCholesky) return new LowerCholeskyTransform();
  if (constraint === c.positiveDefinite) return new PositiveDefiniteTransform();
  const found = shared(constraint, recurse);
  if (found) return found;
  throw unregistered('transformTo', constraint, `${BOTH}, simplex, lowerCholesky and positiveDefinite`);
}
