// The rest of torch.linalg against PyTorch 1.13 (test/golden/torch/linalg_more.json, from
// scripts/golden/linalg_more.py), in float64 to 1e-9: values (LU and LDL factors and pivots as
// they are, info codes exactly) and gradients of the differentiable functions; cond's gradient
// for 'fro', ±1 and ±Infinity, whose backward fails in PyTorch 1.13, against the same steps out
// of place. Then identities the factorisations satisfy, the named errors, and leaks; and
// matrixRank's and pinv's tensor tolerances (scripts/golden/linalg_tolerances.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { aten, linalg } from '../../src/torch/index.js';
import { checkCase, loadGolden, type Inputs } from './linalg-fft-golden.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertClose, goldenDir } from '../helpers.js';

type T = torch.Tensor;
const golden = loadGolden<'cases'>('linalg_more.json');
const f64 = (rows: number[][]): T => torch.tensor(rows, { dtype: 'float64' });
const singular = (): T =>
  f64([
    [1, 2],
    [2, 4],
  ]);
const eye3 = (): T => torch.eye(3, 'float64');

// A rank-2 4x4 matrix: rows 3 and 4 of the left factor are combinations of rows 1 and 2.
function rankDeficient(i: Inputs): T {
  const M = i.M!.detach();
  const [r0, r1] = [M.narrow(0, 0, 1), M.narrow(0, 1, 1)];
  return torch.cat([M.narrow(0, 0, 2), r0.add(r1), r1.mul(2)]).matmul(M.t());
}

