// The ONNX forms of Embedding (maxNorm included), EmbeddingBag (bags of one length, and bags
// of any length from offsets; sum, mean and max, per-sample weights, a padding index) and
// AdaptiveLogSoftmaxWithLoss's logProb and predict, each run by ONNX Runtime against tailor's
// forward (within 1e-5) at two input sizes through one graph, and the refusals named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import * as torch from '../../src/torch/index.js';
import { nn, onnx, type Tensor } from '../../src/torch/index.js';
import { randomize } from './onnx-parity.js';

torch.setNumThreads(1);

type Data = Float32Array | BigInt64Array;
/** One run: each graph input's data and shape. */
type Feeds = Record<string, [Data, number[]]>;

const encode = (g: onnx.OnnxGraph) => g.encode({ producerVersion: 'test', graphName: 'embedding' });
const ids = (...values: number[]) => BigInt64Array.from(values, (v) => BigInt(v));

/** Seeded indices in [0, high) of `shape`. */
function randomIds(high: number, shape: number[], seed: number): BigInt64Array {
  torch.manualSeed(seed);
  return torch.tidy(() => torch.randint(0, high, shape).toArray() as BigInt64Array);
}

/** Seeded float32 values of `shape`. */
function randomValues(shape: number[], seed: number): Float32Array {
  torch.manualSeed(seed);
  return torch.tidy(() => torch.randn(shape).toFloat32Array());
}

/**
 * Runs the graph `g` (output 'y', built before any forward: a maxNorm forward renormalises the
 * weight in place) on each of `runs`, and checks its output against `forward` on the same
 * values, exactly for int64 outputs; the layer is disposed after.
 */
async function parity(
  layer: nn.Module,
  g: onnx.OnnxGraph,
  runs: Feeds[],
  forward: (inputs: Record<string, Tensor>) => Tensor,
): Promise<void> {
  const before = torch.liveTensors();
  const session = await ort.InferenceSession.create(encode(g));
  for (const feeds of runs) {
    const inputs: Record<string, ort.Tensor> = {};
    for (const [name, [data, shape]] of Object.entries(feeds))
      inputs[name] = new ort.Tensor(data instanceof BigInt64Array ? 'int64' : 'float32', data, shape);
    const y = (await session.run(inputs)).y!;
    const [ours, shape] = torch.noGrad(() =>
      torch.tidy(() => {
        const tensors: Record<string, Tensor> = {};
        for (const [name, [data, dims]] of Object.entries(feeds))
          tensors[name] = torch.tensor(data, { shape: dims });
        const out = forward(tensors);
        return [Array.from(out.toArray() as ArrayLike<number | bigint>, Number), out.shape] as const;
      }),
    );
    const what = `${layer.constructor.name} ${layer.extraRepr()} at ${JSON.stringify(Object.values(feeds).map(([, s]) => s))}`;
    assert.deepEqual(y.dims, shape, `${what}: the output shape`);
    const theirs = Array.from(y.data as ArrayLike<number | bigint>, Number);
    if (y.type === 'int64') assert.deepEqual(theirs, ours, what);
    else {
      let worst = 0;
      for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - theirs[i]!));
      assert.ok(worst <= 1e-5, `${what}: ONNX differs from tailor by ${worst}`);
    }
  }
  assert.equal(
    torch.liveTensors(),
    before,
    `tensors left alive by ${layer.constructor.name} ${layer.extraRepr()}`,
  );
  layer.dispose();
}

