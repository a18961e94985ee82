// The golden file of scripts/golden/autograd_functional_special.py and the comparisons its tests
// share: tensors as {shape, data} (NaN and the infinities as strings), nested in arrays as PyTorch
// nests its tuples, compared in float64 to 1e-10 (relative beyond magnitude 1), NaN with NaN and
// each infinity with itself.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { goldenDir } from '../helpers.js';

/** A tensor as the golden file writes it. */
export interface Data {
  shape: number[];
  data: number[];
}
/** A tensor, or PyTorch's tuple nesting of them as arrays. */
export type Nested = Data | Nested[];

/** One torch.autograd.functional call: its function, arguments and results. */
export interface FunctionalCase {
  label: string;
  op: 'vjp' | 'jvp' | 'jacobian' | 'hessian' | 'vhp' | 'hvp';
  func: string;
  createGraph: boolean;
  v?: Nested;
  result: Nested;
  graphGrads?: (Data | null)[];
}
/** One torch.special call: inputs by argument name, the output, the gradients of out.sum(). */
export interface SpecialCase {
  label: string;
  inputs: Record<string, Data>;
  output: Data;
  grads: Record<string, Data> | null;
}

const revive = (_key: string, v: unknown): unknown =>
  v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
export const golden = JSON.parse(
  readFileSync(join(goldenDir, 'torch', 'autograd_functional_special.json'), 'utf8'),
  revive,
) as { inputs: Record<string, Data>; functional: FunctionalCase[]; special: SpecialCase[] };

const TOLERANCE = 1e-10;

/** A float64 tensor of golden data. */
export function fromData(d: Data, requiresGrad = false): torch.Tensor {
  return torch.tensor(d.data, { dtype: 'float64', shape: d.shape, requiresGrad });
}

/** Golden nesting as tensors, arrays kept as arrays. */
export function fromNested(n: Nested): torch.Tensor | torch.Tensor[] {
  return Array.isArray(n) ? n.map((e) => fromNested(e) as torch.Tensor) : fromData(n);
}

/** Checks one tensor's shape and values against the golden ones. */
export function same(actual: torch.Tensor, expected: Data, what: string): void {
  assert.deepEqual(actual.shape, expected.shape, `${what}: shape`);
  const a = actual.toFloat64Array();
  assert.equal(a.length, expected.data.length, `${what}: number of values`);
  expected.data.forEach((e, i) => {
    const x = a[i]!;
    const ok = Number.isNaN(e)
      ? Number.isNaN(x)
      : !Number.isFinite(e)
        ? x === e
        : Math.abs(x - e) <= TOLERANCE * Math.max(1, Math.abs(e));
    assert.ok(ok, `${what}: element ${i} is ${x}, expected ${e}`);
  });
}

/** Checks a result's nesting (tensor or arrays of them) and every tensor in it. */
export function sameNested(actual: unknown, expected: Nested, what: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${what}: an array of ${expected.length}`);
    assert.equal(actual.length, expected.length, `${what}: length`);
    expected.forEach((e, i) => sameNested(actual[i], e, `${what}[${i}]`));
  } else {
    assert.ok(actual instanceof torch.Tensor, `${what}: a Tensor`);
    same(actual, expected, what);
  }
}

/** The tensors of a nesting, in order. */
export function flatTensors(value: unknown): torch.Tensor[] {
  return Array.isArray(value) ? value.flatMap(flatTensors) : [value as torch.Tensor];
}
