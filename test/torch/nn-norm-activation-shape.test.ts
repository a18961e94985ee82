// InstanceNorm1d/2d/3d, the activations PReLU ... Threshold, PixelShuffle, PixelUnshuffle,
// ChannelShuffle, Unflatten and the padding layers against PyTorch 1.13
// (test/golden/torch/nn_norm_activation_shape.json, from scripts/golden/nn_norm_activation_shape.py): same-seed
// initialisation, the state before the pass (running statistics moved by training passes),
// outputs, input and parameter gradients, running statistics after; then channel dropout by its
// statistics, the functional forms, and the named errors of bad arguments and inputs (the ONNX
// forms: test/torch/onnx-norm-activation-shape.test.ts).
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
const golden = JSON.parse(
  readFileSync(join(goldenDir, 'torch', 'nn_norm_activation_shape.json'), 'utf8'),
) as {
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
  zeropad1d: () => new nn.ZeroPad1d([2, -1]),
  zeropad3d: () => new nn.ZeroPad3d([1, 0, 0, 2, 1, 1]),
  circularpad1d: () => new nn.CircularPad1d([2, 3]),
  circularpad1d_crop: () => new nn.CircularPad1d([-1, 2]),
  circularpad2d: () => new nn.CircularPad2d([1, 2, 3, 0]),
  circularpad2d_unbatched: () => new nn.CircularPad2d([2, 1, 1, 3]),
  circularpad3d: () => new nn.CircularPad3d([1, 0, 2, 1, 0, 2]),
};

test('every golden case has a maker', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(makers).sort());
});

const f32 = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });
const asTensor = (d: Data) =>
  d.shape.length === 0 && Number.isInteger(d.data[0])
    ? torch.tensor(
        BigInt64Array.from(d.data, (v) => BigInt(v)),
        { shape: [] },
      )
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
      layer.loadStateDict(
        Object.fromEntries(Object.entries(c.state_before).map(([k, d]) => [k, asTensor(d)])),
      );
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

/** For each slice along `channelDims` leading dimensions: whether it was zeroed whole or kept whole. */
function channelFates(y: torch.Tensor, x: torch.Tensor, channelDims: number, p: number): boolean[] {
  const per = y.shape.slice(channelDims).reduce((a, b) => a * b, 1);
  const out = y.toFloat64Array();
  const input = x.toFloat64Array();
  const fates: boolean[] = [];
  for (let c = 0; c < out.length / per; c++) {
    const slice = out.subarray(c * per, (c + 1) * per);
    const zeroed = slice.every((v) => v === 0);
    if (!zeroed)
      slice.forEach((v, i) =>
        assert.ok(Math.abs(v - input[c * per + i]! / (1 - p)) < 1e-5, 'kept channels scale by 1 / (1 - p)'),
      );
    fates.push(zeroed);
  }
  return fates;
}

