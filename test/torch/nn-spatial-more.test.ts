// The spatial nn pieces' arguments (their values: test/torch/nn-spatial-more.golden.test.ts):
// the named errors of gridSample, affineGrid, fold and unfold, the adaptive, power-average and
// fractional pools (layers and functional forms) and interpolate; the sizes kept as given; forward
// with and without indices; the functional pools giving the layers' results; no tensor left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { nn, onnx } from '../../src/torch/index.js';

const F = nn.functional;

test('gridSample and affineGrid: named errors of bad inputs, grids and options', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.randn([1, 2, 4, 4]);
    const grid = torch.zeros([1, 3, 3, 2]);
    assert.throws(
      () => F.gridSample(x, grid, { mode: 'cubic' as never }),
      /gridSample: options\.mode must be one of 'bilinear', 'nearest', 'bicubic', got 'cubic'/,
    );
    assert.throws(
      () => F.gridSample(x, grid, { paddingMode: 'reflect' as never }),
      /gridSample: options\.paddingMode must be one of 'zeros', 'border', 'reflection'/,
    );
    assert.throws(
      () => F.gridSample(x, grid, { alignCorners: 1 as never }),
      /gridSample: options\.alignCorners must be true or false/,
    );
    assert.throws(
      () => F.gridSample(x, torch.zeros([1, 3, 3, 3])),
      /gridSample: grid must be \[N, H', W', 2\] for an input \[1, 2, 4, 4\], got \[1, 3, 3, 3\]/,
    );
    assert.throws(
      () => F.gridSample(torch.zeros([2, 4, 4]), grid),
      /gridSample: input must be a 4-d \[N, C, H, W\] or 5-d/,
    );
    assert.throws(
      () => F.gridSample(torch.zeros([1, 1, 2, 2, 2]), torch.zeros([1, 2, 2, 2, 3]), { mode: 'bicubic' }),
      /gridSample: options\.mode 'bicubic' needs a 4-d input \(got 5-d\)/,
    );
    assert.throws(
      () => F.affineGrid(torch.zeros([1, 3, 4]), [1, 1, 4, 4]),
      /affineGrid: theta must be \[1, 2, 3\] \(a 2-d affine map per sample\) for size \[1, 1, 4, 4\], got \[1, 3, 4\]/,
    );
    assert.throws(
      () => F.affineGrid(torch.zeros([1, 2, 3]), [1, 4, 4]),
      /affineGrid: size must be the output size \[N, C, H, W\]/,
    );
    assert.throws(
      () => F.affineGrid(torch.zeros([1, 2, 3], 'int64'), [1, 1, 4, 4]),
      /affineGrid: theta must be a floating-point Tensor/,
    );
    // the identity map samples the input back (align corners: exactly)
    const identity = torch.tensor([1, 0, 0, 0, 1, 0], { shape: [1, 2, 3] });
    const same = F.gridSample(x, F.affineGrid(identity, [1, 2, 4, 4], { alignCorners: true }), {
      alignCorners: true,
    });
    assert.ok(same.sub(x).abs().max().item() < 1e-6);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('Fold and Unfold: sizes as given, the round trip, named errors', () => {
  const before = torch.liveTensors();
  const unfold = new nn.Unfold({ kernelSize: [2, 3], stride: 2 });
  assert.deepEqual([unfold.kernelSize, unfold.dilation, unfold.padding, unfold.stride], [[2, 3], 1, 0, 2]);
  const fold = new nn.Fold({ outputSize: 4, kernelSize: 2, stride: 2 });
  torch.tidy(() => {
    const x = torch.randn([2, 3, 4, 4]);
    const cols = F.unfold(x, 2, { stride: 2 });
    assert.deepEqual(cols.shape, [2, 12, 4]);
    assert.deepEqual(fold.forward(cols).toNumbers(), x.toNumbers(), 'blocks that do not overlap fold back');
    assert.deepEqual(unfold.forward(x).shape, [2, 18, 2]);
    assert.throws(
      () => F.unfold(torch.zeros([1, 1, 1, 4, 4]), 2),
      /unfold: the input must be 3-d or 4-d \(N, C, H, W/,
    );
    assert.throws(() => F.fold(x, 4, 2), /fold: the input must be 2-d or 3-d/);
    assert.throws(
      () => F.unfold(x, [2, 0] as never),
      /unfold: kernelSize\[1\] must be an integer >= 1, got 0/,
    );
    assert.throws(
      () => F.fold(cols, [4, 4], 2, { padding: -1 as never }),
      /fold: options\.padding must be an integer >= 0, got -1/,
    );
  });
  assert.throws(
    () => new nn.Unfold({} as never),
    /Unfold: options\.kernelSize must be a number or \[kH, kW\]/,
  );
  assert.throws(
    () => new nn.Fold({ kernelSize: 2 } as never),
    /Fold: options\.outputSize must be a number or \[H, W\]/,
  );
  unfold.dispose();
  fold.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the adaptive, power-average and fractional pools: forward, indices, named errors', () => {
  const before = torch.liveTensors();
  const adaptive = new nn.AdaptiveMaxPool2d([null, 2]);
  assert.deepEqual(adaptive.outputSize, [null, 2]);
  assert.equal(adaptive.returnIndices, false);
  const fractional = new nn.FractionalMaxPool2d(2, { outputRatio: 0.5 });
  torch.tidy(() => {
    const x = torch.arange(0, 16).float().reshape(1, 1, 4, 4);
    const values = adaptive.forward(x);
    assert.deepEqual(values.toNumbers(), [1, 3, 5, 7, 9, 11, 13, 15]);
    const [v1, i1] = new nn.AdaptiveMaxPool1d(2).forwardWithIndices(
      torch.tensor([3, 1, 4, 1, 5, 9], { shape: [1, 6] }),
    );
    assert.deepEqual(
      [v1.toNumbers(), i1.toNumbers()],
      [
        [4, 9],
        [2, 5],
      ],
    );
    // with distinct values every window's maximum is in the output, wherever the windows fall
    const [fv, fi] = fractional.forwardWithIndices(x);
    assert.deepEqual(fv.shape, [1, 1, 2, 2]);
    assert.equal(fi.dtype, 'int64');
    assert.deepEqual(fv.toNumbers(), fi.toNumbers());
    // LPPool with p = 1 over non-negative values is the windows' sum
    const lp = new nn.LPPool1d(1, 2);
    assert.deepEqual(lp.forward(torch.tensor([1, 2, 3, 4], { shape: [1, 1, 4] })).toNumbers(), [3, 7]);
    lp.dispose();
    assert.throws(
      () => adaptive.forward(torch.zeros([4, 4])),
      /AdaptiveMaxPool2d: the input must be 3-d or 4-d/,
    );
  });
  assert.throws(
    () => new nn.AdaptiveMaxPool3d([2, 2] as never),
    /AdaptiveMaxPool3d: outputSize must be an integer >= 1 or an array of 3 of them or null/,
  );
  assert.throws(
    () => new nn.AdaptiveMaxPool1d(2, { returnIndices: 'yes' as never }),
    /AdaptiveMaxPool1d: options\.returnIndices must be true or false/,
  );
  assert.throws(() => new nn.LPPool2d(0, 2), /LPPool2d: normType must be a finite number > 0, got 0/);
  assert.throws(() => new nn.LPPool1d(2, 2, null, 'no' as never), /LPPool1d: ceilMode must be true or false/);
  assert.throws(
    () => new nn.FractionalMaxPool2d(2, {}),
    /FractionalMaxPool2d: give one of options\.outputSize and options\.outputRatio \(got neither\)/,
  );
  assert.throws(
    () => new nn.FractionalMaxPool3d(2, { outputSize: 3, outputRatio: 0.5 }),
    /FractionalMaxPool3d: give one of options\.outputSize and options\.outputRatio \(got both\)/,
  );
  assert.throws(
    () => new nn.FractionalMaxPool2d(2, { outputRatio: [0.5, 1] }),
    /FractionalMaxPool2d: options\.outputRatio must be a number in \(0, 1\) or an array of 2 of them/,
  );
  adaptive.dispose();
  fractional.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the functional pools: the layers’ results, given samples, named errors', () => {
  const before = torch.liveTensors();
  const samples = torch.tensor([0.1, 0.7, 0.4, 0.9], { shape: [2, 1, 2], dtype: 'float64' });
  // the layer owns its samples (PyTorch's buffer _random_samples) and frees them with itself
  const layer = new nn.FractionalMaxPool2d(2, { outputSize: 3, randomSamples: samples.detach() });
  const lp = new nn.LPPool2d(2, [2, 3], 1, true);
  const adaptive = new nn.AdaptiveMaxPool3d([1, null, 2], { returnIndices: true });
  torch.tidy(() => {
    assert.deepEqual(Object.keys(layer.stateDict()), ['_random_samples']);
    const x = torch.randn([2, 1, 5, 6], 'float64');
    const same = (a: torch.Tensor, b: torch.Tensor) => assert.deepEqual(a.toNumbers(), b.toNumbers());
    same(layer.forward(x), F.fractionalMaxPool2d(x, 2, { outputSize: 3, randomSamples: samples }));
    // without samples, the same seed gives the same windows
    torch.manualSeed(3);
    const drawn = F.fractionalMaxPool3d(x, [1, 2, 2], { outputRatio: 0.5, returnIndices: true });
    torch.manualSeed(3);
    const again = new nn.FractionalMaxPool3d([1, 2, 2], { outputRatio: 0.5 });
    same(drawn[0], again.forward(x));
    again.dispose();
    same(lp.forward(x), F.lpPool2d(x, 2, [2, 3], 1, true));
    const [v, i] = adaptive.forward(x);
    const [fv, fi] = F.adaptiveMaxPool3d(x, [1, null, 2], { returnIndices: true });
    same(v, fv);
    same(i, fi);
    assert.equal(F.adaptiveMaxPool1d(x.flatten(2), 3).shape.join(), '2,1,3');

    assert.throws(
      () => F.adaptiveMaxPool2d('x' as never, 2),
      /^ArgumentError: adaptiveMaxPool2d: input must be a Tensor/,
    );
    assert.throws(
      () => F.adaptiveMaxPool1d(x, 2),
      /adaptiveMaxPool1d: the input must be 2-d or 3-d \(N, C, L, or without the batch dimension\), got shape \[2, 1, 5, 6\]/,
    );
    assert.throws(
      () => F.adaptiveMaxPool3d(x, [0, 1, 1]),
      /adaptiveMaxPool3d: outputSize\[0\] must be an integer >= 1, got 0/,
    );
    assert.throws(
      () => F.adaptiveMaxPool2d(x, 2, { returnIndices: 1 as never }),
      /adaptiveMaxPool2d: options\.returnIndices must be true or false, got 1/,
    );
    assert.throws(
      () => F.lpPool1d(x.flatten(2), -1, 2),
      /lpPool1d: normType must be a finite number > 0, got -1/,
    );
    assert.throws(() => F.lpPool2d(x, 2, [2, 0]), /lpPool2d: kernelSize\[1\] must be an integer >= 1, got 0/);
    assert.throws(() => F.lpPool2d(x, 2, 2, 0), /lpPool2d: stride must be an integer >= 1, got 0/);
    assert.throws(
      () => F.lpPool1d(torch.zeros([2, 4]), 2, 2, null, 1 as never),
      /lpPool1d: ceilMode must be true or false/,
    );
    assert.throws(
      () => F.fractionalMaxPool2d(x, 2, {}),
      /fractionalMaxPool2d: give one of options\.outputSize and options\.outputRatio \(got neither\)/,
    );
    assert.throws(
      () => F.fractionalMaxPool3d(x, 2, { outputRatio: 1.5 }),
      /fractionalMaxPool3d: options\.outputRatio must be a number in \(0, 1\) or an array of 3 of them/,
    );
    assert.throws(
      () => F.fractionalMaxPool2d(x, 2, { outputSize: 2, randomSamples: samples.float() }),
      /fractionalMaxPool2d: options\.randomSamples must be a float64 tensor of shape \[2, 1, 2\] \(batch, channels, spatial axes\) for an input of shape \[2, 1, 5, 6\], got a float32 tensor of shape \[2, 1, 2\]/,
    );
    assert.throws(
      () => F.fractionalMaxPool2d(x, 2, { outputSize: 2, randomSamples: samples.reshape(1, 2, 2) }),
      /got a float64 tensor of shape \[1, 2, 2\]/,
    );
    assert.throws(
      () => F.fractionalMaxPool2d(x, 2, { outputSize: 2, randomSamples: [0.5] as never }),
      /fractionalMaxPool2d: options\.randomSamples must be a Tensor/,
    );
  });
  assert.throws(
    () => new nn.FractionalMaxPool2d(2, { outputSize: 2, randomSamples: 0.5 as never }),
    /FractionalMaxPool2d: options\.randomSamples must be a Tensor or null, got 0\.5/,
  );
  for (const m of [layer, lp, adaptive]) m.dispose();
  samples.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('interpolate and the upsampling layers: named errors of modes and options', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.randn([1, 2, 4, 4]);
    assert.throws(
      () => F.interpolate(x, { size: 2, mode: 'cubic' as never }),
      /interpolate: options\.mode must be one of 'nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area'/,
    );
    assert.throws(
      () => F.interpolate(x, { size: 8, mode: 'linear' }),
      /interpolate: options\.mode 'linear' needs a 3-d input, got 4-d/,
    );
    assert.throws(
      () => F.interpolate(x, { size: 8, alignCorners: true }),
      /interpolate: options\.alignCorners applies to the modes linear, bilinear, bicubic and trilinear only, not 'nearest'/,
    );
    assert.throws(
      () => F.interpolate(x, { size: 8, scaleFactor: 2 }),
      /interpolate: options must be one of size and scaleFactor/,
    );
    assert.throws(() => F.interpolate(x, {}), /interpolate: options must be one of size and scaleFactor/);
    assert.throws(
      () => F.interpolate(x, { size: 8, mode: 'bilinear', recomputeScaleFactor: true }),
      /interpolate: options\.recomputeScaleFactor goes with scaleFactor, not with size/,
    );
    assert.throws(
      () => F.interpolate(x, { scaleFactor: 0.5, antialias: true }),
      /interpolate: options\.antialias is for the modes bilinear and bicubic only, not 'nearest'/,
    );
    assert.throws(
      () => F.interpolate(x, { size: [8, 8, 8] }),
      /interpolate: options\.size must be a number or an array of 2 \(one per spatial axis of the 4-d input\)/,
    );
    assert.throws(
      () => F.interpolate(x, { scaleFactor: [2, 0] }),
      /interpolate: options\.scaleFactor\[1\] must be a finite number > 0, got 0/,
    );
    assert.throws(
      () => F.interpolate(torch.zeros([4, 4]), { size: 2 }),
      /interpolate: x must be a 3-d, 4-d or 5-d Tensor/,
    );
    // nearest takes floor(dst / scale); nearest-exact the pixel centres, floor((dst + 0.5) / scale) (PyTorch's values)
    const row = torch.tensor([0, 1, 2], { shape: [1, 1, 3] });
    assert.deepEqual(F.interpolate(row, { size: 5 }).toNumbers(), [0, 0, 1, 1, 2]);
    assert.deepEqual(F.interpolate(row, { size: 5, mode: 'nearest-exact' }).toNumbers(), [0, 0, 1, 2, 2]);
  });
  assert.throws(
    () => new nn.Upsample({ size: [2], mode: 'cubic' as never }),
    /Upsample: options\.mode must be one of 'nearest'/,
  );
  assert.throws(
    () => new nn.UpsamplingNearest2d({ size: [2, 2], scaleFactor: 2 }),
    /UpsamplingNearest2d: options must be one of size and scaleFactor/,
  );
  const bilinear = new nn.UpsamplingBilinear2d({ scaleFactor: 2 });
  assert.deepEqual(bilinear.options, {
    size: undefined,
    scaleFactor: [2, 2],
    mode: 'bilinear',
    alignCorners: true,
  });
  // the ONNX export covers nearest, linear and bilinear resizing only
  const g = new onnx.OnnxGraph();
  const input = g.input('x', ['batch', 2, 4, 4]);
  const bicubic = new nn.Upsample({ scaleFactor: [2, 2], mode: 'bicubic' });
  assert.throws(
    () => onnx.moduleToOnnx(bicubic, g, input, 'up'),
    (e: Error) =>
      e instanceof onnx.OnnxExportError &&
      /^Upsample \('up'\) in mode 'bicubic' has no ONNX form here/.test(e.message),
  );
  for (const m of [bilinear, bicubic]) m.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
