// Module backward hooks and leaf tensor hooks against PyTorch 1.13 (test/golden/torch/module_hooks.json,
// from scripts/golden/module_hooks.py): Grad-CAM through a conv layer's hook, gradInput replaced
// and its effect on the parameters' .grad, the hooks' order, a module of several arguments, a
// leaf hook over two backward passes, the backward pre-hook; then errors, removal and memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { liveJsAutograd } from '../../src/torch/autograd-hooks.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
type State = Record<string, { shape: number[]; data: Flat }>;
interface Calls {
  grad_input: (Flat | null)[];
  grad_output: (Flat | null)[];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'module_hooks.json'), 'utf8')) as {
  gradcam: {
    params: State;
    input: Flat;
    input_shape: number[];
    target: number;
    activation: Flat;
    grad_output: Flat;
    grad_output_shape: number[];
    grad_input: Flat;
    n_in: number;
    n_out: number;
    cam: Flat;
    cam_shape: number[];
    grads: Record<string, Flat>;
  };
  replace: {
    params: State;
    input: Flat;
    input_shape: number[];
    order: string[];
    calls: Record<string, Calls>;
    grads: Record<string, Flat>;
    input_grad: Flat;
  };
  order_no_input_grad: [string, boolean[]][];
  two_inputs: {
    a: Flat;
    b: Flat;
    c: Flat;
    seen: { gi: (Flat | null)[]; go: Flat[] };
    a_grad: Flat;
    b_grad: null;
    scale_grad: Flat;
  };
  leaf: { w: Flat; seen: Flat[]; grad: Flat };
  pre: { params: State; input: Flat; input_shape: number[]; seen: Flat[]; grads: Record<string, Flat> };
};

function load<M extends nn.Module>(module: M, params: State): M {
  module.double();
  const state = torch.tidy(() =>
    Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, torch.tensor(v.data, { shape: v.shape, dtype: 'float64' })]),
    ),
  );
  module.loadStateDict(state);
  for (const t of Object.values(state)) t.dispose();
  return module;
}

const f64 = (data: Flat, shape: number[], requiresGrad = false): Tensor =>
  torch.tensor(data, { shape, dtype: 'float64', requiresGrad });

function checkGrads(module: nn.Module, expected: Record<string, Flat>): void {
  for (const [name, p] of module.namedParameters())
    torch.tidy(() => assertClose(p.grad!.toFloat64Array(), expected[name]!, 1e-10, 0, name));
}

test('Grad-CAM: a full backward hook captures the conv output gradient (PyTorch 1.13 values)', () => {
  const g = golden.gradcam;
  const before = torch.liveTensors();
  const cnn = load(
    new nn.Sequential(
      new nn.Conv2d(1, 2, 3, { padding: 1 }),
      new nn.ReLU(),
      new nn.Conv2d(2, 3, 3),
      new nn.ReLU(),
      new nn.AdaptiveAvgPool2d(1),
      new nn.Flatten(),
      new nn.Linear(3, 4),
    ),
    g.params,
  );
  const conv = cnn.layers[2]!;
  let activation: Tensor | null = null;
  let gradOutput: Tensor | null = null;
  let counts: number[] = [];
  conv.registerForwardHook((_m, _args, output) => void (activation = torch.keep((output as Tensor).clone())));
  conv.registerFullBackwardHook((_m, gradInput, gout) => {
    counts = [gradInput.length, gout.length];
    assertClose(gradInput[0]!.toFloat64Array(), g.grad_input, 1e-10, 0, 'gradInput');
    gradOutput = torch.keep(gout[0]!.clone());
  });
  const x = f64(g.input, g.input_shape);
  torch.tidy(() => cnn.forward(x).select(1, g.target).sum().backward());
  assert.deepEqual(counts, [g.n_in, g.n_out]);
  assert.deepEqual(gradOutput!.shape, g.grad_output_shape);
  assertClose(gradOutput!.toFloat64Array(), g.grad_output, 1e-10, 0, 'gradOutput');
  assertClose(activation!.toFloat64Array(), g.activation, 1e-10, 0, 'activation');
  const cam = torch.tidy(() => gradOutput!.mean([2, 3], true).mul(activation!).sum(1).relu());
  assert.deepEqual(cam.shape, g.cam_shape);
  assertClose(cam.toFloat64Array(), g.cam, 1e-10, 0, 'cam');
  checkGrads(cnn, g.grads);
  for (const t of [cam, activation!, gradOutput!, x]) t.dispose();
  cnn.dispose();
  assert.equal(liveJsAutograd(), 0, 'every hook node freed with its graph');
  assert.equal(torch.liveTensors(), before);
});

