// Forward-mode automatic differentiation (torch.autograd.forward_ad): a dual tensor carries a
// tangent beside its value, and every operation with a forward derivative in libtorch carries it
// on, so one forward pass gives a Jacobian-vector product without any backward. libtorch keeps the
// tangents per level; it allows one level at a time, as PyTorch 1.13 does.
import { Tensor, wrap } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { isFloatingPoint } from './dtype.js';
import { ArgumentError, checksOf } from '../util/arguments.js';

let currentLevel = -1;
let unpackOp = -1;

/** The level of the dual tensors made now: -1 outside any (PyTorch's _current_level). */
export function currentDualLevel(): number {
  return currentLevel;
}

/**
 * Enters a new forward AD level and returns it (torch.autograd.forward_ad.enter_dual_level);
 * prefer {@link dualLevel}, which also leaves it.
 */
export function enterDualLevel(): number {
  const level = native.enterDualLevel();
  if (level !== currentLevel + 1)
    throw new ArgumentError(
      'tailor: forwardAd.enterDualLevel: the current level is not the last one entered (leave levels with exitDualLevel or use dualLevel)',
    );
  currentLevel = level;
  return level;
}

/**
 * Leaves the level (the last one entered, by default): the tangents of its dual tensors are
 * cleared (torch.autograd.forward_ad.exit_dual_level).
 */
export function exitDualLevel(options: { level?: number } = {}): void {
  const c = checksOf('forwardAd.exitDualLevel');
  if (options === null || typeof options !== 'object') c.fail('options', 'an object', options);
  const level = options.level ?? currentLevel;
  if (!Number.isInteger(level)) c.fail('options.level', 'an integer', level);
  if (level !== currentLevel || level < 0)
    throw new ArgumentError(
      `tailor: forwardAd.exitDualLevel: level ${level} is not the last level entered (${currentLevel < 0 ? 'none is' : `${currentLevel} is`}); levels are left last first`,
    );
  native.exitDualLevel(level);
  currentLevel = level - 1;
}

/**
 * Runs `fn` inside a new forward AD level, left when `fn` returns or throws
 * (`with torch.autograd.forward_ad.dual_level():`). Read the tangents inside: leaving the level
 * clears them.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * import { autograd } from 'tailor/torch';
 * const { forwardAd } = autograd;
 * const x = torch.tensor([0.5, 1, 2]);
 * const v = torch.ones([3]);
 * const jvp = forwardAd.dualLevel(() =>
 *   torch.tidy(() => {
 *     const y = forwardAd.makeDual(x, v).sin().mul(2); // y' = 2 cos(x) v
 *     return forwardAd.unpackDual(y).tangent!.toFloat64Array();
 *   }),
 * );
 * ```
 */
export function dualLevel<T>(fn: () => T): T {
  if (typeof fn !== 'function') checksOf('forwardAd.dualLevel').fail('fn', 'a function', fn);
  enterDualLevel();
  try {
    return fn();
  } finally {
    exitDualLevel();
  }
}

/**
 * A dual tensor: `tensor`'s values with `tangent` as its forward derivative, at the current
 * level (torch.autograd.forward_ad.make_dual). Both must be floating point (or complex) tensors
 * of the same shape; it is a view of `tensor`.
 */
export function makeDual(tensor: Tensor, tangent: Tensor, options: { level?: number } = {}): Tensor {
  const c = checksOf('forwardAd.makeDual');
  if (!(tensor instanceof Tensor)) c.fail('tensor', 'a Tensor', tensor);
  if (!(tangent instanceof Tensor)) c.fail('tangent', 'a Tensor', tangent);
  if (options === null || typeof options !== 'object') c.fail('options', 'an object', options);
  const level = options.level ?? currentLevel;
  if (level < 0)
    throw new ArgumentError(
      'tailor: forwardAd.makeDual: make dual tensors inside dualLevel(() => ...) (or after enterDualLevel())',
    );
  for (const [name, t] of [
    ['tensor', tensor],
    ['tangent', tangent],
  ] as const)
    if (!isFloatingPoint(t.dtype) && !t.dtype.startsWith('complex'))
      throw new ArgumentError(
        `tailor: forwardAd.makeDual: ${name} must be floating point or complex, got ${t.dtype}`,
      );
  return aten._make_dual(tensor, tangent, level);
}

/**
 * The value and the tangent of a dual tensor at the current level
 * (torch.autograd.forward_ad.unpack_dual): `tangent` is null for a tensor without one, and
 * outside any level.
 */
export function unpackDual(
  tensor: Tensor,
  options: { level?: number } = {},
): { primal: Tensor; tangent: Tensor | null } {
  const c = checksOf('forwardAd.unpackDual');
  if (!(tensor instanceof Tensor)) c.fail('tensor', 'a Tensor', tensor);
  if (options === null || typeof options !== 'object') c.fail('options', 'an object', options);
  const level = options.level ?? currentLevel;
  if (level < 0) return { primal: tensor, tangent: null };
  // called directly: the generated wrapper has no null for a tensor without a tangent
  if (unpackOp < 0) unpackOp = native.resolve('aten::_unpack_dual', '');
  const [primal, tangent] = native.call(unpackOp, tensor.handle, level) as [number, number | null];
  return { primal: wrap(primal), tangent: tangent === null ? null : wrap(tangent) };
}
