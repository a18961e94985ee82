// The golden file of scripts/golden/linalg_fft.py and the checks its cases share: each case is a
// function of the named float64 inputs whose outputs (complex ones as real/imaginary pairs) and,
// for the differentiable ones, the gradients of sum_k (out_k * w_k).sum() with
// w_k = sin(1 + arange(numel)) are compared with PyTorch 1.13's to 1e-9.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { aten } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

/** A tensor in a golden file: its shape and its values, flattened. */
export interface Data {
  shape: number[];
  data: number[];
}
/** One golden case: its outputs and, when differentiable, the gradients by input name. */
export interface GoldenCase {
  label: string;
  outputs: Data[];
  grads?: Record<string, Data>;
}
/** The inputs by name, as float64 leaves. */
export type Inputs = Record<string, torch.Tensor>;

// The golden file writes NaN and the infinities as strings (JSON has no such numbers).
const revive = (_key: string, v: unknown): unknown =>
  v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
/** A golden file of test/golden/torch/ in this format: the inputs by name and the case lists. */
export function loadGolden<Lists extends string>(
  file: string,
): { inputs: Record<string, Data> } & Record<Lists, GoldenCase[]> {
  return JSON.parse(readFileSync(join(goldenDir, 'torch', file), 'utf8'), revive) as {
    inputs: Record<string, Data>;
  } & Record<Lists, GoldenCase[]>;
}
export const golden = loadGolden<'cases' | 'ops'>('linalg_fft.json');

const TOLERANCE = 1e-9;

/** A complex tensor as its [..., 2] real/imaginary view; other tensors as they are. */
export function real(t: torch.Tensor): torch.Tensor {
  return t.dtype.startsWith('complex') ? aten.view_as_real(aten.resolve_conj(t)) : t;
}

function same(actual: torch.Tensor, expected: Data, what: string): void {
  const a = real(actual);
  assert.deepEqual(a.shape, expected.shape, `${what}: shape`);
  const values = a.toFloat64Array();
  // An infinity must be matched exactly (their difference is NaN, never within a tolerance).
  const finite = expected.data.map((e, i) => (Number.isFinite(e) || values[i] !== e ? e : 0));
  assertClose(
    values.map((v, i) => (Number.isFinite(v) || v !== expected.data[i] ? v : 0)),
    finite,
    TOLERANCE,
    0,
    what,
  );
}

/**
 * Runs `fn` on fresh leaves of the golden inputs (linalg_fft.json's unless `inputsData` is given)
 * and checks its outputs and gradients.
 */
export function checkCase(
  c: GoldenCase,
  fn: (inputs: Inputs) => torch.Tensor[],
  inputsData: Record<string, Data> = golden.inputs,
): void {
  torch.tidy(() => {
    const differentiable = c.grads !== undefined;
    const inputs: Inputs = {};
    for (const [name, d] of Object.entries(inputsData))
      inputs[name] = torch.tensor(d.data, { dtype: 'float64', shape: d.shape, requiresGrad: differentiable });
    const outputs = fn(inputs);
    assert.equal(outputs.length, c.outputs.length, `${c.label}: number of outputs`);
    outputs.forEach((o, k) => same(o, c.outputs[k]!, `${c.label} output ${k}`));
    if (!differentiable) return;
    let loss = torch.scalarTensor(0, 'float64');
    for (const o of outputs) {
      if (o.dtype !== 'float64' && o.dtype !== 'complex128') continue;
      const r = real(o);
      const w = torch
        .arange(
          0,
          r.shape.reduce((a, b) => a * b, 1),
          1,
          'float64',
        )
        .add(1)
        .sin();
      loss = loss.add(r.mul(w.reshape(...r.shape)).sum());
    }
    loss.backward();
    for (const [name, leaf] of Object.entries(inputs)) {
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
