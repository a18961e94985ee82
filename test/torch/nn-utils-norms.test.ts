// torch.nn.utils.weightNorm / spectralNorm (and their removal), parametersToVector and
// vectorToParameters against PyTorch 1.13 (test/golden/torch/nn_utils.json,
// scripts/golden/nn_utils.py): the new parameters and buffers from the same seed, state dict
// names, forward outputs in training and evaluation mode, the gradients, the power iteration's u
// and v after several forwards, and the weight the removal leaves; plus the named errors and the
// tensors' lifetimes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { assertClose, goldenDir } from '../helpers.js';

const { utils } = nn;

interface Data {
  shape: number[];
  data: number[];
}
interface NormCase {
  name: string;
  seed: number;
  initial: Record<string, Data>;
  after_apply: Record<string, Data>;
  state_dict_names: string[];
  parameter_names: string[];
  inputs: Data[];
  outputs: Data[];
  upstream: number[];
  grads: Record<string, number[]>;
  state_after: Record<string, Data>;
  eval_input: Data;
  eval_output: Data;
  removed_names?: string[];
  removed_weight?: Data;
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_utils.json'), 'utf8')) as {
  norms: NormCase[];
  vector: { params: Record<string, Data>; vector: number[] };
};
const tensorOf = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });

function same(t: Tensor, d: Data, what: string, atol = 1e-5): void {
  assert.deepEqual(t.shape, d.shape, `${what}: shape`);
  assertClose(t.toFloat32Array(), d.data, atol, 0, what);
}

type Layer = nn.Module & { forward(x: Tensor): Tensor; weight: Tensor };
const cases: Record<string, { make: () => Layer; apply: (m: Layer) => Layer; remove?: (m: Layer) => Layer }> =
  {
    weight_norm_linear: {
      make: () => new nn.Linear(4, 3),
      apply: (m) => utils.weightNorm(m),
      remove: (m) => utils.removeWeightNorm(m),
    },
    weight_norm_conv2d_dim1: {
      make: () => new nn.Conv2d(2, 3, 2),
      apply: (m) => utils.weightNorm(m, 'weight', 1),
    },
    weight_norm_linear_whole: {
      make: () => new nn.Linear(3, 2),
      apply: (m) => utils.weightNorm(m, 'weight', null),
    },
    spectral_norm_linear_3_forwards_2_iterations: {
      make: () => new nn.Linear(5, 4),
      apply: (m) => utils.spectralNorm(m, { nPowerIterations: 2 }),
      remove: (m) => utils.removeSpectralNorm(m),
    },
    spectral_norm_conv_transpose2d_default_dim: {
      make: () => new nn.ConvTranspose2d(2, 3, 2),
      apply: (m) => utils.spectralNorm(m, { eps: 1e-6 }),
    },
    spectral_norm_conv2d_dim1: {
      make: () => new nn.Conv2d(3, 2, 2),
      apply: (m) => utils.spectralNorm(m, { dim: 1 }),
    },
  };

