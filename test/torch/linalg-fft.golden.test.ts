// torch.linalg and torch.fft against PyTorch 1.13 (test/golden/torch/linalg_fft.json, from
// scripts/golden/linalg_fft.py), in float64 to 1e-9: every function's values, for svd, qr and eigh
// what is unique (singular values and eigenvalues, reconstructions, factors up to sign), and the
// gradients of the differentiable ones. Then orthogonality, the named errors, and leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { aten, linalg, fft } from '../../src/torch/index.js';
import { checkCase, golden, type Inputs } from './linalg-fft-golden.js';

type T = torch.Tensor;
const eye3 = (): T => torch.eye(3, 'float64');

function svdParts(A: T, full: boolean): T[] {
  const [U, S, Vh] = linalg.svd(A, full);
  const k = S.shape[S.shape.length - 1]!;
  const recon = U.narrow(-1, 0, k)
    .matmul(aten.diag_embed(S))
    .matmul(Vh.narrow(-2, 0, k));
  return [S, recon, U.abs(), Vh.abs()];
}
function qrParts(A: T, mode: 'reduced' | 'complete' | 'r'): T[] {
  const [Q, R] = linalg.qr(A, mode);
  return mode === 'r' ? [R.abs(), Q] : [Q.abs(), R.abs(), Q.matmul(R)];
}
function eighParts(A: T, uplo: 'L' | 'U'): T[] {
  const [w, V] = linalg.eigh(A, uplo);
  return [w, V.abs(), V.matmul(aten.diag_embed(w)).matmul(V.transpose(-2, -1))];
}
const z = (i: Inputs): T => aten.complex(i.re!, i.im!);
const zimg = (i: Inputs): T => aten.complex(i.reImg!, i.imImg!);

// The golden script's cases, by label (`i` holds its inputs by name).
const cases: Record<string, (i: Inputs) => T[]> = {
  vectorNorm: (i) => [linalg.vectorNorm(i.x!)],
  'vectorNorm.inf.dim': (i) => [linalg.vectorNorm(i.M!, Infinity, 1)],
  'vectorNorm.3.keepdim': (i) => [linalg.vectorNorm(i.M!, 3, [0], true)],
  'vectorNorm.0': (i) => [linalg.vectorNorm(i.M!, 0)],
  'matrixNorm.fro': (i) => [linalg.matrixNorm(i.Ab!)],
  'matrixNorm.nuc': (i) => [linalg.matrixNorm(i.M!, 'nuc')],
  'matrixNorm.2': (i) => [linalg.matrixNorm(i.M!, 2)],
  'matrixNorm.-2': (i) => [linalg.matrixNorm(i.M!, -2)],
  'matrixNorm.1': (i) => [linalg.matrixNorm(i.Ab!, 1)],
  'matrixNorm.-inf.dim': (i) => [linalg.matrixNorm(i.T!, -Infinity, [0, 2])],
  norm: (i) => [linalg.norm(i.Ab!)],
  'norm.vector.3': (i) => [linalg.norm(i.x!, 3)],
  'norm.matrix.inf': (i) => [linalg.norm(i.A!, Infinity)],
  'norm.nuc': (i) => [linalg.norm(i.A!, 'nuc')],
  'norm.dim': (i) => [linalg.norm(i.M!, null, 1)],
  det: (i) => [linalg.det(i.Ab!)],
  slogdet: (i) => linalg.slogdet(i.Ab!.sub(eye3().mul(2))),
  inv: (i) => [linalg.inv(i.Ab!)],
  solve: (i) => [linalg.solve(i.A!, i.B!)],
  'solve.right': (i) => [linalg.solve(i.A!, i.Bt!, { left: false })],
  solveTriangular: (i) => [linalg.solveTriangular(aten.triu(i.A!), i.B!, { upper: true })],
  'solveTriangular.lower.right.unit': (i) => [
    linalg.solveTriangular(aten.tril(i.A!), i.Bt!, { upper: false, left: false, unitriangular: true }),
  ],
  cholesky: (i) => [linalg.cholesky(i.Spd!)],
  'cholesky.upper': (i) => [linalg.cholesky(i.Spd!, { upper: true })],
  eigh: (i) => eighParts(i.Sym!, 'L'),
  'eigh.U': (i) => eighParts(aten.triu(i.Sym!), 'U'),
  eigvalsh: (i) => [linalg.eigvalsh(i.Sym!)],
  svd: (i) => svdParts(i.M!, true),
  'svd.reduced': (i) => svdParts(i.M!.t(), false),
  svdvals: (i) => [linalg.svdvals(i.M!)],
  qr: (i) => qrParts(i.M!, 'reduced'),
  'qr.complete': (i) => qrParts(i.M!, 'complete'),
  'qr.r': (i) => qrParts(i.M!, 'r'),
  lstsq: (i) => [linalg.lstsq(i.M!, i.b4!)[0]],
  pinv: (i) => [linalg.pinv(i.M!)],
  'pinv.hermitian': (i) => [linalg.pinv(i.Spd!, { hermitian: true })],
  matrixExp: (i) => [linalg.matrixExp(i.A!.mul(0.5))],
  cross: (i) => [linalg.cross(i.a3!, i.c3!)],
  fft: (i) => [fft.fft(i.x!)],
  'fft.n.ortho': (i) => [fft.fft(i.x7!, 10, -1, 'ortho')],
  'fft.forward.dim': (i) => [fft.fft(i.img!, null, 0, 'forward')],
  ifft: (i) => [fft.ifft(z(i))],
  rfft: (i) => [fft.rfft(i.x!)],
  'rfft.n.ortho': (i) => [fft.rfft(i.x7!, 6, -1, 'ortho')],
  irfft: (i) => [fft.irfft(z(i))],
  'irfft.n': (i) => [fft.irfft(z(i), 9, -1, 'forward')],
  hfft: (i) => [fft.hfft(z(i))],
  'hfft.n': (i) => [fft.hfft(z(i), 7, -1, 'ortho')],
  ihfft: (i) => [fft.ihfft(i.x7!)],
  fft2: (i) => [fft.fft2(i.img!)],
  ifft2: (i) => [fft.ifft2(zimg(i), [3, 8])],
  rfft2: (i) => [fft.rfft2(i.img!, null, [-2, -1], 'ortho')],
  irfft2: (i) => [fft.irfft2(zimg(i), [4, 10])],
  fftn: (i) => [fft.fftn(i.vol!)],
  'fftn.s.dim': (i) => [fft.fftn(i.vol!, [4, 4], [0, 2])],
  ifftn: (i) => [fft.ifftn(zimg(i))],
  rfftn: (i) => [fft.rfftn(i.vol!)],
  irfftn: (i) => [fft.irfftn(zimg(i), [4, 10], null, 'forward')],
  fftfreq: () => [fft.fftfreq(5, 1, { dtype: 'float64' }), fft.fftfreq(8, 0.1, { dtype: 'float64' })],
  rfftfreq: () => [fft.rfftfreq(8, 0.25, { dtype: 'float64' }), fft.rfftfreq(7, 1, { dtype: 'float64' })],
  fftshift: (i) => [fft.fftshift(i.x7!), fft.fftshift(i.img!, 0), fft.fftshift(i.img!)],
  ifftshift: (i) => [fft.ifftshift(i.x7!), fft.ifftshift(i.img!, [1])],
};

