// Attention and the Transformer encoder and decoder layers against PyTorch 1.13 (test/golden/torch/attention.json,
// scripts/golden/nn.py): the parameters initialised from the same seed (names and order as
// PyTorch's state dict), the outputs (attention weights included) and the gradients of the inputs
// and every parameter; scaledDotProductAttention against PyTorch 2.x's definition written out in
// Python. Then training mode, the random generator across TransformerEncoder's copies, and the
// named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  data: number[];
}
interface AttentionCase {
  name: string;
  seed: number;
  train: boolean;
  params: Record<string, Data>;
  inputs: Data[];
  masks: Record<string, Data & { dtype: string }>;
  outputs: (Data | null)[];
  upstream: (number[] | null)[];
  input_grads: number[][];
  param_grads: Record<string, number[]>;
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'attention.json'), 'utf8')) as {
  cases: AttentionCase[];
};

type Masks = Record<string, Tensor>;
interface Setup {
  make: () => nn.Module | null;
  call: (layer: nn.Module | null, xs: Tensor[], masks: Masks) => (Tensor | null)[];
}

const mha =
  (self: boolean, options: nn.MultiheadAttentionForwardOptions = {}): Setup['call'] =>
  (layer, xs, masks) => {
    const [q, k, v] = self ? [xs[0]!, xs[0]!, xs[0]!] : xs;
    return (layer as nn.MultiheadAttention).forward(q!, k!, v!, { ...masks, ...options });
  };
const encode: Setup['call'] = (layer, xs, masks) => [
  (layer as nn.TransformerEncoderLayer | nn.TransformerEncoder).forward(xs[0]!, masks),
];
const decode: Setup['call'] = (layer, xs, masks) => [
  (layer as nn.TransformerDecoderLayer).forward(xs[0]!, xs[1]!, masks),
];
const sdpa =
  (isCausal = false): Setup['call'] =>
  (_, [q, k, v], masks) => [nn.functional.scaledDotProductAttention(q!, k!, v!, { ...masks, isCausal })];

const setups: Record<string, Setup> = {
  mha_self: { make: () => new nn.MultiheadAttention(8, 2), call: mha(true) },
  mha_batch_first_key_padding_per_head: {
    make: () => new nn.MultiheadAttention(8, 4, { batchFirst: true }),
    call: mha(false, { averageAttnWeights: false }),
  },
  mha_float_mask_no_weights: {
    make: () => new nn.MultiheadAttention(6, 3),
    call: mha(false, { needWeights: false }),
  },
  mha_bool_causal_and_padding_batch_first: {
    make: () => new nn.MultiheadAttention(8, 2, { batchFirst: true }),
    call: mha(true),
  },
  mha_bool_mask_3d: { make: () => new nn.MultiheadAttention(8, 2), call: mha(true) },
  mha_kdim_vdim_float_mask_3d: {
    make: () => new nn.MultiheadAttention(8, 2, { kdim: 5, vdim: 3 }),
    call: mha(false),
  },
  mha_unbatched_key_padding_per_head: {
    make: () => new nn.MultiheadAttention(6, 2),
    call: mha(false, { averageAttnWeights: false }),
  },
  mha_nobias: { make: () => new nn.MultiheadAttention(8, 2, { bias: false }), call: mha(true) },
  sdpa: { make: () => null, call: sdpa() },
  sdpa_bool_mask: { make: () => null, call: sdpa() },
  sdpa_float_mask: { make: () => null, call: sdpa() },
  sdpa_causal: { make: () => null, call: sdpa(true) },
  encoder_layer_relu: {
    make: () => new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }),
    call: encode,
  },
  encoder_layer_gelu_norm_first_batch_first: {
    make: () =>
      new nn.TransformerEncoderLayer(8, 2, {
        dimFeedforward: 16,
        activation: 'gelu',
        normFirst: true,
        batchFirst: true,
      }),
    call: encode,
  },
  encoder_layer_relu_batch_first_float_mask: {
    make: () =>
      new nn.TransformerEncoderLayer(8, 4, { dimFeedforward: 12, batchFirst: true, layerNormEps: 1e-4 }),
    call: encode,
  },
  encoder_layer_gelu_norm_first: {
    make: () =>
      new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, activation: 'gelu', normFirst: true }),
    call: encode,
  },
  decoder_layer_relu: {
    make: () => new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }),
    call: decode,
  },
  decoder_layer_gelu_norm_first_batch_first: {
    make: () =>
      new nn.TransformerDecoderLayer(8, 4, {
        dimFeedforward: 12,
        activation: 'gelu',
        normFirst: true,
        batchFirst: true,
      }),
    call: decode,
  },
  encoder_2_layers_norm: {
    make: () =>
      new nn.TransformerEncoder(new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }), 2, {
        norm: new nn.LayerNorm([8]),
      }),
    call: encode,
  },
};

