// The ONNX forms of the nn layers, each run by ONNX Runtime against tailor's evaluation-mode
// forward pass (within 1e-4), the metadata and dynamic batch axis of the file, and the named
// errors of layers without a form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';
import * as torch from '../../src/torch/index.js';
import { nn, onnx } from '../../src/torch/index.js';
import { parity } from './onnx-parity.js';

torch.setNumThreads(1);

test('2-d layers: strided conv, batch norm, tanh GELU, pooling, group norm, linear', async () => {
  const layer = new nn.Sequential(
    new nn.Conv2d(3, 8, 3, { stride: 2, padding: 1, bias: false }),
    new nn.BatchNorm2d(8),
    new nn.GELU('tanh'),
    new nn.MaxPool2d(2),
    new nn.AvgPool2d(3, 1, 1),
    new nn.GroupNorm(2, 8),
    new nn.Sigmoid(),
    new nn.Conv2d(8, 6, 3, { groups: 2, dilation: 2, padding: 2 }),
    new nn.AdaptiveAvgPool2d(1),
    new nn.Flatten(),
    new nn.Dropout(0.3),
    new nn.Linear(6, 5),
    new nn.Tanh(),
    new nn.Identity(),
  );
  await parity(layer, [4, 3, 17, 17], ['batch', 5]);
  layer.dispose();
});

test('1-d layers: dilated grouped conv, batch norm, pooling, layer norm, exact GELU', async () => {
  const layer = new nn.Sequential(
    new nn.Conv1d(2, 4, 5, { dilation: 2, padding: 4, groups: 2 }),
    new nn.BatchNorm1d(4),
    new nn.ReLU(),
    new nn.MaxPool1d(2),
    new nn.AvgPool1d(2),
    new nn.LayerNorm([4]),
    new nn.GELU(),
    new nn.AdaptiveAvgPool1d(1),
    new nn.Flatten(),
    new nn.BatchNorm1d(4),
    new nn.Linear(4, 3, { bias: false }),
  );
  await parity(layer, [5, 2, 16], ['batch', 3]);
  layer.dispose();
});

test('3-d layers: strided and grouped conv, batch norm, max and average pooling, global pooling', async () => {
  const layer = new nn.Sequential(
    new nn.Conv3d(2, 4, 3, { stride: 2, padding: 1 }),
    new nn.BatchNorm3d(4),
    new nn.ReLU(),
    new nn.MaxPool3d(2, 1),
    new nn.AvgPool3d(3, 1, 1),
    new nn.Conv3d(4, 4, 2, { groups: 2, dilation: 2, padding: 1, bias: false }),
    new nn.AdaptiveAvgPool3d([1, 1, 1]),
    new nn.Flatten(),
  );
  await parity(layer, [2, 2, 7, 8, 9], ['batch', 4]);
  layer.dispose();
});

test('pooling windows that are not squares: kernel, stride and padding per axis', async () => {
  await parity(
    new nn.Sequential(new nn.MaxPool2d([2, 3], [1, 2], [0, 1]), new nn.AvgPool2d([3, 2], [2, 1], [1, 0])),
    [2, 3, 7, 9],
    ['batch', 3, 3, 4],
  );
  await parity(
    new nn.Sequential(new nn.MaxPool1d([3], [2], [1]), new nn.AvgPool1d([2], 1)),
    [2, 3, 9],
    ['batch', 3, 4],
  );
});

