// torch.nn.init against PyTorch 1.13 (test/golden/torch/nn_init.json, scripts/golden/nn_init.py):
// each initialisation on several shapes in float32 and float64, drawn right after the same
// manualSeed as PyTorch, so that equal values check the formulas and the order of the draws;
// calculateGain for every name; the named errors; and that no tensor is left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import type { DType } from '../../src/torch/dtype.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { assertClose, goldenDir } from '../helpers.js';

const { init } = nn;
type Nonlinearity = nn.init.Nonlinearity;
type KaimingOptions = nn.init.KaimingOptions;
type TruncNormalOptions = nn.init.TruncNormalOptions;

interface Case {
  fn: string;
  shape: number[];
  dtype: 'float32' | 'float64';
  seed: number;
  args: Record<string, number | string>;
  data: number[];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_init.json'), 'utf8')) as {
  cases: Case[];
  gains: { nonlinearity: Nonlinearity; param?: number; gain: number }[];
};

const n = (v: number | string | undefined) => v as number;
const calls: Record<string, (t: Tensor, a: Case['args']) => Tensor> = {
  uniform_: (t, a) => (a.low === undefined ? init.uniform_(t) : init.uniform_(t, n(a.low), n(a.high))),
  normal_: (t, a) => init.normal_(t, n(a.mean), n(a.std)),
  constant_: (t, a) => init.constant_(t, n(a.value)),
  zeros_: (t) => init.zeros_(t),
  ones_: (t) => init.ones_(t),
  eye_: (t) => init.eye_(t),
  dirac_: (t, a) => init.dirac_(t, n(a.groups)),
  orthogonal_: (t, a) => init.orthogonal_(t, n(a.gain)),
  sparse_: (t, a) => init.sparse_(t, n(a.sparsity), n(a.std)),
  trunc_normal_: (t, a) => init.truncNormal_(t, a as TruncNormalOptions),
  kaiming_uniform_: (t, a) => init.kaimingUniform_(t, a as KaimingOptions),
  kaiming_normal_: (t, a) => init.kaimingNormal_(t, a as KaimingOptions),
  xavier_uniform_: (t, a) => init.xavierUniform_(t, n(a.gain)),
  xavier_normal_: (t, a) => init.xavierNormal_(t, n(a.gain)),
};

const approximate = new Set(['orthogonal_', 'trunc_normal_']);

test('every nn.init function equals PyTorch 1.13 after the same seed, in float32 and float64', () => {
  const live = torch.liveTensors();
  const seen = new Set<string>();
  for (const c of golden.cases) {
    const what = `${c.fn} ${JSON.stringify(c.args)} [${c.shape.join(', ')}] ${c.dtype}`;
    torch.manualSeed(c.seed);
    const t = torch.empty(c.shape, c.dtype as DType).requiresGrad_();
    const out = calls[c.fn]!(t, c.args);
    assert.equal(out, t, `${what}: returns its argument`);
    assert.deepEqual(t.shape, c.shape, `${what}: shape`);
    assert.equal(t.dtype, c.dtype, `${what}: dtype`);
    assert.equal(t.gradFn, null, `${what}: recorded no gradient`);
    // Exact, but for the LAPACK QR of orthogonal_ and the erf of truncNormal_'s bounds.
    const atol = !approximate.has(c.fn) ? 0 : c.dtype === 'float32' ? 1e-6 : 1e-12;
    assertClose(t.toFloat64Array(), c.data, atol, 0, what);
    t.dispose();
    seen.add(c.fn);
  }
  assert.deepEqual([...seen].sort(), Object.keys(calls).sort());
  assert.equal(torch.liveTensors(), live, 'no tensor left behind');
});

test('calculateGain equals PyTorch for every nonlinearity and leaky_relu slope', () => {
  for (const g of golden.gains)
    assert.equal(init.calculateGain(g.nonlinearity, g.param), g.gain, `${g.nonlinearity} ${g.param ?? ''}`);
});

test('wrong arguments are errors that name the function and the argument', () => {
  const live = torch.liveTensors();
  const t1 = torch.empty([4]);
  const t2 = torch.empty([3, 4]);
  const t3 = torch.empty([2, 2, 3]);
  const t4 = torch.empty([3, 2, 3, 3]);
  const cases: [() => unknown, RegExp][] = [
    [() => init.eye_(t3), /^eye_: t must be a 2-d tensor .*use dirac_.*got an array of 3$/],
    [() => init.dirac_(t2), /^dirac_: t must be a 3-, 4- or 5-d tensor .*use eye_/],
    [() => init.dirac_(t4, 2), /^dirac_: groups must be a divisor of the output channels .*3\), got 2$/],
    [() => init.dirac_(t4, 0), /^dirac_: groups must be an integer >= 1, got 0$/],
    [() => init.orthogonal_(t1), /^orthogonal_: t must be a tensor with at least 2 dimensions/],
    [() => init.sparse_(t2, 1.5), /^sparse_: sparsity must be a finite number >= 0 and <= 1, got 1.5$/],
    [() => init.sparse_(t2, -0.1), /^sparse_: sparsity must be .*, got -0.1$/],
    [() => init.sparse_(t3, 0.5), /^sparse_: t must be a 2-d tensor/],
    [
      () => init.truncNormal_(t2, { a: 1, b: 1 }),
      /^truncNormal_: options.b must be a finite number > 1, got 1$/,
    ],
    [
      () => init.truncNormal_(t2, { std: 0 }),
      /^truncNormal_: options.std must be a finite number > 0, got 0$/,
    ],
    [
      () => init.calculateGain('softmax' as Nonlinearity),
      /^calculateGain: nonlinearity must be one of 'linear',.*got 'softmax'$/,
    ],
    [() => init.calculateGain('leaky_relu', NaN), /^calculateGain: param must be a finite number, got NaN$/],
    [
      () => init.kaimingUniform_(t2, { mode: 'fan_avg' as 'fan_in' }),
      /^kaimingUniform_: options.mode must be 'fan_in' or 'fan_out', got 'fan_avg'$/,
    ],
    [
      () => init.kaimingNormal_(t2, { nonlinearity: 'gelu' as Nonlinearity }),
      /^kaimingNormal_: nonlinearity must be one of/,
    ],
    [() => init.zeros_([1, 2] as unknown as Tensor), /^zeros_: t must be a Tensor, got an array of 2$/],
  ];
  for (const [fn, message] of cases)
    assert.throws(fn, (e: Error) => e instanceof ArgumentError && message.test(e.message));
  assert.throws(() => init.kaimingUniform_(t1), /at least 2 dimensions, got shape \[4\]/);
  for (const t of [t1, t2, t3, t4]) t.dispose();
  assert.equal(torch.liveTensors(), live);
});

test('tensors without elements are left as they are', () => {
  const t = torch.empty([0, 3]);
  assert.equal(init.kaimingUniform_(t), t);
  assert.equal(init.kaimingNormal_(t, { mode: 'fan_out' }), t);
  assert.equal(init.orthogonal_(t), t);
  t.dispose();
});