test('torch.linalg and torch.fft match PyTorch 1.13: values and gradients to 1e-9', () => {
  assert.deepEqual(
    golden.cases.map((c) => c.label).sort(),
    Object.keys(cases).sort(),
    'every golden case is run, and only those',
  );
  const before = torch.liveTensors();
  for (const c of golden.cases) checkCase(c, cases[c.label]!);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('svd and qr factors are orthonormal; lstsq returns PyTorch four results', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const A = torch.tensor(
      [
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 10],
        [1, 0, 1],
      ],
      { dtype: 'float64' },
    );
    const [U, S, Vh] = linalg.svd(A);
    assert.deepEqual([U.shape, S.shape, Vh.shape], [[4, 4], [3], [3, 3]]);
    const [Q, R] = linalg.qr(A, 'complete');
    assert.deepEqual(
      [Q.shape, R.shape],
      [
        [4, 4],
        [4, 3],
      ],
    );
    for (const M of [U, Vh, Q]) {
      const err = M.t().matmul(M).sub(torch.eye(M.shape[0]!, 'float64')).abs().max().item();
      assert.ok(err < 1e-12, `|MᵀM - I| = ${err}`);
    }
    const b = torch.tensor([[1], [2], [3], [4]], { dtype: 'float64' });
    const out = linalg.lstsq(A, b, null, { driver: 'gelsd' });
    assert.equal(out.length, 4);
    assert.deepEqual(out[0].shape, [3, 1]);
    assert.equal(out[2].item(), 3, 'rank');
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bad arguments are errors naming the function, the argument and what it must be', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const rect = torch.zeros([2, 3], 'float64');
    const x = torch.zeros([8], 'float64');
    const cases: [() => unknown, RegExp][] = [
      [() => linalg.det(rect), /linalg\.det: A must be a square matrix .*got shape \[2, 3\]/],
      [() => linalg.inv(x), /linalg\.inv: A must be a square matrix/],
      [() => linalg.eigh(rect), /linalg\.eigh: A must be a square matrix/],
      [() => linalg.svd(x), /linalg\.svd: A must be a matrix or a batch of them/],
      [() => linalg.matrixNorm(rect, 3), /linalg\.matrixNorm: ord must be 'fro', 'nuc', 1, -1, 2/],
      [() => linalg.norm(rect, 'max' as 'fro'), /linalg\.norm: ord must be/],
      [() => linalg.qr(rect, 'full' as 'r'), /linalg\.qr: mode must be one of 'reduced', 'complete', 'r'/],
      [() => linalg.eigvalsh(eye3(), 'X' as 'L'), /linalg\.eigvalsh: UPLO must be one of 'L', 'U'/],
      [
        () => linalg.solveTriangular(eye3(), eye3(), {} as { upper: boolean }),
        /options\.upper must be true or false/,
      ],
      [() => linalg.cross(rect, torch.zeros([2, 4])), /linalg\.cross: b must have size 3 in dimension -1/],
      [
        () => fft.fft(x, null, -1, 'unitary' as 'ortho'),
        /fft\.fft: norm must be one of 'backward', 'ortho', 'forward', got 'unitary'/,
      ],
      [() => fft.rfft2(rect, null, [-2, -1], 'bogus' as 'ortho'), /fft\.rfft2: norm must be one of/],
      [() => fft.fft(x, 0), /fft\.fft: n must be an integer >= 1, got 0/],
      [() => fft.fftfreq(4, 0), /fft\.fftfreq: d must be a finite number > 0, got 0/],
      [() => fft.ifft([1, 2] as unknown as T), /fft\.ifft: input must be a Tensor/],
    ];
    for (const [fn, message] of cases) assert.throws(fn, message);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
