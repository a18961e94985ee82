// nn.utils.parametrizations and parametrize.cached against PyTorch 1.13
// (test/golden/torch/parametrizations.json, from scripts/golden/parametrizations.py): orthogonal
// on a wide Linear and a Conv2d (a batch of tall matrices) for each map, with and without
// trivialization; spectralNorm's u, v, outputs and gradients over training-mode forwards and in
// evaluation mode; the cache; errors and memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
interface OrthogonalCase {
  keys: string[];
  original: Flat;
  base: Flat | null;
  weight: Flat;
  output: Flat;
  original_grad: Flat;
  bias_grad: Flat;
}
interface SpectralCase {
  keys: string[];
  u0: Flat;
  v0: Flat;
  outputs: Flat[];
  u: Flat;
  v: Flat;
  original_grad: Flat;
  eval_weight: Flat;
  eval_output: Flat;
  eval_u: Flat;
}
type Kind = 'linear' | 'conv';
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'parametrizations.json'), 'utf8')) as {
  inputs: Record<Kind, Flat>;
  params: Record<Kind, Record<string, Flat>>;
  orthogonal: Record<Kind, Record<string, OrthogonalCase>>;
  spectral: Record<Kind, SpectralCase>;
  square: { weight0: Flat; base: Flat; weight: Flat; original: Flat };
  spectral_dim1: { u: Flat; weight: Flat };
};
const PZ = nn.utils.parametrizations;
const P = nn.utils.parametrize;
const inputShapes: Record<Kind, number[]> = { linear: [4, 5], conv: [2, 4, 5, 4] };
const tol = 1e-10;

/** The module of `kind` with PyTorch's initial parameters, in float64. */
function make(kind: Kind): nn.Linear | nn.Conv2d {
  const m = kind === 'linear' ? new nn.Linear(5, 3).double() : new nn.Conv2d(4, 2, [3, 2]).double();
  const p = golden.params[kind];
  torch.tidy(() => {
    m.weight.setData(torch.tensor(p.weight!, { shape: m.weight.shape, dtype: 'float64' }));
    m.bias!.setData(torch.tensor(p.bias!, { shape: m.bias!.shape, dtype: 'float64' }));
  });
  return m;
}
const values = (t: Tensor): Flat => torch.tidy(() => Array.from(t.toFloat64Array()));
const input = (kind: Kind) =>
  torch.tensor(golden.inputs[kind], { shape: inputShapes[kind], dtype: 'float64' });
/** PyTorch's loss: the output weighted by linspace(-1, 2). */
const lossOf = (y: Tensor) =>
  y
    .mul(
      torch
        .linspace(
          -1,
          2,
          y.shape.reduce((a, b) => a * b, 1),
          'float64',
        )
        .reshape(...y.shape),
    )
    .sum();
const list = (m: nn.Module) =>
  (m as unknown as { parametrizations: { weight: nn.utils.parametrize.ParametrizationList } })
    .parametrizations.weight;

for (const kind of ['linear', 'conv'] as const)
  test(`orthogonal: every map, with and without trivialization, on a ${kind} (PyTorch 1.13 values)`, () => {
    const before = torch.liveTensors();
    const x = input(kind);
    for (const [label, g] of Object.entries(golden.orthogonal[kind])) {
      const map = label.replace(/_(triv|plain)$/, '') as nn.utils.parametrizations.OrthogonalMap;
      const m = make(kind);
      torch.manualSeed(7);
      PZ.orthogonal(m, 'weight', { orthogonalMap: map, useTrivialization: label.endsWith('_triv') });
      assert.deepEqual(Object.keys(m.stateDict()), g.keys, label);
      const orth = list(m).children()[0] as nn.utils.parametrizations.Orthogonal;
      assertClose(values(list(m).original), g.original, tol, 0, `${label} original`);
      if (g.base) assertClose(values(orth.base!), g.base, tol, 0, `${label} base`);
      assertClose(values(m.weight), g.weight, tol, 0, `${label} weight`);
      torch.tidy(() => {
        // orthonormal rows of the wide matrix, columns of the tall ones
        const w = m.weight;
        const gram = kind === 'linear' ? w.matmul(w.t()) : w.transpose(-2, -1).matmul(w);
        const n = gram.shape.at(-1)!;
        const err = gram.sub(torch.eye(n, 'float64')).abs().max().item();
        assert.ok(err < 1e-12, `${label}: |QᵀQ - I| = ${err}`);
        const y = m.forward(x);
        assertClose(values(y), g.output, tol, 0, `${label} output`);
        lossOf(y).backward();
      });
      torch.tidy(() => {
        // each read of .grad is a new handle: read them inside tidy
        assertClose(values(list(m).original.grad!), g.original_grad, tol, 0, `${label} original grad`);
        assertClose(values(m.bias!.grad!), g.bias_grad, tol, 0, `${label} bias grad`);
      });
      m.dispose();
    }
    x.dispose();
    assert.equal(torch.liveTensors(), before);
  });

