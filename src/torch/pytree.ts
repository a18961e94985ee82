// Tensors in nested arrays and plain objects (PyTorch's pytrees of tuples, lists and dicts): the
// function transforms of func.ts take and return such structures, flatten them to their tensor
// leaves and build the same structure around new leaves.
import { Tensor } from './tensor.js';
import { ArgumentError } from '../util/arguments.js';

/** The deepest nesting followed; deeper (or a structure containing itself) is refused. */
const MAX_DEPTH = 32;

/** A structure's tensor leaves, in order, and how to rebuild it around others. */
export interface Flattened {
  leaves: Tensor[];
  /** The structure with the i-th tensor leaf replaced by `leaves[i]` (other values kept). */
  rebuild(leaves: readonly unknown[]): unknown;
}

/** A plain object (not a class instance, a Tensor, an array or null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Flattens `value`: a Tensor is a leaf, arrays and plain objects are followed, anything else is
 * kept as it is. `what` names the value in errors (`func.grad: the argument 0`).
 */
export function flattenTree(value: unknown, what: string): Flattened {
  const leaves: Tensor[] = [];
  const open = new Set<unknown>();
  const walk = (v: unknown, path: string, depth: number): ((next: () => unknown) => unknown) => {
    if (v instanceof Tensor) {
      leaves.push(v);
      return (next) => next();
    }
    if (!Array.isArray(v) && !isPlainObject(v)) return () => v;
    if (open.has(v))
      throw new ArgumentError(`${what}${path} contains itself; pass arrays and objects without cycles`);
    if (depth >= MAX_DEPTH)
      throw new ArgumentError(`${what}${path} nests more than ${MAX_DEPTH} levels deep`);
    open.add(v);
    let build: (next: () => unknown) => unknown;
    if (Array.isArray(v)) {
      const parts = v.map((x, i) => walk(x, `${path}[${i}]`, depth + 1));
      build = (next) => parts.map((p) => p(next));
    } else {
      const parts = Object.entries(v).map(([k, x]) => [k, walk(x, `${path}.${k}`, depth + 1)] as const);
      build = (next) => Object.fromEntries(parts.map(([k, p]) => [k, p(next)]));
    }
    open.delete(v);
    return build;
  };
  const build = walk(value, '', 0);
  return {
    leaves,
    rebuild: (replacements) => {
      let i = 0;
      return build(() => replacements[i++]);
    },
  };
}
