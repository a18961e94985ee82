// torch.func against functorch 1.13 (scripts/golden/func_transforms.py): grad (argnums, hasAux,
// grad of grad), gradAndValue, vjp, jvp, jacrev and jacfwd with respect to a record of weights,
// hessian, functionalCall of an MLP with batch norm (the given buffers updated), per-example
// gradients by vmap(grad(loss)), per-example Jacobians and Hessians by vmap(jacrev) and
// vmap(hessian); then tied weights, the errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { func, nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'func-transforms.json'), 'utf8')) as {
  grad: { x: Flat; g: Flat; gg: Flat };
  grad_argnums_aux: { y: Flat; ga: Flat; gb: Flat; aux_mean: number };
  grad_and_value: { g: Flat; value: number };
  vjp: { out0: Flat; out1: Flat; ct0: Flat; ct1: Flat; va: Flat; vb: Flat };
  jvp: { tx: Flat; ty: Flat; t0: Flat; t1: Flat };
  jac: { w: Flat; b: Flat; x: Flat; Jw: Flat; Jb: Flat; Jw_shape: number[]; Jx: Flat; fwd_equal: boolean };
  hessian: { H: Flat };
  functional_call: {
    params: Record<string, Flat>;
    x: Flat;
    out: Flat;
    running_mean: Flat;
    running_var: Flat;
  };
  per_example: { targets: number[]; grads: Record<string, Flat>; shapes: Record<string, number[]> };
  per_example_jacobians: { A: Flat; x: Flat; jacrev_x: Flat; jacrev_w: Flat; hessian: Flat };
};

const T = (data: Flat, shape: number[]): Tensor => torch.tensor(data, { dtype: 'float64', shape });
const close = (t: Tensor, want: Flat, what: string, tol = 1e-12) =>
  assertClose(t.toFloat64Array(), want, tol, 0, what);

test('func.grad, gradAndValue, vjp, jvp, jacrev, jacfwd and hessian equal functorch 1.13', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = T(g.grad.x, [4]);
    const y = T(g.grad_argnums_aux.y, [4]);
    const f = (a: Tensor) => a.sin().mul(a).sum();
    close(func.grad(f)(x), g.grad.g, 'grad');
    close(func.grad((a: Tensor) => (func.grad(f)(a) as Tensor).sum())(x), g.grad.gg, 'grad of grad');
    assert.equal(func.grad(f)(x).requiresGrad, false, 'a top-level gradient is detached');
    const [[ga, gb], aux] = func.grad(
      (a: Tensor, b: Tensor) => [a.mul(b).exp().sum(), { mean: a.mean() }],
      [0, 1],
      { hasAux: true },
    )(x, y);
    close(ga, g.grad_argnums_aux.ga, 'grad argnums 0');
    close(gb, g.grad_argnums_aux.gb, 'grad argnums 1');
    assert.ok(Math.abs(aux.mean.item() - g.grad_argnums_aux.aux_mean) < 1e-12);
    const [gv, value] = func.gradAndValue(f)(x);
    close(gv, g.grad_and_value.g, 'gradAndValue');
    assert.ok(Math.abs(value.item() - g.grad_and_value.value) < 1e-12);

    const h = (a: Tensor, b: Tensor) => [a.pow(2).mul(b.narrow(0, 0, 1)), a.outer(b).tanh()];
    const [out, vjpFn] = func.vjp(h, [x, y]);
    close(out[0], g.vjp.out0, 'vjp out 0');
    close(out[1], g.vjp.out1, 'vjp out 1');
    const [va, vb] = vjpFn([T(g.vjp.ct0, [4]), T(g.vjp.ct1, [4, 4])]) as Tensor[];
    close(va!, g.vjp.va, 'vjp a');
    close(vb!, g.vjp.vb, 'vjp b');
    const [, tangents] = func.jvp(h, [x, y], [T(g.jvp.tx, [4]), T(g.jvp.ty, [4])]);
    close(tangents[0], g.jvp.t0, 'jvp 0');
    close(tangents[1], g.jvp.t1, 'jvp 1');

    const W = { w: T(g.jac.w, [3, 4]), b: T(g.jac.b, [3]) };
    const xin = T(g.jac.x, [4]);
    const lin = (p: { w: Tensor; b: Tensor }, v: Tensor) => p.w.matmul(v).add(p.b).tanh();
    for (const [name, transform] of [
      ['jacrev', func.jacrev],
      ['jacfwd', func.jacfwd],
    ] as const) {
      const J = transform(lin)(W, xin);
      assert.deepEqual(J.w.shape, g.jac.Jw_shape, name);
      close(J.w, g.jac.Jw, `${name} w`);
      close(J.b, g.jac.Jb, `${name} b`);
    }
    close(func.jacrev(lin, 1)(W, xin), g.jac.Jx, 'jacrev argnums 1');
    const sc = (a: Tensor) => a.sin().mul(a.roll(1)).sum().mul(a.pow(2).sum());
    close(func.hessian(sc)(x), g.hessian.H, 'hessian', 1e-10);
  });
  assert.equal(torch.liveTensors(), before);
});

