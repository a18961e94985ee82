// Global module hooks and state-dict hooks against PyTorch 1.13
// (test/golden/torch/module_hooks_options.json, from scripts/golden/module_hooks_options.py): the
// order of global and own hooks in forward and backward with their values, the state-dict hooks'
// view of the dict, load hooks renaming keys and tolerating incompatible ones. Then PyTorch 2.x's
// options that 1.13 lacks (prepend, alwaysCall, the state-dict pre-hook) as its documentation
// describes them, and the errors.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
type State = Record<string, { shape: number[]; data: Flat }>;
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'module_hooks_options.json'), 'utf8')) as {
  signatures: Record<string, string[]>;
  global: {
    params: State;
    input: Flat;
    input_shape: number[];
    order: [string, string][];
    output: Flat;
    grads: Record<string, Flat>;
    input_grad: Flat;
    order_after_remove: [string, string][];
    output_after_remove: Flat;
  };
  state_dict_hooks: { seen: [string, string, string[]][]; keys: string[]; extra: Flat };
  load_hooks: {
    checkpoint: State;
    seen: (string | string[])[][];
    missing: string[];
    unexpected: string[];
    loaded: State;
  };
};

const f64 = (data: Flat, shape: number[], requiresGrad = false): Tensor =>
  torch.tensor(data, { shape, dtype: 'float64', requiresGrad });

/** The tensors of a golden state, made in float64 (free them with `disposeAll`). */
const tensors = (state: State): Record<string, Tensor> =>
  Object.fromEntries(Object.entries(state).map(([k, v]) => [k, f64(v.data, v.shape)]));
const disposeAll = (state: Record<string, Tensor>): void => Object.values(state).forEach((t) => t.dispose());

function load<M extends nn.Module>(module: M, params: State): M {
  module.double();
  const state = tensors(params);
  module.loadStateDict(state);
  disposeAll(state);
  return module;
}

/** Global hooks taken off after each test, whether it passed or not (they would reach the next ones). */
const globalHandles: nn.RemovableHandle[] = [];
const global = (handle: nn.RemovableHandle): nn.RemovableHandle => (globalHandles.push(handle), handle);
afterEach(() => globalHandles.splice(0).forEach((h) => h.remove()));

const mlp3 = (): nn.Sequential => new nn.Sequential(new nn.Linear(3, 4), new nn.Tanh(), new nn.Linear(4, 2));

