// RNN, RNNCell, LSTMCell, GRUCell, Bilinear, CosineSimilarity, LocalResponseNorm, Softmax2d, the
// shrink activations, RReLU and alpha dropout against PyTorch 1.13
// (test/golden/torch/nn_recurrent_more.json, from scripts/golden/nn_recurrent_more.py): same-seed
// initialisation, then in float64 the outputs and final states, the gradients of the inputs, the
// initial states and every parameter (to 1e-10), and the seeded draws of RReLU and alpha dropout
// in training mode; then the functional forms and the named errors of bad arguments and inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  data: number[];
}
interface LayerCase {
  name: string;
  seed: number;
  train: boolean;
  init: Record<string, Data>;
  inputs: Data[];
  outputs: Data[];
  upstream: number[][];
  input_grads: number[][];
  param_grads: Record<string, number[]>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_recurrent_more.json'), 'utf8')) as {
  cases: LayerCase[];
};

type T = torch.Tensor;
/** How a case builds its layer and runs it on its inputs, returning every output flattened. */
interface Maker {
  make: () => nn.Module;
  run?: (layer: never, ...inputs: T[]) => T[];
}
const one = { run: (m: { forward(...xs: T[]): T }, ...xs: T[]) => [m.forward(...xs)] };
const seq = { run: (m: nn.RNN, x: T, h?: T) => m.forward(x, h) };
const lstmCell = { run: (m: nn.LSTMCell, x: T, h?: T, c?: T) => m.forward(x, h && c ? [h, c] : undefined) };

const makers: Record<string, Maker> = {
  rnn_tanh: { make: () => new nn.RNN(5, 4), ...seq },
  rnn_relu_2layer_bidirectional_batch_first_h0: {
    make: () =>
      new nn.RNN(3, 4, { numLayers: 2, nonlinearity: 'relu', bidirectional: true, batchFirst: true }),
    ...seq,
  },
  rnn_nobias_unbatched_h0: { make: () => new nn.RNN(3, 2, { bias: false }), ...seq },
  rnn_dropout_eval: { make: () => new nn.RNN(2, 3, { numLayers: 2, dropout: 0.5 }), ...seq },
  rnncell_tanh_h: { make: () => new nn.RNNCell(5, 4), ...one },
  rnncell_relu_nobias_unbatched: {
    make: () => new nn.RNNCell(3, 4, { bias: false, nonlinearity: 'relu' }),
    ...one,
  },
  lstmcell_state: { make: () => new nn.LSTMCell(5, 3), ...lstmCell },
  lstmcell_unbatched: { make: () => new nn.LSTMCell(4, 3), ...lstmCell },
  lstmcell_nobias_unbatched_state: { make: () => new nn.LSTMCell(2, 3, { bias: false }), ...lstmCell },
  grucell_h: { make: () => new nn.GRUCell(4, 3), ...one },
  grucell_nobias_unbatched_h: { make: () => new nn.GRUCell(3, 2, { bias: false }), ...one },
  grucell_nohx: { make: () => new nn.GRUCell(3, 5), ...one },
  bilinear: { make: () => new nn.Bilinear(3, 4, 2), ...one },
  bilinear_nobias_3d: { make: () => new nn.Bilinear(2, 3, 4, { bias: false }), ...one },
  cosine: { make: () => new nn.CosineSimilarity(), ...one },
  cosine_dim_eps_broadcast: { make: () => new nn.CosineSimilarity({ dim: -1, eps: 0.5 }), ...one },
  lrn_3d: { make: () => new nn.LocalResponseNorm(3), ...one },
  lrn_4d: { make: () => new nn.LocalResponseNorm(2, { alpha: 0.1, beta: 0.5, k: 2 }), ...one },
  lrn_5d: { make: () => new nn.LocalResponseNorm(4, { alpha: 0.01 }), ...one },
  softmax2d: { make: () => new nn.Softmax2d(), ...one },
  softmax2d_unbatched: { make: () => new nn.Softmax2d(), ...one },
  tanhshrink: { make: () => new nn.Tanhshrink(), ...one },
  softshrink: { make: () => new nn.Softshrink(), ...one },
  softshrink_1: { make: () => new nn.Softshrink(1), ...one },
  hardshrink: { make: () => new nn.Hardshrink(0.3), ...one },
  rrelu_eval: { make: () => new nn.RReLU(0.1, 0.3), ...one },
  rrelu_train: { make: () => new nn.RReLU(), ...one },
  alphadropout_train: { make: () => new nn.AlphaDropout(0.2), ...one },
  alphadropout_eval: { make: () => new nn.AlphaDropout(), ...one },
  featurealphadropout_train: { make: () => new nn.FeatureAlphaDropout(0.5), ...one },
  featurealphadropout_eval: { make: () => new nn.FeatureAlphaDropout(0.3), ...one },
};

