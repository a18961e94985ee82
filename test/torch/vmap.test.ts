// torch.vmap against PyTorch 1.13 (scripts/golden/vmap.py): a batched dot, a model with an
// unmapped weight and the weight's gradient through it, other in_dims/out_dims, nested vmaps,
// several outputs; autograd.grad with isGradsBatched; jacobian and hessian with vectorize (and the
// forward-mode strategy); then the argument errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { autograd, nn, vmap, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'vmap.json'), 'utf8')) as {
  dot: { x: Flat; y: Flat; out: Flat };
  model: { w: Flat; out: Flat; w_grad: Flat };
  in_out_dims: { a: Flat; b: Flat; out: Flat; shape: number[] };
  nested: { p: Flat; q: Flat; out: Flat; shape: number[] };
  two_outputs: { m: Flat; sum: Flat; affine: Flat; affine_shape: number[] };
  linear_softmax: { W: Flat; bias: Flat; x: Flat; out: Flat };
  grads_batched: { z: Flat; A: Flat; jacobian: Flat };
  jacobian: {
    u: Flat;
    v: Flat;
    unused: Flat;
    J: Flat[][];
    shapes: number[][][];
    loop_equal: boolean;
    forward_equal: boolean;
  };
  hessian: { u: Flat; v: Flat; H: Flat[][]; forward_equal: boolean };
};

const f64 = (data: Flat, shape: number[]): Tensor => torch.tensor(data, { dtype: 'float64', shape });
const values = (t: Tensor | null): Flat => Array.from(t!.toFloat64Array());

test('vmap: a batched dot, a model with an unmapped weight and its gradient, in_dims/out_dims, nesting, two outputs', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = f64(g.dot.x, [4, 5]);
    const got = vmap((a: Tensor, b: Tensor) => torch.dot(a, b))(x, f64(g.dot.y, [4, 5]));
    assert.deepEqual(got.shape, [4]);
    assertClose(values(got), g.dot.out, 1e-12, 0, 'dot');

    const w = f64(g.model.w, [5]).requiresGrad_();
    const r = vmap((f: Tensor) => f.dot(w).relu().add(f.sin().sum()))(x);
    assertClose(values(r), g.model.out, 1e-12, 0, 'model');
    r.pow(2).sum().backward();
    assertClose(values(w.grad), g.model.w_grad, 1e-12, 0, 'weight gradient');

    const io = vmap(
      (m: Tensor, n: Tensor) => torch.mm(m, n).tanh(),
      [1, null],
      1,
    )(f64(g.in_out_dims.a, [3, 6, 4]), f64(g.in_out_dims.b, [4, 2]));
    assert.deepEqual(io.shape, g.in_out_dims.shape);
    assertClose(values(io.contiguous()), g.in_out_dims.out, 1e-12, 0, 'in_dims 1, out_dims 1');
    // A negative in_dim counts from the end (torch.func.vmap's rule).
    const neg = vmap(
      (m: Tensor, n: Tensor) => torch.mm(m, n).tanh(),
      [-2, null],
      1,
    )(f64(g.in_out_dims.a, [3, 6, 4]), f64(g.in_out_dims.b, [4, 2]));
    assertClose(values(neg.contiguous()), g.in_out_dims.out, 1e-12, 0, 'in_dims -2');

    const nested = vmap(vmap((a: Tensor, b: Tensor) => torch.outer(a, b)))(
      f64(g.nested.p, [2, 3, 4]),
      f64(g.nested.q, [2, 3, 5]),
    );
    assert.deepEqual(nested.shape, g.nested.shape);
    assertClose(values(nested), g.nested.out, 1e-12, 0, 'nested');

    const [s, t] = vmap((v: Tensor) => [v.sum(0), v.mul(2).add(1)], 0, [0, 1])(f64(g.two_outputs.m, [3, 4]));
    assertClose(values(s!), g.two_outputs.sum, 1e-12, 0, 'sum');
    assert.deepEqual(t!.shape, g.two_outputs.affine_shape);
    assertClose(values(t!.contiguous()), g.two_outputs.affine, 1e-12, 0, 'affine');

    const W = f64(g.linear_softmax.W, [4, 3]);
    const bias = f64(g.linear_softmax.bias, [4]);
    const ls = vmap((v: Tensor) => nn.functional.linear(v, W, bias).softmax(0))(
      f64(g.linear_softmax.x, [6, 3]),
    );
    assertClose(values(ls), g.linear_softmax.out, 1e-12, 0, 'linear + softmax');

    // Arguments in arrays and objects follow in_dims' structure; numbers pass through.
    const structured = vmap(
      (pair: Tensor[], opts: { scale: Tensor; k: number }) =>
        pair[0]!.add(pair[1]!).mul(opts.scale).mul(opts.k),
      [[0, null], { scale: 0, k: null }],
    )([x, f64(g.dot.y.slice(0, 5), [5])], { scale: f64([1, 2, 3, 4], [4]), k: 3 });
    const expected = x
      .add(f64(g.dot.y.slice(0, 5), [5]))
      .mul(f64([1, 2, 3, 4], [4, 1]))
      .mul(3);
    assertClose(values(structured), values(expected), 1e-12, 0, 'structured inputs');
  });
  assert.equal(torch.liveTensors(), before, 'vmap frees the batched inputs and intermediates');
});