test('global hooks run for every module before its own, in forward and backward (PyTorch 1.13 values)', () => {
  const g = golden.global;
  // PyTorch 1.13 has none of 2.x's options (prepend, with_kwargs, always_call).
  assert.deepEqual(golden.signatures.register_forward_hook, ['self', 'hook']);
  const before = torch.liveTensors();
  const linearForward = nn.Linear.prototype.forward;
  const mlp = load(mlp3(), g.params);
  const nameOf = (m: nn.Module): string => [...mlp.namedModules()].find(([, n]) => n === m)![0] || 'root';
  const order: [string, string][] = [];
  const handles = [
    nn.registerModuleForwardPreHook((m, args) => {
      order.push(['global_pre', nameOf(m)]);
      return m instanceof nn.Linear ? [(args[0] as Tensor).mul(2)] : undefined;
    }),
    nn.registerModuleForwardHook((m, _args, output) => {
      order.push(['global_forward', nameOf(m)]);
      return m instanceof nn.Tanh ? (output as Tensor).add(1) : undefined;
    }),
    nn.registerModuleFullBackwardHook((m) => void order.push(['global_backward', nameOf(m)])),
  ].map(global);
  assert.notEqual(nn.Linear.prototype.forward, linearForward, 'the class forward is wrapped');
  const layer0 = mlp.layers[0]!;
  layer0.registerForwardPreHook(() => void order.push(['own_pre', '0']));
  layer0.registerForwardHook(() => void order.push(['own_forward', '0']));
  layer0.registerFullBackwardHook(() => void order.push(['own_backward', '0']));
  const x = f64(g.input, g.input_shape, true);
  torch.tidy(() => {
    const y = mlp.forward(x);
    assertClose(y.toFloat64Array(), g.output, 1e-12, 0, 'output');
    y.mul(torch.arange(10, undefined, 1, 'float64').reshape(5, 2))
      .sum()
      .backward();
  });
  assert.deepEqual(order, g.order);
  for (const [name, p] of mlp.namedParameters())
    torch.tidy(() => assertClose(p.grad!.toFloat64Array(), g.grads[name]!, 1e-10, 0, name));
  torch.tidy(() => assertClose(x.grad!.toFloat64Array(), g.input_grad, 1e-10, 0, 'x.grad'));

  // Removed, only the modules' own hooks run, and the classes have their plain forward back.
  for (const h of handles) h.remove();
  assert.equal(nn.Linear.prototype.forward, linearForward);
  order.length = 0;
  mlp.layers[2]!.registerForwardHook(() => void order.push(['own_forward', '2']));
  torch.tidy(() =>
    assertClose(mlp.forward(x.detach()).toFloat64Array(), g.output_after_remove, 1e-12, 0, 'after'),
  );
  assert.deepEqual(order, g.order_after_remove);
  x.dispose();
  mlp.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('global hooks: classes made later, super.forward runs them once, a pre-hook on the backward side', () => {
  const before = torch.liveTensors();
  class Doubled extends nn.Linear {
    override forward(x: Tensor): Tensor {
      return super.forward(x).mul(2);
    }
  }
  const seen: string[] = [];
  const h = global(nn.registerModuleForwardHook((m) => void seen.push(m.constructor.name)));
  const pre = global(
    nn.registerModuleFullBackwardPreHook((m, go) => {
      seen.push(`pre ${m.constructor.name}`);
      return [go[0]!.mul(3)];
    }),
  );
  const d = new Doubled(2, 1);
  torch.tidy(() => {
    const x = torch.ones([1, 2]).requiresGrad_();
    d.forward(x).sum().backward();
    // The gradient reaching the module is 1, tripled: x.grad is 3 * 2 * weight.
    assertClose(x.grad!.toFloat64Array(), d.weight.mul(6).toFloat64Array(), 1e-6, 0, 'x.grad');
  });
  assert.deepEqual(seen, ['Doubled', 'pre Doubled']);
  h.remove();
  pre.remove();
  h.remove();
  seen.length = 0;
  torch.tidy(() => void d.forward(torch.ones([1, 2])));
  assert.deepEqual(seen, []);
  d.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('prepend puts a hook before those of its kind (PyTorch 2.x), removal keeps the rest in order', () => {
  const before = torch.liveTensors();
  const lin = new nn.Linear(2, 2);
  const order: string[] = [];
  const mark = (name: string) => () => void order.push(name);
  lin.registerForwardPreHook(mark('pre a'));
  const preB = lin.registerForwardPreHook(mark('pre b'), { prepend: true });
  lin.registerForwardPreHook(mark('pre c'), { prepend: true });
  lin.registerForwardHook(mark('fwd a'));
  lin.registerForwardHook(mark('fwd b'), { prepend: true });
  lin.registerFullBackwardHook(mark('bwd a'));
  lin.registerFullBackwardHook(mark('bwd b'), { prepend: true });
  lin.registerFullBackwardPreHook(mark('bpre a'));
  lin.registerFullBackwardPreHook(mark('bpre b'), { prepend: true });
  const x = torch.ones([1, 2]).requiresGrad_();
  torch.tidy(() => lin.forward(x).sum().backward());
  assert.deepEqual(order, [
    'pre c',
    'pre b',
    'pre a',
    'fwd b',
    'fwd a',
    'bpre b',
    'bpre a',
    'bwd b',
    'bwd a',
  ]);
  preB.remove();
  order.length = 0;
  torch.tidy(() => void torch.noGrad(() => lin.forward(x)));
  assert.deepEqual(order, ['pre c', 'pre a', 'fwd b', 'fwd a']);
  x.dispose();
  lin.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('alwaysCall runs a forward hook when forward throws (PyTorch 2.x); option errors are named', () => {
  class Failing extends nn.Module {
    forward(): never {
      throw new Error('forward failed');
    }
  }
  const m = new Failing();
  const seen: string[] = [];
  m.registerForwardHook(() => void seen.push('plain'));
  m.registerForwardHook((_m, _a, output) => void seen.push(`own ${String(output)}`), { alwaysCall: true });
  const g = global(nn.registerModuleForwardHook(() => void seen.push('global'), { alwaysCall: true }));
  assert.throws(() => m.forward(), /forward failed/);
  assert.deepEqual(seen, ['global', 'own undefined']);
  g.remove();

  assert.throws(
    () => m.registerForwardHook(() => undefined, { withKwargs: true } as unknown as nn.ForwardHookOptions),
    /tailor: registerForwardHook: withKwargs has no counterpart in tailor: forward takes positional arguments only/,
  );
  assert.throws(
    () => m.registerForwardPreHook(() => undefined, { alwaysCall: true } as unknown as nn.ModuleHookOptions),
    /tailor: registerForwardPreHook: unknown option 'alwaysCall' \(the options are 'prepend'\)/,
  );
  assert.throws(
    () => m.registerFullBackwardHook(() => undefined, { prepend: 1 } as unknown as nn.ModuleHookOptions),
    /tailor: registerFullBackwardHook: options.prepend must be a boolean, got 1/,
  );
  assert.throws(
    () => nn.registerModuleForwardPreHook(3 as unknown as nn.ForwardPreHook),
    /tailor: registerModuleForwardPreHook: hook must be a function, got number/,
  );
});

test('state-dict hooks: pre-hooks before, post-hooks after each module part, changes in place (PyTorch 1.13)', () => {
  const s = golden.state_dict_hooks;
  const before = torch.liveTensors();
  const net = new nn.Sequential(new nn.Linear(2, 2), new nn.BatchNorm1d(2));
  const plainKeys = Object.keys(net.stateDict());
  const seen: [string, string, string[]][] = [];
  const calls: string[] = [];
  net.registerStateDictPreHook((_m, prefix) => void calls.push(`pre '${prefix}'`));
  net.layers[1]!.registerStateDictPreHook((_m, prefix) => void calls.push(`pre '${prefix}'`));
  const inner = net.layers[1]!.registerStateDictPostHook((_m, sd, prefix) => {
    calls.push(`post '${prefix}'`);
    seen.push(['1', prefix, Object.keys(sd)]);
    sd[`${prefix}extra`] = torch.tensor([7], { dtype: 'float64' });
  });
  net.registerStateDictPostHook((_m, sd, prefix) => {
    calls.push(`post '${prefix}'`);
    seen.push(['root', prefix, Object.keys(sd)]);
    sd['head.weight'] = sd['0.weight']!;
    delete sd['0.weight'];
  });
  const sd = net.stateDict();
  assert.deepEqual(seen, s.seen);
  assert.deepEqual(Object.keys(sd).sort(), s.keys);
  assert.deepEqual(calls, ["pre ''", "pre '1.'", "post '1.'", "post ''"]);
  assert.equal(sd['head.weight'], net.layers[0]!.getParameter('weight'), 'the module owns its tensors');
  assertClose(sd['1.extra']!.toFloat64Array(), s.extra, 0);
  // The result keeps the flat state dict's order; keys the hooks added come last.
  assert.deepEqual(Object.keys(sd), [...plainKeys.slice(1), '1.extra', 'head.weight']);
  sd['1.extra']!.dispose();
  inner.remove();
  const returning = net.layers[1]!.registerStateDictPostHook((() => ({})) as unknown as nn.StateDictPostHook);
  assert.throws(
    () => net.stateDict(),
    /tailor: registerStateDictPostHook: the hook must return undefined \(change the state dict in place\), got object/,
  );
  returning.remove();
  net.dispose();
  assert.equal(torch.liveTensors(), before);
});

class Gain extends nn.Module {
  readonly gain = this.registerParameter('gain', torch.tensor([1, 2], { dtype: 'float64' }));
  readonly count = this.registerBuffer('count', torch.tensor([0], { dtype: 'float64' }));
  forward(x: Tensor): Tensor {
    return x.mul(this.gain);
  }
}

test('load hooks rename an old checkpoint key and tolerate incompatible keys (PyTorch 1.13)', () => {
  const l = golden.load_hooks;
  const before = torch.liveTensors();
  const net = new nn.Sequential(new nn.Linear(2, 2), new Gain()).double();
  const seen: (string | string[])[][] = [];
  net.layers[0]!.registerLoadStateDictPreHook((_m, sd, prefix, _strict, missing, unexpected) => {
    seen.push(['pre0', prefix, Object.keys(sd).sort(), [...missing], [...unexpected]]);
    if (`${prefix}w` in sd) {
      sd[`${prefix}weight`] = sd[`${prefix}w`]!;
      delete sd[`${prefix}w`];
    }
  });
  net.layers[1]!.registerLoadStateDictPostHook((_m, keys) => {
    seen.push(['post1', [...keys.missing], [...keys.unexpected]]);
    keys.missing.splice(keys.missing.indexOf('1.count'), 1);
    keys.unexpected.splice(keys.unexpected.indexOf('1.stray'), 1);
  });
  net.registerLoadStateDictPostHook(
    (_m, keys) => void seen.push(['postroot', [...keys.missing], [...keys.unexpected]]),
  );
  const checkpoint = tensors(l.checkpoint);
  const result = net.loadStateDict(checkpoint);
  assert.ok('0.w' in checkpoint, "the caller's object is left as it was");
  assert.deepEqual(seen, l.seen);
  assert.deepEqual(result, { missing: l.missing, unexpected: l.unexpected });
  for (const [name, t] of Object.entries(net.stateDict()))
    torch.tidy(() => assertClose(t.toFloat64Array(), l.loaded[name]!.data, 1e-12, 0, name));

  // Without the post-hook's tolerance the strict load fails, after copying what matches.
  const strictNet = new nn.Sequential(new nn.Linear(2, 2), new Gain()).double();
  strictNet.registerLoadStateDictPostHook(() => undefined);
  assert.throws(
    () => strictNet.loadStateDict(checkpoint),
    /loadStateDict: missing keys: 0.weight, 1.count; unexpected keys: 0.w, 1.stray/,
  );
  torch.tidy(() =>
    assertClose(strictNet.layers[1]!.getParameter('gain').toFloat64Array(), l.loaded['1.gain']!.data, 0),
  );
  assert.deepEqual(strictNet.loadStateDict(checkpoint, false), {
    missing: ['0.weight', '1.count'],
    unexpected: ['0.w', '1.stray'],
  });
  disposeAll(checkpoint);
  net.dispose();
  strictNet.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('Sequential frees only the tensors its layers made, whatever forward hooks return', () => {
  const before = torch.liveTensors();
  const seq = mlp3();
  // a hook handing the layer's input back as its output: that tensor is the result, not freed
  const h = seq.layers[1]!.registerForwardHook((_m, args) => args[0] as Tensor);
  const out = torch.tidy(() => seq.forward(torch.ones([1, 3])));
  assert.ok(!out.isDisposed);
  assert.deepEqual(out.shape, [1, 2]);
  out.dispose();
  h.remove();
  // a hook replacing an output with something that is not a tensor (PyTorch lets it)
  const h1 = seq.layers[0]!.registerForwardHook(() => 5 as unknown as Tensor);
  const h2 = seq.layers[1]!.registerForwardPreHook(() => [torch.ones([1, 4])]);
  const out2 = torch.tidy(() => seq.forward(torch.ones([1, 3])));
  assert.deepEqual(out2.shape, [1, 2]);
  [h1, h2].forEach((k) => k.remove());
  out2.dispose();
  seq.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('a frozen prototype: the global hooks fail by name and leave no prototype wrapped', () => {
  const linearForward = Object.getOwnPropertyDescriptor(nn.Linear.prototype, 'forward')!.value as unknown;
  const linearWrapped = (): boolean =>
    Object.getOwnPropertyDescriptor(nn.Linear.prototype, 'forward')!.value !== linearForward;
  new nn.Linear(2, 2).dispose();

  // made while global hooks exist: its construction fails, and is tried again at the next one
  class FrozenLater extends nn.Module {
    forward(x: Tensor): Tensor {
      return x;
    }
  }
  Object.freeze(FrozenLater.prototype);
  const g = global(nn.registerModuleForwardHook(() => undefined));
  assert.ok(linearWrapped());
  for (let k = 0; k < 2; k++)
    assert.throws(
      () => new FrozenLater(),
      /tailor: new FrozenLater\(\): the forward of FrozenLater.prototype cannot be wrapped for the global module hooks .*leave that prototype unfrozen, or register the hook on the modules themselves/,
    );
  g.remove();
  assert.ok(!linearWrapped());

  // frozen after it was wrapped: removal still gives the other prototypes their forward back,
  // and the next global hook reaches them and it
  class Sub extends nn.Linear {
    override forward(x: Tensor): Tensor {
      return super.forward(x);
    }
  }
  const sub = new Sub(2, 2);
  const g2 = global(nn.registerModuleForwardHook(() => undefined));
  Object.freeze(Sub.prototype);
  g2.remove();
  assert.ok(!linearWrapped());
  let calls = 0;
  const g3 = global(nn.registerModuleForwardHook(() => void calls++));
  torch.tidy(() => [sub.forward(torch.ones([1, 2])), new nn.Linear(2, 2).forward(torch.ones([1, 2]))]);
  assert.equal(calls, 2, 'once for Sub (not again in super.forward), once for the Linear');
  g3.remove();
  sub.dispose();

  // made before the first global hook: the registration fails and wraps nothing (last, since no
  // global hook can be registered in this process from here on: keep this test the file's last)
  new FrozenLater().dispose();
  assert.throws(
    () => nn.registerModuleForwardPreHook(() => undefined),
    /tailor: registerModuleForwardPreHook: the forward of FrozenLater.prototype cannot be wrapped/,
  );
  assert.ok(!linearWrapped());
});
