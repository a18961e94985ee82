// ConvTranspose3d, pooling windows and convolution kernels that are not squares or cubes, and the
// convolutions' 'same' and 'valid' paddings and padding modes, the pools' options and MaxUnpool
// against PyTorch 1.13
// (test/golden/torch/nn_more.json, from scripts/golden/nn_more.py): same-seed initialisation,
// outputs, input and parameter gradients; then the named errors of bad windows (their ONNX forms:
// test/torch/onnx.test.ts).
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
  params: Record<string, Data>;
  input: Data;
  output: Data;
  upstream: number[];
  input_grad: number[];
  param_grads: Record<string, number[]>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_more.json'), 'utf8')) as {
  cases: LayerCase[];
};

/** A max pool with its indices, then MaxUnpool back to the input's size (or a given one). */
class PoolUnpool extends nn.Module {
  constructor(
    readonly pool: nn.MaxPool1d | nn.MaxPool2d | nn.MaxPool3d,
    readonly unpool: nn.MaxUnpool1d | nn.MaxUnpool2d | nn.MaxUnpool3d,
    readonly size?: number[],
  ) {
    super();
  }
  forward(x: torch.Tensor): torch.Tensor {
    return torch.tidy(() => {
      const [y, indices] = this.pool.forwardWithIndices(x);
      return this.unpool.forward(y, indices, this.size ?? x.shape);
    });
  }
}

const makers: Record<string, () => nn.Layer> = {
  convtranspose3d: () => new nn.ConvTranspose3d(2, 3, 3, { stride: 2, padding: 1, outputPadding: 1 }),
  convtranspose3d_groups_dilation_nobias: () =>
    new nn.ConvTranspose3d(4, 2, 2, { groups: 2, dilation: 2, bias: false }),
  convtranspose3d_stride_dilation_outpad: () =>
    new nn.ConvTranspose3d(1, 2, 2, { stride: 3, dilation: 2, outputPadding: 2 }),
  maxpool1d_tuple: () => new nn.MaxPool1d([3], [2], [1]),
  avgpool1d_tuple: () => new nn.AvgPool1d([4], 3, [2]),
  maxpool2d_rect: () => new nn.MaxPool2d([2, 3], [1, 2], [0, 1]),
  maxpool2d_rect_default_stride: () => new nn.MaxPool2d([2, 3]),
  avgpool2d_rect: () => new nn.AvgPool2d([3, 2], [2, 1], [1, 0]),
  maxpool3d_rect: () => new nn.MaxPool3d([1, 2, 3], [1, 2, 1], [0, 1, 1]),
  avgpool3d_rect: () => new nn.AvgPool3d([2, 1, 3], [1, 1, 2], [1, 0, 1]),
  conv1d_tuple: () => new nn.Conv1d(2, 3, [3], { stride: [2], padding: [1], dilation: [2] }),
  conv2d_rect: () =>
    new nn.Conv2d(2, 4, [1, 3], { stride: [2, 1], padding: [0, 1], dilation: [1, 2], groups: 2 }),
  conv3d_rect: () => new nn.Conv3d(1, 2, [2, 1, 3], { stride: [1, 2, 1], padding: [1, 0, 1], bias: false }),
  convtranspose2d_rect: () =>
    new nn.ConvTranspose2d(2, 3, [2, 3], { stride: [2, 1], padding: [1, 0], outputPadding: [1, 0] }),
  convtranspose3d_rect: () =>
    new nn.ConvTranspose3d(1, 2, [1, 2, 3], {
      stride: [1, 2, 2],
      dilation: [1, 1, 2],
      outputPadding: [0, 1, 1],
    }),
  conv1d_same_even_kernel: () => new nn.Conv1d(2, 3, 4, { padding: 'same' }),
  conv2d_same_dilation: () => new nn.Conv2d(2, 2, [3, 4], { padding: 'same', dilation: [2, 1] }),
  conv3d_same: () => new nn.Conv3d(1, 2, [2, 3, 1], { padding: 'same', bias: false }),
  conv2d_valid: () => new nn.Conv2d(2, 3, 3, { padding: 'valid', stride: 2 }),
  conv2d_reflect: () => new nn.Conv2d(2, 3, 3, { padding: 1, paddingMode: 'reflect' }),
  conv1d_circular_same: () => new nn.Conv1d(2, 2, 4, { padding: 'same', paddingMode: 'circular' }),
  conv3d_replicate: () => new nn.Conv3d(1, 2, [1, 2, 3], { padding: [0, 1, 1], paddingMode: 'replicate' }),
  conv2d_reflect_rect_stride: () =>
    new nn.Conv2d(1, 2, [3, 2], { stride: [2, 1], padding: [1, 1], paddingMode: 'reflect' }),
  maxpool2d_dilation_ceil: () =>
    new nn.MaxPool2d([3, 2], [2, 1], [1, 0], { dilation: [2, 1], ceilMode: true }),
  maxpool1d_ceil_edge: () => new nn.MaxPool1d(2, 3, 1, { ceilMode: true }),
  avgpool2d_ceil_nocount: () => new nn.AvgPool2d(3, 2, 1, { ceilMode: true, countIncludePad: false }),
  avgpool1d_ceil_nocount: () => new nn.AvgPool1d(3, 2, 1, { ceilMode: true, countIncludePad: false }),
  avgpool3d_divisor: () => new nn.AvgPool3d(2, 1, 0, { divisorOverride: 3 }),
  unpool1d: () => new PoolUnpool(new nn.MaxPool1d(3, 2, 1), new nn.MaxUnpool1d(3, 2, 1)),
  unpool2d_rect: () =>
    new PoolUnpool(new nn.MaxPool2d([2, 3], [2, 2]), new nn.MaxUnpool2d([2, 3], [2, 2]), [5, 7]),
  unpool3d: () => new PoolUnpool(new nn.MaxPool3d(2, 2), new nn.MaxUnpool3d(2, 2)),
};