for (const kind of ['linear', 'conv'] as const)
  test(`spectralNorm: u, v over training-mode forwards and evaluation mode on a ${kind} (PyTorch 1.13 values)`, () => {
    const before = torch.liveTensors();
    const g = golden.spectral[kind];
    const x = input(kind);
    const m = make(kind);
    torch.manualSeed(7);
    PZ.spectralNorm(m, 'weight', { nPowerIterations: 2 });
    assert.deepEqual(Object.keys(m.stateDict()), g.keys);
    const sn = list(m).children()[0] as nn.utils.parametrizations.SpectralNorm;
    assertClose(values(sn.u!), g.u0, tol, 0, 'u after registration');
    assertClose(values(sn.v!), g.v0, tol, 0, 'v after registration');
    torch.tidy(() => {
      let y: Tensor | undefined;
      for (const expected of g.outputs) {
        y = m.forward(x);
        assertClose(values(y!), expected, tol, 0, 'training output');
      }
      lossOf(y!).backward();
    });
    assertClose(values(sn.u!), g.u, tol, 0, 'u');
    assertClose(values(sn.v!), g.v, tol, 0, 'v');
    torch.tidy(() => assertClose(values(list(m).original.grad!), g.original_grad, tol, 0, 'original grad'));
    m.eval();
    torch.tidy(() => assertClose(values(m.forward(x)), g.eval_output, tol, 0, 'eval output'));
    assertClose(values(m.weight), g.eval_weight, tol, 0, 'eval weight');
    assertClose(values(sn.u!), g.eval_u, tol, 0, 'evaluation mode keeps u');
    m.dispose();
    x.dispose();
    assert.equal(torch.liveTensors(), before);
  });

test('orthogonal keeps a square orthogonal weight as base; spectralNorm along dim 1 (PyTorch 1.13 values)', () => {
  const before = torch.liveTensors();
  const sq = new nn.Linear(3, 3, { bias: false }).double();
  torch.tidy(() =>
    sq.weight.setData(torch.tensor(golden.square.weight0, { shape: [3, 3], dtype: 'float64' })),
  );
  PZ.orthogonal(sq);
  const orth = list(sq).children()[0] as nn.utils.parametrizations.Orthogonal;
  assert.equal(orth.orthogonalMap, 'matrix_exp', 'the default map of a square matrix');
  assertClose(values(orth.base!), golden.square.base, tol, 0, 'base');
  assertClose(values(list(sq).original), golden.square.original, tol, 0, 'original');
  assertClose(values(sq.weight), golden.square.weight, tol, 0, 'weight');
  sq.dispose();

  const m = make('conv');
  torch.manualSeed(7);
  PZ.spectralNorm(m, 'weight', { dim: 1 });
  m.eval();
  torch.tidy(() => void m.forward(input('conv')));
  const sn = list(m).children()[0] as nn.utils.parametrizations.SpectralNorm;
  assertClose(values(sn.u!), golden.spectral_dim1.u, tol, 0, 'u along dim 1');
  assertClose(values(m.weight), golden.spectral_dim1.weight, tol, 0, 'weight along dim 1');
  m.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('parametrize.cached: one computation per block, cleared on exit and on error', () => {
  const before = torch.liveTensors();
  const x = input('linear');
  const once = make('linear');
  const twice = make('linear');
  for (const m of [once, twice]) {
    torch.manualSeed(7);
    PZ.spectralNorm(m);
  }
  const sn = (m: nn.Module) => list(m).children()[0] as nn.utils.parametrizations.SpectralNorm;
  torch.tidy(() => void once.forward(x));
  const result = P.cached(() =>
    torch.tidy(() => {
      const first = twice.forward(x);
      const weight = twice.weight;
      const second = twice.forward(x);
      assert.equal(twice.weight, weight, 'the cached weight is reused');
      return torch.keep(first.sub(second).abs().max());
    }),
  );
  assert.equal(result.item(), 0);
  result.dispose();
  assert.deepEqual(values(sn(twice).u!), values(sn(once).u!), 'one power-iteration step in the block');
  const inside = twice.weight;
  torch.tidy(() => void twice.forward(x));
  assert.notEqual(twice.weight, inside, 'recomputed after the block');
  assert.throws(
    () =>
      P.cached(() => {
        torch.tidy(() => void twice.forward(x));
        throw new Error('inside');
      }),
    /inside/,
  );
  const afterError = twice.weight;
  torch.tidy(() => void twice.forward(x));
  assert.notEqual(twice.weight, afterError, 'the cache is cleared when the block throws');
  assert.throws(
    () => P.cached(42 as unknown as () => void),
    /tailor: parametrize\.cached: fn must be a function/,
  );
  for (const m of [once, twice]) m.dispose();
  x.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('parametrizations: named errors', () => {
  const before = torch.liveTensors();
  const m = make('linear');
  assert.throws(
    () => PZ.orthogonal(m, 'bias'),
    /parametrizations\.orthogonal: name must be a matrix or a batch of matrices \(bias has 1 dimension\)/,
  );
  assert.throws(
    () => PZ.orthogonal(m, 'weight', { orthogonalMap: 'qr' as 'cayley' }),
    /parametrizations\.orthogonal: options\.orthogonalMap must be one of 'matrix_exp', 'cayley', 'householder'/,
  );
  assert.throws(
    () => PZ.orthogonal(m, 'scale'),
    /parametrizations\.orthogonal: Linear has no parameter 'scale'/,
  );
  assert.throws(
    () => PZ.spectralNorm(m, 'weight', { dim: 2 }),
    /parametrizations\.spectralNorm: options\.dim must be an integer >= -2 and <= 1, got 2/,
  );
  assert.throws(
    () => PZ.spectralNorm(m, 'weight', { nPowerIterations: 0 }),
    /parametrizations\.spectralNorm: options\.nPowerIterations must be an integer/,
  );
  PZ.spectralNorm(m);
  assert.throws(
    () => PZ.orthogonal(m),
    /parametrizations\.orthogonal: weight is parametrized already, so base cannot be set from it; pass \{ useTrivialization: false \}/,
  );
  m.dispose();
  assert.equal(torch.liveTensors(), before);
});
