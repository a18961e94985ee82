// How the constraints are made: a name, the event dims and a check that refuses a value that is
// not a tensor by name (the check is public: constraints.real.check(x), a support's check).
import { Tensor } from '../tensor.js';
import { describeValue } from '../../util/arguments.js';
import type { Constraint } from './distribution.js';

/** @internal A constraint whose check throws a named error unless the value is a Tensor. */
export function makeConstraint(name: string, check: (v: Tensor) => Tensor, eventDim = 0): Constraint {
  return {
    name,
    eventDim,
    check: (value: Tensor): Tensor => {
      if (!(value instanceof Tensor))
        throw new Error(`tailor: ${name}.check: value must be a Tensor, got ${describeValue(value)}`);
      return check(value);
    },
  };
}
