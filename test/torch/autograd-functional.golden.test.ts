// torch.autograd.functional against PyTorch 1.13 (test/golden/torch/autograd_functional_special.json,
// from scripts/golden/autograd_functional_special.py), in float64 to 1e-10: vjp, jvp, jacobian,
// hessian, vhp and hvp of four functions (one of two inputs and two outputs), their nesting, and
// with createGraph the gradients of the results taken further. Then strict mode's errors, the
// argument errors, and that nothing leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';
import {
  flatTensors,
  fromData,
  fromNested,
  golden,
  same,
  sameNested,
  type FunctionalCase,
} from './autograd-functional-golden.js';

type T = torch.Tensor;
const F = torch.autograd.functional;
const { StrictModeError } = F;

// The golden script's functions, with its input names.
const funcs: Record<string, [(...x: T[]) => T | T[], string[]]> = {
  vec: [(x) => x.exp().mul(x.sum()).add(x.pow(3)), ['x']],
  multi: [(a, b) => [a.matmul(a.t()).mul(b.sum()), a.sin().sum().mul(b.pow(2))], ['a', 'b']],
  scalar: [
    (x) =>
      x
        .tanh()
        .mul(x.pow(2))
        .sum()
        .add(x.select(0, 0).mul(x.select(0, 1)).mul(x.select(0, 2))),
    ['x'],
  ],
  scalar2: [(p, Q) => p.matmul(Q).matmul(p).add(Q.exp().sum().mul(p.sum().sin())), ['p', 'Q']],
};

function run(c: FunctionalCase): void {
  torch.tidy(() => {
    const [fn, names] = funcs[c.func]!;
    const ins = names.map((n) => fromData(golden.inputs[n]!, c.createGraph));
    const arg = ins.length === 1 ? ins[0]! : ins;
    const options = { createGraph: c.createGraph };
    const v = c.v === undefined ? null : fromNested(c.v);
    const scalarFn = fn as (...x: T[]) => T;
    const result: unknown =
      c.op === 'vjp'
        ? F.vjp(fn, arg, v, options)
        : c.op === 'jvp'
          ? F.jvp(fn, arg, v, options)
          : c.op === 'vhp'
            ? F.vhp(scalarFn, arg, v, options)
            : c.op === 'hvp'
              ? F.hvp(scalarFn, arg, v, options)
              : c.op === 'jacobian'
                ? F.jacobian(fn, arg, options)
                : F.hessian(scalarFn, arg, options);
    sameNested(result, c.result, c.label);
    if (!c.createGraph) {
      for (const r of flatTensors(result))
        assert.equal(r.requiresGrad, false, `${c.label}: detached results`);
      return;
    }
    let loss = torch.scalarTensor(0, 'float64');
    for (const r of flatTensors(result)) {
      if (!r.requiresGrad) continue;
      const w = torch
        .arange(0, r.numel, 1, 'float64')
        .add(1)
        .sin()
        .reshape(...r.shape);
      loss = loss.add(r.mul(w).sum());
    }
    const grads = torch.grad([loss], ins, { allowUnused: true });
    c.graphGrads!.forEach((expected, k) => {
      if (expected === null) assert.equal(grads[k], null, `${c.label}: no gradient for input ${k}`);
      else same(grads[k]!, expected, `${c.label}: gradient of the results for input ${k}`);
    });
  });
}