test('full backward hooks: replaced gradInput reaches the parameters before it; order of nested hooks', () => {
  const r = golden.replace;
  const before = torch.liveTensors();
  const mlp = load(new nn.Sequential(new nn.Linear(3, 4), new nn.Tanh(), new nn.Linear(4, 2)), r.params);
  const order: string[] = [];
  const calls: Record<string, Calls> = {};
  const recorder =
    (name: string, replace?: (gi: (Tensor | null)[]) => (Tensor | null)[]) =>
    (_m: nn.Module, gi: (Tensor | null)[], go: (Tensor | null)[]) => {
      order.push(name);
      const flat = (t: Tensor | null) => (t === null ? null : Array.from(t.toFloat64Array()));
      calls[name] = { grad_input: gi.map(flat), grad_output: go.map(flat) };
      return replace?.(gi);
    };
  const handles = [
    mlp.layers[2]!.registerFullBackwardHook(recorder('2', (gi) => [gi[0]!.mul(2)])),
    mlp.layers[0]!.registerFullBackwardHook(recorder('0')),
    mlp.registerFullBackwardHook(recorder('seq')),
  ];
  const x = f64(r.input, r.input_shape, true);
  torch.tidy(() =>
    mlp
      .forward(x)
      .mul(torch.arange(10, undefined, 1, 'float64').reshape(5, 2))
      .sum()
      .backward(),
  );
  assert.deepEqual(order, r.order);
  for (const name of r.order)
    for (const key of ['grad_input', 'grad_output'] as const)
      calls[name]![key].forEach((v, i) => {
        const want = r.calls[name]![key][i]!;
        if (want === null) assert.equal(v, null, `${name} ${key}[${i}]`);
        else assertClose(v!, want, 1e-10, 0, `${name} ${key}[${i}]`);
      });
  checkGrads(mlp, r.grads);
  torch.tidy(() => assertClose(x.grad!.toFloat64Array(), r.input_grad, 1e-10, 0, 'x.grad'));

  // An input that does not require grad: the outer hook runs as soon as its output gradient is known.
  for (const h of handles) h.remove();
  const order2: [string, boolean[]][] = [];
  for (const [name, m] of [
    ['seq', mlp],
    ['0', mlp.layers[0]!],
    ['2', mlp.layers[2]!],
  ] as const)
    handles.push(m.registerFullBackwardHook((_m, gi) => void order2.push([name, gi.map((g) => g === null)])));
  torch.tidy(() => mlp.forward(x.detach()).sum().backward());
  assert.deepEqual(order2, golden.order_no_input_grad);
  for (const h of handles) h.remove();
  assert.equal(Object.getOwnPropertyDescriptor(mlp, 'forward'), undefined, 'plain forward back');
  x.dispose();
  mlp.dispose();
  assert.equal(liveJsAutograd(), 0, 'every hook node freed with its graph');
  assert.equal(torch.liveTensors(), before);
});

class Two extends nn.Module {
  readonly scale = this.registerParameter('scale', torch.tensor([1.5, -0.5, 2.0], { dtype: 'float64' }));
  forward(a: Tensor, b: Tensor, k: number): Tensor {
    return a.mul(b).mul(this.scale).add(a.sin().mul(k));
  }
}

