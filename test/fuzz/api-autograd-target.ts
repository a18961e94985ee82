// The API fuzz target of JavaScript inside the autograd engine: custom autograd.Functions whose
// forward and backward return hostile values (wrong counts, shapes, dtypes, types, thrown errors),
// contexts asked hostile things, hooks on leaves, non-leaves and modules that return junk or run
// a nested backward, then backward or autograd.grad (with or without createGraph, twice with
// retainGraph). The engine calls the JavaScript from its own threads through a queue, so what this
// looks for is a crash, an abort or a hang there, and any error that names nothing.
import type { Tensor, autograd } from '../../src/torch/index.js';
import { describe, type Pools, type Torch } from './api-pools.js';
import type { Owned } from './api-calls.js';

/** What a forward or backward of the fuzzed Function returns: sensible mostly, hostile at times. */
function answer(p: Pools, sensible: () => unknown): unknown {
  if (p.chance(0.7)) return sensible();
  if (p.chance(0.2)) throw new Error('callback: thrown by the caller');
  return p.pick<() => unknown>([
    () => p.hostile(),
    () => p.tensor(),
    () => [p.value('tensor'), p.value('tensor')],
    () => [],
    () => [null, null, null],
  ])();
}

/** Runs one hostile use of custom Functions and hooks. */
export function fuzzAutograd(torch: Torch, p: Pools, note: (l: string) => void, owned: Owned): unknown {
  const { autograd } = torch;
  const x = p.chance(0.85)
    ? torch.randn(p.pick([[3], [2, 3], []]), p.pick(['float32', 'float64'] as const))
    : p.tensor();
  if (p.chance(0.85) && x.dtype.startsWith('float')) x.requiresGrad_();
  const k = p.value('number');
  class Fuzzed extends autograd.Function {
    static forward(ctx: autograd.FunctionCtx, a: Tensor, scale: unknown): unknown {
      if (p.chance(0.3)) ctx.saveForBackward(...([p.value('tensor'), a] as Tensor[]));
      if (p.chance(0.1)) ctx.markDirty(p.value('tensor') as Tensor);
      if (p.chance(0.1)) ctx.markNonDifferentiable(p.value('tensor') as Tensor);
      if (p.chance(0.1)) ctx.setMaterializeGrads(p.value('bool') as boolean);
      ctx.scale = scale;
      return answer(p, () => (p.chance(0.5) ? a.mul(2) : [a.mul(2), a.sin()]));
    }
    static backward(ctx: autograd.FunctionCtx, ...grads: (Tensor | null)[]): unknown {
      if (p.chance(0.2)) void ctx.savedTensors;
      return answer(p, () => [grads[0] ? grads[0].mul(2) : null, null]);
    }
  }
  note(`Fuzzed.apply(${x.dtype}[${x.shape}], ${describe(k, torch)})`);
  const apply = (input: unknown) =>
    (Fuzzed.apply as (this: unknown, ...a: unknown[]) => unknown).call(Fuzzed, input, k);
  const firstOf = (out: unknown) => (out instanceof torch.Tensor ? out : Array.isArray(out) ? out[0] : out);
  // At times the Function's input is an intermediate of an inner scope, freed before backward runs
  // (the graph keeps it; the Function must not read the freed handle).
  const inner = p.chance(0.3) && x.dtype.startsWith('float');
  if (inner) note('applied to an intermediate freed before backward');
  const first = inner
    ? torch.tidy(() => {
        const f = firstOf(apply(x.mul(1)));
        return f instanceof torch.Tensor ? f.mul(1) : undefined;
      })
    : firstOf(apply(x));
  if (!(first instanceof torch.Tensor)) return undefined;
  const y = first.mul(1);
  if (y.requiresGrad && p.chance(0.5)) {
    note('registerHook');
    y.registerHook((g) => {
      if (p.chance(0.15))
        torch.enableGrad(() => torch.tidy(() => torch.randn([2]).requiresGrad_().sum().backward()));
      return answer(p, () => g.mul(0.5)) as Tensor | undefined;
    });
  }
  if (x.requiresGrad && p.chance(0.3)) {
    note('registerHook on the leaf');
    const h = x.registerHook(() => answer(p, () => undefined) as Tensor | undefined);
    owned.push({ dispose: () => h.remove() });
  }
  if (!y.requiresGrad) return undefined;
  let loss = y.sum();
  if (p.chance(0.3)) {
    // a hooked module whose input also reaches the loss directly (a residual connection)
    const lin = new torch.nn.Linear(1, 1);
    owned.push(lin);
    lin.registerFullBackwardHook(() => answer(p, () => undefined) as undefined);
    note('a hooked Linear beside the loss');
    loss = loss.add(lin.forward(y.reshape(-1, 1).to('float32')).sum().to(loss.dtype));
  }
  const create = p.chance(0.3);
  if (p.chance(0.5)) {
    note(`autograd.grad(createGraph ${create})`);
    return torch.grad([loss], [x], { createGraph: create, allowUnused: true });
  }
  note(`backward(createGraph ${create})`);
  loss.backward(undefined, { retainGraph: true, createGraph: create });
  if (p.chance(0.3)) loss.backward();
  return undefined;
}
