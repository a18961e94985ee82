// The ONNX forms of the recurrent and attention layers run by ONNX Runtime against tailor's
// evaluation-mode forward pass (within 1e-4): every output (sequences, final states, attention
// weights), with initial states and masks as graph inputs or stored constants, and dynamic
// batch and sequence axes where a file declares them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import * as torch from '../../src/torch/index.js';
import { nn, onnx, type Tensor } from '../../src/torch/index.js';

torch.setNumThreads(1);

function randomize(m: nn.Module, std = 0.4): void {
  torch.noGrad(() => {
    for (const p of m.parameters()) torch.aten.normal_(p, 0, std);
  });
  m.eval();
}

/** A graph input of random values: its name, tailor's tensor (kept) and ONNX Runtime's. */
interface Feed {
  name: string;
  tensor: Tensor;
  ort: ort.Tensor;
}

/** Random float values of `shape` for the input `name`. */
function floatFeed(name: string, shape: number[]): Feed {
  const tensor = torch.keep(torch.randn(shape));
  return { name, tensor, ort: new ort.Tensor('float32', tensor.toFloat32Array(), shape) };
}

/** A float input of `shape`, declared with `dims` (names for dynamic axes) when given. */
function floatInput(g: onnx.OnnxGraph, name: string, shape: number[], dims: onnx.OnnxDim[] = shape): Feed {
  g.input(name, dims);
  return floatFeed(name, shape);
}

/** A boolean input (true: blocked); `blocked` lists the flat indices that are true. */
function boolInput(g: onnx.OnnxGraph, name: string, shape: number[], blocked: number[]): Feed {
  g.input(name, shape, 'bool');
  const data = new Uint8Array(shape.reduce((a, b) => a * b, 1));
  for (const i of blocked) data[i] = 1;
  const tensor = torch.keep(torch.tensor(Array.from(data), { shape }).bool());
  return { name, tensor, ort: new ort.Tensor('bool', data, shape) };
}

/**
 * Makes each graph value of `outputs` an output and compares ONNX Runtime's result with tailor's
 * tensor of that name (see compare); returns the session, to run again.
 */
async function agree(
  g: onnx.OnnxGraph,
  feeds: Feed[],
  outputs: Record<string, string>,
  expected: Record<string, Tensor>,
): Promise<ort.InferenceSession> {
  // Dynamic output axes: the graph's shapes must follow its inputs'.
  for (const [name, value] of Object.entries(expected))
    g.output(
      name,
      outputs[name]!,
      value.shape.map((_, i) => `${name}${i}`),
    );
  const session = await ort.InferenceSession.create(g.encode({ producerVersion: 'test', graphName: 'seq' }));
  await compare(session, feeds, expected);
  return session;
}

/**
 * Runs `session` on `feeds` and compares each output with tailor's tensor of that name: shape and
 * values within 1e-4. Frees the inputs and tailor's tensors.
 */
async function compare(session: ort.InferenceSession, feeds: Feed[], expected: Record<string, Tensor>) {
  const out = await session.run(Object.fromEntries(feeds.map((f) => [f.name, f.ort])));
  for (const [name, value] of Object.entries(expected)) {
    const theirs = out[name]!;
    assert.deepEqual([...theirs.dims], value.shape, `${name}: shape`);
    const ours = value.toFloat32Array();
    const data = theirs.data as Float32Array;
    let worst = 0;
    for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - data[i]!));
    assert.ok(worst <= 1e-4, `${name}: ONNX differs from tailor by ${worst}`);
  }
  for (const t of [...feeds.map((f) => f.tensor), ...Object.values(expected)]) t.dispose();
}

/** `fn`'s tensors kept out of a no-grad scope, for agree(). */
const keepAll = (fn: () => Record<string, Tensor>) =>
  torch.noGrad(() =>
    torch.tidy(() => Object.fromEntries(Object.entries(fn()).map(([k, v]) => [k, torch.keep(v)]))),
  );

