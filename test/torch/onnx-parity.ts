// What the ONNX tests share: a layer's graph run by ONNX Runtime against tailor's evaluation-mode
// forward pass on the same seeded input, within 1e-4.
import assert from 'node:assert/strict';
import ort from 'onnxruntime-node';
import * as torch from '../../src/torch/index.js';
import { nn, onnx } from '../../src/torch/index.js';

/** Draws every parameter and batch-norm statistic, so that no layer is an identity. */
export function randomize(m: nn.Module): void {
  torch.noGrad(() => {
    for (const p of m.parameters()) torch.aten.normal_(p, 0, 0.5);
    for (const [name, b] of m.namedBuffers())
      if (name.endsWith('running_mean')) torch.aten.normal_(b, 0, 0.3);
      else if (name.endsWith('running_var')) torch.aten.uniform_(b, 0.5, 2);
  });
}

/**
 * Exports `layer` (its parameters drawn) with a dynamic batch axis, runs it on a seeded input of
 * `shape` (times `scale`) and checks ONNX Runtime's output, values and shape, against tailor's.
 */
export async function parity(
  layer: nn.Layer,
  shape: number[],
  outDims: (number | string)[],
  scale = 1,
): Promise<void> {
  randomize(layer);
  layer.eval();
  const g = new onnx.OnnxGraph();
  const x = g.input('x', ['batch', ...shape.slice(1)]);
  g.output('y', onnx.moduleToOnnx(layer, g, x, 'layer'), outDims);
  const bytes = g.encode({ producerVersion: 'test', graphName: 'layers', metadata: { a: 'b', c: [1, 2] } });
  torch.manualSeed(2);
  const data = torch.tidy(() => torch.randn(shape).mul(scale).toFloat32Array());
  const [ours, ourShape] = torch.noGrad(() =>
    torch.tidy(() => {
      const y = layer.forward(torch.tensor(data, { shape }));
      return [y.toFloat32Array(), y.shape] as const;
    }),
  );
  const session = await ort.InferenceSession.create(bytes);
  const out = (await session.run({ x: new ort.Tensor('float32', data, shape) })).y!;
  const theirs = out.data as Float32Array;
  assert.deepEqual(out.dims, ourShape, 'the output shape');
  let worst = 0;
  for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - theirs[i]!));
  assert.ok(worst <= 1e-4, `ONNX differs from tailor by ${worst}`);
}
