// The matrix and vector products (torch.matmul, mm, bmm, dot, vdot, mv, inner, addmm, addmv, addr,
// baddbmm, addbmm) against PyTorch 1.13 (scripts/golden/tensor_products.py): values and the
// gradients of the sum of squares, as functions and as Tensor methods; then the named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import type { Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Case {
  args: number[][];
  shapes: number[][];
  beta: number | null;
  alpha: number | null;
  out: number[];
  out_shape: number[];
  grads: number[][];
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'tensor-products.json'), 'utf8')) as Record<
  string,
  Case
>;

type Product = (...args: never[]) => Tensor;
const functions: Record<string, Product> = {
  matmul: torch.matmul,
  matmul_vec_mat: torch.matmul,
  mm: torch.mm,
  bmm: torch.bmm,
  dot: torch.dot,
  vdot: torch.vdot,
  mv: torch.mv,
  inner: torch.inner,
  addmm: torch.addmm,
  addmv: torch.addmv,
  addr: torch.addr,
  baddbmm: torch.baddbmm,
  addbmm: torch.addbmm,
};

test('products: values and gradients equal PyTorch 1.13, as functions and as methods', () => {
  const before = torch.liveTensors();
  for (const [name, c] of Object.entries(golden)) {
    for (const form of ['function', 'method'] as const) {
      torch.tidy(() => {
        const args = c.args.map((a, i) =>
          torch.tensor(a, { dtype: 'float64', shape: c.shapes[i]! }).requiresGrad_(),
        );
        const scale = c.beta === null ? [] : [{ beta: c.beta, alpha: c.alpha! }];
        const method = name.split('_')[0]!;
        const y =
          form === 'function'
            ? (functions[name] as (...a: unknown[]) => Tensor)(...args, ...scale)
            : (args[0] as unknown as Record<string, (...a: unknown[]) => Tensor>)[method]!.call(
                args[0],
                ...args.slice(1),
                ...scale,
              );
        assert.deepEqual(y.shape, c.out_shape, `${name} ${form} shape`);
        assertClose(y.toFloat64Array(), c.out, 1e-12, 1e-12, `${name} ${form}`);
        y.pow(2).sum().backward();
        args.forEach((a, i) =>
          assertClose(a.grad!.toFloat64Array(), c.grads[i]!, 1e-10, 1e-12, `${name} grad ${i}`),
        );
      });
    }
  }
  assert.equal(torch.liveTensors(), before);
});

test('products: wrong ranks and options are named errors', () => {
  torch.tidy(() => {
    const m = torch.randn([3, 4]);
    const v = torch.randn([4]);
    const b = torch.randn([2, 3, 4]);
    assert.throws(
      () => torch.mm(m, v),
      /^ArgumentError: mm: mat2 must be a matrix, got a tensor of shape \[4\]$/,
    );
    assert.throws(() => torch.bmm(m, b), /bmm: input must be a batch of matrices \[b, n, m\]/);
    assert.throws(() => torch.dot(m, v), /dot: input must be a 1-d tensor, got a tensor of shape \[3, 4\]/);
    assert.throws(() => torch.mv(m, m), /mv: vec must be a 1-d tensor/);
    assert.throws(
      () => torch.matmul(torch.tensor(2), m),
      /matmul: input must be a tensor of at least 1 dimension/,
    );
    assert.throws(() => torch.addmm(m, m, m, { beta: 'x' as never }), /addmm: options\.beta/);
    assert.throws(() => torch.addmm(m, m, 3 as never), /addmm: mat2 must be a Tensor/);
    // Shapes libtorch refuses still come back as an error naming the operator.
    assert.throws(() => torch.mm(m, m), /mm/);
  });
});

test('products with beta 0 ignore the input, NaN included (libtorch 1.13 baddbmm left its output uninitialised)', () => {
  torch.tidy(() => {
    for (let i = 0; i < 50; i++) {
      const input = torch.full([2, 3, 5], NaN, 'float64').requiresGrad_();
      const b1 = torch.randn([2, 3, 4], 'float64');
      const b2 = torch.randn([2, 4, 5], 'float64');
      const y = torch.baddbmm(input, b1, b2, { beta: 0, alpha: 1.5 });
      assertClose(y.toFloat64Array(), torch.bmm(b1, b2).mul(1.5).toFloat64Array(), 1e-12, 1e-12, 'beta 0');
      y.sum().backward();
      assert.ok(
        input.grad!.toFloat64Array().every((g) => g === 0),
        'the ignored input has a zero gradient',
      );
    }
  });
});
