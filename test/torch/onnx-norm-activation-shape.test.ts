// The ONNX forms of instance normalisation, PReLU ... Threshold, the shuffles, Unflatten, channel
// dropout and the padding layers, each run by ONNX Runtime against tailor's evaluation-mode forward
// pass (within 1e-4), and the named errors of what has no form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import onnxProto from 'onnx-proto';
import * as torch from '../../src/torch/index.js';
import { nn, onnx } from '../../src/torch/index.js';
import { parity } from './onnx-parity.js';

torch.setNumThreads(1);

test('instance normalisation: own statistics (InstanceNormalization), running ones (BatchNormalization)', async () => {
  await parity(
    new nn.Sequential(
      new nn.InstanceNorm2d(3),
      new nn.InstanceNorm2d(3, { affine: true, eps: 1e-3 }),
      new nn.InstanceNorm2d(3, { trackRunningStats: true }),
      new nn.InstanceNorm2d(3, { affine: true, trackRunningStats: true }),
    ),
    [2, 3, 4, 5],
    ['batch', 3, 4, 5],
  );
  await parity(new nn.InstanceNorm1d(4, { affine: true }), [3, 4, 6], ['batch', 4, 6]);
  await parity(
    new nn.Sequential(
      new nn.InstanceNorm3d(2, { affine: true }),
      new nn.InstanceNorm3d(2, { trackRunningStats: true }),
    ),
    [2, 2, 3, 3, 4],
    ['batch', 2, 3, 3, 4],
  );
});

test('activations: PReLU (shared and per channel), ReLU6, Hardtanh, Hardswish, Hardsigmoid, Mish, ...', async () => {
  const activations = () =>
    new nn.Sequential(
      new nn.PReLU(),
      new nn.PReLU({ numParameters: 4 }),
      new nn.Hardswish(),
      new nn.Mish(),
      new nn.Softsign(),
      new nn.SELU(),
      new nn.CELU(0.6),
      new nn.LogSigmoid(),
      new nn.Threshold(-0.2, 3),
      new nn.Hardsigmoid(),
    );
  // inputs times 4 reach the clipped and the linear parts
  await parity(activations(), [3, 4, 5, 2], ['batch', 4, 5, 2], 4);
  await parity(
    new nn.Sequential(new nn.PReLU({ numParameters: 4 }), new nn.Softmin(1)),
    [3, 4],
    ['batch', 4],
    3,
  );
  await parity(new nn.Sequential(new nn.ReLU6(), new nn.Hardtanh(0.5, 4)), [3, 4, 5], ['batch', 4, 5], 5);
  await parity(new nn.Hardtanh(-2, -0.5), [3, 4, 5], ['batch', 4, 5], 3);
  await parity(new nn.Sequential(new nn.GLU(1), new nn.GLU()), [2, 6, 4], ['batch', 3, 2]);
});

test('PixelShuffle (DepthToSpace CRD), PixelUnshuffle, ChannelShuffle, Unflatten, channel dropout', async () => {
  await parity(new nn.PixelShuffle(2), [2, 12, 3, 4], ['batch', 3, 6, 8]);
  await parity(new nn.PixelUnshuffle(3), [2, 2, 6, 9], ['batch', 18, 2, 3]);
  await parity(
    new nn.Sequential(new nn.PixelUnshuffle(2), new nn.PixelShuffle(2)),
    [1, 3, 4, 6],
    ['batch', 3, 4, 6],
  );
  await parity(new nn.ChannelShuffle(3), [2, 6, 3, 2], ['batch', 6, 3, 2]);
  await parity(new nn.ChannelShuffle(2), [2, 4, 5], ['batch', 4, 5]);
  await parity(new nn.Unflatten(1, [2, -1, 3]), [2, 12, 5], ['batch', 2, 2, 3, 5]);
  await parity(new nn.Unflatten(-1, [3, 4]), [2, 5, 12], ['batch', 5, 3, 4]);
  await parity(new nn.Unflatten(-2, [4, 3]), [2, 12, 5], ['batch', 4, 3, 5]);
  await parity(
    new nn.Sequential(
      new nn.Dropout1d(0.5),
      new nn.Unflatten(2, [2, 2]),
      new nn.Dropout2d(0.3),
      new nn.Dropout3d(),
    ),
    [2, 3, 4],
    ['batch', 3, 2, 2],
  );
  // DepthToSpace's CRD order is pixel_shuffle's: the mode is written in the file
  const g = new onnx.OnnxGraph();
  g.output('y', onnx.moduleToOnnx(new nn.PixelShuffle(2), g, g.input('x', ['batch', 4, 2, 2])), [
    'batch',
    1,
    4,
    4,
  ]);
  const model = onnxProto.onnx.ModelProto.decode(g.encode({ producerVersion: 't', graphName: 'p' }));
  const node = model.graph?.node?.[0];
  assert.equal(node?.opType, 'DepthToSpace');
  const mode = node?.attribute?.find((a) => a.name === 'mode')?.s;
  assert.equal(new TextDecoder().decode(mode ?? new Uint8Array()), 'CRD');
});