test('Dropout1d/2d/3d: whole channels zeroed with probability p, the rest scaled by 1 / (1 - p); eval is the identity', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    torch.manualSeed(7);
    const p = 0.4;
    const cases: [nn.Dropout1d | nn.Dropout2d | nn.Dropout3d, number[], number][] = [
      [new nn.Dropout1d(p), [64, 32, 5], 2],
      [new nn.Dropout1d(p), [2048, 5], 1], // unbatched [C, L]
      [new nn.Dropout2d(p), [64, 32, 3, 3], 2],
      [new nn.Dropout2d(p), [64, 32, 5], 2], // 3-d: [N, C, L] as PyTorch 1.13 reads it
      [new nn.Dropout3d(p), [64, 32, 2, 2, 2], 2],
      [new nn.Dropout3d(p), [2048, 2, 2, 2], 1], // unbatched [C, D, H, W]
    ];
    for (const [layer, shape, channelDims] of cases) {
      const x = torch.rand(shape).add(0.5).requiresGrad_();
      const y = layer.forward(x);
      assert.deepEqual(y.shape, shape);
      const fates = channelFates(y, x, channelDims, p);
      const dropped = fates.filter(Boolean).length / fates.length;
      // 2048 channels: the standard deviation of the share is 0.011
      assert.ok(Math.abs(dropped - p) < 0.05, `${layer.constructor.name} ${shape}: share dropped ${dropped}`);
      // the gradient is the same mask: 0 or 1 / (1 - p) per channel
      y.sum().backward();
      const gradFates = channelFates(x.grad!, torch.onesLike(x), channelDims, p);
      assert.deepEqual(gradFates, fates, 'the gradient drops the same channels and scales the rest');
      layer.eval();
      const z = layer.forward(x);
      assert.deepEqual(z.toFloat64Array(), x.toFloat64Array(), 'eval mode is the identity');
    }
    const x = torch.rand([4, 3, 5]);
    assert.deepEqual(new nn.Dropout1d(0).forward(x).toFloat64Array(), x.toFloat64Array(), 'p = 0 keeps all');
    assert.ok(
      new nn.Dropout1d(1)
        .forward(x)
        .toFloat64Array()
        .every((v) => v === 0),
      'p = 1 drops all',
    );
    // the functional forms: the same rule, `training` as an argument
    assert.deepEqual(nn.functional.dropout2d(x, 0.5, false).toFloat64Array(), x.toFloat64Array());
    assert.equal(channelFates(nn.functional.dropout1d(x, 0.5), x, 2, 0.5).length, 12);
    assert.equal(channelFates(nn.functional.dropout3d(torch.rand([3, 2, 2, 2]), 0.5), x, 1, 0.5).length, 3);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the functional forms equal their layers', () => {
  torch.tidy(() => {
    torch.manualSeed(3);
    const x = torch.randn([2, 6, 4, 4]).mul(3);
    const F = nn.functional;
    const same = (a: torch.Tensor, b: torch.Tensor, what: string) =>
      assertClose(a.toFloat64Array(), b.toFloat64Array(), 0, 0, what);
    same(F.prelu(x, torch.full([6], 0.2)), new nn.PReLU({ numParameters: 6, init: 0.2 }).forward(x), 'prelu');
    same(F.relu6(x), x.clamp(0, 6), 'relu6');
    same(F.hardtanh(x, -0.5, 2), x.clamp(-0.5, 2), 'hardtanh');
    same(F.hardswish(x), new nn.Hardswish().forward(x), 'hardswish');
    same(F.hardsigmoid(x), x.add(3).clamp(0, 6).div(6), 'hardsigmoid');
    assertClose(F.mish(x).toFloat64Array(), x.mul(F.softplus(x).tanh()).toFloat64Array(), 1e-5, 1e-5, 'mish');
    assertClose(
      F.logsigmoid(x).toFloat64Array(),
      x.sigmoid().log().toFloat64Array(),
      1e-5,
      1e-5,
      'logsigmoid',
    );
    same(F.softsign(x), new nn.Softsign().forward(x), 'softsign');
    same(F.softmin(x, 1), F.softmax(x.neg(), 1), 'softmin');
    same(F.glu(x, 1), new nn.GLU(1).forward(x), 'glu');
    same(F.selu(x), new nn.SELU().forward(x), 'selu');
    same(F.celu(x, 0.5), new nn.CELU(0.5).forward(x), 'celu');
    same(F.threshold(x, 0.5, -2), new nn.Threshold(0.5, -2).forward(x), 'threshold');
    same(F.pixelShuffle(F.pixelUnshuffle(x, 2), 2), x, 'pixelUnshuffle then pixelShuffle');
    same(F.channelShuffle(x, 2), new nn.ChannelShuffle(2).forward(x), 'channelShuffle');
    assert.deepEqual(
      F.channelShuffle(torch.arange(0, 6).float().reshape(1, 6, 1), 2).toNumbers(),
      [0, 3, 1, 4, 2, 5],
    );
  });
});

