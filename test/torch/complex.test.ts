// Complex tensors and torch.linalg.eig against PyTorch 1.13 (scripts/golden/complex_eig.py):
// complex and polar from parts, the parts read back (real, imag, viewAsReal, angle, abs, conj),
// toArray's interleaved pairs, printing, a gradient through complex arithmetic to the real parts;
// eig's eigenvalues (compared sorted: their order is LAPACK's), A V = V diag(L), eigvals of a batch
// and the gradients of phase-invariant losses; then the errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { linalg, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = { shape: number[]; data: number[] };
const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'complex-eig.json'), 'utf8')) as {
  parts: Record<'z' | 'polar' | 'real' | 'imag' | 'angle' | 'abs' | 'conj' | 'product', Flat> & {
    re: number[];
    im: number[];
    loss: number;
    re_grad: number[];
    im_grad: number[];
  };
  eig: {
    A: number[][];
    eigenvalues: [number, number][];
    A_grad: number[][];
    batch: number[][][];
    batch_eigenvalues: [number, number][][];
    rotation: [number, number][];
  };
};

const f64 = (data: unknown) => torch.tensor(data as number[], { dtype: 'float64' });
/** A tensor's values as PyTorch's flat() writes them: complex ones as (re, im) pairs. */
const close = (t: Tensor, want: Flat, what: string, tol = 1e-12) => {
  const shape = torch.isComplex(t) ? [...t.shape, 2] : t.shape;
  assert.deepEqual(shape, want.shape, what);
  assertClose(Float64Array.from(t.toArray() as Float64Array), want.data, tol, 0, what);
};
/** Eigenvalues as (re, im) pairs sorted by real then imaginary part. */
const sortedPairs = (L: Tensor): [number, number][] => {
  const a = L.toArray() as Float64Array;
  const pairs: [number, number][] = [];
  for (let i = 0; i < a.length; i += 2) pairs.push([a[i]!, a[i + 1]!]);
  return pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
};

test('complex tensors from parts and their parts, values and gradients equal PyTorch 1.13', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const p = g.parts;
    const re = f64(p.re).requiresGrad_(true);
    const im = f64(p.im).requiresGrad_(true);
    const z = torch.complex(re, im);
    assert.equal(z.dtype, 'complex128');
    assert.ok(z.isComplex() && !torch.isComplex(re));
    const w = torch.polar(re.abs().add(0.5), im);
    close(z, p.z, 'complex');
    close(w, p.polar, 'polar');
    close(z.real, p.real, 'real');
    close(torch.imag(z), p.imag, 'imag');
    close(z.angle(), p.angle, 'angle');
    close(z.abs(), p.abs, 'abs');
    close(z.conj(), p.conj, 'conj (lazy, read through resolveConj)');
    close(torch.conjPhysical(z), p.conj, 'conjPhysical');
    close(z.mul(w), p.product, 'product');
    assert.deepEqual(Array.from(torch.viewAsReal(z).shape), [4, 2]);
    close(torch.viewAsComplex(torch.viewAsReal(z)), p.z, 'viewAsComplex of viewAsReal');
    const loss = z.mul(z.conj()).add(w.mul(z)).real.sum().add(z.abs().sum()).add(z.angle().sum());
    assertClose([loss.item()], [p.loss], 1e-12, 0, 'loss');
    loss.backward();
    assertClose(re.grad!.toFloat64Array(), p.re_grad, 1e-12, 0, 're.grad');
    assertClose(im.grad!.toFloat64Array(), p.im_grad, 1e-12, 0, 'im.grad');
    const small = torch.complex(torch.tensor([1, 2]), torch.tensor([3, -4]));
    assert.equal(String(small), 'Tensor(shape=[2], dtype=complex64, [1+3j, 2-4j])');
    assert.equal(String(small.conj()), 'Tensor(shape=[2], dtype=complex64, [1-3j, 2+4j])');
    assert.deepEqual(Array.from(small.toFloat64Array()), [1, 3, 2, -4]);
  });
  assert.equal(torch.liveTensors(), before);
});

test('linalg.eig and eigvals: eigenvalues, A V = V diag(L), batches and gradients equal PyTorch 1.13', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const e = g.eig;
    const A = f64(e.A).requiresGrad_(true);
    const [L, V] = linalg.eig(A);
    assert.equal(L.dtype, 'complex128');
    assert.deepEqual(V.shape, [4, 4]);
    assertClose(sortedPairs(L).flat(), e.eigenvalues.flat(), 1e-10, 0, 'eigenvalues');
    // A V = V diag(L), in complex arithmetic.
    const Ac = torch.complex(A.detach(), torch.zerosLike(A));
    const residual = Ac.matmul(V)
      .sub(V.mul(L.unsqueeze(0)))
      .abs()
      .max()
      .item();
    assert.ok(residual < 1e-10, `A V - V diag(L): ${residual}`);
    L.abs().sum().add(V.abs().sum()).backward();
    assertClose(A.grad!.toFloat64Array(), e.A_grad.flat(), 1e-9, 0, 'A.grad');
    const Lb = linalg.eigvals(f64(e.batch));
    assert.deepEqual(Lb.shape, [2, 3]);
    e.batch_eigenvalues.forEach((want, b) =>
      assertClose(sortedPairs(Lb.select(0, b)).flat(), want.flat(), 1e-10, 0, `batch ${b}`),
    );
    const rotation = linalg.eigvals(
      torch.tensor([
        [0, 1],
        [-1, 0],
      ]),
    );
    assert.equal(rotation.dtype, 'complex64');
    assertClose(sortedPairs(rotation).flat(), e.rotation.flat(), 1e-6, 0, 'rotation');
    assertClose(
      linalg.matmul(A.detach(), A.detach()).toFloat64Array(),
      A.detach().matmul(A.detach()).toFloat64Array(),
      0,
      0,
      'linalg.matmul',
    );
  });
  assert.equal(torch.liveTensors(), before);
});

test('complex errors are named with their remedy', () => {
  torch.tidy(() => {
    const z = torch.complex(torch.tensor([1]), torch.tensor([2]));
    assert.throws(() => z.item(), /item: the tensor is complex .*toArray\(\)/);
    assert.throws(
      () => torch.imag(torch.tensor([1])),
      /imag: input must be a complex tensor .*torch\.complex/,
    );
    assert.throws(
      () => torch.viewAsComplex(torch.ones([3])),
      /viewAsComplex: the last dimension must hold the 2 parts/,
    );
    assert.throws(
      () => torch.viewAsComplex(torch.ones([3, 2], 'int32')),
      /viewAsComplex: input must be float32 or float64/,
    );
    assert.throws(
      () => torch.complex(torch.tensor([1]), 2 as unknown as Tensor),
      /complex: imag must be a Tensor/,
    );
    assert.throws(() => linalg.eig(torch.ones([2, 3])), /linalg\.eig: A must be a square matrix/);
  });
});