test('func.functionalCall runs an MLP with batch norm on given weights and buffers; per-example gradients by vmap(grad)', () => {
  const before = torch.liveTensors();
  const model = new nn.Sequential(
    new nn.Linear(3, 5),
    new nn.BatchNorm1d(5),
    new nn.ReLU(),
    new nn.Linear(5, 2),
  ).double();
  torch.tidy(() => {
    const fc = g.functional_call;
    const shapes = Object.fromEntries([...model.namedParameters()].map(([k, v]) => [k, v.shape]));
    const params = Object.fromEntries(Object.entries(fc.params).map(([k, v]) => [k, T(v, shapes[k]!)]));
    const own = model.getParameter('0.weight').toFloat64Array();
    const buffers = {
      '1.running_mean': torch.zeros([5], 'float64'),
      '1.running_var': torch.ones([5], 'float64'),
    };
    const x = T(fc.x, [6, 3]);
    close(func.functionalCall(model, [params, buffers], [x]) as Tensor, fc.out, 'output');
    close(buffers['1.running_mean'], fc.running_mean, 'the given running mean is updated');
    close(buffers['1.running_var'], fc.running_var, 'the given running var is updated');
    close(model.getBuffer('1.running_mean'), [0, 0, 0, 0, 0], "the module's own buffer is untouched");
    assert.deepEqual(model.getParameter('0.weight').toFloat64Array(), own, "the module's own weight is back");

    model.eval();
    const targets = torch.tensor(g.per_example.targets, { dtype: 'int64' });
    const loss = (p: Record<string, Tensor>, v: Tensor, t: Tensor) =>
      nn.functional.crossEntropy(func.functionalCall(model, p, [v.unsqueeze(0)]) as Tensor, t.unsqueeze(0));
    const per = torch.vmap(func.grad(loss), [null, 0, 0])(params, x, targets) as Record<string, Tensor>;
    for (const [k, want] of Object.entries(g.per_example.grads)) {
      assert.deepEqual(per[k]!.shape, g.per_example.shapes[k], k);
      close(per[k]!, want, `per-example ${k}`, 1e-12);
    }
  });
  model.dispose();
  assert.equal(torch.liveTensors(), before);
});

class Tied extends nn.Module {
  readonly a = this.registerModule('a', new nn.Linear(2, 2, { bias: false }));
  readonly b = this.registerModule('b', this.a);
  forward(x: Tensor): Tensor {
    return this.b.forward(this.a.forward(x));
  }
}

test('func.functionalCall: tied weights, and named errors', () => {
  const before = torch.liveTensors();
  const m = new Tied();
  torch.tidy(() => {
    const w = torch.tensor([
      [1, 2],
      [3, 4],
    ]);
    const x = torch.tensor([[1, 1]]);
    // Both names hold one tensor: replacing one replaces both (x W^T W^T).
    assert.deepEqual(
      (func.functionalCall(m, { 'a.weight': w }, [x]) as Tensor).toArray(),
      Float32Array.from([17, 37]),
    );
    assert.throws(
      () => func.functionalCall(m, { 'a.weight': w, 'b.weight': w.mul(2) }, [x]),
      /'a\.weight' and 'b\.weight' are one tied tensor/,
    );
    assert.throws(
      () => func.functionalCall(m, { 'c.weight': w }, [x]),
      /'c\.weight' is no parameter or buffer of Tied/,
    );
    assert.throws(
      () => func.functionalCall(m, { 'a.weight': 3 as never }, [x]),
      /\['a\.weight'\] must be a Tensor/,
    );
    assert.throws(
      () => func.functionalCall(m, {}, [x], { strict: true }),
      /with strict, every parameter and buffer must be given/,
    );
    assert.throws(
      () => func.grad((t: Tensor) => t.mul(2))(x),
      /func\.grad: func must return a single-element Tensor/,
    );
    assert.throws(
      () => func.grad((t: Tensor) => t.sum(), 2)(x),
      /argnums 2 is out of range for 1 positional argument/,
    );
    assert.throws(
      () => func.grad((t: Tensor) => t.sum())(torch.tensor([1, 2], { dtype: 'int64' })),
      /int64 tensor; only floating point/,
    );
    assert.throws(
      () => func.vjp((t: Tensor) => t.mul(2), [x])[1](torch.ones([3])),
      /cotangent 0 has shape \[3\], the output \[1, 2\]/,
    );
    assert.throws(
      () => func.jacfwd(func.jacrev((t: Tensor) => t.pow(3).sum()))(torch.ones([2])),
      /func\.jacrev inside func\.jacfwd \(forward over reverse\) is not available.*use func\.hessian/,
    );
    // An error inside forward leaves the module's own weight in place.
    const before = m.a.weight.toFloat64Array();
    assert.throws(() => func.functionalCall(m, { 'a.weight': w }, [torch.ones([1, 3])]));
    assert.deepEqual(m.a.weight.toFloat64Array(), before);
  });
  m.dispose();
  assert.equal(torch.liveTensors(), before);
});