test('every golden case has a maker', () => {
  assert.deepEqual(golden.cases.map((c) => c.name).sort(), Object.keys(makers).sort());
});

const f32 = (d: Data) => torch.tensor(Float32Array.from(d.data), { shape: d.shape });

for (const c of golden.cases) {
  test(`nn golden (ConvTranspose3d, per-axis windows and kernels, paddings): ${c.name}`, () => {
    const before = torch.liveTensors();
    torch.tidy(() => {
      torch.manualSeed(c.seed);
      const layer = makers[c.name]!();
      const state = layer.stateDict();
      assert.deepEqual(Object.keys(state), Object.keys(c.params), `${c.name} parameter names`);
      // same seed, same draws: the initialisation is PyTorch's
      for (const [name, p] of Object.entries(c.params)) {
        assert.deepEqual(state[name]!.shape, p.shape, `${c.name} shape of ${name}`);
        assertClose(state[name]!.toFloat64Array(), p.data, 1e-6, 0, `${c.name} init ${name}`);
      }
      const x = f32(c.input).requiresGrad_();
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
      layer.dispose();
    });
    assert.equal(torch.liveTensors(), before, 'no tensor leaks');
  });
}

test('pooling keeps the sizes as given and per axis; bad windows are named errors', () => {
  const pool = new nn.AvgPool2d([3, 2], null, [1, 0]);
  assert.deepEqual(pool.kernelSize, [3, 2]);
  assert.deepEqual(pool.stride, [3, 2], 'the stride defaults to the kernel size');
  assert.deepEqual(pool.window, { kernelSize: [3, 2], stride: [3, 2], padding: [1, 0], dilation: [1, 1] });
  assert.deepEqual(new nn.MaxPool3d(2, [1, 2, 1]).window, {
    kernelSize: [2, 2, 2],
    stride: [1, 2, 1],
    padding: [0, 0, 0],
    dilation: [1, 1, 1],
  });
  assert.throws(
    () => new nn.MaxPool2d([2, 3, 4] as never),
    /MaxPool2d: kernelSize must be an integer >= 1 or an array of 2 of them \(one per spatial axis\), got an array of 3/,
  );
  assert.throws(
    () => new nn.AvgPool3d([2, 0, 2]),
    /AvgPool3d: kernelSize\[1\] must be an integer >= 1, got 0/,
  );
  assert.throws(() => new nn.MaxPool1d(3, 0), /MaxPool1d: stride must be an integer >= 1, got 0/);
  assert.throws(() => new nn.AvgPool1d(2, 1, -1), /AvgPool1d: padding must be an integer >= 0, got -1/);
  new nn.MaxPool2d([2, 4], 1, [1, 2]).dispose(); // half the kernel is allowed
  assert.throws(
    () => new nn.MaxPool2d([2, 3], 1, [1, 2]),
    /MaxPool2d: padding 2 of spatial axis 1 must be at most half the kernel size 3/,
  );
  assert.throws(
    () => new nn.MaxPool2d([3, 4], 1, [2, 0]),
    /MaxPool2d: padding 2 of spatial axis 0 must be at most half the kernel size 3 \(rounded down\)/,
  );
  assert.throws(
    () => new nn.ConvTranspose3d(2, 3, 2, { outputPadding: 1 }),
    /ConvTranspose3d: outputPadding 1 of spatial axis 0 must be smaller than its stride \(1\) or dilation \(1\)/,
  );
  assert.throws(
    () => new nn.ConvTranspose2d(2, 3, 2, { stride: [2, 1], outputPadding: [1, 1] }),
    /ConvTranspose2d: outputPadding 1 of spatial axis 1 must be smaller than its stride \(1\) or dilation \(1\)/,
  );
  // convolutions: the sizes as given, per axis in window; a wrong count or value is named
  const conv = new nn.Conv2d(2, 4, [1, 3], { stride: 2, padding: [0, 1] });
  assert.deepEqual(conv.kernelSize, [1, 3]);
  assert.equal(conv.stride, 2);
  assert.deepEqual(conv.window, {
    kernelSize: [1, 3],
    stride: [2, 2],
    padding: [0, 1],
    paddingExtra: [0, 0],
    dilation: [1, 1],
    outputPadding: [0, 0],
  });
  assert.deepEqual(conv.weight.shape, [4, 2, 1, 3]);
  conv.dispose();
  assert.throws(
    () => new nn.Conv3d(1, 2, [2, 2] as never),
    /Conv3d: kernelSize must be an integer >= 1 or an array of 3 of them \(one per spatial axis\), got an array of 2/,
  );
  assert.throws(
    () => new nn.Conv1d(1, 2, 3, { dilation: [0] }),
    /Conv1d: options\.dilation\[0\] must be an integer >= 1, got 0/,
  );
  // 'same': dilation (k - 1) zeros in all, the odd one after the input
  const same = new nn.Conv2d(1, 1, [3, 4], { padding: 'same', dilation: [2, 1] });
  assert.equal(same.padding, 'same');
  assert.deepEqual(same.window.padding, [2, 1]);
  assert.deepEqual(same.window.paddingExtra, [0, 1]);
  same.dispose();
  assert.throws(
    () => new nn.Conv2d(1, 2, 3, { padding: 'same', stride: [1, 2] }),
    /Conv2d: options\.padding must be a number when the stride is not 1 \('same' needs stride 1, got \[1,2\]\)/,
  );
  assert.throws(
    () => new nn.Conv1d(1, 2, 3, { padding: 'full' as never }),
    /Conv1d: options\.padding must be an integer >= 0, one per axis, 'same' or 'valid'/,
  );
  assert.throws(
    () => new nn.ConvTranspose2d(1, 2, 3, { padding: 'same' as never }),
    /ConvTranspose2d: options\.padding must be an integer >= 0 or one per spatial axis/,
  );
  // the pools' options
  const dilated = new nn.MaxPool2d(3, 1, [2, 1], { dilation: [2, 1] });
  assert.deepEqual(dilated.window.dilation, [2, 1]);
  assert.deepEqual(dilated.dilation, [2, 1]);
  assert.equal(new nn.AvgPool2d(2).countIncludePad, true, 'PyTorch counts the padding by default');
  assert.throws(
    () => new nn.MaxPool2d(3, 1, [3, 1], { dilation: [2, 1] }),
    /MaxPool2d: padding 3 of spatial axis 0 must be at most half the dilated kernel size 5 \(rounded down\)/,
  );
  assert.throws(
    () => new nn.AvgPool1d(3, 1, 0, { divisorOverride: 2 }),
    /AvgPool1d: options\.divisorOverride must be null \(AvgPool1d has none, as in PyTorch\), got 2/,
  );
  assert.throws(
    () => new nn.AvgPool2d(3, 1, 0, { divisorOverride: 0 }),
    /AvgPool2d: options\.divisorOverride must be an integer >= 1, got 0/,
  );
  assert.throws(
    () => new nn.AvgPool2d(3, 1, 0, { countIncludePad: 'no' as never }),
    /AvgPool2d: options\.countIncludePad must be true or false/,
  );
  assert.throws(
    () => new nn.MaxPool3d(2, 1, 0, { ceilMode: 1 as never }),
    /MaxPool3d: options\.ceilMode must be true or false/,
  );
  // MaxUnpool: the default size, a given one, and an outputSize outside what a pool allows
  torch.tidy(() => {
    const pool = new nn.MaxPool2d(2);
    const [y4, i4] = pool.forwardWithIndices(torch.arange(0, 16).float().reshape(1, 1, 4, 4));
    assert.equal(i4.dtype, 'int64');
    assert.deepEqual(i4.toNumbers(), [5, 7, 13, 15]);
    assert.deepEqual(new nn.MaxUnpool2d(2).forward(y4, i4).shape, [1, 1, 4, 4]);
    const [y5, i5] = pool.forwardWithIndices(torch.arange(0, 20).float().reshape(1, 1, 4, 5));
    assert.deepEqual(new nn.MaxUnpool2d(2).forward(y5, i5, [1, 1, 4, 5]).shape, [1, 1, 4, 5]);
    assert.throws(
      () => new nn.MaxUnpool2d(2).forward(y5, i5, [6, 4]),
      /MaxUnpool2d: outputSize \[6,4\] is not a size a pool gives this input from: spatial axis 0 must lie between 2 and 6, exclusive/,
    );
    assert.throws(() => new nn.MaxUnpool2d(2).forward(y5, i5, [4]), /MaxUnpool2d: outputSize has 1 sizes/);
  });
  assert.throws(
    () => new nn.Conv2d(1, 2, 3, { paddingMode: 'mirror' as never }),
    /Conv2d: options\.paddingMode must be 'zeros', 'reflect', 'replicate' or 'circular', got 'mirror'/,
  );
  assert.throws(
    () => new nn.ConvTranspose1d(1, 2, 3, { paddingMode: 'reflect' } as never),
    /ConvTranspose1d: options\.paddingMode must be 'zeros' \(the transposed convolutions pad with zeros only\)/,
  );
  assert.throws(
    () => new nn.Conv2d(1, 2, 3, { padding: [1, -1] }),
    /Conv2d: options\.padding\[1\] must be an integer >= 0, got -1/,
  );
  assert.throws(
    () => new nn.ConvTranspose3d(3, 4, 3, { groups: 2 }),
    /ConvTranspose3d: in \(3\) and out \(4\) channels must be divisible by groups \(2\)/,
  );
});