test('Embedding: a Gather at int64 indices of any shape, maxNorm rescaling the rows in the graph', async () => {
  for (const options of [{}, { paddingIdx: 2 }]) {
    const emb = new nn.Embedding(7, 4, options);
    randomize(emb);
    const g = new onnx.OnnxGraph();
    g.output('y', onnx.moduleToOnnx(emb, g, g.input('x', ['a', 'b'], 'int64'), 'emb'), ['a', 'b', 4]);
    const runs: Feeds[] = [{ x: [ids(0, 2, 6, 2, 5, 1), [2, 3]] }, { x: [randomIds(7, [5, 1], 1), [5, 1]] }];
    await parity(emb, g, runs, ({ x }) => emb.forward(x!));
  }
  // rows whose norm exceeds maxNorm (the weights drawn from N(0, 0.25) have norms near 1 in 4-d)
  for (const normType of [2, 1, 3, Infinity]) {
    const emb = new nn.Embedding(9, 4, { maxNorm: normType === Infinity ? 0.5 : 0.9, normType });
    randomize(emb);
    const g = new onnx.OnnxGraph();
    g.output('y', onnx.moduleToOnnx(emb, g, g.input('x', ['a', 'b', 'c'], 'int64'), 'emb'), [
      'a',
      'b',
      'c',
      4,
    ]);
    const runs: Feeds[] = [
      { x: [randomIds(9, [2, 3, 2], 2), [2, 3, 2]] },
      { x: [randomIds(9, [1, 4, 3], 3), [1, 4, 3]] },
    ];
    await parity(emb, g, runs, ({ x }) => emb.forward(x!));
  }
});

test('EmbeddingBag over bags of one length [B, N]: sum, mean, max, per-sample weights, padding', async () => {
  const modes = ['sum', 'mean', 'max'] as const;
  const variants = [{}, { paddingIdx: 0 }, { maxNorm: 1 }];
  // row 2 is all padding: an empty bag, zeros in every mode
  const runs: Feeds[] = [
    { x: [ids(0, 3, 5, 1, 0, 2, 0, 0, 0, 4, 2, 0), [4, 3]] },
    { x: [randomIds(6, [3, 5], 4), [3, 5]] },
  ];
  for (const mode of modes)
    for (const options of variants) {
      const bag = new nn.EmbeddingBag(6, 3, { mode, ...options });
      randomize(bag);
      const g = new onnx.OnnxGraph();
      g.output('y', onnx.moduleToOnnx(bag, g, g.input('x', ['bags', 'n'], 'int64'), 'bag'), ['b', 3]);
      await parity(bag, g, runs, ({ x }) => bag.forward(x!));
    }
  for (const options of [{}, { paddingIdx: 3 }]) {
    const bag = new nn.EmbeddingBag(6, 3, { mode: 'sum', ...options });
    randomize(bag);
    const g = new onnx.OnnxGraph();
    const x = g.input('x', ['bags', 'n'], 'int64');
    const w = g.input('w', ['bags', 'n']);
    g.output('y', onnx.embeddingBagToOnnx(bag, g, x, 'bag', { perSampleWeights: w }), ['bags', 3]);
    const weighted: Feeds[] = runs.map((r, k) => ({ ...r, w: [randomValues(r.x![1], k + 5), r.x![1]] }));
    await parity(bag, g, weighted, ({ x: input, w: weights }) => bag.forward(input!, null, weights));
  }
});

test('EmbeddingBag over a 1-d input with offsets: bags of any length, empty ones zeros', async () => {
  const modes = ['sum', 'mean', 'max'] as const;
  const variants = [{}, { paddingIdx: 1 }, { includeLastOffset: true }];
  // bags [0, 3), [3, 3) empty, [3, 4), [4, 9) and [9, 9) empty at the end (includeLastOffset: the
  // offsets end with the input's length, CSR style, and the last bag is [4, 9)); then another input
  const runs: Feeds[] = [
    { x: [ids(1, 4, 2, 1, 0, 5, 1, 3, 3), [9]], offsets: [ids(0, 3, 3, 4, 9), [5]] },
    { x: [randomIds(6, [7], 6), [7]], offsets: [ids(0, 2, 5, 7), [4]] },
  ];
  for (const mode of modes)
    for (const options of variants) {
      const bag = new nn.EmbeddingBag(6, 4, { mode, ...options });
      randomize(bag);
      const g = new onnx.OnnxGraph();
      const x = g.input('x', ['indices'], 'int64');
      const offsets = g.input('offsets', ['starts'], 'int64');
      g.output('y', onnx.embeddingBagToOnnx(bag, g, x, 'bag', { offsets }), ['bags', 4]);
      await parity(bag, g, runs, ({ x: input, offsets: o }) => bag.forward(input!, o));
    }
  const bag = new nn.EmbeddingBag(6, 4, { mode: 'sum', paddingIdx: 4, maxNorm: 1.2 });
  randomize(bag);
  const g = new onnx.OnnxGraph();
  const x = g.input('x', ['indices'], 'int64');
  const offsets = g.input('offsets', ['bags'], 'int64');
  const w = g.input('w', ['indices']);
  g.output('y', onnx.embeddingBagToOnnx(bag, g, x, 'bag', { offsets, perSampleWeights: w }), ['bags', 4]);
  const weighted: Feeds[] = runs.map((r, k) => ({ ...r, w: [randomValues(r.x![1], k + 7), r.x![1]] }));
  await parity(bag, g, weighted, ({ x: input, offsets: o, w: weights }) => bag.forward(input!, o, weights));
});

