// nn.Module's bookkeeping against PyTorch 1.13 (test/golden/torch/module_api.json, from
// scripts/golden/module_api.py): named_modules / children / parameters / buffers with a shared
// submodule, state-dict keys with a non-persistent buffer, dtype conversion (integer buffers
// untouched), repr, forward hooks on fixed weights; then freezing, dotted look-ups and their
// errors, hook removal and memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Golden {
  tree: {
    named_modules: string[];
    named_children: string[];
    head_children: string[];
    named_parameters: string[];
    named_buffers: string[];
    state_dict_keys: string[];
    num_modules: number;
    num_children: number;
    repr: string;
  };
  conversions: Record<string, Record<string, { dtype: string; requires_grad: boolean }>>;
  reprs: Record<string, string>;
  hooks: {
    params: Record<string, number[]>;
    input: number[];
    input_shape: number[];
    plain: number[];
    hooked: number[];
    order: string[];
    captured: Record<string, number[]>;
    removed: number[];
  };
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'module_api.json'), 'utf8')) as Golden;

/** scripts/golden/module_api.py's Net: one Linear under three names, two kinds of buffer. */
class Net extends nn.Module {
  readonly conv = this.registerModule('conv', new nn.Conv2d(3, 4, 3, { padding: 1 }));
  readonly bn = this.registerModule('bn', new nn.BatchNorm2d(4));
  readonly shared = new nn.Linear(4, 4);
  readonly head = this.registerModule('head', new nn.Sequential(this.shared, new nn.ReLU(), this.shared));
  readonly aux = this.registerModule('aux', this.shared);
  readonly scale = this.registerBuffer('scale', torch.ones([4]), { persistent: false });
  readonly steps = this.registerBuffer('steps', torch.zeros([], 'int64'));
  forward(x: Tensor): Tensor {
    return this.head.forward(this.bn.forward(this.conv.forward(x)).mean([2, 3]).mul(this.scale));
  }
}

const names = (it: Iterable<[string, unknown]>) => [...it].map(([n]) => n);