test('autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp as PyTorch 1.13 (float64, 1e-10)', () => {
  assert.equal(golden.functional.length, 23);
  const before = torch.liveTensors();
  for (const c of golden.functional) run(c);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('autograd.functional: results belong to the caller scope; createGraph keeps the inputs graph', () => {
  const before = torch.liveTensors();
  const x = torch.tensor([1, 2, 3], { dtype: 'float64', requiresGrad: true });
  const J = F.jacobian((t) => t.pow(2), x);
  assert.deepEqual(J.toNumbers(), [2, 0, 0, 0, 4, 0, 0, 0, 6]);
  const [y, g] = F.vjp((t) => t.pow(2).sum(), x, null, { createGraph: true });
  assert.equal(y.item(), 14);
  assert.ok(g.requiresGrad);
  torch.tidy(() => {
    g.sum().backward();
    assert.deepEqual(x.grad!.toNumbers(), [2, 2, 2]);
    x.grad = null;
  });
  // What a tidy returns moves to the enclosing scope (here: the caller) and must outlive it.
  const kept = torch.tidy(() => F.hessian((t) => t.pow(3).sum(), x));
  assert.deepEqual(kept.toNumbers(), [6, 0, 0, 0, 12, 0, 0, 0, 18]);
  torch.dispose([x, J, y, g, kept]);
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('autograd.functional: strict mode raises PyTorch errors as StrictModeError', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.tensor([1, 2], { dtype: 'float64' });
    const y = torch.tensor([3, 4], { dtype: 'float64' });
    const strict = { strict: true };
    const cases: [() => unknown, RegExp][] = [
      [() => F.jacobian((a, _b) => a.mul(2), [x, y], strict), /jacobian: output 0 .* independent of input 1/],
      [
        () => F.jacobian(() => torch.ones([2], 'float64'), x, strict),
        /output 0 .* does not require gradients/,
      ],
      [() => F.vjp((a, _b) => a.sum(), [x, y], null, strict), /vjp: the output .* independent of input 1/],
      [() => F.jvp((a, _b) => a.mul(2), [x, y], [x, y], strict), /jvp: the output .* independent of input 1/],
      [() => F.hessian((a) => a.mul(3).sum(), x, strict), /hessian: while computing the hessian/],
      [() => F.hvp((a) => a.mul(3).sum(), x, x, strict), /hvp: while computing the hessian/],
      [
        () => F.vhp((a, b) => a.pow(2).sum().add(b.sum()), [x, y], [x, y], strict),
        /vhp: while computing the hessian, found that the jacobian .* input 1/,
      ],
      [
        () => F.vjp((a) => a.mul(2), x, x, { strict: true, createGraph: true }),
        /vjp: the jacobian .* independent of input 0\..* when createGraph/,
      ],
      [
        () => F.jacobian((a) => a.mul(2), x, { strict: true, createGraph: true }),
        /jacobian: the jacobian .* independent of input 0\..* when createGraph/,
      ],
    ];
    for (const [fn, message] of cases)
      assert.throws(fn, (e: Error) => e instanceof StrictModeError && message.test(e.message));
    // Without strict, the independent parts are zeros, as in PyTorch.
    const J = F.jacobian((a, _b) => a.mul(2), [x, y]) as T[];
    assert.deepEqual(J[1]!.toNumbers(), [0, 0, 0, 0]);
    const [, h] = F.hvp((a) => a.mul(3).sum(), x, x);
    assert.deepEqual(h.toNumbers(), [0, 0]);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('autograd.functional: wrong arguments are ArgumentErrors naming the function and argument', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.tensor([1, 2], { dtype: 'float64' });
    const bad = F as unknown as Record<string, (...a: unknown[]) => unknown>;
    const cases: [() => unknown, RegExp][] = [
      [() => bad.jacobian!('f', x), /autograd\.functional\.jacobian: func must be a function/],
      [() => bad.vjp!((a: T) => a, [x, 3], x), /vjp: inputs\[1\] must be a Tensor, got 3/],
      [() => bad.hessian!((a: T) => a.sum(), 'x'), /hessian: inputs must be a Tensor or an array of Tensors/],
      [() => bad.jvp!((_a: T) => 5, x, x), /jvp: the result of func must be a Tensor or an array/],
      [() => F.vjp((a) => a.mul(2), x), /vjp: v may be left out only when func returns a single Tensor/],
      [() => F.jvp((a) => a.mul(2), x, x.reshape(2, 1)), /jvp: v must have shape \[2\], got \[2, 1\]/],
      [() => F.vjp((a) => [a, a], x, [x]), /vjp: v must be an array of 2 Tensors, got 1/],
      [() => F.hessian((a) => a.mul(2), x), /hessian: the Tensor func returns must have a single element/],
      [() => F.hvp((a) => [a.sum()] as unknown as T, x, x), /hvp: func must return a single Tensor/],
      [
        () => bad.jacobian!((a: T) => a, x, { vectorize: 1 }),
        /jacobian: options\.vectorize must be a boolean/,
      ],
      [() => bad.vhp!((a: T) => a.sum(), x, x, { strict: 1 }), /vhp: options\.strict must be a boolean/],
    ];
    for (const [fn, message] of cases)
      assert.throws(fn, (e: Error) => e instanceof ArgumentError && message.test(e.message));
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
