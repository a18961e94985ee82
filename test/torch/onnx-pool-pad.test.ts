// The ONNX forms of circular padding in the convolutions, the average pools' divisorOverride, a max
// pool's indices and max unpooling, and adaptive average pooling to sizes other than 1, each run by
// ONNX Runtime against tailor's evaluation-mode forward pass (within 1e-4) at two input sizes
// through one graph where the form's nodes do not depend on the size, and the named errors left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import * as torch from '../../src/torch/index.js';
import { nn, onnx, type Tensor } from '../../src/torch/index.js';
import { randomize } from './onnx-parity.js';

torch.setNumThreads(1);

/** Seeded input values of `shape`. */
function input(shape: number[], seed: number): Float32Array {
  torch.manualSeed(seed);
  return torch.tidy(() => torch.randn(shape).toFloat32Array());
}

function close(theirs: ArrayLike<number>, ours: ArrayLike<number>, what: string): void {
  assert.equal(theirs.length, ours.length, `${what}: the number of values`);
  let worst = 0;
  for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - theirs[i]!));
  assert.ok(worst <= 1e-4, `${what}: ONNX differs from tailor by ${worst}`);
}

/** Runs `bytes` on `feeds` ({ name: [data, shape] }) and returns the outputs by name. */
async function runOnnx(
  bytes: Uint8Array,
  feeds: Record<string, [Float32Array, number[]]>,
): Promise<Record<string, ort.Tensor>> {
  const session = await ort.InferenceSession.create(bytes);
  const inputs: Record<string, ort.Tensor> = {};
  for (const [name, [data, shape]] of Object.entries(feeds))
    inputs[name] = new ort.Tensor('float32', data, shape);
  return session.run(inputs);
}

/** Dynamic dims of a rank: the inputs' names, 'o0'... for outputs. */
const dynamic = (rank: number) => ['n', 'c', 'd0', 'd1', 'd2'].slice(0, rank);
const anyDims = (rank: number) => Array.from({ length: rank }, (_, i) => `o${i}`);

const encode = (g: onnx.OnnxGraph) => g.encode({ producerVersion: 'test', graphName: 'pool-pad' });

/**
 * Exports `layer` once from an input declared with `dims` and checks ONNX Runtime's output against
 * tailor's forward at every shape of `shapes`.
 */
async function parityAt(layer: nn.Layer, dims: onnx.OnnxDim[], shapes: number[][]): Promise<void> {
  randomize(layer);
  layer.eval();
  const before = torch.liveTensors();
  const g = new onnx.OnnxGraph();
  const x = g.input('x', dims);
  g.output('y', onnx.moduleToOnnx(layer, g, x, 'layer'), anyDims(dims.length));
  const bytes = encode(g);
  for (const [k, shape] of shapes.entries()) {
    const data = input(shape, k + 1);
    const [ours, ourShape] = torch.noGrad(() =>
      torch.tidy(() => {
        const y = layer.forward(torch.tensor(data, { shape }));
        return [y.toFloat32Array(), y.shape] as const;
      }),
    );
    const y = (await runOnnx(bytes, { x: [data, shape] })).y!;
    assert.deepEqual(y.dims, ourShape, `the output shape at ${JSON.stringify(shape)}`);
    close(y.data as Float32Array, ours, `${layer.constructor.name} at ${JSON.stringify(shape)}`);
  }
  assert.equal(torch.liveTensors(), before, 'tensors left alive');
  layer.dispose();
}

test('convolutions with circular padding: Slice and Concat per axis, any input size', async () => {
  await parityAt(new nn.Conv1d(2, 3, 3, { padding: 2, paddingMode: 'circular' }), dynamic(3), [
    [2, 2, 5],
    [1, 2, 9],
  ]);
  await parityAt(
    new nn.Conv2d(3, 4, [3, 2], { padding: [1, 2], stride: [1, 2], paddingMode: 'circular' }),
    dynamic(4),
    [
      [2, 3, 4, 5],
      [1, 3, 6, 7],
    ],
  );
  // 'same' with an even kernel: one more on the end than the start, wrapped as PyTorch does
  await parityAt(
    new nn.Conv2d(2, 2, [4, 3], { padding: 'same', paddingMode: 'circular', groups: 2 }),
    dynamic(4),
    [
      [2, 2, 5, 4],
      [1, 2, 7, 6],
    ],
  );
  await parityAt(
    new nn.Conv3d(2, 2, 3, { padding: [1, 0, 2], dilation: [1, 1, 2], paddingMode: 'circular' }),
    dynamic(5),
    [
      [1, 2, 3, 4, 5],
      [2, 2, 4, 3, 6],
    ],
  );
  // PyTorch's transposed convolutions take zeros only; so do tailor's, before any export
  assert.throws(() => new nn.ConvTranspose2d(2, 2, 3, { paddingMode: 'circular' } as never), /paddingMode/);
});

