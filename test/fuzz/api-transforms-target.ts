// The API fuzz target of the distributions' transforms and constraints: a Transform class built
// from hostile arguments (parts that are transforms, tensors, shapes, dims, distributions or junk)
// and one of its methods called; a constraint made from hostile bounds, parts and dims and its
// check called; bijectTo/transformTo of a constraint (or of junk) and the transform it gives
// applied; a TransformedDistribution over them; validateArgs switched on and off, process-wide
// at times (reset after the input). Any error that names nothing is a gap in their checks.
import type { distributions } from '../../src/torch/index.js';
import { describe, type Pools, type Torch } from './api-pools.js';
import { callMethod, construct, functionsOf, invoke, type Fn, type Owned } from './api-calls.js';

type Transform = distributions.Transform;

const SKIP = /^(constructor|dispose)$/;

/** A sensible transform (for the parts of Compose, Cat, Stack, Independent, Inverse) or junk. */
function part(torch: Torch, p: Pools, owned: Owned): unknown {
  if (p.chance(0.2)) return p.hostile();
  const d = torch.distributions;
  const made: Transform = p.pick<() => Transform>([
    () => new d.ExpTransform(),
    () => new d.AffineTransform(p.pick([0, 1]), p.pick([2, -0.5])),
    () => new d.SigmoidTransform(),
    () => new d.TanhTransform(),
    () => new d.PowerTransform(p.pick([2, 0.5])),
    () => new d.SoftmaxTransform(),
    () => new d.StickBreakingTransform(),
    () => new d.LowerCholeskyTransform(),
    () => new d.CorrCholeskyTransform(),
  ])();
  owned.push(made);
  return made;
}

/** A standard Normal of the given batch shape, kept for disposal. */
function normal(torch: Torch, owned: Owned, shape: number[]): distributions.Normal {
  const made = new torch.distributions.Normal(torch.zeros(shape), torch.ones([]));
  owned.push(made);
  return made;
}

/** An argument of a Transform constructor: any of the kinds the classes take, valid or not. */
function transformArg(torch: Torch, p: Pools, owned: Owned): unknown {
  switch (p.rng.int(6)) {
    case 0:
      return Array.from({ length: p.rng.int(4) }, () => part(torch, p, owned));
    case 1:
      return part(torch, p, owned);
    case 2:
      return p.value('shape');
    case 3:
      return p.value('dim');
    case 4:
      return p.chance(0.7) ? normal(torch, owned, []) : p.hostile();
    default:
      return p.value(p.pick(['tensor', 'number', 'options', 'int'] as const));
  }
}

/** The constraints, made from hostile arguments when they are factories. */
function constraint(torch: Torch, p: Pools, note: (l: string) => void): unknown {
  const c = torch.distributions.constraints as unknown as Record<string, unknown>;
  const name = p.pick(Object.keys(c).filter((k) => k !== 'checkDim'));
  const value = c[name];
  if (typeof value !== 'function') return value;
  const made = (): unknown => (p.chance(0.3) ? p.hostile() : c[p.pick(['real', 'positive', 'simplex'])]);
  const args = p.chance(0.5)
    ? [Array.from({ length: p.rng.int(4) }, made), p.value('dim'), p.value('shape')]
    : p.args(['tensor', 'number', 'str', 'str'], (value as Fn).length);
  if (name === 'independent') args[0] = made();
  return invoke(torch, note, `constraints.${name}`, value as Fn, undefined, args);
}

/** Runs one hostile use of the transforms and constraints. */
export function fuzzTransforms(torch: Torch, p: Pools, note: (l: string) => void, owned: Owned): unknown {
  const d = torch.distributions;
  const restore = d.Distribution.defaultValidateArgs;
  try {
    if (p.chance(0.1)) {
      const v = p.value('bool');
      invoke(
        torch,
        note,
        'Distribution.setDefaultValidateArgs',
        d.Distribution.setDefaultValidateArgs as Fn,
        d.Distribution,
        [v],
      );
    }
    switch (p.rng.int(4)) {
      case 0:
      case 1: {
        const [name, C] = p.pick(
          functionsOf(d, true).filter(([n, c]) => /Transform$/.test(n) && c !== (d.TransformBase as unknown)),
        );
        const args = Array.from({ length: Math.max(0, C.length + p.rng.int(3) - 1) }, () =>
          transformArg(torch, p, owned),
        );
        const t = construct(torch, p, note, owned, `distributions.${name}`, C, args) as object;
        return callMethod(torch, p, note, `distributions.${name}`, t, SKIP);
      }
      case 2: {
        const c = constraint(torch, p, note) as { check?: Fn };
        if (p.chance(0.5)) {
          const x = p.value('tensor');
          note(`check(${describe(x, torch)})`);
          return typeof c?.check === 'function' ? c.check(x) : undefined;
        }
        const [which, fn] = p.pick<[string, Fn]>([
          ['bijectTo', d.bijectTo as Fn],
          ['transformTo', d.transformTo as Fn],
        ]);
        const t = invoke(torch, note, `distributions.${which}`, fn, undefined, [c]) as Transform;
        owned.push(t);
        return callMethod(torch, p, note, `${which}(...)`, t, SKIP);
      }
      default: {
        const base = p.chance(0.8) ? normal(torch, owned, p.pick([[], [3], [2, 3]])) : p.hostile();
        const transforms = p.chance(0.5) ? part(torch, p, owned) : transformArg(torch, p, owned);
        const options = p.chance(0.5) ? { validateArgs: p.value('bool') } : p.value('options');
        const t = construct(
          torch,
          p,
          note,
          owned,
          'distributions.TransformedDistribution',
          d.TransformedDistribution as unknown as Fn,
          [base, transforms, options],
        ) as object;
        return callMethod(torch, p, note, 'TransformedDistribution', t, SKIP);
      }
    }
  } finally {
    d.Distribution.setDefaultValidateArgs(restore);
  }
}