test('LSTM: two bidirectional layers, batch first, initial states; one layer without bias from zeros', async () => {
  torch.manualSeed(3);
  const lstm = new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true, batchFirst: true, dropout: 0.5 });
  randomize(lstm);
  let g = new onnx.OnnxGraph();
  // Batch and time dynamic in the file.
  let feeds = [
    floatInput(g, 'x', [2, 5, 3], ['batch', 'time', 3]),
    floatInput(g, 'h0', [4, 2, 4], [4, 'batch', 4]),
    floatInput(g, 'c0', [4, 2, 4], [4, 'batch', 4]),
  ];
  let out = onnx.lstmToOnnx(lstm, g, 'x', 'lstm', { h0: 'h0', c0: 'c0' });
  let ids = { y: out.output, h: out.h, c: out.c };
  const run = (inputs: Feed[]) =>
    keepAll(() => {
      const [x, h0, c0] = inputs.map((f) => f.tensor);
      const [y, [h, c]] = lstm.forward(x!, [h0!, c0!]);
      return { y, h, c };
    });
  const session = await agree(g, feeds, ids, run(feeds));
  // Another batch size and sequence length through the same file.
  feeds = [floatFeed('x', [3, 2, 3]), floatFeed('h0', [4, 3, 4]), floatFeed('c0', [4, 3, 4])];
  await compare(session, feeds, run(feeds));
  lstm.dispose();

  const plain = new nn.LSTM(3, 5, { bias: false });
  randomize(plain);
  g = new onnx.OnnxGraph();
  feeds = [floatInput(g, 'x', [6, 2, 3])];
  out = onnx.lstmToOnnx(plain, g, 'x');
  ids = { y: out.output, h: out.h, c: out.c };
  const [x] = feeds.map((f) => f.tensor);
  const expected = keepAll(() => {
    const [y, [h, c]] = plain.forward(x!);
    return { y, h, c };
  });
  await agree(g, feeds, ids, expected);
  plain.dispose();
});

test('GRU: two bidirectional layers with an initial state; batch first without bias from zeros', async () => {
  torch.manualSeed(4);
  for (const [gru, shape, withState] of [
    [new nn.GRU(3, 4, { numLayers: 2, bidirectional: true }), [5, 2, 3], true],
    [new nn.GRU(3, 4, { batchFirst: true, bias: false, numLayers: 2 }), [2, 6, 3], false],
  ] as const) {
    randomize(gru);
    const g = new onnx.OnnxGraph();
    const feeds = [floatInput(g, 'x', [...shape])];
    const layers = gru.numLayers * (gru.bidirectional ? 2 : 1);
    if (withState) feeds.push(floatInput(g, 'h0', [layers, 2, 4]));
    const out = onnx.gruToOnnx(gru, g, 'x', 'gru', withState ? 'h0' : undefined);
    const ids = { y: out.output, h: out.h };
    const expected = keepAll(() => {
      const [y, h] = gru.forward(feeds[0]!.tensor, feeds[1]?.tensor);
      return { y, h };
    });
    await agree(g, feeds, ids, expected);
    gru.dispose();
  }
});

test('MultiheadAttention: self-attention, a causal constant mask and a key-padding input', async () => {
  torch.manualSeed(5);
  const mha = new nn.MultiheadAttention(8, 2);
  randomize(mha);
  const g = new onnx.OnnxGraph();
  // [L, batch, E]; sequence 1 pads its last two keys.
  const feeds = [floatInput(g, 'x', [4, 2, 8]), boolInput(g, 'pad', [2, 4], [6, 7])];
  const causal = torch.keep(nn.Transformer.generateSquareSubsequentMask(4));
  const masks = { attnMask: causal, keyPaddingMask: { value: 'pad', type: 'bool' as const } };
  const out = onnx.multiheadAttentionToOnnx(mha, g, 'x', 'x', 'x', masks, 'mha');
  const ids = { y: out.output, w: out.weights! };
  const [x, pad] = feeds.map((f) => f.tensor);
  const expected = keepAll(() => {
    const [y, w] = mha.forward(x!, x!, x!, { attnMask: causal, keyPaddingMask: pad! });
    return { y, w: w! };
  });
  await agree(g, feeds, ids, expected);
  causal.dispose();
  mha.dispose();
});

test('MultiheadAttention: batch first, separate key and value sizes, a per-head boolean mask, weights per head', async () => {
  torch.manualSeed(6);
  const mha = new nn.MultiheadAttention(6, 3, { kdim: 4, vdim: 5, batchFirst: true });
  randomize(mha);
  const g = new onnx.OnnxGraph();
  const feeds = [
    floatInput(g, 'q', [2, 3, 6]),
    floatInput(g, 'k', [2, 5, 4]),
    floatInput(g, 'v', [2, 5, 5]),
    // [batch x heads, L, S]: a few keys blocked for some rows, never a whole row.
    boolInput(g, 'mask', [6, 3, 5], [0, 1, 9, 17, 33, 44, 60, 61, 62, 88]),
  ];
  const masks = { attnMask: { value: 'mask', type: 'bool' as const, perHead: true } };
  const out = onnx.multiheadAttentionToOnnx(mha, g, 'q', 'k', 'v', { ...masks, averageAttnWeights: false });
  const ids = { y: out.output, w: out.weights! };
  const [q, k, v, mask] = feeds.map((f) => f.tensor);
  const expected = keepAll(() => {
    const [y, w] = mha.forward(q!, k!, v!, { attnMask: mask!, averageAttnWeights: false });
    return { y, w: w! };
  });
  await agree(g, feeds, ids, expected);
  const g2 = new onnx.OnnxGraph();
  const x = g2.input('x', [2, 3, 6]);
  assert.equal(onnx.multiheadAttentionToOnnx(mha, g2, x, x, x, { needWeights: false }).weights, null);
  mha.dispose();
});