test('average pools with divisorOverride: a ones-kernel sum, ceilMode windows as PyTorch', async () => {
  await parityAt(new nn.AvgPool2d(3, 2, 1, { divisorOverride: 5 }), dynamic(4), [
    [2, 3, 6, 7],
    [1, 3, 5, 4],
  ]);
  // ceilMode: 5 with kernel 2, stride 2, padding 1 drops the window starting in the right padding,
  // 6 keeps the one running past it
  await parityAt(new nn.AvgPool2d(2, 2, 1, { divisorOverride: 3, ceilMode: true }), dynamic(4), [
    [2, 3, 5, 5],
    [1, 2, 6, 7],
  ]);
  await parityAt(
    new nn.AvgPool2d([3, 2], [2, 3], [1, 0], { divisorOverride: 4, ceilMode: true, countIncludePad: false }),
    dynamic(4),
    [
      [2, 2, 7, 8],
      [1, 3, 6, 4],
    ],
  );
  await parityAt(
    new nn.AvgPool3d(2, [1, 2, 2], [0, 1, 1], { divisorOverride: 7, ceilMode: true }),
    dynamic(5),
    [
      [1, 2, 3, 5, 4],
      [2, 1, 4, 4, 5],
    ],
  );
});

/** int64 values of tailor's or ONNX Runtime's as numbers. */
const numbers = (values: ArrayLike<number | bigint>) => Array.from(values, (v) => Number(v));

test("a max pool's indices per (n, c) plane, and max unpooling back to the pool's input", async () => {
  const before = torch.liveTensors();
  const cases: [nn.MaxPool1d | nn.MaxPool2d | nn.MaxPool3d, nn.Module | null, number[][]][] = [
    // dilation and ceilMode: the indices only (MaxUnpool has neither)
    [
      new nn.MaxPool2d(3, 2, 1, { dilation: [2, 1], ceilMode: true }),
      null,
      [
        [2, 3, 8, 6],
        [1, 2, 7, 9],
      ],
    ],
    [
      new nn.MaxPool1d(3, 2, 1),
      new nn.MaxUnpool1d(3, 2, 1),
      [
        [2, 3, 9],
        [1, 2, 7],
      ],
    ],
    [
      new nn.MaxPool2d(2),
      new nn.MaxUnpool2d(2),
      [
        [2, 3, 4, 6],
        [1, 2, 6, 8],
      ],
    ],
    [
      new nn.MaxPool2d([3, 2], [2, 1], [1, 0]),
      new nn.MaxUnpool2d([3, 2], [2, 1], [1, 0]),
      [
        [2, 2, 7, 5],
        [3, 1, 5, 4],
      ],
    ],
    [
      new nn.MaxPool3d(2, 2, 1),
      new nn.MaxUnpool3d(2, 2, 1),
      [
        [1, 2, 4, 6, 6],
        [2, 1, 6, 4, 2],
      ],
    ],
  ];
  for (const [pool, unpool, shapes] of cases) {
    const rank = shapes[0]!.length;
    const g = new onnx.OnnxGraph();
    const x = g.input('x', dynamic(rank));
    const { values, indices } = onnx.maxPoolWithIndicesToOnnx(pool, g, x, 'pool');
    g.output('values', values, anyDims(rank));
    if (unpool)
      g.output('back', onnx.maxUnpoolToOnnx(unpool as never, g, values, indices, 'unpool'), anyDims(rank));
    // the int64 indices as float, to be read back as a float32 graph output
    g.output('indices', g.node('Cast', [indices], { to: { int: 1 } }), anyDims(rank));
    const bytes = encode(g);
    for (const [k, shape] of shapes.entries()) {
      const data = input(shape, k + 3);
      const ours = torch.noGrad(() =>
        torch.tidy(() => {
          const t = torch.tensor(data, { shape });
          const [v, i] = pool.forwardWithIndices(t);
          const back = unpool ? (unpool as nn.MaxUnpool2d).forward(v, i) : null;
          return {
            v: v.toFloat32Array(),
            i: numbers(i.toFloat64Array()),
            back: back?.toFloat32Array(),
            shape: back?.shape,
          };
        }),
      );
      const out = await runOnnx(bytes, { x: [data, shape] });
      const what = `${pool.constructor.name} at ${JSON.stringify(shape)}`;
      close(out.values!.data as Float32Array, ours.v, `${what}: values`);
      assert.deepEqual(numbers(out.indices!.data as Float32Array), ours.i, `${what}: indices`);
      if (!ours.back) continue;
      assert.deepEqual(out.back!.dims, ours.shape, `${what}: the unpooled shape`);
      close(out.back!.data as Float32Array, ours.back, `${what}: unpooled`);
    }
  }
  // exact: every layer of this file is disposed when its test is done, so no garbage collection
  // can free an earlier test's tensors meanwhile
  assert.equal(torch.liveTensors(), before, 'tensors left alive');
});

