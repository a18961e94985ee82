// biject_to and transform_to of PyTorch 1.13 (torch.distributions.constraint_registry): the
// transform from the reals onto each of tailor's constraints that PyTorch registers for it.
import { describeValue } from '../../util/arguments.js';
import type { Constraint } from './distribution.js';
import * as c from './constraints.js';
import { ComposeTransform, IndependentTransform } from './transform-base.js';
import { ExpTransform, SigmoidTransform, type Transform } from './transforms.js';
import { SoftmaxTransform, StickBreakingTransform } from './transforms-more.js';

/** The transform of `who` for constraint, or a named error listing the constraints it knows. */
function registered(who: string, constraint: Constraint, simplex: () => Transform): Transform {
  if (constraint === c.real) return new ComposeTransform([]);
  if (constraint === c.realVector) return new IndependentTransform(new ComposeTransform([]), 1);
  if (constraint === c.positive || constraint === c.nonnegative) return new ExpTransform();
  if (constraint === c.unitInterval) return new SigmoidTransform();
  if (constraint === c.simplex) return simplex();
  const name =
    constraint && typeof constraint === 'object' && 'name' in constraint
      ? constraint.name
      : describeValue(constraint);
  throw new Error(
    `tailor: ${who}: no transform is registered for the constraint ${String(name)}; tailor registers constraints.real, realVector, positive, nonnegative, unitInterval and simplex`,
  );
}

/**
 * A bijection from the reals (of the constraint's event dims) onto the constraint, as PyTorch's
 * `biject_to`: the identity for real, Exp for positive and nonnegative, Sigmoid for the unit
 * interval, StickBreaking for the simplex.
 */
export function bijectTo(constraint: Constraint): Transform {
  return registered('bijectTo', constraint, () => new StickBreakingTransform());
}

/**
 * A transform from the reals onto the constraint, not necessarily one-to-one, as PyTorch's
 * `transform_to`: as bijectTo, but Softmax for the simplex.
 */
export function transformTo(constraint: Constraint): Transform {
  return registered('transformTo', constraint, () => new SoftmaxTransform());
}
