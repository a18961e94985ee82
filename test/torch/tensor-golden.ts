// What the golden tests of the tensor functions share (tensor-functions, tensor-reductions,
// tensor-elementwise): their JSON files (NaN and the infinities written as strings), and one case's
// check: the function run on fresh leaves of the golden inputs, each output compared, then the
// gradients of a fixed weighted sum of the float64 outputs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { goldenDir } from '../helpers.js';

type T = torch.Tensor;
/** A tensor as the golden scripts write it. */
export interface Data {
  shape: number[];
  dtype: string;
  data: number[];
}
/** One case: its outputs and, for differentiable ones, the gradients of every float64 input. */
export interface GoldenCase {
  label: string;
  outputs: Data[];
  grads?: Record<string, Data>;
}
export type Inputs = Record<string, T>;

/** test/golden/torch/NAME, with NaN and the infinities revived from their strings (JSON has none). */
export function readTensorGolden<G>(name: string): G {
  return JSON.parse(readFileSync(join(goldenDir, 'torch', name), 'utf8'), (_key, v: unknown) =>
    v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v,
  ) as G;
}

/**
 * Runs `fn` on fresh leaves of `inputs` (float64 ones require grad when the case has gradients)
 * and checks its outputs and gradients with `same`.
 */
export function checkGoldenCase(
  inputsData: Record<string, Data>,
  c: GoldenCase,
  fn: (inputs: Inputs) => T[],
  same: (actual: T, expected: Data, what: string) => void,
): void {
  torch.tidy(() => {
    const differentiable = c.grads !== undefined;
    const inputs: Inputs = {};
    for (const [name, d] of Object.entries(inputsData)) {
      const float = d.dtype === 'float64';
      inputs[name] = torch.tensor(d.data, {
        dtype: float ? 'float64' : 'int64',
        shape: d.shape,
        requiresGrad: differentiable && float,
      });
    }
    const outputs = fn(inputs);
    assert.equal(outputs.length, c.outputs.length, `${c.label}: number of outputs`);
    outputs.forEach((o, k) => same(o, c.outputs[k]!, `${c.label} output ${k}`));
    if (!differentiable) return;
    let loss = torch.scalarTensor(0, 'float64');
    for (const o of outputs) {
      if (o.dtype !== 'float64') continue;
      const w = torch.arange(0, Math.max(o.numel, 1), 1, 'float64').add(1).sin().narrow(0, 0, o.numel);
      loss = loss.add(o.mul(w.reshape(...o.shape)).sum());
    }
    loss.backward();
    for (const [name, leaf] of Object.entries(inputs)) {
      if (!leaf.requiresGrad) continue;
      const expected = c.grads![name];
      const g = leaf.grad;
      if (expected === undefined) assert.equal(g, null, `${c.label}: no gradient for ${name}`);
      else {
        assert.ok(g !== null, `${c.label}: a gradient for ${name}`);
        same(g, expected, `${c.label} gradient of ${name}`);
      }
    }
  });
}