test('bad arguments and inputs are named errors', () => {
  torch.tidy(() => {
    const t = (...shape: number[]) => torch.zeros(shape);
    const throwsNamed = (fn: () => unknown, pattern: RegExp) =>
      assert.throws(fn, (e: Error) => e.name === 'ArgumentError' && pattern.test(e.message), String(pattern));
    // rearrangements
    throwsNamed(() => new nn.PixelShuffle(0), /^PixelShuffle: upscaleFactor must be an integer >= 1/);
    throwsNamed(
      () => new nn.PixelShuffle(3).forward(t(1, 8, 3, 3)),
      /^PixelShuffle: upscaleFactor 3 does not fit the input's 8 channels \(shape \[1, 8, 3, 3\]\): they must be divisible by upscaleFactor squared \(9\)/,
    );
    throwsNamed(
      () => new nn.PixelShuffle(2).forward(t(8, 3)),
      /^PixelShuffle: the input must have at least 3 dimensions/,
    );
    throwsNamed(
      () => new nn.PixelUnshuffle(2).forward(t(1, 2, 3, 4)),
      /^PixelUnshuffle: downscaleFactor 2 does not divide the input's height 3 and width 4/,
    );
    throwsNamed(
      () => new nn.ChannelShuffle(4).forward(t(1, 6, 2)),
      /^ChannelShuffle: groups 4 does not divide the input's 6 channels/,
    );
    throwsNamed(
      () => new nn.ChannelShuffle(2).forward(t(2, 4)),
      /^ChannelShuffle: the input must have at least 3 dimensions/,
    );
    throwsNamed(
      () => new nn.Unflatten(1, [4, 2]).forward(t(2, 6)),
      /^Unflatten: unflattenedSize \[4, 2\] does not multiply up to 6, the size of dimension 1/,
    );
    throwsNamed(
      () => new nn.Unflatten(1, [-1, -1]),
      /^Unflatten: unflattenedSize must be sizes with at most one -1/,
    );
    throwsNamed(
      () => new nn.Unflatten(1, [2, 0]),
      /^Unflatten: unflattenedSize\[1\] must be an integer >= 1, or -1/,
    );
    throwsNamed(() => new nn.Unflatten(3, [2, 3]).forward(t(2, 6)), /^Unflatten: dim 3 is out of range/);
    // instance normalisation
    throwsNamed(
      () => new nn.InstanceNorm2d(3).forward(t(3, 4)),
      /^InstanceNorm2d: the input must be 3-d or 4-d \(\[N, C, H, W\], or without the batch dimension\), got shape \[3, 4\]/,
    );
    throwsNamed(
      () => new nn.InstanceNorm1d(4, { affine: true }).forward(t(2, 3, 5)),
      /^InstanceNorm1d: the input has 3 channels \(shape \[2, 3, 5\]\) but the layer was built for numFeatures = 4/,
    );
    throwsNamed(
      () => new nn.InstanceNorm1d(3).forward(t(2, 3, 1)),
      /^InstanceNorm1d: the input \(shape \[2, 3, 1\]\) has one spatial position per channel/,
    );
    throwsNamed(
      () => new nn.InstanceNorm3d(3, { eps: 0 }),
      /^InstanceNorm3d: options\.eps must be a finite number > 0, got 0/,
    );
    throwsNamed(() => new nn.InstanceNorm1d(0), /^InstanceNorm1d: numFeatures must be an integer >= 1/);
    throwsNamed(
      () => new nn.InstanceNorm1d(2, { affine: 'yes' } as never),
      /^InstanceNorm1d: options\.affine must be true or false/,
    );
    // without an affine or running statistics numFeatures is unused, as in PyTorch 1.13
    assert.deepEqual(new nn.InstanceNorm1d(4).forward(t(2, 3, 5)).shape, [2, 3, 5]);
    // activations
    throwsNamed(
      () => new nn.PReLU({ numParameters: 0 }),
      /^PReLU: options\.numParameters must be an integer >= 1/,
    );
    throwsNamed(() => new nn.PReLU({ init: Number.NaN }), /^PReLU: options\.init must be a finite number/);
    throwsNamed(
      () => new nn.PReLU({ numParameters: 3 }).forward(t(2, 4)),
      /^PReLU: weight has 3 slopes but the input has 4 channels \(shape \[2, 4\], channels on dimension 1\)/,
    );
    throwsNamed(() => new nn.Hardtanh(1, 0), /^Hardtanh: maxVal must be a finite number > 1, got 0/);
    throwsNamed(
      () => nn.functional.hardtanh(t(2), 2, 2),
      /^hardtanh: maxVal must be a finite number > 2, got 2/,
    );
    throwsNamed(() => new nn.CELU(0), /^CELU: alpha must be a finite number other than 0/);
    throwsNamed(
      () => new nn.GLU(1).forward(t(2, 5)),
      /^GLU: dimension 1 of the input \(shape \[2, 5\]\) has odd size 5/,
    );
    throwsNamed(
      () => new nn.Softmin(2).forward(t(2, 5)),
      /^Softmin: dim must be an integer >= -2 and <= 1, got 2/,
    );
    throwsNamed(() => new nn.Threshold(Number.NaN, 0), /^Threshold: threshold must be a finite number/);
    // channel dropout
    throwsNamed(() => new nn.Dropout2d(1.5), /^Dropout2d: p must be a finite number >= 0 and <= 1, got 1.5/);
    throwsNamed(
      () => new nn.Dropout1d().forward(t(2, 3, 4, 5)),
      /^Dropout1d: the input must be 2-d or 3-d \(\[N, C, L\], or without the batch dimension\)/,
    );
    throwsNamed(() => new nn.Dropout2d().forward(t(2, 3)), /^Dropout2d: the input must be 3-d or 4-d/);
    throwsNamed(() => new nn.Dropout3d().forward(t(2, 3, 4)), /^Dropout3d: the input must be 4-d or 5-d/);
    // padding
    throwsNamed(
      () => new nn.ReflectionPad2d([1, 2, 3] as never),
      /^ReflectionPad2d: padding must be an integer or an array of 4 \(left, right, top, bottom\), got an array of 3/,
    );
    throwsNamed(() => new nn.ConstantPad1d(1.5, 0), /^ConstantPad1d: padding must be an integer, got 1.5/);
    throwsNamed(() => new nn.ConstantPad2d(1, Number.NaN), /^ConstantPad2d: value must be a finite number/);
    throwsNamed(
      () => new nn.ReflectionPad1d([5, 1]).forward(t(2, 3, 5)),
      /^ReflectionPad1d: padding\[0\] = 5 and padding\[1\] = 1 must each be smaller than the size 5 of dimension 2 of the input/,
    );
    throwsNamed(
      () => new nn.ReplicationPad1d(-3).forward(t(2, 3, 5)),
      /^ReplicationPad1d: padding\[0\] = -3 and padding\[1\] = -3 leave -1 elements of dimension 2/,
    );
    throwsNamed(
      () => new nn.ReplicationPad2d(1).forward(t(3, 4)),
      /^ReplicationPad2d: the input must be 3-d or 4-d \(\[N, C, H, W\], or without the batch dimension\), got shape \[3, 4\]/,
    );
    throwsNamed(
      () => new nn.ReflectionPad3d(1).forward(t(1, 1, 1, 3, 3, 3)),
      /^ReflectionPad3d: the input must be 4-d or 5-d/,
    );
    throwsNamed(
      () => new nn.ConstantPad3d(1, 0).forward(t(3, 3)),
      /^ConstantPad3d: the input must be at least 3-d/,
    );
    throwsNamed(
      () => new nn.CircularPad1d([5, 1]).forward(t(2, 3, 4)),
      /^CircularPad1d: padding\[0\] = 5 and padding\[1\] = 1 must each be at most the size 4 of dimension 2 of the input \(shape \[2, 3, 4\]\); circular padding wraps around once/,
    );
    throwsNamed(
      () => new nn.CircularPad2d(1).forward(t(3, 4)),
      /^CircularPad2d: the input must be 3-d or 4-d \(\[N, C, H, W\], or without the batch dimension\), got shape \[3, 4\]/,
    );
    // negative sides crop; a constant pad may leave nothing, as in PyTorch
    assert.deepEqual(new nn.ConstantPad1d([-3, -2], 1).forward(t(2, 5)).shape, [2, 0]);
    assert.deepEqual(new nn.ZeroPad2d(1).forward(t(2, 2)).shape, [4, 4]);
    assert.deepEqual(new nn.ZeroPad2d([1, 2, 3, 4]).padding, [1, 2, 3, 4]);
    assert.deepEqual(new nn.ZeroPad3d(1).padding, [1, 1, 1, 1, 1, 1]);
    assert.deepEqual(new nn.CircularPad3d(2).forward(t(1, 2, 2, 2)).shape, [1, 6, 6, 6]);
  });
});