test('max unpooling to an explicit outputSize, from indices given as a graph input', async () => {
  const pool = new nn.MaxPool2d(2, 2);
  const unpool = new nn.MaxUnpool2d(2, 2);
  const shape = [2, 3, 5, 7];
  const data = input(shape, 9);
  const [values, indices, back]: Tensor[] = torch.noGrad(() =>
    torch.tidy(() => {
      const [v, i] = pool.forwardWithIndices(torch.tensor(data, { shape }));
      return [torch.keep(v), torch.keep(i), torch.keep(unpool.forward(v, i, [5, 7]))];
    }),
  );
  const g = new onnx.OnnxGraph();
  const v = g.input('v', ['n', 'c', 'h', 'w']);
  const i = g.node('Cast', [g.input('i', ['n', 'c', 'h', 'w'])], { to: { int: 7 } });
  g.output('y', onnx.maxUnpoolToOnnx(unpool, g, v, i, 'unpool', [2, 3, 5, 7]), anyDims(4));
  const out = await runOnnx(encode(g), {
    v: [values!.toFloat32Array(), values!.shape],
    i: [Float32Array.from(indices!.toFloat64Array()), indices!.shape],
  });
  assert.deepEqual(out.y!.dims, [2, 3, 5, 7]);
  close(out.y!.data as Float32Array, back!.toFloat32Array(), 'MaxUnpool2d with outputSize');
  for (const t of [values!, indices!, back!]) t.dispose();
  assert.throws(
    () => onnx.maxUnpoolToOnnx(unpool, g, v, i, 'unpool', [5, 7, 1, 2, 3]),
    (e: Error) => e instanceof onnx.OnnxExportError && /outputSize \[5,7,1,2,3\]/.test(e.message),
  );
  assert.throws(
    () => onnx.moduleToOnnx(unpool, new onnx.OnnxGraph(), 'x', 'unpool'),
    /MaxUnpool2d \('unpool'\) takes or returns more than one value: export it with onnx\.maxUnpoolToOnnx/,
  );
});

test('adaptive average pooling to other sizes from the declared spatial dims', async () => {
  const cases: [nn.Layer, number[][]][] = [
    [
      new nn.AdaptiveAvgPool1d(3),
      [
        [2, 3, 9],
        [1, 2, 7],
      ],
    ],
    [
      new nn.AdaptiveAvgPool1d(4),
      [
        [2, 3, 3],
        [1, 2, 10],
      ],
    ],
    [
      new nn.AdaptiveAvgPool2d([2, 3]),
      [
        [2, 3, 4, 6],
        [1, 2, 5, 7],
      ],
    ],
    [
      new nn.AdaptiveAvgPool2d(3),
      [
        [2, 3, 9, 5],
        [1, 2, 3, 3],
      ],
    ],
    [
      new nn.AdaptiveAvgPool3d([2, 1, 3]),
      [
        [1, 2, 4, 5, 6],
        [2, 1, 5, 3, 7],
      ],
    ],
  ];
  for (const [layer, shapes] of cases)
    for (const shape of shapes) await parityAt(layer, ['batch', shape[1]!, ...shape.slice(2)], [shape]);
  // after another layer: its input's dims recorded with setDims, the pool's own output's kept
  const g = new onnx.OnnxGraph();
  const x = g.input('x', ['batch', 2, 6, 6]);
  const relu = onnx.moduleToOnnx(new nn.ReLU(), g, x);
  assert.equal(g.dimsOf(relu), undefined);
  g.setDims(relu, ['batch', 2, 6, 6]);
  const pooled = onnx.moduleToOnnx(new nn.AdaptiveAvgPool2d([4, 3]), g, relu);
  assert.deepEqual(g.dimsOf(pooled), ['batch', 2, 4, 3]);
});

test('what is still refused: adaptive pooling over dynamic spatial dims, named with the remedy', () => {
  const g = new onnx.OnnxGraph();
  const x = g.input('x', ['batch', 3, 'h', 'w']);
  assert.throws(
    () => onnx.moduleToOnnx(new nn.Sequential(new nn.AdaptiveAvgPool2d([2, 2])), g, x),
    (e: Error) =>
      e instanceof onnx.OnnxExportError &&
      /AdaptiveAvgPool2d \('0'\) to an output size of \[2,2\] needs the input's 2 spatial sizes/.test(
        e.message,
      ) &&
      /declare fixed spatial dims/.test(e.message),
  );
  // global pooling needs no sizes
  assert.equal(typeof onnx.moduleToOnnx(new nn.AdaptiveAvgPool2d(1), g, x), 'string');
});