// The golden script's cases, by label (`i` holds its inputs by name).
const cases: Record<string, (i: Inputs) => T[]> = {
  'matrixPower.3': (i) => [linalg.matrixPower(i.Ab!, 3)],
  'matrixPower.0': (i) => [linalg.matrixPower(i.A!, 0)],
  'matrixPower.-2': (i) => [linalg.matrixPower(i.A!, -2)],
  matrixRank: (i) => [linalg.matrixRank(i.M!), linalg.matrixRank(i.Ab!), linalg.matrixRank(rankDeficient(i))],
  'matrixRank.tol': (i) => [
    linalg.matrixRank(i.A!, { atol: 2.5 }),
    linalg.matrixRank(i.A!, { rtol: 0.5 }),
    linalg.matrixRank(i.A!, { atol: 0.1, rtol: 0.6 }),
    linalg.matrixRank(i.Spd!, { hermitian: true, atol: 3.5 }),
  ],
  multiDot: (i) => [linalg.multiDot([i.M!, i.B!, i.Bt!])],
  'multiDot.vectors': (i) => [linalg.multiDot([i.x4!, i.M!, i.B!, i.v2!])],
  tensorinv: (i) => [linalg.tensorinv(i.T623!, 1)],
  'tensorinv.2': (i) => [linalg.tensorinv(i.T623!.reshape(2, 3, 6))],
  tensorsolve: (i) => [linalg.tensorsolve(i.T623!, i.b6!)],
  'tensorsolve.dims': (i) => [linalg.tensorsolve(i.T623!.permute(1, 0, 2), i.b6!, [0])],
  cond: (i) => [linalg.cond(i.M!)],
  'cond.2': (i) => [linalg.cond(i.Ab!, 2)],
  'cond.-2': (i) => [linalg.cond(i.M!, -2)],
  'cond.fro': (i) => [linalg.cond(i.Ab!, 'fro')],
  'cond.nuc': (i) => [linalg.cond(i.A!, 'nuc')],
  'cond.1': (i) => [linalg.cond(i.A!, 1)],
  'cond.-1': (i) => [linalg.cond(i.A!, -1)],
  'cond.inf': (i) => [linalg.cond(i.Ab!, Infinity)],
  'cond.-inf': (i) => [linalg.cond(i.A!, -Infinity)],
  'cond.singular': () => [
    ...(['fro', 1, Infinity] as const).map((p) => linalg.cond(singular(), p)),
    linalg.cond(torch.zeros([2, 0, 0], 'float64'), 'fro'),
  ],
  diagonal: (i) => [linalg.diagonal(i.Ab!)],
  'diagonal.offset.dims': (i) => [linalg.diagonal(i.T!, { offset: 1, dim1: 0, dim2: 2 })],
  'diagonal.negative': (i) => [linalg.diagonal(i.M!, { offset: -1 })],
  vander: (i) => [linalg.vander(i.x4!)],
  'vander.N': (i) => [linalg.vander(i.Vb!, { N: 5 })],
  vecdot: (i) => [linalg.vecdot(i.T!, i.Y!)],
  'vecdot.dim': (i) => [linalg.vecdot(i.T!, i.Y!.select(0, 0), { dim: 1 })],
  lu: (i) => linalg.lu(i.A!),
  'lu.wide.batch': (i) => linalg.lu(torch.cat([i.Bt!, i.Bt!.flip(0)]).reshape(2, 2, 3)),
  'lu.tall': (i) => linalg.lu(i.M!),
  luFactor: (i) => linalg.luFactor(i.Ab!),
  'luFactor.tall': (i) => linalg.luFactor(i.M!),
  luFactorEx: (i) => linalg.luFactorEx(i.A!),
  'luFactorEx.singular': () => linalg.luFactorEx(singular()),
  luSolve: (i) => [linalg.luSolve(...linalg.luFactor(i.A!), i.B!)],
  'luSolve.right': (i) => [linalg.luSolve(...linalg.luFactor(i.A!), i.Bt!, { left: false })],
  'luSolve.adjoint': (i) => [linalg.luSolve(...linalg.luFactor(i.Ab!), i.B!, { adjoint: true })],
  ldlFactor: (i) => linalg.ldlFactor(i.Sym!),
  ldlFactorEx: (i) => linalg.ldlFactorEx(i.Sym!),
  ldlSolve: (i) => [linalg.ldlSolve(...linalg.ldlFactor(i.Sym!), i.B!)],
  householderProduct: (i) => [linalg.householderProduct(i.M!, i.tau!)],
  'householderProduct.geqrf': (i) => [linalg.householderProduct(...aten.geqrf(i.M!.detach())).abs()],
  invEx: (i) => linalg.invEx(i.Ab!),
  'invEx.singular': () => [linalg.invEx(singular())[1]],
  choleskyEx: (i) => linalg.choleskyEx(i.Spd!),
  'choleskyEx.upper': (i) => linalg.choleskyEx(i.Spd!, { upper: true }),
  'choleskyEx.indefinite': (i) => [linalg.choleskyEx(i.Sym!.sub(eye3().mul(10)))[1]],
  solveEx: (i) => linalg.solveEx(i.A!, i.B!),
  'solveEx.right': (i) => linalg.solveEx(i.A!, i.Bt!, { left: false }),
};