test('autograd.grad with isGradsBatched, jacobian and hessian with vectorize and the forward-mode strategy', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const z = f64(g.grads_batched.z, [3]).requiresGrad_();
    const A = f64(g.grads_batched.A, [3, 3]);
    const y = A.matmul(z).sin().mul(z.exp());
    const [jac] = autograd.grad([y], [z], { gradOutputs: [torch.eye(3, 'float64')], isGradsBatched: true });
    assert.deepEqual(jac!.shape, [3, 3]);
    assertClose(values(jac!), g.grads_batched.jacobian, 1e-12, 0, 'batched vjp');

    const j = g.jacobian;
    const ins = [f64(j.u, [3]), f64(j.v, [2]), f64(j.unused, [4])];
    const f2 = (u: Tensor, v: Tensor) => [u.pow(2).mul(v.sum()), u.exp().outer(v)];
    for (const options of [{}, { vectorize: true }, { vectorize: true, strategy: 'forward-mode' as const }]) {
      const J = autograd.functional.jacobian(f2, ins, options) as Tensor[][];
      J.forEach((row, i) =>
        row.forEach((t, k) => {
          assert.deepEqual(t.shape, j.shapes[i]![k], `shape ${i},${k} ${JSON.stringify(options)}`);
          assertClose(values(t), j.J[i]![k]!, 1e-12, 0, `J[${i}][${k}] ${JSON.stringify(options)}`);
          assert.equal(t.requiresGrad, false);
        }),
      );
    }
    assert.ok(j.loop_equal && j.forward_equal);

    const h = g.hessian;
    const scalar = (u: Tensor, v: Tensor) =>
      u
        .sin()
        .mul(v.narrow(0, 0, 3))
        .sum()
        .mul(v.pow(2).sum());
    const hIns = [f64(h.u, [3]), f64(h.v, [5])];
    for (const options of [
      { vectorize: true },
      { vectorize: true, outerJacobianStrategy: 'forward-mode' as const },
    ]) {
      const H = autograd.functional.hessian(scalar, hIns, options);
      H.forEach((row, i) =>
        row.forEach((t, k) =>
          assertClose(values(t), h.H[i]![k]!, 1e-10, 0, `H[${i}][${k}] ${JSON.stringify(options)}`),
        ),
      );
    }
    // createGraph keeps the vectorized Jacobian differentiable.
    const u = f64(j.u, [3]).requiresGrad_();
    const Jg = autograd.functional.jacobian((t: Tensor) => t.pow(3), u, {
      vectorize: true,
      createGraph: true,
    });
    Jg.sum().backward();
    assertClose(values(u.grad), values(u.detach().mul(6)), 1e-12, 0, 'gradient of the Jacobian');
  });
  assert.equal(torch.liveTensors(), before);
});

test('vmap and the vectorized options: named errors', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.randn([4, 3]);
    const y = torch.randn([5, 3]);
    const add = (a: Tensor, b: Tensor) => a.add(b);
    assert.throws(
      () => vmap(add)(x, y),
      /vmap: the mapped dimensions of the inputs differ in size \(#0: 4, #1: 5\)/,
    );
    assert.throws(() => vmap(add, [0, 2])(x, y), /in_dim 2 for the input #1, a tensor of 2 dimension\(s\)/);
    assert.throws(() => vmap(add, [0])(x, y), /in_dims has 1 entries for 2 inputs/);
    assert.throws(() => vmap(add, [null, null])(x, y), /no input is mapped/);
    assert.throws(
      () => vmap((a: Tensor, k: number) => a.mul(k), [0, 0])(x, 2),
      /dimension 0 for the input #1, which is number/,
    );
    assert.throws(() => vmap(() => torch.ones([1]))(), /got no inputs/);
    assert.throws(
      () => vmap(((a: Tensor) => a.sum().item()) as never)(x),
      /^ArgumentError: vmap: the function: item: .*aten::item.*its values cannot be read/,
    );
    assert.throws(
      () => vmap((a: Tensor) => nn.functional.dropout(a, 0.5, true))(x),
      /^ArgumentError: vmap: .*random operations.*draw random numbers outside vmap/,
    );
    assert.throws(
      () => vmap(((a: Tensor) => [a, 3]) as never)(x),
      /must return only Tensors, and returned number as output 1/,
    );
    assert.throws(() => vmap((a: Tensor) => a, 0, 2)(x), /out_dim 2 for output 0/);
    assert.throws(
      () => vmap((a: Tensor) => [a, a], 0, [0])(x),
      /out_dims has 1 entries for the 2 output\(s\)/,
    );
    assert.throws(() => vmap(3 as never), /func must be a function/);
    const cyclic: unknown[] = [x];
    cyclic.push(cyclic);
    assert.throws(
      () => vmap((_a: unknown) => x.add(0), 0)(cyclic),
      /the input #0\[1\] \(or its in_dims\) contains itself/,
    );
    assert.throws(
      () =>
        autograd.grad([x.requiresGrad_().sum(0)], [x], {
          gradOutputs: [torch.ones([3])],
          isGradsBatched: true,
        }),
      /autograd\.grad: options\.gradOutputs\[0\] must be a batch of gradients of shape \[batch, 3\]/,
    );
    const f = (t: Tensor) => t.pow(2);
    assert.throws(
      () => autograd.functional.jacobian(f, y, { vectorize: true, strict: true }),
      /strict and vectorize/,
    );
    assert.throws(
      () => autograd.functional.jacobian(f, y, { strategy: 'forward-mode' }),
      /options\.vectorize must be true/,
    );
    assert.throws(
      () => autograd.functional.jacobian(f, y, { strategy: 'sideways' as never }),
      /options\.strategy/,
    );
    assert.throws(() => autograd.functional.vjp(f, y, y, { vectorize: true } as never), /options\.vectorize/);
    assert.throws(
      () => autograd.functional.hessian((t: Tensor) => t.sum(), y, { strategy: 'forward-mode' } as never),
      /options\.strategy/,
    );
  });
  assert.equal(torch.liveTensors(), before);
});
