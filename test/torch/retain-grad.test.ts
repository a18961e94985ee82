// Tensor.retainGrad against PyTorch 1.13 (test/golden/torch/retain_grad.json, from
// scripts/golden/retain_grad.py): non-leaf gradients on a plain graph; before, at the output of
// and after a Linear whose full backward hook doubles gradInput (the retained gradients are the
// totals); two backwards with retainGraph
// adding up; a leaf (no change); then the errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { liveJsAutograd } from '../../src/torch/autograd-hooks.js';
import { ArgumentError } from '../../src/util/arguments.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
interface Hooked {
  a_grad: Flat;
  o_grad: Flat;
  c_grad: Flat;
  x_grad: Flat;
  weight_grad: Flat;
  bias_grad: Flat;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'retain_grad.json'), 'utf8')) as {
  plain: { x: Flat; w: Flat; y_grad: Flat; h_grad: Flat; x_grad: Flat };
  hooked: Hooked & { weight: Flat; bias: Flat; v: Flat };
  twice: Hooked;
  leaf: { retains_grad: boolean; x_grad: Flat };
};

const f64 = (data: Flat, shape: number[]): Tensor => torch.tensor(data, { shape, dtype: 'float64' });
const gradOf = (t: Tensor): Flat => torch.tidy(() => Array.from(t.grad!.toFloat64Array()));

test('plain graph: the non-leaf tensors that retain their grad get PyTorch 1.13 gradients', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const { plain } = golden;
    const x = f64(plain.x, [2, 3]).requiresGrad_();
    const y = x.mul(2).add(1);
    assert.equal(y.retainsGrad, false);
    y.retainGrad();
    assert.equal(y.retainsGrad, true);
    // a retaining non-leaf reads as null until a backward reaches it
    assert.equal(y.grad, null);
    const h = y.tanh();
    h.retainGrad();
    f64(plain.w, [2, 3]).mul(h).mul(h).sum().backward();
    assertClose(gradOf(y), plain.y_grad, 1e-12, 1e-12, 'y.grad');
    assertClose(gradOf(h), plain.h_grad, 1e-12, 1e-12, 'h.grad');
    assertClose(gradOf(x), plain.x_grad, 1e-12, 1e-12, 'x.grad');
  });
  assert.equal(torch.liveTensors(), before);
});

/** The golden's Linear with its doubling full backward hook, run backward `times` times. */
function hooked(times: number): Hooked {
  const { hooked: g } = golden;
  const lin = new nn.Linear(3, 4).double();
  try {
    torch.tidy(() =>
      torch.noGrad(() => {
        lin.weight.copy_(f64(g.weight, [4, 3]));
        lin.bias!.copy_(f64(g.bias, [4]));
      }),
    );
    lin.registerFullBackwardHook((_m, gradInput) => gradInput.map((t) => t && t.mul(2)));
    return torch.tidy(() => {
      const x = f64(golden.plain.x, [2, 3]).requiresGrad_();
      const a = x.mul(1.5);
      a.retainGrad();
      const o = lin.forward(a);
      o.retainGrad();
      assert.equal(o.retainsGrad, true);
      const c = o.sin();
      c.retainGrad();
      const loss = f64(g.v, [2, 4]).mul(c).sum();
      for (let i = 0; i < times; i++) loss.backward(undefined, { retainGraph: i < times - 1 });
      return {
        a_grad: gradOf(a),
        o_grad: gradOf(o),
        c_grad: gradOf(c),
        x_grad: gradOf(x),
        weight_grad: gradOf(lin.weight),
        bias_grad: gradOf(lin.bias!),
      };
    });
  } finally {
    lin.dispose();
  }
}

function checkHooked(actual: Hooked, expected: Hooked, what: string): void {
  for (const key of Object.keys(actual) as (keyof Hooked)[])
    assertClose(actual[key], expected[key], 1e-12, 1e-12, `${what}: ${key}`);
}

test('a module backward hook on the path: before it the hook-returned gradient, at its output the arriving one', () => {
  const before = torch.liveTensors();
  checkHooked(hooked(1), golden.hooked, 'one backward');
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('two backwards with retainGraph: every retained gradient is the sum of both', () => {
  const before = torch.liveTensors();
  checkHooked(hooked(2), golden.twice, 'two backwards');
  assert.equal(liveJsAutograd(), 0);
  assert.equal(torch.liveTensors(), before);
});

test('a leaf: retainGrad changes nothing, retainsGrad stays false', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = f64(golden.plain.x, [2, 3]).requiresGrad_();
    x.retainGrad();
    assert.equal(x.retainsGrad, golden.leaf.retains_grad);
    x.mul(f64(golden.plain.w, [2, 3]))
      .sum()
      .backward();
    assertClose(gradOf(x), golden.leaf.x_grad, 0, 0, 'x.grad');
  });
  assert.equal(torch.liveTensors(), before);
});

test('retainGrad on a tensor that does not require grad is a named error; grad = null resets', () => {
  torch.tidy(() => {
    assert.throws(
      () => torch.ones([2]).mul(3).retainGrad(),
      (e: Error) =>
        e instanceof ArgumentError &&
        /^tailor: Tensor\.retainGrad: the tensor does not require grad, so no gradient reaches it; call requiresGrad_\(\)/.test(
          e.message,
        ),
    );
    const x = torch.ones([3]).requiresGrad_();
    const y = x.mul(2);
    y.retainGrad();
    y.sum().backward(undefined, { retainGraph: true });
    y.sum().backward(undefined, { retainGraph: true });
    assert.deepEqual(y.grad!.toNumbers(), [2, 2, 2]);
    y.grad = null;
    y.sum().backward();
    assert.deepEqual(y.grad!.toNumbers(), [1, 1, 1]);
  });
});
