// InstanceNorm1d/2d/3d, the activations PReLU ... Threshold, PixelShuffle, PixelUnshuffle,
// ChannelShuffle, Unflatten and the padding layers against PyTorch 1.13
// (test/golden/torch/nn_layers2.json, from scripts/golden/nn_layers2.py): same-seed
// initialisation, the state before the pass (running statistics moved by training passes),
// outputs, input and parameter gradients, running statistics after; then channel dropout by its
// statistics, the functional forms, and the named errors of bad arguments and inputs (the ONNX
// forms: test/torch/onnx-layers2.test.ts).
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
  state_before: Record<string, Data>;
  input: Data;
  output: Data;
  upstream: number[];
  input_grad: number[];
  param_grads: Record<string, number[]>;
  buffers_after: Record<string, number[]>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_layers2.json'), 'utf8')) as {
  cases: LayerCase[];
};

const makers: Record<string, () => nn.Layer> = {
  instancenorm1d: () => new nn.InstanceNorm1d(3),
  instancenorm1d_unbatched: () => new nn.InstanceNorm1d(3),
  instancenorm1d_affine: () => new nn.InstanceNorm1d(4, { affine: true }),
  instancenorm2d_track_train: () => new nn.InstanceNorm2d(3, { momentum: 0.3, trackRunningStats: true }),
  instancenorm2d_track_eval: () => new nn.InstanceNorm2d(3, { affine: true, trackRunningStats: true }),
  instancenorm2d_eval_notrack: () => new nn.InstanceNorm2d(2, { affine: true }),
  instancenorm2d_unbatched_track_eval: () => new nn.InstanceNorm2d(2, { trackRunningStats: true }),
  instancenorm3d_affine_track_unbatched: () =>
    new nn.InstanceNorm3d(3, { eps: 1e-3, affine: true, trackRunningStats: true }),
  prelu: () => new nn.PReLU(),
  prelu_channels: () => new nn.PReLU({ numParameters: 3, init: 0.1 }),
  prelu_1d: () => new nn.PReLU({ init: -0.3 }),
  relu6: () => new nn.ReLU6(),
  hardtanh: () => new nn.Hardtanh(-0.5, 2),
  hardswish: () => new nn.Hardswish(),
  hardsigmoid: () => new nn.Hardsigmoid(),
  mish: () => new nn.Mish(),
  logsigmoid: () => new nn.LogSigmoid(),
  softsign: () => new nn.Softsign(),
  softmin: () => new nn.Softmin(1),
  glu: () => new nn.GLU(1),
  glu_last: () => new nn.GLU(),
  selu: () => new nn.SELU(),
  celu: () => new nn.CELU(0.7),
  threshold: () => new nn.Threshold(0.1, 20),
  pixelshuffle: () => new nn.PixelShuffle(2),
  pixelshuffle_unbatched: () => new nn.PixelShuffle(3),
  pixelunshuffle: () => new nn.PixelUnshuffle(2),
  channelshuffle: () => new nn.ChannelShuffle(3),
  unflatten: () => new nn.Unflatten(1, [2, -1]),
  unflatten_last: () => new nn.Unflatten(-1, [2, 2, 3]),
  zeropad2d: () => new nn.ZeroPad2d([1, 2, 0, -1]),
  constantpad1d: () => new nn.ConstantPad1d(2, 1.5),
  constantpad2d_unbatched: () => new nn.ConstantPad2d([1, 0, 2, 1], -1),
  constantpad3d: () => new nn.ConstantPad3d(1, 0.5),
  reflectionpad1d: () => new nn.ReflectionPad1d([2, 3]),
  reflectionpad1d_unbatched_crop: () => new nn.ReflectionPad1d([-1, 2]),
  reflectionpad2d: () => new nn.ReflectionPad2d([1, 2, 2, 0]),
  reflectionpad3d: () => new nn.ReflectionPad3d(1),
  replicationpad1d: () => new nn.ReplicationPad1d([3, 1]),
  replicationpad2d_unbatched: () => new nn.ReplicationPad2d([1, 2, 3, 0]),
  replicationpad3d: () => new nn.ReplicationPad3d([1, 0, 2, 1, 0, 1]),
};

test('every golden case has a maker', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(makers).sort());
});

const f32 = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });
const asTensor = (d: Data) =>
  d.shape.length === 0 && Number.isInteger(d.data[0])
    ? torch.tensor(BigInt64Array.from(d.data, (v) => BigInt(v)), { shape: [] })
    : f32(d);

for (const c of golden.cases) {
  test(`nn golden (instance norm, activations, shuffles, padding): ${c.name}`, () => {
    const before = torch.liveTensors();
    torch.tidy(() => {
      torch.manualSeed(c.seed);
      const layer = makers[c.name]!();
      const state = layer.stateDict();
      assert.deepEqual(Object.keys(state), Object.keys(c.init), `${c.name} state names`);
      for (const [name, p] of Object.entries(c.init)) {
        assert.deepEqual(state[name]!.shape, p.shape, `${c.name} shape of ${name}`);
        assertClose(state[name]!.toFloat64Array(), p.data, 1e-6, 0, `${c.name} init ${name}`);
      }
      layer.loadStateDict(Object.fromEntries(Object.entries(c.state_before).map(([k, d]) => [k, asTensor(d)])));
      layer.train(c.train);
      const x = f32(c.input).requiresGrad_();
      const y = layer.forward(x);
      assert.deepEqual(y.shape, c.output.shape, `${c.name} output shape`);
      assertClose(y.toFloat64Array(), c.output.data, 1e-5, 1e-5, `${c.name} output`);
      y.mul(torch.tensor(Float32Array.from(c.upstream), { shape: y.shape }))
        .sum()
        .backward();
      assertClose(x.grad!.toFloat64Array(), c.input_grad, 1e-4, 1e-5, `${c.name} input grad`);
      const named = Object.fromEntries(layer.namedParameters());
      assert.deepEqual(Object.keys(named).sort(), Object.keys(c.param_grads).sort());
      for (const [name, g] of Object.entries(c.param_grads))
        assertClose(named[name]!.grad!.toFloat64Array(), g, 1e-4, 1e-5, `${c.name} grad ${name}`);
      const buffers = Object.fromEntries(layer.namedBuffers());
      assert.deepEqual(Object.keys(buffers).sort(), Object.keys(c.buffers_after).sort());
      for (const [name, b] of Object.entries(c.buffers_after))
        assertClose(buffers[name]!.toFloat64Array(), b, 1e-5, 1e-5, `${c.name} buffer ${name} after`);
      layer.dispose();
    });
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}