for (const c of golden.norms) {
  test(`${c.name} matches PyTorch 1.13: parameters, buffers, outputs, gradients`, () => {
    const spec = cases[c.name]!;
    const before = torch.liveTensors();
    torch.manualSeed(c.seed);
    const layer = spec.make();
    for (const [n, t] of Object.entries(layer.stateDict())) same(t, c.initial[n]!, `initial ${n}`, 1e-6);
    spec.apply(layer);
    assert.deepEqual(Object.keys(layer.stateDict()), c.state_dict_names, 'state dict names and order');
    assert.deepEqual(
      [...layer.namedParameters()].map(([n]) => n),
      c.parameter_names,
    );
    for (const [n, t] of Object.entries(layer.stateDict()))
      same(t, c.after_apply[n]!, `after apply: ${n}`, 1e-6);
    torch.tidy(() => {
      const outputs = c.inputs.map((x) => layer.forward(tensorOf(x)));
      outputs.forEach((y, i) => same(y, c.outputs[i]!, `training forward ${i}`));
      const y = outputs[outputs.length - 1]!;
      y.mul(torch.tensor(Float32Array.from(c.upstream), { shape: y.shape }))
        .sum()
        .backward();
    });
    torch.tidy(() => {
      for (const [n, p] of layer.namedParameters())
        assertClose(p.grad!.toFloat32Array(), c.grads[n]!, 1e-5, 0, `grad ${n}`);
    });
    for (const [n, t] of Object.entries(layer.stateDict()))
      same(t, c.state_after[n]!, `after the forwards: ${n}`);
    layer.eval();
    torch.tidy(() =>
      torch.noGrad(() => same(layer.forward(tensorOf(c.eval_input)), c.eval_output, 'eval forward')),
    );
    // evaluation mode runs no power iteration: the buffers stay as they were
    for (const [n, t] of Object.entries(layer.stateDict())) same(t, c.state_after[n]!, `after eval: ${n}`);
    if (spec.remove) {
      spec.remove(layer);
      assert.deepEqual(Object.keys(layer.stateDict()), c.removed_names, 'names after the removal');
      same(layer.weight, c.removed_weight!, 'weight after the removal');
      assert.ok(layer.weight.requiresGrad, 'a trainable parameter again');
      // the plain forward is back: the weight no longer changes under it
      torch.tidy(() => {
        layer.forward(tensorOf(c.eval_input));
        same(layer.weight, c.removed_weight!, 'weight after a forward');
      });
    }
    layer.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('the recomputed weight follows the parameters; a weight-normed layer trains', () => {
  const before = torch.liveTensors();
  torch.manualSeed(3);
  const layer = utils.weightNorm(new nn.Linear(3, 2));
  const [g] = [...layer.namedParameters()].filter(([n]) => n === 'weight_g').map(([, p]) => p);
  torch.noGrad(() => g!.mul_(2));
  torch.tidy(() => {
    const v = layer.stateDict().weight_v!;
    const expected = v.mul(g!.div(v.norm(2, [1], true)));
    layer.forward(torch.ones([1, 3]));
    assertClose(layer.weight.toFloat32Array(), expected.toFloat32Array(), 1e-6, 0, 'weight = g v / |v|');
  });
  const opt = new torch.optim.SGD(layer.parameters(), { lr: 0.1 });
  const loss = () =>
    torch.tidy(() =>
      layer
        .forward(torch.ones([4, 3]))
        .square()
        .sum()
        .item(),
    );
  const first = loss();
  for (let i = 0; i < 5; i++) {
    opt.zeroGrad();
    torch.tidy(() =>
      layer
        .forward(torch.ones([4, 3]))
        .square()
        .sum()
        .backward(),
    );
    opt.step();
  }
  assert.ok(loss() < first, 'the loss falls');
  opt.dispose();
  layer.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('parametersToVector and vectorToParameters match PyTorch and round-trip without a gradient path', () => {
  const before = torch.liveTensors();
  torch.manualSeed(40);
  const layer = new nn.Linear(3, 2);
  torch.tidy(() => {
    const vec = utils.parametersToVector(layer.parameters());
    assertClose(vec.toFloat32Array(), golden.vector.vector, 1e-6, 0, 'vector');
    assert.ok(vec.requiresGrad, 'the vector keeps its gradient path');
    const changed = vec.detach().mul(-1);
    utils.vectorToParameters(changed, layer.parameters());
    assert.ok(layer.weight.isLeaf && layer.weight.requiresGrad, 'still leaves');
    assertClose(
      layer.weight.toFloat32Array(),
      golden.vector.params.weight!.data.map((x) => -x),
      1e-6,
      0,
      'weight',
    );
    assertClose(
      layer.bias!.toFloat32Array(),
      golden.vector.params.bias!.data.map((x) => -x),
      1e-6,
      0,
      'bias',
    );
    assert.throws(
      () => utils.vectorToParameters(torch.zeros([7]), layer.parameters()),
      (e: Error) =>
        e instanceof ArgumentError &&
        /^vectorToParameters: vec has 7 values but the 2 parameters hold 8; pass the vector parametersToVector made/.test(
          e.message,
        ),
    );
    assert.throws(
      () => utils.vectorToParameters(torch.zeros([2, 4]), layer.parameters()),
      /vectorToParameters: vec must be a 1-d Tensor/,
    );
  });
  layer.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bad arguments are named errors and leave the module as it was', () => {
  const named = (fn: () => unknown, pattern: RegExp) =>
    assert.throws(fn, (e: Error) => e instanceof ArgumentError && pattern.test(e.message));
  const before = torch.liveTensors();
  const layer = new nn.Linear(3, 2);
  named(
    () => utils.weightNorm(layer, 'weight', 2),
    /^weightNorm: dim must be an integer from 0 to 1 \(the dimensions of weight \[2, 3\]\) or null \(-1\) for one norm over the whole tensor, got 2/,
  );
  named(() => utils.weightNorm(layer, 'weight', -2), /^weightNorm: dim must be an integer from 0 to 1/);
  named(
    () => utils.weightNorm(layer, 'kernel'),
    /^weightNorm: Linear has no parameter 'kernel' \(its own parameters: weight, bias\); name one of them/,
  );
  named(() => utils.spectralNorm(layer, { name: 'gamma' }), /^spectralNorm: Linear has no parameter 'gamma'/);
  named(
    () => utils.spectralNorm(layer, { dim: 2 }),
    /^spectralNorm: options.dim must be an integer from 0 to 1 \(the dimensions of weight \[2, 3\]\), got 2/,
  );
  named(
    () => utils.spectralNorm(layer, { nPowerIterations: 0 }),
    /^spectralNorm: options.nPowerIterations must be an integer >= 1/,
  );
  named(
    () => utils.removeWeightNorm(layer),
    /^removeWeightNorm: Linear has no weightNorm on 'weight'; nothing to remove/,
  );
  assert.deepEqual(Object.keys(layer.stateDict()), ['weight', 'bias'], 'unchanged by the failed calls');
  class ReadOnly extends nn.Module {
    readonly w = this.registerParameter('weight', torch.ones([2, 2]));
    get weight(): Tensor {
      return this.w;
    }
    forward(x: Tensor): Tensor {
      return x.matmul(this.weight);
    }
  }
  const readOnly = new ReadOnly();
  named(
    () => utils.weightNorm(readOnly),
    /^weightNorm: ReadOnly.weight is read-only, so the recomputed weight cannot be set on it/,
  );
  readOnly.dispose();
  utils.weightNorm(layer);
  named(
    () => utils.weightNorm(layer),
    /^weightNorm: 'weight' of Linear already has a weightNorm; remove it \(removeWeightNorm\) first/,
  );
  named(() => utils.spectralNorm(layer), /^spectralNorm: 'weight' of Linear already has a weightNorm/);
  named(() => utils.removeSpectralNorm(layer), /^removeSpectralNorm: Linear has no spectralNorm on 'weight'/);
  // both norms on different parameters of one module, removed in either order
  utils.spectralNorm(layer, { name: 'bias' });
  assert.deepEqual(Object.keys(layer.stateDict()), ['weight_g', 'weight_v', 'bias_orig', 'bias_u', 'bias_v']);
  torch.tidy(() => void layer.forward(torch.ones([1, 3])));
  utils.removeWeightNorm(layer);
  torch.tidy(() => void layer.forward(torch.ones([1, 3])));
  utils.removeSpectralNorm(layer, 'bias');
  assert.deepEqual(Object.keys(layer.stateDict()), ['weight', 'bias']);
  assert.ok(!Object.prototype.hasOwnProperty.call(layer, 'forward'), 'the class forward is back');
  layer.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test("weight norms are forward pre-hooks: they compose with the module's own hooks in any order of adding and removing", () => {
  const x = torch.randn([4, 3]);
  const doubled = (m: nn.Linear, y0: Tensor) =>
    torch.tidy(() => {
      torch.noGrad(() => m.getParameter('weight_g').mul_(2));
      return m.forward(x).sub(y0.mul(2)).abs().max().item() < 1e-5;
    });
  // a hook added after the norm still runs once the norm is removed
  const a = new nn.Linear(3, 2, { bias: false });
  nn.utils.weightNorm(a);
  let calls = 0;
  a.registerForwardHook(() => {
    calls++;
  });
  nn.utils.removeWeightNorm(a);
  torch.tidy(() => a.forward(x));
  assert.equal(calls, 1);
  // a norm added after a hook still recomputes once the hook is removed
  const b = new nn.Linear(3, 2, { bias: false });
  const handle = b.registerForwardHook(() => undefined);
  nn.utils.weightNorm(b);
  const y0 = torch.keep(torch.tidy(() => b.forward(x)));
  handle.remove();
  assert.ok(doubled(b, y0), 'the weight follows weight_g after the hook is removed');
  // the user's pre-hook added later sees the recomputed weight
  const c = new nn.Linear(3, 2, { bias: false });
  nn.utils.weightNorm(c);
  let seenWeight = 0;
  c.registerForwardPreHook((m) => {
    seenWeight = torch.tidy(() => (m as nn.Linear).weight.abs().sum().item());
    return undefined;
  });
  torch.noGrad(() => c.getParameter('weight_g').mul_(3));
  const expected = torch.tidy(() => {
    const v = c.getParameter('weight_v');
    const g = c.getParameter('weight_g');
    return v.div(v.pow(2).sum(1, true).sqrt()).mul(g).abs().sum().item();
  });
  torch.tidy(() => c.forward(x));
  assert.ok(Math.abs(seenWeight - expected) < 1e-4, `${seenWeight} vs ${expected}`);
  for (const t of [x, y0]) t.dispose();
  for (const m of [a, b, c]) m.dispose();
});
