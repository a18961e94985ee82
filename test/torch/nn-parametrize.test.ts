// nn.utils.parametrize against PyTorch 1.13 (test/golden/torch/parametrize.json, from
// scripts/golden/parametrize.py): a symmetric weight (state-dict keys, values, gradient of
// `original`), a second parametrization appended, removal, rightInverse; then errors and memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type Flat = number[];
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'parametrize.json'), 'utf8')) as {
  params: Record<string, Flat>;
  input: Flat;
  symmetric: {
    keys: string[];
    named_parameters: string[];
    weight: Flat;
    output: Flat;
    original_grad: Flat;
    bias_grad: Flat;
  };
  both: { keys: string[]; weight: Flat; output: Flat; original: Flat };
  removed: { keys: string[]; weight: Flat };
  params2: Record<string, Flat>;
  inverse: { original: Flat; weight: Flat; removed_weight: Flat };
};
const P = nn.utils.parametrize;

class Symmetric extends nn.Module {
  forward(x: Tensor): Tensor {
    return torch.aten.triu(x).add(torch.aten.triu(x, 1).transpose(-1, -2));
  }
}
class Column extends nn.Module {
  forward(x: Tensor): Tensor {
    return x.reshape(-1, 1);
  }
}
class Scale extends nn.Module {
  forward(x: Tensor): Tensor {
    return x.mul(3);
  }
  rightInverse(w: Tensor): Tensor {
    return w.div(3);
  }
}

function linear(inF: number, outF: number, params: Record<string, Flat>): nn.Linear {
  const lin = new nn.Linear(inF, outF).double();
  torch.tidy(() => {
    lin.weight.setData(torch.tensor(params.weight!, { shape: [outF, inF], dtype: 'float64' }));
    lin.bias!.setData(torch.tensor(params.bias!, { shape: [outF], dtype: 'float64' }));
  });
  return lin;
}
const values = (t: Tensor): Flat => torch.tidy(() => Array.from(t.toFloat64Array()));
const parametrizations = (m: nn.Module) =>
  (m as unknown as { parametrizations: { weight: nn.utils.parametrize.ParametrizationList } })
    .parametrizations;

test('registerParametrization: symmetric weight, appended parametrization, removal (PyTorch 1.13 values)', () => {
  const before = torch.liveTensors();
  const lin = linear(3, 3, golden.params);
  const weight = lin.weight;
  const x = torch.tensor(golden.input, { shape: [4, 3], dtype: 'float64' });
  const s = golden.symmetric;
  P.registerParametrization(lin, 'weight', new Symmetric());
  assert.ok(P.isParametrized(lin) && P.isParametrized(lin, 'weight') && !P.isParametrized(lin, 'bias'));
  assert.deepEqual(Object.keys(lin.stateDict()), s.keys);
  assert.deepEqual(
    [...lin.namedParameters()].map(([n]) => n),
    s.named_parameters,
  );
  assert.equal(parametrizations(lin).weight.original, weight, 'the same tensor is trained');
  assertClose(values(lin.weight), s.weight, 1e-12);
  torch.tidy(() => {
    const y = lin.forward(x);
    assertClose(values(y), s.output, 1e-12);
    y.mul(torch.arange(12, undefined, 1, 'float64').reshape(4, 3))
      .sum()
      .backward();
  });
  torch.tidy(() => {
    assertClose(values(weight.grad!), s.original_grad, 1e-12);
    assertClose(values(lin.bias!.grad!), s.bias_grad, 1e-12);
  });

  const b = golden.both;
  P.registerParametrization(lin, 'weight', new Scale());
  assert.deepEqual(Object.keys(lin.stateDict()), b.keys);
  assertClose(values(lin.weight), b.weight, 1e-12);
  torch.tidy(() => assertClose(values(lin.forward(x)), b.output, 1e-12));
  assertClose(values(weight), b.original, 1e-12, 0, 'appending applies no rightInverse');

  P.removeParametrizations(lin, 'weight');
  assert.ok(!P.isParametrized(lin));
  assert.deepEqual(Object.keys(lin.stateDict()), golden.removed.keys);
  assert.equal(lin.weight, weight);
  assertClose(values(lin.weight), golden.removed.weight, 1e-12);
  assert.equal((lin as unknown as Record<string, unknown>).parametrizations, undefined);
  assert.equal(Object.getOwnPropertyDescriptor(lin, 'forward'), undefined, 'pre-hook taken off');
  x.dispose();
  lin.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('rightInverse sets original; removal without leaving the parametrized value; errors', () => {
  const before = torch.liveTensors();
  const lin = linear(3, 2, golden.params2);
  P.registerParametrization(lin, 'weight', new Scale());
  assertClose(values(parametrizations(lin).weight.original), golden.inverse.original, 1e-12);
  assertClose(values(lin.weight), golden.inverse.weight, 1e-12);
  assert.throws(
    () => P.registerParametrization(lin, 'bias', new Column()),
    /tailor: registerParametrization: the parametrization maps bias of shape \[2\] \(float64\) to shape \[2,1\]/,
  );
  assert.throws(
    () => P.registerParametrization(lin, 'scale', new Scale()),
    /tailor: registerParametrization: Linear has no parameter 'scale' \(it has 'bias'\)/,
  );
  P.removeParametrizations(lin, 'weight', false);
  assertClose(values(lin.weight), golden.inverse.removed_weight, 1e-12);
  assert.throws(
    () => P.removeParametrizations(lin, 'weight'),
    /tailor: removeParametrizations: Linear has no parametrization of 'weight'/,
  );
  lin.dispose();
  assert.equal(torch.liveTensors(), before);
});