const tensorOf = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });
const camel = (s: string) => s.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
const maxDiff = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Array.from(a).reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

test('every golden case has a setup', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(setups).sort());
});

for (const c of golden.cases) {
  test(`${c.name} matches PyTorch 1.13: initialisation, outputs and gradients`, (t) => {
    const before = torch.liveTensors();
    torch.manualSeed(c.seed);
    const layer = setups[c.name]!.make();
    layer?.train(c.train);
    const worst = { output: 0, grad: 0 };
    if (layer) {
      assert.deepEqual(
        [...layer.namedParameters()].map(([n]) => n),
        Object.keys(c.params),
        'parameter names and order',
      );
      for (const [n, p] of layer.namedParameters()) {
        assert.deepEqual(p.shape, c.params[n]!.shape, `${c.name}: shape of ${n}`);
        assertClose(p.toFloat32Array(), c.params[n]!.data, 1e-6, 0, `${c.name}: initial ${n}`);
      }
    }
    torch.tidy(() => {
      const xs = c.inputs.map((d) => tensorOf(d).requiresGrad_());
      const masks: Masks = {};
      for (const [name, m] of Object.entries(c.masks))
        masks[camel(name)] = m.dtype === 'torch.bool' ? tensorOf(m).bool() : tensorOf(m);
      const outs = setups[c.name]!.call(layer, xs, masks);
      assert.equal(outs.length, c.outputs.length, 'number of outputs');
      const weighted: Tensor[] = [];
      outs.forEach((o, i) => {
        const expected = c.outputs[i];
        if (!expected) return assert.equal(o, null, `${c.name}: output ${i} is null`);
        assert.ok(o, `${c.name}: output ${i}`);
        assert.deepEqual(o.shape, expected.shape, `${c.name}: shape of output ${i}`);
        const got = o.toFloat32Array();
        assertClose(got, expected.data, 1e-5, 0, `${c.name}: output ${i}`);
        worst.output = Math.max(worst.output, maxDiff(got, expected.data));
        weighted.push(o.mul(torch.tensor(Float32Array.from(c.upstream[i]!), { shape: o.shape })).sum());
      });
      weighted.reduce((a, b) => a.add(b)).backward();
      const grads: [string, Tensor, number[]][] = xs.map((x, i) => [`input ${i}`, x, c.input_grads[i]!]);
      if (layer)
        for (const [n, p] of layer.namedParameters()) grads.push([`parameter ${n}`, p, c.param_grads[n]!]);
      for (const [what, x, expected] of grads) {
        const got = x.grad!.toFloat32Array();
        assertClose(got, expected, 1e-5, 0, `${c.name}: gradient of ${what}`);
        worst.grad = Math.max(worst.grad, maxDiff(got, expected));
      }
    });
    t.diagnostic(
      `largest differences: output ${worst.output.toExponential(2)}, gradient ${worst.grad.toExponential(2)}`,
    );
    layer?.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('TransformerEncoderLayer in training mode: dropout on, every parameter gets a gradient', () => {
  const before = torch.liveTensors();
  torch.manualSeed(3);
  const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0.5, batchFirst: true });
  assert.equal(layer.training, true);
  torch.tidy(() => {
    const x = torch.randn([3, 5, 8]).requiresGrad_();
    const a = layer.forward(x);
    const b = layer.forward(x);
    assert.deepEqual(a.shape, [3, 5, 8]);
    assert.ok(torch.aten.all(torch.aten.isfinite(a)).item(), 'finite output');
    assert.ok(a.sub(b).abs().max().item() > 1e-3, 'two passes differ: dropout draws anew');
    a.square().sum().backward();
    assert.deepEqual(x.grad!.shape, [3, 5, 8]);
    for (const [n, p] of layer.namedParameters()) {
      assert.ok(p.grad, `gradient of ${n}`);
      assert.deepEqual(p.grad.shape, p.shape, `shape of the gradient of ${n}`);
      assert.ok(torch.aten.all(torch.aten.isfinite(p.grad)).item(), `finite gradient of ${n}`);
    }
    layer.eval();
    const c = layer.forward(x);
    assert.equal(c.sub(layer.forward(x)).abs().max().item(), 0, 'evaluation mode is deterministic');
  });
  layer.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test("TransformerEncoder's copies share the layer's parameters and draw nothing from the generator", () => {
  const before = torch.liveTensors();
  torch.manualSeed(5);
  const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
  const encoder = new nn.TransformerEncoder(layer, 3);
  const afterCopies = torch.tidy(() => torch.rand([4]).toFloat32Array());
  torch.manualSeed(5);
  new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 }).dispose();
  assert.deepEqual(
    afterCopies,
    torch.tidy(() => torch.rand([4]).toFloat32Array()),
  );
  assert.equal(encoder.layers.at(0), layer, 'the layer itself is layers.0');
  const state = encoder.stateDict();
  for (const [name, p] of layer.namedParameters())
    for (const i of [1, 2]) {
      const copy = state[`layers.${i}.${name}`]!;
      assert.notEqual(copy, p);
      assert.deepEqual(copy.toFloat32Array(), p.toFloat32Array(), `layers.${i}.${name}`);
    }
  encoder.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('attention layers name a bad argument or input', () => {
  assert.throws(
    () => new nn.MultiheadAttention(10, 3),
    /^ArgumentError: MultiheadAttention: embedDim \(10\) must be divisible by numHeads \(3\)/,
  );
  assert.throws(
    () => new nn.MultiheadAttention(8, 0),
    /MultiheadAttention: numHeads must be an integer >= 1/,
  );
  assert.throws(
    () => new nn.MultiheadAttention(8, 2, { addBiasKv: true }),
    /MultiheadAttention: options.addBiasKv is not supported/,
  );
  assert.throws(
    () => new nn.TransformerEncoderLayer(8, 2, { activation: 'tanh' as never }),
    /TransformerEncoderLayer: options.activation must be one of 'relu', 'gelu', got 'tanh'/,
  );
  assert.throws(
    () => new nn.TransformerDecoderLayer(8, 2, { layerNormEps: 0 }),
    /TransformerDecoderLayer: options.layerNormEps must be a finite number > 0, got 0/,
  );
  assert.throws(
    () => new nn.TransformerEncoderLayer(6, 4),
    /TransformerEncoderLayer: dModel \(6\) must be divisible by nhead \(4\)/,
  );
  assert.throws(
    () => new nn.TransformerEncoder({} as never, 2),
    /TransformerEncoder: layer must be a TransformerEncoderLayer/,
  );
  const m = new nn.MultiheadAttention(8, 2);
  torch.tidy(() => {
    const x = torch.zeros([5, 3, 8]);
    assert.throws(
      () => m.forward(x, torch.zeros([5, 3, 6]), x),
      /MultiheadAttention: the last dimensions must be embedDim \(8\), kdim \(8\) and vdim \(8\); got query \[5, 3, 8\], key \[5, 3, 6\]/,
    );
    assert.throws(
      () => m.forward(x, x, x, { keyPaddingMask: torch.zeros([5, 3]).bool() }),
      /MultiheadAttention: options.keyPaddingMask must be of shape \[3, 5\], got \[5, 3\]/,
    );
    assert.throws(
      () => m.forward(x, x, x, { attnMask: torch.zeros([5, 5], 'int64') }),
      /MultiheadAttention: options.attnMask must be a bool or floating-point tensor, got int64/,
    );
    assert.throws(
      () =>
        nn.functional.scaledDotProductAttention(x, x, x, { isCausal: true, attnMask: torch.ones([3, 3]) }),
      /scaledDotProductAttention: options.isCausal and options.attnMask exclude each other/,
    );
    assert.throws(
      () => nn.functional.scaledDotProductAttention(x, torch.zeros([5, 4, 8]), x),
      /scaledDotProductAttention: q \[\.\.\., L, E\], k \[\.\.\., S, E\] and v \[\.\.\., S, Ev\] disagree/,
    );
  });
  m.dispose();
});
