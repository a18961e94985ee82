// autograd.onceDifferentiable against PyTorch 1.13's once_differentiable (values from
// /usr/bin/python3 on the same inputs): d/dx sum(Cube(x) * x) = 3x^3 + x^3 = 4x^3 with the
// backward under no-grad; a second derivative through it is the named error, as PyTorch's
// "trying to differentiate twice"; where the gradients that reach it need no graph, none is made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { autograd, type Tensor } from '../../src/torch/index.js';

class Cube extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
    ctx.saveForBackward(x);
    return x.pow(3);
  }
  static backward = autograd.onceDifferentiable((ctx: autograd.FunctionCtx, g: Tensor | null) => {
    const [x] = ctx.savedTensors;
    assert.equal(torch.isGradEnabled(), false, 'backward runs with grad mode off');
    return g!.mul(x!.pow(2)).mul(3);
  });
}

test('onceDifferentiable: first derivatives as PyTorch 1.13, a second one is a named error', () => {
  const before = torch.liveTensors();
  const x = torch.tensor([0.5, 2], { dtype: 'float64' }).requiresGrad_();
  torch.tidy(() => {
    const [g] = autograd.grad([Cube.apply(x).mul(x).sum()], [x], { createGraph: true });
    assert.deepEqual(Array.from(g!.toFloat64Array()), [0.5, 32]);
    assert.equal(g!.requiresGrad, true);
    assert.throws(
      () => g!.sum().backward(),
      /trying to differentiate twice a function that was marked with onceDifferentiable/,
    );
    // Gradients that reach it without a graph get none: PyTorch's "does not require grad".
    const [plain] = autograd.grad([Cube.apply(x).sum()], [x], { createGraph: true });
    assert.deepEqual(Array.from(plain!.toFloat64Array()), [0.75, 12]);
    assert.equal(plain!.requiresGrad, false);
    assert.throws(() => autograd.onceDifferentiable(3 as never), /backward must be a function/);
  });
  x.dispose();
  assert.equal(torch.liveTensors(), before);
});
