// The API fuzz target of Module hooks (the nn area's method calls leave them out): global module
// hooks, a module's own forward, backward and state-dict hooks, registered with hostile hooks
// (that throw, return junk or replace the arguments) and hostile options (prepend, alwaysCall,
// unknown keys, junk), then a forward (and backward), a stateDict or a loadStateDict through
// them. Every handle is removed after the input, so no hook outlives it; any error that names
// nothing is a gap in the hooks' checks.
import type { Pools, Torch } from './api-pools.js';
import { construct, invoke, type Fn, type Owned } from './api-calls.js';

type Module = InstanceType<Torch['nn']['Module']>;

const GLOBAL = [
  'registerModuleForwardPreHook',
  'registerModuleForwardHook',
  'registerModuleFullBackwardHook',
  'registerModuleFullBackwardPreHook',
];
const OWN = [
  'registerForwardPreHook',
  'registerForwardHook',
  'registerFullBackwardHook',
  'registerFullBackwardPreHook',
  'registerStateDictPreHook',
  'registerStateDictPostHook',
  'registerLoadStateDictPreHook',
  'registerLoadStateDictPostHook',
];

/** A hook: harmless mostly; at times one that throws, returns junk or replaces what it is given. */
function hook(p: Pools): unknown {
  if (p.chance(0.1)) return p.hostile();
  return p.pick<Fn>([
    () => undefined,
    () => undefined,
    () => {
      throw new Error('callback: thrown by the caller');
    },
    (...a: unknown[]) => a[1],
    (...a: unknown[]) => a[2],
    () => p.hostile(),
    () => p.tensor(),
    () => [p.value('tensor')],
  ]);
}

/** Options of a hook registration: the real ones mostly, with any value; junk at times. */
function options(p: Pools): unknown {
  if (p.chance(0.2)) return p.value('options', 0.5);
  const o: Record<string, unknown> = {};
  if (p.chance(0.5)) o.prepend = p.chance(0.8) ? p.chance(0.5) : p.hostile();
  if (p.chance(0.5)) o.alwaysCall = p.chance(0.8) ? p.chance(0.5) : p.hostile();
  return o;
}

/** Runs one hostile use of Module hooks. */
export function fuzzHooks(torch: Torch, p: Pools, note: (l: string) => void, owned: Owned): unknown {
  const { nn } = torch;
  const m = construct(torch, p, note, owned, 'nn.Module', nn.Sequential as unknown as Fn, [
    new nn.Linear(3, 4),
    new nn.Tanh(),
    new nn.Linear(4, 2),
  ]) as Module;
  const modules: Module[] = [m, ...m.children()];
  for (let k = p.rng.int(4) + 1; k > 0; k--) {
    const global = p.chance(0.4);
    const name = p.pick(global ? GLOBAL : OWN);
    const self = global ? nn : p.pick(modules);
    const fn = (self as unknown as Record<string, Fn>)[name]!;
    const args = p.chance(0.8) ? [hook(p), options(p)] : p.args(['fn', 'options', 'any'], 2);
    const handle = invoke(torch, note, global ? `nn.${name}` : `nn.Module.${name}`, fn, self, args) as {
      remove(): void;
    };
    owned.push({ dispose: () => handle.remove() });
  }
  switch (p.rng.int(4)) {
    case 0: {
      // the module's own tensors: not to be disposed
      note('stateDict()');
      return void m.stateDict();
    }
    case 1: {
      const state = p.chance(0.7) ? m.stateDict() : p.value('options');
      return invoke(torch, note, 'nn.Module.loadStateDict', m.loadStateDict as Fn, m, [
        state,
        p.value('bool'),
      ]);
    }
    default: {
      const x = p.chance(0.9) ? torch.randn([2, 3]).requiresGrad_(p.chance(0.7)) : p.value('tensor');
      const out = invoke(torch, note, 'nn.Sequential.forward', (m as unknown as { forward: Fn }).forward, m, [
        x,
      ]);
      if (!(out instanceof torch.Tensor) || !out.requiresGrad) return undefined;
      note('backward()');
      out.sum().backward();
      return undefined;
    }
  }
}
