// Random operators inside vmap, as PyTorch 2.x's torch.vmap `randomness` option has them: libtorch
// 1.13 refuses every random operator under vmap ('error', the default); with 'different' each
// example draws its own numbers (one draw of [batch, ...] mapped again), with 'same' one draw of
// an example's shape serves every example. The draws run with libtorch's VmapMode key excluded
// (the addon's outsideVmapMode). Covered: randn, rand, randint, randperm, their *Like forms and
// the dropouts; other random operators stay refused by name.
import { Tensor } from './tensor.js';
import { native } from './native.js';
import * as aten from './generated/aten.js';
import { vmapLevels, type BatchingRule, type VmapLevel } from './vmap-levels.js';
import { attempt, batched, mappedLevel, physical } from './vmap-rule-kit.js';

/** Whether a rule is drawing now: the operator it calls must run as it is, not through a rule again. */
let drawing = false;

/** The innermost vmap call when it allows random operators (and no rule is drawing already). */
function randomLevel(): VmapLevel | null {
  const v = vmapLevels[vmapLevels.length - 1];
  return !drawing && v !== undefined && v.randomness !== 'error' ? v : null;
}

/** Runs a draw as outside vmap: libtorch's VmapMode key excluded, tailor's rules passed by. */
function outside<T>(fn: () => T): T {
  drawing = true;
  try {
    return native.outsideVmapMode(fn);
  } finally {
    drawing = false;
  }
}

function sizeList(size: unknown): number[] | null {
  if (typeof size === 'number') return [size];
  return Array.isArray(size) && size.every((s) => typeof s === 'number') ? (size as number[]) : null;
}

/** A factory of random numbers whose size is the argument at `sizeAt`. */
function factory(op: (...args: never[]) => Tensor, sizeAt: number): BatchingRule {
  return (...args: unknown[]) => {
    const v = randomLevel();
    const size = sizeList(args[sizeAt]);
    if (v === null || size === null) return undefined;
    if (v.randomness === 'same') return attempt(() => outside(() => op(...(args as never[]))));
    const call = args.slice();
    call[sizeAt] = [v.batchSize, ...size];
    return attempt(() =>
      batched(
        outside(() => op(...(call as never[]))),
        v,
      ),
    );
  };
}

/** randperm: a permutation per example ('different') or one for all ('same'). */
function randperm(n: unknown, ...rest: unknown[]): Tensor | undefined {
  const v = randomLevel();
  if (v === null) return undefined;
  const draw = () => aten.randperm(n as number, ...(rest as never[]));
  if (v.randomness === 'same') return attempt(() => outside(draw));
  return attempt(() => {
    const perms = outside(() => Array.from({ length: v.batchSize }, draw));
    return batched(aten.stack(perms, 0), v);
  });
}

/**
 * The *Like forms: 'different' draws like the physical tensor (every example its own), 'same'
 * like one example (a tensor of the example's shape, shared).
 */
function like(op: typeof aten.rand_like): BatchingRule {
  return (self: unknown, ...rest: unknown[]) => {
    const v = randomLevel();
    if (v === null || !(self instanceof Tensor)) return undefined;
    if (v.randomness === 'same')
      return attempt(() => {
        const example = aten.zeros(self.shape, self.dtype, null, native.deviceOf(self.handle));
        return outside(() => op(example, ...(rest as never[])));
      });
    return attempt(() =>
      batched(
        outside(() => op(physical(self, v), ...(rest as never[]))),
        v,
      ),
    );
  };
}

/**
 * The dropouts. Outside training (or with p 0) the identity, under any randomness. In training,
 * 'different' drops each example's elements independently (feature dropout whole channels of
 * each sample), 'same' applies one mask, drawn for an example's shape, to every example
 * (dropout and feature dropout; alpha dropout is not a mask and stays refused).
 */
function dropout(op: typeof aten.dropout, kind: 'elements' | 'features' | 'alpha'): BatchingRule {
  return (input: unknown, p: unknown, train: unknown) => {
    const v = mappedLevel(input);
    const x = input as Tensor;
    if (drawing) return undefined;
    if (train === false || p === 0) return v === null ? undefined : attempt(() => batched(physical(x, v), v));
    const r = randomLevel();
    if (r === null || !(input instanceof Tensor)) return undefined;
    if (r.randomness === 'same') {
      if (kind === 'alpha') return undefined;
      return attempt(() => {
        const ones = aten.ones(x.shape, x.dtype, null, native.deviceOf(x.handle));
        const mask = outside(() => op(ones, p as number, true));
        return x.mul(mask);
      });
    }
    if (kind === 'features' && x.ndim < 2) return undefined;
    return attempt(() => {
      const px = physical(x, r);
      if (kind !== 'features')
        return batched(
          outside(() => op(px, p as number, true)),
          r,
        );
      // Feature dropout reads dimension 1 as the channels: the batch joins the samples.
      const dropped = outside(() => op(px.flatten(0, 1), p as number, true));
      return batched(dropped.reshape(...[r.batchSize, ...x.shape]), r);
    });
  };
}

/** The random operators' rules, by generated wrapper name. */
export const randomRules = {
  randn: factory(aten.randn as never, 0),
  rand: factory(aten.rand as never, 0),
  randint_low: factory(aten.randint_low as never, 2),
  randperm: randperm as BatchingRule,
  rand_like: like(aten.rand_like),
  randn_like: like(aten.randn_like),
  randint_like: like(aten.randint_like as never),
  randint_like_low_dtype: like(aten.randint_like_low_dtype as never),
  dropout: dropout(aten.dropout, 'elements'),
  feature_dropout: dropout(aten.feature_dropout, 'features'),
  alpha_dropout: dropout(aten.alpha_dropout, 'alpha'),
} satisfies Record<string, BatchingRule>;
