// TransformerDecoder and Transformer against PyTorch 1.13 (test/golden/torch/transformer.json,
// scripts/golden/transformer.py): parameters initialised from the same seed (names, order, and
// Transformer's xavier_uniform_ re-initialisation), outputs and the gradients of the inputs and
// every parameter, in evaluation mode; generateSquareSubsequentMask; then the decoder's copies, the
// named errors (their ONNX forms: test/torch/onnx-sequence.test.ts).
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
interface Case {
  name: string;
  seed: number;
  params: Record<string, Data>;
  inputs: Data[];
  masks: Record<string, (Data & { dtype: string }) | { subsequent: number }>;
  outputs: Data[];
  upstream: number[][];
  input_grads: number[][];
  param_grads: Record<string, number[]>;
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'transformer.json'), 'utf8')) as {
  cases: Case[];
  subsequent_mask_4: (number | null)[];
};

type Model = nn.TransformerDecoder | nn.Transformer;
const setups: Record<string, () => Model> = {
  decoder_2_layers_norm: () =>
    new nn.TransformerDecoder(new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }), 2, {
      norm: new nn.LayerNorm([8]),
    }),
  decoder_3_layers_gelu_norm_first_batch_first: () =>
    new nn.TransformerDecoder(
      new nn.TransformerDecoderLayer(8, 4, {
        dimFeedforward: 12,
        activation: 'gelu',
        normFirst: true,
        batchFirst: true,
      }),
      3,
    ),
  transformer_small: () =>
    new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 2, numDecoderLayers: 2, dimFeedforward: 16 }),
  transformer_batch_first_norm_first_gelu: () =>
    new nn.Transformer({
      dModel: 8,
      nhead: 4,
      numEncoderLayers: 1,
      numDecoderLayers: 3,
      dimFeedforward: 12,
      activation: 'gelu',
      layerNormEps: 1e-4,
      batchFirst: true,
      normFirst: true,
    }),
  transformer_unbatched: () =>
    new nn.Transformer({ dModel: 6, nhead: 3, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 10 }),
};

const tensorOf = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });
const camel = (s: string) => s.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());

test('every Transformer golden case has a setup', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(setups).sort());
});

for (const c of golden.cases) {
  test(`${c.name} matches PyTorch 1.13: initialisation, outputs and gradients`, () => {
    const before = torch.liveTensors();
    torch.manualSeed(c.seed);
    const model = setups[c.name]!();
    model.eval();
    assert.deepEqual(
      [...model.namedParameters()].map(([n]) => n),
      Object.keys(c.params),
      'parameter names and order',
    );
    for (const [n, p] of model.namedParameters()) {
      assert.deepEqual(p.shape, c.params[n]!.shape, `${c.name}: shape of ${n}`);
      assertClose(p.toFloat32Array(), c.params[n]!.data, 1e-6, 0, `${c.name}: initial ${n}`);
    }
    torch.tidy(() => {
      const xs = c.inputs.map((d) => tensorOf(d).requiresGrad_());
      const masks: Record<string, Tensor> = {};
      for (const [name, m] of Object.entries(c.masks)) {
        masks[camel(name)] =
          'subsequent' in m
            ? nn.Transformer.generateSquareSubsequentMask(m.subsequent)
            : m.dtype === 'torch.bool'
              ? tensorOf(m).bool()
              : tensorOf(m);
      }
      const out = model.forward(xs[0]!, xs[1]!, masks);
      const expected = c.outputs[0]!;
      assert.deepEqual(out.shape, expected.shape, `${c.name}: output shape`);
      assertClose(out.toFloat32Array(), expected.data, 1e-5, 0, `${c.name}: output`);
      out
        .mul(torch.tensor(Float32Array.from(c.upstream[0]!), { shape: out.shape }))
        .sum()
        .backward();
      xs.forEach((x, i) =>
        assertClose(x.grad!.toFloat32Array(), c.input_grads[i]!, 1e-5, 0, `${c.name}: input ${i} grad`),
      );
      for (const [n, p] of model.namedParameters())
        assertClose(p.grad!.toFloat32Array(), c.param_grads[n]!, 1e-5, 0, `${c.name}: gradient of ${n}`);
    });
    model.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('generateSquareSubsequentMask is PyTorch 1.13 generate_square_subsequent_mask', () => {
  const got = torch.tidy(() => [...nn.Transformer.generateSquareSubsequentMask(4).toFloat32Array()]);
  assert.deepEqual(
    got,
    golden.subsequent_mask_4.map((v) => (v === null ? -Infinity : v)),
  );
  assert.throws(() => nn.Transformer.generateSquareSubsequentMask(-1), /size must be an integer >= 0/);
});

test("TransformerDecoder's copies equal the layer and draw nothing from the generator; Transformer's options", () => {
  const before = torch.liveTensors();
  torch.manualSeed(5);
  const layer = new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 });
  const decoder = new nn.TransformerDecoder(layer, 3);
  const afterCopies = torch.tidy(() => torch.rand([4]).toFloat32Array());
  torch.manualSeed(5);
  new nn.TransformerDecoderLayer(8, 2, { dimFeedforward: 16 }).dispose();
  assert.deepEqual(
    afterCopies,
    torch.tidy(() => torch.rand([4]).toFloat32Array()),
  );
  assert.equal(decoder.layers.at(0), layer, 'the layer itself is layers.0');
  assert.equal(decoder.norm, null);
  const state = decoder.stateDict();
  for (const [name, p] of layer.namedParameters())
    for (const i of [1, 2]) {
      const copy = state[`layers.${i}.${name}`]!;
      assert.notEqual(copy, p);
      assert.deepEqual(copy.toFloat32Array(), p.toFloat32Array(), `layers.${i}.${name}`);
    }
  // a custom decoder replaces the built one (and is re-initialised, as in PyTorch)
  const model = new nn.Transformer({
    dModel: 8,
    nhead: 2,
    numEncoderLayers: 1,
    dimFeedforward: 16,
    customDecoder: decoder,
  });
  assert.equal(model.decoder, decoder);
  assert.equal(model.encoder.layers.length, 1);
  assert.equal(model.dModel, 8);
  torch.tidy(() => {
    assert.throws(
      () => model.forward(torch.zeros([5, 3, 8]), torch.zeros([4, 2, 8])),
      /Transformer: src \[5,3,8\] and tgt \[4,2,8\] must have the same batch size \(dimension 1\)/,
    );
    assert.throws(
      () => model.forward(torch.zeros([5, 3, 8]), torch.zeros([4, 3, 6])),
      /Transformer: the last dimension of src \[5,3,8\] and tgt \[4,3,6\] must be dModel \(8\)/,
    );
  });
  assert.throws(
    () => new nn.Transformer({ dModel: 8, nhead: 2, customEncoder: {} as never }),
    /Transformer: options.customEncoder must be a TransformerEncoder or null/,
  );
  assert.throws(
    () => new nn.Transformer({ dModel: 10, nhead: 4 }),
    /Transformer: options.dModel \(10\) must be divisible by options.nhead \(4\)/,
  );
  assert.throws(
    () => new nn.Transformer({ numDecoderLayers: 0 }),
    /Transformer: options.numDecoderLayers must be an integer >= 1/,
  );
  assert.throws(
    () => new nn.TransformerDecoder({} as never, 2),
    /TransformerDecoder: layer must be a TransformerDecoderLayer/,
  );
  model.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