test("per-example Jacobians and Hessians (jacrev, jacfwd and hessian inside vmap) equal functorch's", () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const pe = g.per_example_jacobians;
    const A = T(pe.A, [2, 3]);
    const xs = T(pe.x, [4, 3]);
    const layer = (w: Tensor, x: Tensor) => w.matmul(x).tanh();
    const cubic = (x: Tensor) => x.pow(3).sum().add(x.prod());
    const jx = torch.vmap(func.jacrev(layer, 1), [null, 0])(A, xs) as Tensor;
    assert.deepEqual(jx.shape, [4, 2, 3]);
    close(jx, pe.jacrev_x, 'vmap(jacrev) with respect to x');
    const jw = torch.vmap(func.jacrev(layer), [null, 0])(A, xs) as Tensor;
    assert.deepEqual(jw.shape, [4, 2, 2, 3]);
    close(jw, pe.jacrev_w, 'vmap(jacrev) with respect to the unmapped weight');
    const h = torch.vmap(func.hessian(cubic))(xs) as Tensor;
    assert.deepEqual(h.shape, [4, 3, 3]);
    close(h, pe.hessian, 'vmap(hessian)');
    close(torch.vmap(func.jacrev(func.grad(cubic)))(xs) as Tensor, pe.hessian, 'vmap(jacrev(grad))');
    // jacfwd gives the same Jacobians by forward mode, every example in one vmapped pass.
    close(torch.vmap(func.jacfwd(layer, 1), [null, 0])(A, xs) as Tensor, pe.jacrev_x, 'vmap(jacfwd), x');
    close(torch.vmap(func.jacfwd(layer), [null, 0])(A, xs) as Tensor, pe.jacrev_w, 'vmap(jacfwd), weight');
    const withAux = (x: Tensor) => [layer(A, x), x.sum()];
    const [jx2, aux] = torch.vmap(func.jacfwd(withAux, 0, { hasAux: true }))(xs) as [Tensor, Tensor];
    close(jx2, pe.jacrev_x, 'vmap(jacfwd) with aux');
    assertClose(aux.toFloat64Array(), xs.sum(1).toFloat64Array(), 1e-12, 0, 'the aux of each example');
  });
  assert.equal(torch.liveTensors(), before);
});

test('func.stackModuleState: an ensemble of three models in one vmapped call equals each model', () => {
  const before = torch.liveTensors();
  torch.manualSeed(0);
  const models = [0, 1, 2].map(
    () => new nn.Sequential(new nn.Linear(4, 3), new nn.Tanh(), new nn.Linear(3, 2)),
  );
  torch.tidy(() => {
    const [params, buffers] = func.stackModuleState(models);
    assert.deepEqual(params['0.weight']!.shape, [3, 3, 4]);
    assert.equal(params['0.weight']!.requiresGrad, true);
    const x = torch.randn([5, 4]);
    const base = models[0]!;
    const out = torch.vmap(
      (p: Record<string, Tensor>, b: Record<string, Tensor>, v: Tensor) =>
        func.functionalCall(base, [p, b], [v]) as Tensor,
      [0, 0, null],
    )(params, buffers, x) as Tensor;
    assert.deepEqual(out.shape, [3, 5, 2]);
    models.forEach((m, i) =>
      assertClose(out.select(0, i).toFloat64Array(), m.forward(x).toFloat64Array(), 1e-6, 0, `model ${i}`),
    );
    out.sum().backward();
    assert.deepEqual(params['2.bias']!.grad!.shape, [3, 2]);
    models[1]!.eval();
    assert.throws(() => func.stackModuleState(models), /models\[1\] is in eval mode/);
    const other = new nn.Linear(4, 3);
    assert.throws(() => func.stackModuleState([models[0]!, other]), /models\[1\] has other parameters/);
    other.dispose();
  });
  for (const m of models) m.dispose();
  assert.equal(torch.liveTensors(), before);
});
