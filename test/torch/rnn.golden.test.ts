// LSTM and GRU against PyTorch 1.13 (test/golden/torch/rnn.json, scripts/golden/nn.py): the
// parameters initialised from the same seed, the output and final states, and the gradients of
// the input, the initial states and every parameter.
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
interface RnnCase {
  name: string;
  seed: number;
  params: Record<string, Data>;
  input: Data;
  state: Data[];
  output: Data;
  finals: Data[];
  upstream: number[][];
  input_grad: number[];
  state_grads: number[][];
  param_grads: Record<string, number[]>;
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'rnn.json'), 'utf8')) as { cases: RnnCase[] };

const layers: Record<string, () => nn.LSTM | nn.GRU> = {
  lstm: () => new nn.LSTM(5, 4),
  lstm_2layer_bidirectional_batch_first_state: () =>
    new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true, batchFirst: true }),
  gru_nobias: () => new nn.GRU(5, 3, { bias: false }),
  gru_bidirectional_unbatched_state: () => new nn.GRU(3, 4, { bidirectional: true }),
};

const tensorOf = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });

for (const c of golden.cases) {
  test(`${c.name} matches PyTorch 1.13: initialisation, outputs and gradients`, () => {
    const before = torch.liveTensors();
    torch.manualSeed(c.seed);
    const layer = layers[c.name]!();
    const names = Object.keys(c.params);
    assert.deepEqual(
      [...layer.namedParameters()].map(([n]) => n),
      names,
      'parameter names and order',
    );
    torch.tidy(() => {
      for (const [n, p] of layer.namedParameters())
        assertClose(p.toFloat32Array(), c.params[n]!.data, 1e-6, 0, `${c.name}: initial ${n}`);
      const x = tensorOf(c.input).requiresGrad_();
      const states = c.state.map((s) => tensorOf(s).requiresGrad_());
      const [output, finals] =
        layer instanceof nn.LSTM
          ? (() => {
              const [o, [h, cell]] = layer.forward(x, states.length ? [states[0]!, states[1]!] : undefined);
              return [o, [h, cell]] as const;
            })()
          : (() => {
              const [o, h] = layer.forward(x, states[0]);
              return [o, [h]] as const;
            })();
      assert.deepEqual(output.shape, c.output.shape);
      assertClose(output.toFloat32Array(), c.output.data, 1e-5, 0, `${c.name}: output`);
      finals.forEach((f, i) => {
        assert.deepEqual(f.shape, c.finals[i]!.shape);
        assertClose(f.toFloat32Array(), c.finals[i]!.data, 1e-5, 0, `${c.name}: final state ${i}`);
      });
      const weighted = [output, ...finals].map((t, i) =>
        t.mul(torch.tensor(Float32Array.from(c.upstream[i]!), { shape: t.shape })).sum(),
      );
      weighted.reduce((a, b) => a.add(b)).backward();
      assertClose(x.grad!.toFloat32Array(), c.input_grad, 1e-5, 0, `${c.name}: input gradient`);
      states.forEach((s, i) =>
        assertClose(s.grad!.toFloat32Array(), c.state_grads[i]!, 1e-5, 0, `${c.name}: state gradient ${i}`),
      );
      for (const [n, p] of layer.namedParameters())
        assertClose(p.grad!.toFloat32Array(), c.param_grads[n]!, 1e-5, 0, `${c.name}: gradient of ${n}`);
    });
    layer.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('recurrent layers name a bad argument or input', () => {
  assert.throws(() => new nn.LSTM(0, 4), /^ArgumentError: LSTM: inputSize must be an integer >= 1/);
  assert.throws(
    () => new nn.GRU(3, 4, { dropout: 2 }),
    /GRU: options.dropout must be a finite number >= 0 and <= 1, got 2/,
  );
  assert.throws(
    () => new nn.LSTM(3, 4, { batchFirst: 'yes' as never }),
    /LSTM: options.batchFirst must be true or false/,
  );
  const lstm = new nn.LSTM(3, 4);
  torch.tidy(() => {
    assert.throws(
      () => lstm.forward(torch.zeros([5, 2, 6])),
      /LSTM: x must have 3 features in its last dimension \(inputSize\), got shape \[5, 2, 6\]/,
    );
    assert.throws(
      () => lstm.forward(torch.zeros([5])),
      /LSTM: x must be a 2-d \[time, features\] or 3-d \(batched\) tensor, got shape \[5\]/,
    );
    assert.throws(
      () => lstm.forward(torch.zeros([5, 2, 3]), [torch.zeros([1, 3, 4]), torch.zeros([1, 2, 4])]),
      /LSTM: state\[0\] \(h0\) must be of shape \[1, 2, 4\], got \[1, 3, 4\]/,
    );
  });
  lstm.dispose();
});