test('convolutions with kernels and options per axis, and ConvTranspose3d', async () => {
  await parity(
    new nn.Sequential(
      new nn.Conv2d(2, 4, [1, 3], { stride: [2, 1], padding: [0, 1], dilation: [1, 2] }),
      new nn.ConvTranspose2d(4, 3, [2, 3], { stride: [2, 1], padding: [1, 0], outputPadding: [1, 0] }),
    ),
    [2, 2, 7, 9],
    ['batch', 3, 7, 9],
  );
  await parity(
    new nn.Sequential(
      new nn.Conv3d(2, 4, [2, 1, 3], { stride: [1, 2, 1], padding: [1, 0, 1] }),
      new nn.ConvTranspose3d(4, 2, [1, 2, 3], {
        stride: [1, 2, 2],
        dilation: [1, 1, 2],
        outputPadding: [0, 1, 1],
      }),
    ),
    [1, 2, 3, 4, 5],
    ['batch', 2, 4, 5, 14],
  );
  // 'same' with an even kernel: the extra zero after the input becomes an asymmetric pad
  await parity(
    new nn.Conv2d(2, 3, [3, 4], { padding: 'same', dilation: [2, 1] }),
    [2, 2, 6, 7],
    ['batch', 3, 6, 7],
  );
  // padding modes: Pad (reflect, edge) before a convolution without padding
  await parity(
    new nn.Sequential(
      new nn.Conv2d(2, 3, [3, 4], { padding: 'same', paddingMode: 'reflect' }),
      new nn.Conv2d(3, 2, 3, { stride: [2, 1], padding: [1, 2], paddingMode: 'replicate' }),
    ),
    [2, 2, 6, 7],
    ['batch', 2, 3, 9],
  );
});

test("pools' options: dilation, ceilMode (PyTorch's last-window rule), countIncludePad", async () => {
  await parity(
    new nn.Sequential(
      new nn.MaxPool2d([3, 2], [2, 1], [1, 0], { dilation: [2, 1], ceilMode: true }),
      new nn.AvgPool2d(3, 2, 1, { ceilMode: true, countIncludePad: false }),
    ),
    [1, 2, 9, 6],
    ['batch', 2, 3, 3],
  );
  // length 5, window 2, stride 3, padding 1: ceil gives 3 windows, the last starting in the
  // right padding, which PyTorch drops
  await parity(new nn.MaxPool1d(2, 3, 1, { ceilMode: true }), [1, 2, 5], ['batch', 2, 2]);
});

test('activations: leaky ReLU, SiLU, ELU, softplus (beta and a low threshold), softmax, log-softmax', async () => {
  await parity(
    new nn.Sequential(
      new nn.Linear(6, 8),
      new nn.LeakyReLU(0.2),
      new nn.Linear(8, 8),
      new nn.SiLU(),
      new nn.ELU(0.7),
      new nn.Softplus(2, 1),
      new nn.Softplus(),
      new nn.Linear(8, 5),
      new nn.Softmax(1),
      new nn.LogSoftmax(-1),
    ),
    [4, 6],
    ['batch', 5],
  );
});

test('transposed convolutions: stride, padding, output padding, groups and dilation', async () => {
  await parity(
    new nn.Sequential(
      new nn.ConvTranspose2d(4, 6, 3, { stride: 2, padding: 1, outputPadding: 1, groups: 2, dilation: 2 }),
      new nn.ReLU(),
      new nn.ConvTranspose2d(6, 2, 2, { stride: 2, bias: false }),
    ),
    [2, 4, 5, 5],
    ['batch', 2, 24, 24],
  );
  await parity(
    new nn.ConvTranspose1d(3, 4, 3, { stride: 2, padding: 1, outputPadding: 1 }),
    [2, 3, 7],
    ['batch', 4, 14],
  );
});

test('Upsample: nearest, bilinear (half-pixel and aligned corners) and linear by scale factors', async () => {
  await parity(
    new nn.Sequential(
      new nn.Upsample({ scaleFactor: [2, 3] }),
      new nn.Upsample({ scaleFactor: [1.5, 2], mode: 'bilinear' }),
      new nn.Upsample({ scaleFactor: [0.5, 0.5], mode: 'bilinear', alignCorners: true }),
    ),
    [2, 3, 4, 5],
    ['batch', 3, 6, 15],
  );
  await parity(new nn.Upsample({ scaleFactor: [2.5], mode: 'linear' }), [2, 3, 6], ['batch', 3, 15]);
  const g = new onnx.OnnxGraph();
  assert.throws(
    () => onnx.moduleToOnnx(new nn.Upsample({ size: [8, 8] }), g, g.input('x', [1, 1, 4, 4]), 'up'),
    /Upsample \('up'\) to a fixed size has no ONNX form here: give it a scaleFactor/,
  );
});

