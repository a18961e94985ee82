// The engine's call paths: operators with a common small signature run through a typed handle
// instead of the boxed dispatcher, and unowned tensors get their finalizer lazily. Both are
// speed measures that must not change any result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as torch from '../../src/torch/index.js';
import { native } from '../../src/torch/native.js';
import { Tensor, wrap } from '../../src/torch/tensor.js';

type Arg = Tensor | number | boolean | { float: number } | undefined;

// One operator call with `args`, through the typed fast path or forced onto the boxed one.
function run(name: string, overload: string, boxed: boolean, args: Arg[]): Tensor {
  const op = native.resolve(`aten::${name}`, overload, boxed);
  const raw = args.map((a) => (a instanceof Tensor ? a.handle : a));
  return wrap(native.call(op, ...raw) as number);
}

function same(a: Tensor, b: Tensor, what: string): void {
  assert.deepEqual(a.shape, b.shape, `${what}: shape`);
  assert.equal(a.dtype, b.dtype, `${what}: dtype`);
  assert.deepEqual(a.toNumbers(), b.toNumbers(), `${what}: values`);
}

test('the typed fast path gives what the boxed dispatcher gives, gradients included', () => {
  torch.tidy(() => {
    torch.manualSeed(1);
    const x = () => torch.randn([2, 3], 'float64').requiresGrad_();
    const y = () => torch.randn([3], 'float64').requiresGrad_();
    const ints = torch.tensor(new Int32Array([1, -2, 3]));
    // [name, overload, args]: every fast signature, defaults, int->float promotion, bool results.
    const cases: [string, string, (x: Tensor, y: Tensor) => Arg[]][] = [
      ['add', 'Tensor', (a, b) => [a, b]],
      ['add', 'Tensor', (a, b) => [a, b, { float: 0.5 }]],
      ['sub', 'Tensor', (a, b) => [a, b, 2]],
      ['mul', 'Tensor', (a, b) => [a, b]],
      ['div', 'Tensor', (a, b) => [a, b]],
      ['mul', 'Scalar', (a) => [a, 3]],
      ['pow', 'Tensor_Scalar', (a) => [a, 2]],
      ['add', 'Scalar', (a) => [a, { float: 1.5 }]],
      ['sub', 'Scalar', (a) => [a, 1, 3]],
      ['tanh', '', (a) => [a]],
      ['neg', '', (a) => [a]],
      ['t', '', (a) => [a]],
      ['gt', 'Tensor', (a, b) => [a, b]],
      ['mul', 'Tensor', (a) => [a, ints]],
      ['add', 'Scalar', () => [ints, { float: 0.5 }]],
    ];
    for (const [name, overload, args] of cases) {
      const what = `${name}.${overload}`;
      torch.manualSeed(2);
      const [x0, y0] = [x(), y()];
      torch.manualSeed(2);
      const [x1, y1] = [x(), y()];
      const fast = run(name, overload, false, args(x0, y0));
      const boxed = run(name, overload, true, args(x1, y1));
      same(fast, boxed, what);
      if (fast.requiresGrad) {
        fast.sum().backward();
        boxed.sum().backward();
        same(x0.grad!, x1.grad!, `${what}: grad`);
        if (y0.grad) same(y0.grad, y1.grad!, `${what}: grad of the second input`);
      }
    }
  });
});

test('in-place operators on the fast path update self as the boxed path does', () => {
  torch.tidy(() => {
    const cases: [string, string, Arg[]][] = [
      ['add_', 'Tensor', [torch.tensor([1, 2]), 3]],
      ['sub_', 'Tensor', [torch.tensor([1, 2])]],
      ['mul_', 'Tensor', [torch.tensor([3, 4])]],
      ['mul_', 'Scalar', [{ float: 0.25 }]],
      ['fill_', 'Scalar', [7]],
    ];
    for (const [name, overload, rest] of cases) {
      const results = [false, true].map((boxed) => {
        const self = torch.tensor([10, 20]);
        native.callVoid(
          native.resolve(`aten::${name}`, overload, boxed),
          self.handle,
          ...rest.map((a) => (a instanceof Tensor ? a.handle : a)),
        );
        return self;
      });
      same(results[0]!, results[1]!, `${name}.${overload}`);
    }
  });
});

test('fast-path argument errors name the operator and the argument', () => {
  torch.tidy(() => {
    const a = torch.ones([2]);
    const gone = torch.ones([2]);
    const h = gone.handle;
    gone.dispose();
    const add = native.resolve('aten::add', 'Tensor');
    assert.throws(() => native.call(add, a.handle, h), /aten::add\.Tensor: argument 'other'.*disposed/);
    assert.throws(() => native.call(add, a.handle, a.handle, 'x'), /argument 'alpha'.*expects a number/);
    assert.throws(() => native.call(add, a.handle), /missing required argument 'other'/);
    assert.throws(() => native.call(add, a.handle, a.handle, 1, 2), /4 arguments given, schema takes 3/);
    assert.throws(() => a.add(torch.ones([3])), /aten::add\.Tensor.*must match/s);
  });
});

test('unowned tensors: disposed ones are freed at once, forgotten ones by the safety net', async () => {
  const before = torch.liveTensors();
  const a = torch.ones([1]);
  const b = torch.ones([1]);
  for (let i = 0; i < 1000; i++) a.add(b).dispose(); // several deferred-registration batches
  assert.equal(torch.liveTensors(), before + 2);
  const kept = a.add(b);
  for (let i = 0; i < 50; i++) a.add(b); // forgotten
  assert.equal(torch.liveTensors(), before + 53);
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  for (let i = 0; i < 100 && torch.liveTensors() > before + 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  assert.equal(torch.liveTensors(), before + 3, 'the forgotten tensors were finalized');
  assert.equal(kept.item(), 2, 'a referenced tensor survives collection');
  torch.dispose([a, b, kept]);
  assert.equal(torch.liveTensors(), before);
});
