// The 3-d layers against PyTorch 1.13 (test/golden/torch/nn3d.json, from scripts/golden/nn3d.py):
// same-seed initialisation, outputs, input and parameter gradients, running statistics; then
// the named errors (their ONNX forms: test/torch/onnx.test.ts).
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
  params: Record<string, Data>;
  input: Data;
  output: Data;
  upstream: number[];
  input_grad: number[];
  param_grads: Record<string, number[]>;
  buffers_after: Record<string, number[]>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn3d.json'), 'utf8')) as {
  cases: LayerCase[];
};

const makers: Record<string, () => nn.Module & { forward(x: torch.Tensor): torch.Tensor }> = {
  conv3d: () => new nn.Conv3d(2, 3, 3, { padding: 1 }),
  conv3d_groups_dilation_stride: () =>
    new nn.Conv3d(4, 6, 2, { stride: 2, padding: 1, dilation: 2, groups: 2 }),
  conv3d_nobias: () => new nn.Conv3d(3, 2, 1, { bias: false }),
  batchnorm3d_train: () => new nn.BatchNorm3d(3, { momentum: 0.2 }),
  batchnorm3d_eval: () => new nn.BatchNorm3d(3, { eps: 1e-3 }),
  maxpool3d: () => new nn.MaxPool3d(2),
  maxpool3d_stride_padding: () => new nn.MaxPool3d(3, 2, 1),
  avgpool3d: () => new nn.AvgPool3d(2),
  avgpool3d_stride_padding: () => new nn.AvgPool3d(3, 2, 1),
  adaptiveavgpool3d_global: () => new nn.AdaptiveAvgPool3d(1),
  adaptiveavgpool3d_sizes: () => new nn.AdaptiveAvgPool3d([2, 3, 2]),
};

test('every 3-d golden case has a maker', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(makers).sort());
});

for (const c of golden.cases) {
  test(`nn 3-d golden: ${c.name}`, () => {
    const before = torch.liveTensors();
    torch.tidy(() => {
      torch.manualSeed(c.seed);
      const layer = makers[c.name]!();
      const state = layer.stateDict();
      assert.deepEqual(
        Object.keys(state).filter((k) => k !== 'num_batches_tracked'),
        Object.keys(c.params),
      );
      // same seed, same draws: the initialisation is PyTorch's (BatchNorm3d_eval's values were set by hand)
      if (c.name !== 'batchnorm3d_eval')
        for (const [name, p] of Object.entries(c.params)) {
          assert.deepEqual(state[name]!.shape, p.shape, `${c.name} shape of ${name}`);
          assertClose(state[name]!.toFloat64Array(), p.data, 1e-6, 0, `${c.name} init ${name}`);
        }
      const loaded: Record<string, torch.Tensor> = {};
      for (const [name, p] of Object.entries(c.params))
        loaded[name] = torch.tensor(Float32Array.from(p.data), { shape: p.shape });
      layer.loadStateDict(loaded, false);
      layer.train(c.train);
      const x = torch.tensor(Float32Array.from(c.input.data), { shape: c.input.shape }).requiresGrad_();
      const y = layer.forward(x);
      assert.deepEqual(y.shape, c.output.shape, `${c.name} output shape`);
      assertClose(y.toFloat64Array(), c.output.data, 1e-5, 0, `${c.name} output`);
      y.mul(torch.tensor(Float32Array.from(c.upstream), { shape: y.shape }))
        .sum()
        .backward();
      assertClose(x.grad!.toFloat64Array(), c.input_grad, 1e-5, 0, `${c.name} input grad`);
      const named = Object.fromEntries(layer.namedParameters());
      for (const [name, g] of Object.entries(c.param_grads))
        assertClose(named[name]!.grad!.toFloat64Array(), g, 1e-4, 1e-5, `${c.name} grad ${name}`);
      const buffers = Object.fromEntries(layer.namedBuffers());
      for (const [name, b] of Object.entries(c.buffers_after))
        assertClose(buffers[name]!.toFloat64Array(), b, 1e-5, 0, `${c.name} buffer ${name}`);
      layer.dispose();
    });
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('the 3-d layers name bad arguments and inputs', () => {
  assert.throws(
    () => new nn.Conv3d(3, 4, 3, { groups: 2 }),
    /Conv3d: in \(3\) and out \(4\) channels must be divisible by groups \(2\)/,
  );
  assert.throws(() => new nn.Conv3d(3, 4, 0), /Conv3d: kernelSize must be an integer >= 1/);
  assert.throws(
    () => new nn.BatchNorm3d(3, { eps: 0 }),
    /BatchNorm3d: options.eps must be a finite number > 0/,
  );
  const bn = new nn.BatchNorm3d(2);
  torch.tidy(() =>
    assert.throws(
      () => bn.forward(torch.zeros([2, 2, 3, 3])),
      /BatchNorm3d: expected a 5-d input, got shape \[2,2,3,3\]/,
    ),
  );
  bn.dispose();
});