test('every golden case has a maker', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(makers).sort());
});

const f64 = (d: Data | number[], shape?: number[]) =>
  Array.isArray(d)
    ? torch.tensor(Float64Array.from(d), { shape: shape! })
    : torch.tensor(Float64Array.from(d.data), { shape: d.shape });

for (const c of golden.cases) {
  test(`nn golden (recurrent cells, Bilinear, shrink activations, ...): ${c.name}`, () => {
    const before = torch.liveTensors();
    const maker = makers[c.name]!;
    torch.manualSeed(c.seed);
    const layer = maker.make();
    torch.tidy(() => {
      const named = Object.fromEntries(layer.namedParameters());
      assert.deepEqual(Object.keys(named), Object.keys(c.init), `${c.name}: parameter names and order`);
      for (const [name, p] of Object.entries(c.init)) {
        assert.deepEqual(named[name]!.shape, p.shape, `${c.name}: shape of ${name}`);
        assertClose(named[name]!.toFloat64Array(), p.data, 0, 0, `${c.name}: initial ${name}`);
      }
      layer.double().train(c.train);
      const inputs = c.inputs.map((d) => f64(d).requiresGrad_());
      torch.manualSeed(c.seed + 2);
      const outputs = (maker.run as (m: nn.Module, ...xs: T[]) => T[])(layer, ...inputs);
      assert.equal(outputs.length, c.outputs.length, `${c.name}: number of outputs`);
      outputs.forEach((o, i) => {
        assert.equal(o.dtype, 'float64');
        assert.deepEqual(o.shape, c.outputs[i]!.shape, `${c.name}: shape of output ${i}`);
        assertClose(o.toFloat64Array(), c.outputs[i]!.data, 1e-10, 1e-10, `${c.name}: output ${i}`);
      });
      outputs
        .map((o, i) => o.mul(f64(c.upstream[i]!, o.shape)).sum())
        .reduce((a, b) => a.add(b))
        .backward();
      inputs.forEach((x, i) =>
        assertClose(
          x.grad!.toFloat64Array(),
          c.input_grads[i]!,
          1e-10,
          1e-10,
          `${c.name}: input gradient ${i}`,
        ),
      );
      assert.deepEqual(Object.keys(named).sort(), Object.keys(c.param_grads).sort());
      for (const [name, g] of Object.entries(c.param_grads))
        assertClose(named[name]!.grad!.toFloat64Array(), g, 1e-10, 1e-10, `${c.name}: gradient of ${name}`);
    });
    layer.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

/** The functional forms, run on the golden inputs of the layer cases in evaluation or training mode. */
const F = nn.functional;
const functional: Record<string, (...xs: T[]) => T> = {
  bilinear: (x1, x2) =>
    F.bilinear(x1, x2, f64(byName.bilinear!.init.weight!), f64(byName.bilinear!.init.bias!)),
  cosine_dim_eps_broadcast: (x1, x2) => F.cosineSimilarity(x1, x2, -1, 0.5),
  lrn_4d: (x) => F.localResponseNorm(x, 2, { alpha: 0.1, beta: 0.5, k: 2 }),
  lrn_5d: (x) => F.localResponseNorm(x, 4, { alpha: 0.01 }),
  tanhshrink: (x) => F.tanhshrink(x),
  softshrink_1: (x) => F.softshrink(x, 1),
  hardshrink: (x) => F.hardshrink(x, 0.3),
  rrelu_eval: (x) => F.rrelu(x, 0.1, 0.3),
  rrelu_train: (x) => F.rrelu(x, 1 / 8, 1 / 3, true),
  alphadropout_train: (x) => F.alphaDropout(x, 0.2, true),
  alphadropout_eval: (x) => F.alphaDropout(x),
  featurealphadropout_train: (x) => F.featureAlphaDropout(x, 0.5, true),
};
const byName = Object.fromEntries(golden.cases.map((c) => [c.name, c]));

test('the functional forms give the layers’ outputs (seeded draws included)', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    for (const [name, fn] of Object.entries(functional)) {
      const c = byName[name]!;
      torch.manualSeed(c.seed + 2);
      const y = fn(...c.inputs.map((d) => f64(d)));
      assertClose(y.toFloat64Array(), c.outputs[0]!.data, 1e-10, 1e-10, `functional ${name}`);
    }
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('RNN runs a PackedSequence: each sequence stops at its own length', () => {
  const before = torch.liveTensors();
  torch.manualSeed(7);
  const rnn = new nn.RNN(3, 4, { nonlinearity: 'relu', bidirectional: true });
  torch.tidy(() => {
    const x = torch.randn([5, 2, 3]);
    const packed = nn.utils.rnn.packPaddedSequence(x, [3, 5], { enforceSorted: false });
    const [out, h] = rnn.forward(packed);
    const [padded] = nn.utils.rnn.padPackedSequence(out);
    assert.deepEqual(padded.shape, [5, 2, 8]);
    // sequence 0 alone, 3 steps: the same outputs and final states
    const [alone, hAlone] = rnn.forward(x.narrow(0, 0, 3).narrow(1, 0, 1));
    assertClose(padded.narrow(0, 0, 3).narrow(1, 0, 1).toFloat64Array(), alone.toFloat64Array(), 1e-6);
    assertClose(h.narrow(1, 0, 1).toFloat64Array(), hAlone.toFloat64Array(), 1e-6);
    packed.dispose();
    out.dispose();
  });
  rnn.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the new layers and functions name a bad argument or input', () => {
  const before = torch.liveTensors();
  assert.throws(
    () => new nn.RNN(3, 4, { nonlinearity: 'gelu' as never }),
    /^ArgumentError: RNN: options.nonlinearity must be 'tanh' or 'relu', got 'gelu'/,
  );
  assert.throws(() => new nn.RNNCell(0, 4), /RNNCell: inputSize must be an integer >= 1/);
  assert.throws(
    () => new nn.GRUCell(3, 4, { bias: 1 as never }),
    /GRUCell: options.bias must be true or false/,
  );
  assert.throws(() => new nn.Bilinear(3, 4, 0), /Bilinear: outFeatures must be an integer >= 1 .*, got 0/);
  assert.throws(() => new nn.LocalResponseNorm(0), /LocalResponseNorm: size must be an integer >= 1, got 0/);
  assert.throws(() => new nn.Softshrink(-1), /Softshrink: lambd must be a finite number >= 0, got -1/);
  assert.throws(
    () => new nn.RReLU(0.5, 0.1),
    /RReLU: upper \(at least lower\) must be a finite number >= 0.5/,
  );
  assert.throws(
    () => new nn.AlphaDropout(1.5),
    /AlphaDropout: p must be a finite number >= 0 and <= 1, got 1.5/,
  );
  assert.throws(
    () => new nn.CosineSimilarity({ eps: 0 }),
    /CosineSimilarity: options.eps must be a finite number > 0/,
  );
  const cell = new nn.LSTMCell(5, 3);
  const gru = new nn.GRUCell(4, 3);
  const bilinear = new nn.Bilinear(3, 4, 2);
  torch.tidy(() => {
    assert.throws(
      () => cell.forward(torch.zeros([2, 3, 5])),
      /LSTMCell: x must be 1-d \[inputSize\] \(unbatched\) or 2-d \[batch, inputSize\], got shape \[2, 3, 5\]/,
    );
    assert.throws(
      () => cell.forward(torch.zeros([2, 6])),
      /LSTMCell: x must have 5 features in its last dimension \(inputSize\), got shape \[2, 6\]/,
    );
    assert.throws(
      () => cell.forward(torch.zeros([2, 5]), [torch.zeros([2, 3])] as never),
      /LSTMCell: state must be an array \[h, c\] of two Tensors/,
    );
    assert.throws(
      () => gru.forward(torch.zeros([2, 4]), torch.zeros([3, 3])),
      /GRUCell: h must be of shape \[2, 3\] for an input of shape \[2, 4\], got \[3, 3\]/,
    );
    assert.throws(
      () => gru.forward(torch.zeros([4]), torch.zeros([1, 3])),
      /GRUCell: h must be of shape \[3\] for an input of shape \[4\], got \[1, 3\]/,
    );
    assert.throws(
      () => bilinear.forward(torch.zeros([5, 3]), torch.zeros([5, 3])),
      /Bilinear: x1 and x2 must end in 3 and 4 features \(weight \[2, 3, 4\]\), got \[5, 3\] and \[5, 3\]/,
    );
    assert.throws(
      () => bilinear.forward(torch.zeros([5, 3]), torch.zeros([4, 4])),
      /Bilinear: x1 and x2 must have the same leading dimensions, got \[5, 3\] and \[4, 4\]/,
    );
    assert.throws(
      () => F.localResponseNorm(torch.zeros([2, 3]), 2),
      /localResponseNorm: x must have at least 3 dimensions \[N, C, ...\], got shape \[2, 3\]/,
    );
    assert.throws(
      () => F.featureAlphaDropout(torch.zeros([3]), 0.5, true),
      /featureAlphaDropout: feature alpha dropout needs an input of at least 2 dimensions/,
    );
    assert.throws(
      () => new nn.Softmax2d().forward(torch.zeros([5])),
      /Softmax2d: the input must be 3-d or 4-d/,
    );
    assert.throws(() => F.rrelu(torch.zeros([2]), 0.3, 0.2), /rrelu: upper \(at least lower\) must be/);
    assert.throws(() => F.softshrink('x' as never), /softshrink: x must be a Tensor/);
    const [a, b] = [torch.zeros([2, 3]), torch.zeros([3])];
    assert.throws(
      () => F.cosineSimilarity(a, 'b' as never),
      /^ArgumentError: cosineSimilarity: x2 must be a Tensor/,
    );
    assert.throws(
      () => F.cosineSimilarity(a, torch.zeros([4])),
      /cosineSimilarity: x2 \[4\] does not broadcast with x1 \[2, 3\]/,
    );
    assert.throws(
      () => F.cosineSimilarity(a, b, 2),
      /cosineSimilarity: dim must be an integer in \[-2, 1\] \(an axis of the broadcast shape \[2, 3\]\), got 2/,
    );
    assert.throws(
      () => F.cosineSimilarity(a, b, 1, 0),
      /cosineSimilarity: eps must be a finite number > 0, got 0/,
    );
    assert.deepEqual(F.cosineSimilarity(a.add(1), b.add(2), -1).shape, [2]); // broadcast: dim -1 of [2, 3]
  });
  for (const m of [cell, gru, bilinear]) m.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the new layers print as PyTorch 1.13 prints them', () => {
  const layers: [nn.Module, string][] = [
    [
      new nn.RNNCell(2, 3, { bias: false, nonlinearity: 'relu' }),
      'RNNCell(2, 3, bias=False, nonlinearity=relu)',
    ],
    [new nn.LSTMCell(2, 3, { bias: false }), 'LSTMCell(2, 3, bias=False)'],
    [new nn.GRUCell(2, 3), 'GRUCell(2, 3)'],
    [new nn.Bilinear(2, 3, 4), 'Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)'],
    [new nn.LocalResponseNorm(2), 'LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)'],
    [new nn.RReLU(), 'RReLU(lower=0.125, upper=0.3333333333333333)'],
    [new nn.Softshrink(), 'Softshrink(0.5)'],
    [new nn.CosineSimilarity(), 'CosineSimilarity()'],
    [new nn.AlphaDropout(), 'AlphaDropout(p=0.5, inplace=False)'],
  ];
  for (const [layer, repr] of layers) {
    assert.equal(String(layer), repr);
    layer.dispose();
  }
});