test('padding layers: Pad nodes in constant, reflect and edge mode, PyTorch order, negative sides', async () => {
  await parity(
    new nn.Sequential(new nn.ZeroPad2d([1, 2, 0, 3]), new nn.ConstantPad2d([0, -1, 2, 1], 1.5)),
    [2, 3, 4, 5],
    ['batch', 3, 10, 7],
  );
  await parity(new nn.ConstantPad1d([2, -1], -2), [2, 3, 4], ['batch', 3, 5]);
  await parity(new nn.ConstantPad3d([1, 0, 0, 2, 1, 1], 0.5), [1, 2, 2, 3, 2], ['batch', 2, 4, 5, 3]);
  await parity(new nn.ReflectionPad1d([2, 3]), [2, 3, 5], ['batch', 3, 10]);
  await parity(new nn.ReflectionPad2d([1, 2, 2, 0]), [2, 2, 4, 5], ['batch', 2, 6, 8]);
  await parity(new nn.ReflectionPad3d(1), [1, 2, 3, 3, 3], ['batch', 2, 5, 5, 5]);
  await parity(new nn.ReplicationPad1d([3, 1]), [2, 2, 4], ['batch', 2, 8]);
  await parity(new nn.ReplicationPad1d([-2, 3]), [2, 2, 4], ['batch', 2, 5]);
  await parity(new nn.ReplicationPad2d([1, 2, 3, 0]), [2, 2, 3, 4], ['batch', 2, 6, 7]);
  await parity(new nn.ReplicationPad3d([1, 0, 2, 1, 0, 1]), [1, 2, 2, 3, 3], ['batch', 2, 3, 6, 4]);
  await parity(new nn.ZeroPad1d([2, -1]), [2, 3, 4], ['batch', 3, 5]);
  await parity(new nn.ZeroPad3d([1, 0, 0, 2, 1, 1]), [1, 2, 2, 3, 2], ['batch', 2, 4, 5, 3]);
});

test('circular padding layers: Slice and Concat per axis (opset 17 has no wrap mode)', async () => {
  await parity(new nn.CircularPad1d([2, 3]), [2, 3, 4], ['batch', 3, 9]);
  await parity(new nn.CircularPad2d([1, 2, 3, 0]), [2, 2, 3, 4], ['batch', 2, 6, 7]);
  await parity(new nn.CircularPad3d([1, 0, 2, 1, 0, 2]), [1, 2, 2, 3, 3], ['batch', 2, 4, 6, 4]);
});

test('what has no ONNX form is a named error', () => {
  const g = new onnx.OnnxGraph();
  const x = g.input('x', ['batch', 3, 5]);
  assert.throws(
    () => onnx.moduleToOnnx(new nn.ReflectionPad1d([-1, 2]), g, x, 'm'),
    (e: Error) =>
      e instanceof onnx.OnnxExportError &&
      /^ReflectionPad1d \('m'\) with negative padding \(cropping\) has no exact ONNX mapping in reflect mode/.test(
        e.message,
      ),
  );
  assert.throws(
    () => onnx.moduleToOnnx(new nn.CircularPad1d([-1, 2]), g, x, 'c'),
    (e: Error) =>
      e instanceof onnx.OnnxExportError &&
      /^CircularPad1d \('c'\) with negative padding \(cropping\) has no ONNX form in circular mode/.test(
        e.message,
      ),
  );
});