test('the module tree, shared submodules once, and state-dict keys as PyTorch 1.13', () => {
  const before = torch.liveTensors();
  const net = new Net();
  const g = golden.tree;
  assert.deepEqual(names(net.namedModules()), g.named_modules);
  assert.deepEqual(names(net.namedChildren()), g.named_children);
  assert.deepEqual(names(net.head.namedChildren()), g.head_children);
  assert.deepEqual(names(net.namedParameters()), g.named_parameters);
  assert.deepEqual(names(net.namedBuffers()), g.named_buffers);
  assert.equal(net.modules().length, g.num_modules);
  assert.equal(net.children().length, g.num_children);
  assert.equal(net.modules()[0], net);
  assert.equal(net.children()[3], net.shared);
  // the same keys; tailor lists every parameter before the buffers, PyTorch module by module
  const keys = Object.keys(net.stateDict());
  assert.deepEqual([...keys].sort(), [...g.state_dict_keys].sort());
  assert.ok(!keys.includes('scale'), 'a non-persistent buffer is not saved');
  assert.equal(net.stateDict()['head.2.weight'], net.shared.weight);
  assert.equal(net.numParameters(), 4 * 3 * 9 + 4 + 4 + 4 + 16 + 4);
  assert.equal(net.toString(), g.repr);
  assert.equal(String(net), g.repr);
  // loading the own state dict round-trips; the non-persistent buffer is unexpected in a checkpoint
  assert.deepEqual(net.loadStateDict(net.stateDict()), { missing: [], unexpected: [] });
  const withScale = { ...net.stateDict(), scale: net.scale };
  assert.throws(() => net.loadStateDict(withScale), /unexpected keys: scale/);
  net.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('double/half/bfloat16/float convert floating parameters and buffers only, in place, without leaks', () => {
  const net = new Net();
  const weight = net.conv.weight;
  const original = weight.toFloat64Array();
  torch.tidy(() =>
    net
      .forward(torch.randn([2, 3, 5, 5]))
      .sum()
      .backward(),
  );
  const live = torch.liveTensors();
  for (const method of ['double', 'half', 'bfloat16', 'float'] as const) {
    assert.equal(net[method](), net);
    const expected = golden.conversions[method]!;
    const actual: Record<string, { dtype: string; requires_grad: boolean }> = {};
    for (const [n, t] of [...net.namedParameters(), ...net.namedBuffers()])
      actual[n] = { dtype: t.dtype, requires_grad: t.requiresGrad };
    assert.deepEqual(actual, expected, method);
    assert.equal(net.conv.weight, weight, 'the Tensor objects stay the same');
    const grad = weight.grad!;
    assert.equal(grad.dtype, weight.dtype, `${method}: the gradient follows`);
    grad.dispose();
    assert.equal(torch.liveTensors(), live, `${method} leaks no tensor`);
  }
  // float32 -> float64 -> float16 -> bfloat16 -> float32: two roundings, bfloat16 keeping 8 bits
  assertClose(weight.toFloat64Array(), original, 0, 2 ** -7);
  net.to('float64');
  assert.equal(net.bn.runningVar!.dtype, 'float64');
  assert.equal(net.bn.numBatchesTracked!.dtype, 'int64');
  assert.equal(net.toDtype('float32'), net);
  assert.equal(net.scale.dtype, 'float32');
  // a converted model still trains: forward, backward in float64
  net.double();
  const loss = torch.tidy(() => {
    const l = net.forward(torch.randn([1, 3, 4, 4], 'float64')).sum();
    l.backward();
    return l.item();
  });
  assert.ok(Number.isFinite(loss));
  assert.throws(
    () => net.toDtype('int64'),
    /^ArgumentError: tailor: Module.toDtype: dtype must be a floating-point dtype/,
  );
  assert.throws(() => net.to('int32'), /floating-point dtype/);
  assert.equal(torch.liveTensors(), live);
  net.dispose();
});

test('extraRepr of the layers as PyTorch 1.13 prints them', () => {
  const layers: Record<string, nn.Module> = {
    linear_no_bias: new nn.Linear(3, 5, { bias: false }),
    batchnorm1d: new nn.BatchNorm1d(6, { eps: 1e-3, momentum: 0.01, affine: false }),
    batchnorm2d_no_stats: new nn.BatchNorm2d(2, { trackRunningStats: false }),
    layernorm: new nn.LayerNorm([4, 5], { eps: 1e-6, elementwiseAffine: false }),
    dropout: new nn.Dropout(0.2),
    conv2d: new nn.Conv2d(3, 8, [1, 7], { stride: 2, padding: [0, 3], bias: false }),
    conv1d_same: new nn.Conv1d(2, 4, 3, { padding: 'same', dilation: 2 }),
    conv1d_valid: new nn.Conv1d(2, 4, 3, { padding: 'valid' }),
    conv2d_reflect: new nn.Conv2d(2, 2, 3, { padding: 1, paddingMode: 'reflect', groups: 2 }),
    conv_transpose2d: new nn.ConvTranspose2d(4, 6, 3, { stride: 2, outputPadding: 1, groups: 2 }),
    conv3d: new nn.Conv3d(1, 2, 3),
    lstm: new nn.LSTM(10, 20, { numLayers: 2, batchFirst: true, bidirectional: true }),
    lstm_plain: new nn.LSTM(4, 5),
    gru: new nn.GRU(3, 6, { bias: false, dropout: 0.25 }),
    gru_dropout_one: new nn.GRU(3, 6, { numLayers: 3, dropout: 1 }),
    rnn_relu: new nn.RNN(2, 3, { nonlinearity: 'relu', bidirectional: true }),
  };
  assert.deepEqual(Object.keys(layers).sort(), Object.keys(golden.reprs).sort());
  for (const [name, layer] of Object.entries(layers)) {
    assert.equal(layer.toString(), golden.reprs[name], name);
    layer.dispose();
  }
});

function hookedSequential(): nn.Sequential {
  const seq = new nn.Sequential(new nn.Linear(4, 8), new nn.ReLU(), new nn.Linear(8, 3));
  const state = torch.tidy(() => {
    const own = seq.stateDict();
    return Object.fromEntries(
      Object.entries(golden.hooks.params).map(([k, v]) => [k, torch.tensor(v, { shape: own[k]!.shape })]),
    );
  });
  seq.loadStateDict(state);
  for (const t of Object.values(state)) t.dispose();
  return seq;
}

test('forward hooks: replaced input, captured activations, replaced output, removal (PyTorch 1.13 values)', () => {
  const h = golden.hooks;
  const seq = hookedSequential();
  const before = torch.liveTensors();
  const x = torch.tensor(h.input, { shape: h.input_shape });
  const run = () => torch.tidy(() => seq.forward(x).toFloat64Array());
  assertClose(run(), h.plain, 1e-6);

  const order: string[] = [];
  const captured = new Map<string, Tensor>();
  // Sequential frees each intermediate output once the next exists: a hook that keeps one keeps a copy
  const capture = (name: string) => (_m: nn.Module, _args: unknown[], output: unknown) => {
    order.push(`post:${name}`);
    captured.get(name)?.dispose();
    captured.set(name, torch.keep((output as Tensor).clone()));
  };
  const [first, relu, last] = seq.layers as [nn.Linear, nn.ReLU, nn.Linear];
  const handles = [
    first.registerForwardPreHook((_m, args) => {
      order.push('pre:0');
      return (args[0] as Tensor).add(1); // one value: the only argument, as PyTorch wraps it
    }),
    first.registerForwardPreHook(() => void order.push('pre:0b')),
    first.registerForwardHook(capture('0')),
    relu.registerForwardHook(capture('1')),
    last.registerForwardHook((_m, _args, output) => {
      order.push('post:2double');
      return (output as Tensor).mul(2);
    }),
    last.registerForwardHook(capture('2')),
    seq.registerForwardHook(capture('seq')),
  ];
  assert.ok(handles.every((hd, i) => i === 0 || hd.id > handles[i - 1]!.id));
  assertClose(run(), h.hooked, 1e-6);
  assert.deepEqual(order, h.order);
  for (const [name, values] of Object.entries(h.captured))
    assertClose(captured.get(name)!.toFloat64Array(), values, 1e-6, 0, `captured ${name}`);

  for (const handle of handles) handle.remove();
  handles[0]!.remove(); // a second remove does nothing
  assert.ok(!Object.hasOwn(first, 'forward') && !Object.hasOwn(seq, 'forward'), 'the plain forward is back');
  order.length = 0;
  assertClose(run(), h.removed, 1e-6);
  assert.deepEqual(order, []);
  for (const t of captured.values()) t.dispose();
  x.dispose();
  assert.equal(torch.liveTensors(), before);
  seq.dispose();
});

test('hooks run in registration order, removing one keeps the others, a hook may remove itself', () => {
  const relu = new nn.ReLU();
  const calls: string[] = [];
  const a = relu.registerForwardHook(() => void calls.push('a'));
  const once = relu.registerForwardHook(() => {
    calls.push('once');
    once.remove();
  });
  relu.registerForwardPreHook(() => void calls.push('pre'));
  const c = relu.registerForwardHook(() => void calls.push('c'));
  torch.tidy(() => relu.forward(torch.ones([2])));
  a.remove();
  torch.tidy(() => relu.forward(torch.ones([2])));
  assert.deepEqual(calls, ['pre', 'a', 'once', 'c', 'pre', 'c']);
  c.remove();
  assert.ok(Object.hasOwn(relu, 'forward'), 'the pre-hook is still on');
});

test('a forward defined as an instance field is restored after its hooks are removed', () => {
  class Doubler extends nn.Module {
    forward = (x: Tensor): Tensor => x.mul(2);
  }
  const m = new Doubler();
  const plain = m.forward;
  const handle = m.registerForwardHook((_m, _args, out) => (out as Tensor).add(1));
  assert.deepEqual(
    torch.tidy(() => m.forward(torch.ones([1])).toNumbers()),
    [3],
  );
  handle.remove();
  assert.equal(m.forward, plain);
  class Empty extends nn.Module {}
  assert.throws(
    () => new Empty().registerForwardHook(() => undefined),
    /tailor: registerForwardHook: Empty has no forward method/,
  );
  assert.throws(
    () => m.registerForwardPreHook(42 as unknown as () => undefined),
    /tailor: registerForwardPreHook: hook must be a function/,
  );
});

test('requiresGrad_ freezes and unfreezes every parameter', () => {
  const net = new Net();
  assert.equal(net.requiresGrad_(false), net);
  assert.ok(net.parameters().every((p) => !p.requiresGrad));
  net.head.requiresGrad_();
  assert.ok(net.shared.weight.requiresGrad && !net.conv.weight.requiresGrad);
  torch.tidy(() =>
    net
      .forward(torch.randn([1, 3, 4, 4]))
      .sum()
      .backward(),
  );
  assert.equal(net.conv.weight.grad, null, 'a frozen parameter gets no gradient');
  const g = net.shared.weight.grad;
  assert.ok(g !== null);
  g.dispose();
  net.requiresGrad_(true);
  assert.ok(net.parameters().every((p) => p.requiresGrad));
  assert.ok(
    net.buffers().every((b) => !b.requiresGrad),
    'buffers stay out of autograd',
  );
  net.dispose();
});

test('getSubmodule, getParameter and getBuffer follow dotted paths and name what is missing', () => {
  const net = new Net();
  assert.equal(net.getSubmodule(''), net);
  assert.equal(net.getSubmodule('head.2'), net.shared);
  assert.equal(net.getParameter('head.0.bias'), net.shared.bias);
  assert.equal(net.getParameter('conv.weight'), net.conv.weight);
  assert.equal(net.getBuffer('bn.num_batches_tracked'), net.bn.numBatchesTracked);
  assert.equal(net.getBuffer('scale'), net.scale);
  assert.throws(
    () => net.getSubmodule('head.5'),
    /^ArgumentError: tailor: getSubmodule\('head.5'\): Sequential at 'head' has no submodule '5' \(it has '0', '1', '2'\)$/,
  );
  assert.throws(() => net.getSubmodule('conv.x'), /Conv2d at 'conv' has no submodule 'x'$/);
  assert.throws(
    () => net.getParameter('bn.running_mean'),
    /^ArgumentError: tailor: getParameter\('bn.running_mean'\): BatchNorm2d at 'bn' has no parameter 'running_mean' \(its parameters: 'weight', 'bias'\)$/,
  );
  assert.throws(() => net.getBuffer('bn.weight'), /BatchNorm2d at 'bn' has no buffer 'weight'/);
  assert.throws(() => net.getBuffer('nope.x'), /getBuffer\('nope.x'\): Net has no submodule 'nope'/);
  assert.throws(() => net.getParameter(''), /tailor: getParameter: target must be a dotted parameter name/);
  class NullBias extends nn.Module {
    readonly bias = this.registerParameter('bias', null);
  }
  assert.throws(
    () => new NullBias().getParameter('bias'),
    /NullBias has no parameter 'bias' \(it is registered as null\)$/,
  );
  const noBias = new nn.Linear(2, 2, { bias: false });
  assert.throws(
    () => noBias.getParameter('bias'),
    /Linear has no parameter 'bias' \(its parameters: 'weight'\)$/,
  );
  noBias.dispose();
  net.dispose();
});