test('the file: opset, producer, metadata and a dynamic batch axis', async () => {
  const g = new onnx.OnnxGraph();
  g.output('y', g.node('Relu', [g.input('x', ['batch', 2])]), ['batch', 2]);
  const bytes = g.encode({
    producerVersion: '9.9.9',
    graphName: 'relu',
    metadata: { note: 'hi', list: [1, 2] },
  });
  const session = await ort.InferenceSession.create(bytes);
  for (const n of [1, 3]) {
    const out = await session.run({ x: new ort.Tensor('float32', new Float32Array(2 * n).fill(-1), [n, 2]) });
    assert.deepEqual(out.y!.dims, [n, 2]);
  }
  // The file as ONNX tools read it.
  const model = onnxProto.onnx.ModelProto.decode(bytes);
  assert.equal(Number(model.opsetImport[0]!.version), onnx.ONNX_OPSET);
  assert.ok(onnx.ONNX_OPSET >= 17);
  assert.equal(model.producerName, 'tailor');
  assert.deepEqual(
    model.metadataProps.map((p) => [p.key, p.value]),
    [
      ['note', 'hi'],
      ['list', '[1,2]'],
    ],
  );
});

test('layers without an ONNX form are named errors', () => {
  const g = new onnx.OnnxGraph();
  const x = g.input('x', ['batch', 4]);
  const named = (layer: nn.Module, pattern: RegExp) =>
    assert.throws(
      () => onnx.moduleToOnnx(layer, g, x, 'm'),
      (e: Error) => e instanceof onnx.OnnxExportError && pattern.test(e.message),
    );
  // an Embedding's form takes int64 indices (test/torch/onnx-embedding.test.ts), and 'x' is float
  named(new nn.Embedding(10, 4), /^Embedding \('m'\): 'x' is declared float, but the indices are int64/);
  named(
    new nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2]),
    /^AdaptiveLogSoftmaxWithLoss \('m'\) .* onnx.adaptiveLogSoftmaxToOnnx/,
  );
  named(new nn.MaxUnpool2d(2), /^MaxUnpool2d \('m'\) .* onnx.maxUnpoolToOnnx/);
  // the spatial sizes of 'x' are not known (see test/torch/onnx-pool-pad.test.ts for those that are)
  named(
    new nn.AdaptiveAvgPool2d(2),
    /AdaptiveAvgPool2d \('m'\) to an output size of 2 needs the input's 2 spatial sizes/,
  );
  named(
    new nn.AdaptiveAvgPool3d([1, 2, 1]),
    /AdaptiveAvgPool3d \('m'\) to an output size of \[1,2,1\] needs .* declare fixed spatial dims/,
  );
  named(
    new nn.LSTM(4, 3),
    /^LSTM \('m'\) takes or returns more than one value: export it with onnx.lstmToOnnx/,
  );
  named(new nn.GRU(4, 3), /^GRU \('m'\) .* onnx.gruToOnnx/);
  named(new nn.MultiheadAttention(4, 2), /^MultiheadAttention \('m'\) .* onnx.multiheadAttentionToOnnx/);
  named(
    new nn.TransformerDecoderLayer(4, 2),
    /^TransformerDecoderLayer \('m'\) .* onnx.transformerDecoderLayerToOnnx/,
  );
  named(
    new nn.TransformerDecoder(new nn.TransformerDecoderLayer(4, 2, { dimFeedforward: 8 }), 2),
    /^TransformerDecoder \('m'\) .* onnx.transformerDecoderToOnnx/,
  );
  named(
    new nn.Transformer({ dModel: 4, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 8 }),
    /^Transformer \('m'\) .* onnx.transformerToOnnx/,
  );
  named(
    new nn.BatchNorm1d(4, { trackRunningStats: false }),
    /BatchNorm1d \('m'\) keeps no running statistics/,
  );
  named(new nn.Flatten(1, 2), /Flatten \('m'\) up to dimension 2/);
  // A module list is no layer: it has no forward pass to export.
  named(new nn.ModuleList([new nn.ReLU()]), /^ModuleList \('m'\) has no ONNX mapping/);
  assert.equal(new onnx.OnnxExportError('x').name, 'OnnxExportError');
});