test('the rest of torch.linalg matches PyTorch 1.13: values and gradients to 1e-9', () => {
  assert.deepEqual(
    golden.cases.map((c) => c.label).sort(),
    Object.keys(cases).sort(),
    'every golden case is run, and only those',
  );
  const before = torch.liveTensors();
  for (const c of golden.cases) checkCase(c, cases[c.label]!, golden.inputs);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the factorisations reconstruct A; the _ex forms report failures and checkErrors throws', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const A = f64([
      [0, 2, 1],
      [4, 1, 3],
      [2, 5, 7],
    ]);
    const close = (X: T, Y: T, what: string): void => {
      const err = X.sub(Y).abs().max().item();
      assert.ok(err < 1e-12, `${what}: |difference| = ${err}`);
    };
    const [P, L, U] = linalg.lu(A);
    close(P.matmul(L).matmul(U), A, 'P L U');
    const [LU, pivots] = linalg.luFactor(A);
    assert.equal(pivots.dtype, 'int32');
    const [P2, L2, U2] = aten.lu_unpack(LU, pivots);
    close(P2, P, 'lu_unpack P');
    close(L2.matmul(U2), L.matmul(U), 'lu_unpack L U');
    const B = f64([[1], [2], [3]]);
    close(A.matmul(linalg.luSolve(LU, pivots, B)), B, 'A luSolve(B)');
    const S = A.add(A.t());
    close(S.matmul(linalg.ldlSolve(...linalg.ldlFactor(S), B)), B, 'S ldlSolve(B)');
    close(linalg.matrixPower(A, -1), linalg.inv(A), 'A^-1');
    close(linalg.multiDot([A, A, A]), linalg.matrixPower(A, 3), 'multiDot');

    const [inverse, info] = linalg.invEx(torch.stack([A, torch.zeros([3, 3], 'float64')]));
    assert.deepEqual(Array.from(info.toFloat64Array()), [0, 1], 'info names the singular matrix');
    close(inverse.select(0, 0), linalg.inv(A), 'invEx of the invertible one');
    assert.throws(() => linalg.invEx(singular(), { checkErrors: true }), /singular/i);
    assert.throws(() => linalg.choleskyEx(A.neg(), { checkErrors: true }), /positive-definite/i);
    assert.deepEqual(Array.from(linalg.solveEx(singular(), f64([[1], [1]]))[1].toFloat64Array()), [2]);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bad arguments are errors naming the function, the argument and the remedy', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const rect = torch.zeros([2, 3], 'float64');
    const x = torch.zeros([4], 'float64');
    const A = eye3();
    const [LU, pivots] = linalg.luFactor(A);
    const cases: [() => unknown, RegExp][] = [
      [
        () => linalg.matrixPower(rect, 2),
        /linalg\.matrixPower: A must be a square matrix .*got shape \[2, 3\]/,
      ],
      [() => linalg.matrixPower(A, 1.5), /linalg\.matrixPower: n must be an integer, got 1\.5/],
      [() => linalg.matrixRank(rect, { hermitian: true }), /linalg\.matrixRank: A must be a square matrix/],
      [
        () => linalg.matrixRank(A, { atol: -1 }),
        /linalg\.matrixRank: options\.atol must be a finite number >= 0/,
      ],
      [
        () => linalg.matrixRank(A, { hermitian: 'yes' as unknown as boolean }),
        /options\.hermitian must be true or false/,
      ],
      [() => linalg.multiDot([A]), /linalg\.multiDot: tensors must be an array of at least 2/],
      [
        () => linalg.multiDot([A, x, A]),
        /linalg\.multiDot: tensors\[1\] must be a matrix \[m, n\] \(only the first/,
      ],
      [
        () => linalg.multiDot([A, rect]),
        /linalg\.multiDot: tensors\[1\] must have 3 rows to follow tensors\[0\]/,
      ],
      [
        () => linalg.tensorinv(rect, 1),
        /linalg\.tensorinv: A's first ind = 1 sizes must have the product of the others/,
      ],
      [
        () => linalg.tensorsolve(A, rect),
        /linalg\.tensorsolve: A's last 0 sizes .* must multiply to B's number/,
      ],
      [
        () => linalg.tensorsolve(A, x, [0, 0]),
        /linalg\.tensorsolve: dims must be dimensions of A without repeats/,
      ],
      [() => linalg.cond(rect, 'fro'), /linalg\.cond: A must be a square matrix/],
      [() => linalg.cond(A, 3), /linalg\.cond: p must be null, 'fro', 'nuc', 1, -1, 2, -2/],
      [() => linalg.diagonal(x), /linalg\.diagonal: A must have two or more dimensions/],
      [
        () => linalg.diagonal(A, { dim1: 1, dim2: -1 }),
        /linalg\.diagonal: options\.dim2 must be a dimension other/,
      ],
      [() => linalg.vander(x, { N: 1 }), /linalg\.vander: options\.N must be an integer >= 2/],
      [
        () => linalg.vander(torch.zeros([1], 'float64')),
        /linalg\.vander: x's last dimension .*pass options\.N >= 2/,
      ],
      [() => linalg.vecdot(x, x, { dim: 0.5 }), /linalg\.vecdot: options\.dim must be an integer/],
      [() => linalg.lu(x), /linalg\.lu: A must be a matrix or a batch of them/],
      [
        () => linalg.luFactor(A, { pivot: 1 as unknown as boolean }),
        /linalg\.luFactor: options\.pivot must be true or false/,
      ],
      [
        () => linalg.luSolve(LU, pivots.to('int64'), A),
        /linalg\.luSolve: pivots must be the int32 pivots \[\.\.\., 3\]/,
      ],
      [() => linalg.luSolve(LU, pivots, rect), /linalg\.luSolve: B must have 3 rows to match LU/],
      [() => linalg.luSolve(rect, pivots, A), /linalg\.luSolve: LU must be a square matrix/],
      [() => linalg.ldlFactor(rect), /linalg\.ldlFactor: A must be a square matrix/],
      [() => linalg.ldlSolve(LU, pivots, rect), /linalg\.ldlSolve: B must have 3 rows/],
      [
        () => linalg.householderProduct(rect, x),
        /linalg\.householderProduct: A must have at least as many rows/,
      ],
      [() => linalg.householderProduct(rect.t(), x), /linalg\.householderProduct: tau must be \[\.\.\., k\]/],
      [() => linalg.invEx(rect), /linalg\.invEx: A must be a square matrix/],
      [
        () => linalg.choleskyEx(A, { upper: 'no' as unknown as boolean }),
        /options\.upper must be true or false/,
      ],
      [() => linalg.solveEx(rect, x), /linalg\.solveEx: A must be a square matrix/],
    ];
    for (const [fn, message] of cases) assert.throws(fn, message);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('matrixRank and pinv take tensor tolerances, one per matrix, as PyTorch 1.13 (scripts/golden/linalg_tolerances.py)', () => {
  const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'linalg-tolerances.json'), 'utf8')) as Record<
    string,
    number[] | number[][][]
  >;
  const before = torch.liveTensors();
  torch.tidy(() => {
    const A = torch.tensor(g.A as number[][][], { dtype: 'float64' });
    const atol = torch.tensor(g.atol as number[], { dtype: 'float64' });
    const rtol = torch.tensor(g.rtol as number[], { dtype: 'float64' });
    const ints = (t: T) => Array.from(t.toFloat64Array());
    assert.deepEqual(ints(linalg.matrixRank(A, { atol })), g.rank_atol);
    assert.deepEqual(ints(linalg.matrixRank(A, { rtol })), g.rank_rtol);
    assert.deepEqual(ints(linalg.matrixRank(A, { atol, rtol })), g.rank_both);
    const H = A.matmul(A.transpose(-1, -2));
    assert.deepEqual(ints(linalg.matrixRank(H, { atol, hermitian: true })), g.rank_hermitian);
    assertClose(linalg.pinv(A, { atol }).toFloat64Array(), g.pinv_atol as number[], 1e-9, 1e-9, 'pinv atol');
    assertClose(linalg.pinv(A, { rtol }).toFloat64Array(), g.pinv_rtol as number[], 1e-9, 1e-9, 'pinv rtol');
    // A number beside a tensor is that tolerance for every matrix.
    assert.deepEqual(
      ints(linalg.matrixRank(A, { atol: 0.05, rtol })),
      ints(linalg.matrixRank(A, { atol: torch.full([3], 0.05, 'float64'), rtol })),
    );
    assert.throws(
      () => linalg.matrixRank(A, { atol: torch.ones([3], 'int64') }),
      /linalg\.matrixRank: options\.atol must be a floating point tensor, got int64/,
    );
    assert.throws(() => linalg.pinv(A, { rtol: -1 }), /linalg\.pinv: options\.rtol/);
  });
  assert.equal(torch.liveTensors(), before);
});