test('Transformer encoder: a layer through moduleToOnnx; a pre-norm GELU stack with masks', async () => {
  torch.manualSeed(7);
  const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16 });
  randomize(layer);
  let g = new onnx.OnnxGraph();
  let feeds = [floatInput(g, 'x', [5, 2, 8], ['seq', 'batch', 8])];
  let y = onnx.moduleToOnnx(layer, g, 'x', 'enc');
  let expected = keepAll(() => ({ y: layer.forward(feeds[0]!.tensor) }));
  const session = await agree(g, feeds, { y }, expected);
  feeds = [floatFeed('x', [3, 1, 8])];
  await compare(
    session,
    feeds,
    keepAll(() => ({ y: layer.forward(feeds[0]!.tensor) })),
  );
  layer.dispose();

  const encoder = new nn.TransformerEncoder(
    new nn.TransformerEncoderLayer(8, 2, {
      dimFeedforward: 16,
      activation: 'gelu',
      normFirst: true,
      batchFirst: true,
    }),
    2,
    { norm: new nn.LayerNorm([8]) },
  );
  randomize(encoder);
  g = new onnx.OnnxGraph();
  feeds = [floatInput(g, 'x', [2, 5, 8]), boolInput(g, 'pad', [2, 5], [4, 8, 9])];
  const blocked = torch.keep(
    torch
      .tensor([0, 1, 0, 0, 0], { shape: [1, 5] })
      .bool()
      .expand(5, 5)
      .contiguous(),
  );
  y = onnx.transformerEncoderToOnnx(encoder, g, 'x', {
    mask: blocked,
    srcKeyPaddingMask: { value: 'pad', type: 'bool' },
  });
  const [x, pad] = feeds.map((f) => f.tensor);
  expected = keepAll(() => ({ y: encoder.forward(x!, { mask: blocked, srcKeyPaddingMask: pad! }) }));
  await agree(g, feeds, { y }, expected);
  blocked.dispose();
  encoder.dispose();
});

test('Transformer decoder layer and the whole Transformer, with causal and padding masks', async () => {
  torch.manualSeed(8);
  const layer = new nn.TransformerDecoderLayer(8, 2, {
    dimFeedforward: 16,
    normFirst: true,
    batchFirst: true,
  });
  randomize(layer);
  let g = new onnx.OnnxGraph();
  let feeds = [floatInput(g, 'tgt', [2, 3, 8]), floatInput(g, 'memory', [2, 4, 8])];
  const causal = torch.keep(nn.Transformer.generateSquareSubsequentMask(3));
  let y = onnx.transformerDecoderLayerToOnnx(layer, g, 'tgt', 'memory', { tgtMask: causal });
  let expected = keepAll(() => ({
    y: layer.forward(feeds[0]!.tensor, feeds[1]!.tensor, { tgtMask: causal }),
  }));
  await agree(g, feeds, { y }, expected);
  layer.dispose();

  const model = new nn.Transformer({
    dModel: 8,
    nhead: 2,
    numEncoderLayers: 1,
    numDecoderLayers: 2,
    dimFeedforward: 16,
  });
  randomize(model, 0.3);
  g = new onnx.OnnxGraph();
  feeds = [
    floatInput(g, 'src', [4, 2, 8]),
    floatInput(g, 'tgt', [3, 2, 8]),
    boolInput(g, 'pad', [2, 4], [3, 7]),
  ];
  const pad = { value: 'pad', type: 'bool' as const };
  y = onnx.transformerToOnnx(model, g, 'src', 'tgt', {
    tgtMask: causal,
    srcKeyPaddingMask: pad,
    memoryKeyPaddingMask: pad,
  });
  const [src, tgt, padding] = feeds.map((f) => f.tensor);
  expected = keepAll(() => ({
    y: model.forward(src!, tgt!, {
      tgtMask: causal,
      srcKeyPaddingMask: padding!,
      memoryKeyPaddingMask: padding!,
    }),
  }));
  await agree(g, feeds, { y }, expected);
  causal.dispose();
  model.dispose();
});