test('AdaptiveLogSoftmaxWithLoss: logProb and predict of any batch through one graph', async () => {
  for (const output of ['logProb', 'predict'] as const)
    for (const options of [{}, { headBias: true, divValue: 2 }]) {
      const asm = new nn.AdaptiveLogSoftmaxWithLoss(16, 20, [5, 12], options);
      randomize(asm);
      asm.eval();
      const g = new onnx.OnnxGraph();
      const y = onnx.adaptiveLogSoftmaxToOnnx(asm, g, g.input('x', ['batch', 16]), 'asm', { output });
      if (output === 'predict') g.output('y', y, ['batch'], 'int64');
      else g.output('y', y, ['batch', 20]);
      const runs: Feeds[] = [
        { x: [randomValues([6, 16], 8), [6, 16]] },
        { x: [randomValues([33, 16], 9), [33, 16]] },
      ];
      await parity(asm, g, runs, ({ x }) => (output === 'predict' ? asm.predict(x!) : asm.logProb(x!)));
    }
});

test('the refusals, named with the remedy', () => {
  const before = torch.liveTensors();
  const bag = new nn.EmbeddingBag(5, 2, { mode: 'mean', paddingIdx: 1 });
  const emb = new nn.Embedding(5, 2, { paddingIdx: -1 });
  const asm = new nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2]);
  const g = new onnx.OnnxGraph();
  const floats = g.input('f', ['n']);
  const flat = g.input('flat', ['n'], 'int64');
  const square = g.input('square', ['b', 'n'], 'int64');
  assert.throws(
    () => onnx.moduleToOnnx(emb, g, floats, 'emb'),
    (e: Error) =>
      e instanceof onnx.OnnxExportError &&
      /Embedding \('emb'\): 'f' is declared float, but the indices are int64: declare it with g\.input\(name, dims, 'int64'\)/.test(
        e.message,
      ),
  );
  assert.throws(
    () => onnx.moduleToOnnx(bag, g, flat, 'bag'),
    /EmbeddingBag \('bag'\): the input 'flat' is 1-d: give 2-d bags \[B, N\], or a 1-d input with offsets/,
  );
  assert.throws(
    () => onnx.embeddingBagToOnnx(bag, g, square, 'bag', { offsets: flat }),
    /offsets go with a 1-d input, 'square' is 2-d: give no offsets/,
  );
  assert.throws(
    () => onnx.embeddingBagToOnnx(bag, g, square, 'bag', { perSampleWeights: g.input('w', ['b', 'n']) }),
    /EmbeddingBag \('bag'\): perSampleWeights needs mode 'sum', the layer's is 'mean'/,
  );
  const last = new nn.EmbeddingBag(5, 2, { includeLastOffset: true });
  assert.throws(
    () => onnx.moduleToOnnx(last, g, square, 'last'),
    /EmbeddingBag \('last'\) with includeLastOffset over a 2-d input has no ONNX form: .* export a layer without includeLastOffset/,
  );
  assert.throws(
    () => onnx.moduleToOnnx(asm, g, floats, 'asm'),
    /AdaptiveLogSoftmaxWithLoss \('asm'\) takes or returns more than one value: export it with onnx\.adaptiveLogSoftmaxToOnnx/,
  );
  assert.throws(
    () => onnx.adaptiveLogSoftmaxToOnnx(asm, g, floats, 'asm', { output: 'loss' as never }),
    /onnx\.adaptiveLogSoftmaxToOnnx: options\.output/,
  );
  for (const m of [bag, emb, asm, last]) m.dispose();
  // zeroing the padding row keeps no tensor beyond the weight
  assert.equal(torch.liveTensors(), before, 'tensors left alive');
});