test('a module of several arguments: gradInput per argument, one replaced, one dropped', () => {
  const t = golden.two_inputs;
  const before = torch.liveTensors();
  const two = new Two();
  two.scale.requiresGrad_();
  const [a, b, c] = [f64(t.a, [2, 3], true), f64(t.b, [2, 3], true), f64(t.c, [2, 3])];
  let seen: { gi: (Flat | null)[]; go: (Flat | null)[] } | null = null;
  two.registerFullBackwardHook((_m, gi, go) => {
    const flat = (g: Tensor | null) => (g === null ? null : Array.from(g.toFloat64Array()));
    seen = { gi: gi.map(flat), go: go.map(flat) };
    return [gi[0]!.mul(0.5), null, null];
  });
  torch.tidy(() => two.forward(a, b.mul(1), 3).mul(c).sum().backward());
  assert.equal(seen!.gi.length, 3);
  assertClose(seen!.gi[0]!, t.seen.gi[0]!, 1e-10, 0, 'gi[0]');
  assertClose(seen!.gi[1]!, t.seen.gi[1]!, 1e-10, 0, 'gi[1]');
  assert.equal(seen!.gi[2], null);
  assertClose(seen!.go[0]!, t.seen.go[0]!, 1e-10, 0, 'go[0]');
  torch.tidy(() => {
    assertClose(a.grad!.toFloat64Array(), t.a_grad, 1e-10, 0, 'a.grad');
    assert.equal(b.grad, null, 'the dropped gradient never reaches b');
    assertClose(two.scale.grad!.toFloat64Array(), t.scale_grad, 1e-10, 0, 'scale.grad');
  });
  for (const x of [a, b, c]) x.dispose();
  two.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('registerHook on a leaf: each pass gradient, replacements accumulate; removal', () => {
  const l = golden.leaf;
  const before = torch.liveTensors();
  const w = f64(l.w, [3], true);
  const seen: Flat[] = [];
  const handle = w.registerHook((g) => {
    seen.push(Array.from(g.toFloat64Array()));
    return g.mul(3);
  });
  torch.tidy(() => w.mul(w).sum().backward());
  torch.tidy(() => w.exp().sum().backward());
  seen.forEach((s, i) => assertClose(s, l.seen[i]!, 1e-12, 0, `seen[${i}]`));
  torch.tidy(() => assertClose(w.grad!.toFloat64Array(), l.grad, 1e-10, 0, 'w.grad'));
  handle.remove();
  w.grad = null;
  torch.tidy(() => w.mul(w).sum().backward());
  assert.equal(seen.length, 2);
  torch.tidy(() => assertClose(w.grad!.toFloat64Array(), [2, -4, 6], 1e-12));
  w.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('registerFullBackwardPreHook replaces gradOutput (1.13: a tensor hook on the output)', () => {
  const p = golden.pre;
  const before = torch.liveTensors();
  const net = load(new nn.Sequential(new nn.Linear(3, 3), new nn.Sigmoid(), new nn.Linear(3, 1)), p.params);
  const order: string[] = [];
  const seen: Flat[] = [];
  net.layers[0]!.registerFullBackwardPreHook((_m, go) => {
    order.push('pre');
    seen.push(Array.from(go[0]!.toFloat64Array()));
    return [go[0]!.mul(2)];
  });
  net.layers[0]!.registerFullBackwardHook(() => void order.push('full'));
  net.layers[0]!.registerForwardHook(() => void order.push('forward'));
  const x = f64(p.input, p.input_shape);
  torch.tidy(() => net.forward(x).sum().backward());
  // No input requires grad: the full hook runs right after the pre-hook, with gradInput [null].
  assert.deepEqual(order, ['forward', 'pre', 'full']);
  assertClose(seen[0]!, p.seen[0]!, 1e-10);
  checkGrads(net, p.grads);
  x.dispose();
  net.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('errors, noGrad, retainGraph, autograd.grad through a hooked module', () => {
  const before = torch.liveTensors();
  const lin = new nn.Linear(2, 2);
  assert.throws(
    () => lin.registerFullBackwardHook(3 as unknown as nn.FullBackwardHook),
    /tailor: registerFullBackwardHook: hook must be a function/,
  );
  const bad = lin.registerFullBackwardHook(() => [null, null]);
  const x = torch.ones([1, 2]).requiresGrad_();
  assert.throws(
    () => torch.tidy(() => lin.forward(x).sum().backward()),
    /tailor: registerFullBackwardHook: the hook must return undefined or an array of 1 tensors or nulls/,
  );
  bad.remove();
  lin.zeroGrad();
  torch.tidy(() => {
    const d = torch.ones([2]);
    assert.throws(() => d.registerHook((g) => g), /tailor: registerHook: the tensor does not require grad/);
  });
  let calls = 0;
  const h = lin.registerFullBackwardHook(() => void calls++);
  torch.tidy(() => void torch.noGrad(() => lin.forward(x)));
  assert.equal(liveJsAutograd(), 0, 'no hook node without grad mode');
  torch.tidy(() => {
    const loss = lin.forward(x).sum();
    loss.backward(undefined, { retainGraph: true });
    loss.backward();
    // autograd.grad passes through the hooked module (one engine run, the hook inside it).
    const out = lin.forward(x).sum();
    const [gx] = torch.grad([out], [x]);
    assertClose(gx!.toFloat64Array(), lin.weight.sum(0).toFloat64Array(), 1e-6, 0, 'grad through hook');
  });
  assert.equal(calls, 3);
  h.remove();
  x.dispose();
  lin.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('hooks that only look leave every gradient as without them (several inputs sharing a graph)', () => {
  const before = torch.liveTensors();
  const two = new Two();
  two.scale.requiresGrad_();
  const a = torch.tensor([0.5, -1, 2, 0.25, 1.5, -0.75], {
    shape: [2, 3],
    dtype: 'float64',
    requiresGrad: true,
  });
  const run = (): Flat[] =>
    torch.tidy(() => {
      for (const t of [a, two.scale]) t.grad = null;
      const shared = a.mul(2); // both arguments come from one graph, so one engine run must carry both
      two.forward(shared, shared.exp(), 2).pow(2).sum().backward();
      return [a, two.scale].map((t) => Array.from(t.grad!.toFloat64Array()));
    });
  const plain = run();
  let calls = 0;
  const h = two.registerFullBackwardHook((_m, gi) => {
    calls++;
    assert.equal(gi.filter((g) => g !== null).length, 2);
  });
  const hooked = run();
  assert.equal(calls, 1);
  hooked.forEach((g, i) => assertClose(g, plain[i]!, 1e-12, 0, `grad ${i}`));
  h.remove();
  a.dispose();
  two.dispose();
  assert.equal(liveJsAutograd(), 0, 'every hook node freed with its graph');
  assert.equal(torch.liveTensors(), before);
});
