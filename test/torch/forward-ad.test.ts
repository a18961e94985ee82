// Forward-mode AD (autograd.forwardAd) against PyTorch 1.13 (scripts/golden/forward_ad.py):
// tangents of an elementwise chain, an MLP, a convolution with batch norm and max pooling, a
// matrix product with logsumexp; the same JVP as autograd.functional.jvp's double backward; then
// the levels' rules, the errors and the memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { autograd, nn, type Tensor } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

const { forwardAd } = autograd;
type Flat = number[];
interface Case {
  y: Flat;
  tangent: Flat;
}
const g = JSON.parse(readFileSync(join(goldenDir, 'torch', 'forward-ad.json'), 'utf8')) as {
  chain: Case & { x: Flat; v: Flat; plain_tangent_none: boolean };
  mlp: Case & { weights: Record<string, Flat>; x: Flat; v: Flat };
  conv: Case & { conv: Record<string, Flat>; bn: Record<string, Flat>; x: Flat; v: Flat; shape: number[] };
  matmul: Case & { a: Flat; b: Flat; va: Flat };
};

const f64 = (data: Flat, shape?: number[]): Tensor =>
  torch.tensor(data, { dtype: 'float64', ...(shape ? { shape } : {}) });
const values = (t: Tensor | null): Flat => Array.from(t!.toFloat64Array());

function load(m: nn.Module, state: Record<string, Flat>): void {
  m.double();
  torch.tidy(() =>
    torch.noGrad(() => {
      for (const [name, p] of [...m.namedParameters(), ...m.namedBuffers()])
        if (state[name]) p.copy_(f64(state[name], p.shape));
    }),
  );
}

/** The value and tangent of f at x along v, read inside the level. */
function jvp(f: (x: Tensor) => Tensor, x: Tensor, v: Tensor): { y: Flat; tangent: Flat } {
  return forwardAd.dualLevel(() =>
    torch.tidy(() => {
      const { primal, tangent } = forwardAd.unpackDual(f(forwardAd.makeDual(x, v)));
      return { y: values(primal), tangent: values(tangent) };
    }),
  );
}

test('tangents of an elementwise chain and a matrix product (PyTorch 1.13); a plain tensor has none', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = f64(g.chain.x);
    const got = jvp((d) => d.sin().mul(2).mul(d.exp()).div(d.pow(2).add(1)), x, f64(g.chain.v));
    assertClose(got.y, g.chain.y, 1e-12, 0, 'chain y');
    assertClose(got.tangent, g.chain.tangent, 1e-12, 0, 'chain tangent');
    forwardAd.dualLevel(() =>
      assert.equal(forwardAd.unpackDual(x).tangent, g.chain.plain_tangent_none ? null : undefined),
    );
    // the same JVP by double backward
    const [, viaBackward] = autograd.functional.jvp(
      (d: Tensor) => d.sin().mul(2).mul(d.exp()).div(d.pow(2).add(1)),
      x,
      f64(g.chain.v),
    );
    assertClose(values(viaBackward as Tensor), g.chain.tangent, 1e-12, 0, 'functional.jvp agrees');
    const m = g.matmul;
    const b = f64(m.b, [4, 2]);
    const got2 = jvp((d) => d.matmul(b).logsumexp(1), f64(m.a, [3, 4]), f64(m.va, [3, 4]));
    assertClose(got2.y, m.y, 1e-12, 0, 'matmul y');
    assertClose(got2.tangent, m.tangent, 1e-12, 0, 'matmul tangent');
  });
  assert.equal(torch.liveTensors(), before);
});

test('tangents through layers: an MLP, a convolution with batch norm (eval) and max pooling (PyTorch 1.13)', () => {
  const before = torch.liveTensors();
  const mlp = new nn.Sequential(new nn.Linear(3, 4), new nn.Tanh(), new nn.Linear(4, 2), new nn.Softmax(1));
  load(mlp, g.mlp.weights);
  const conv = new nn.Conv2d(2, 3, 3, { padding: 1 });
  const bn = new nn.BatchNorm2d(3);
  load(conv, g.conv.conv);
  load(bn, g.conv.bn);
  bn.eval();
  torch.tidy(() => {
    const got = jvp((d) => mlp.forward(d), f64(g.mlp.x, [5, 3]), f64(g.mlp.v, [5, 3]));
    assertClose(got.y, g.mlp.y, 1e-12, 0, 'mlp y');
    assertClose(got.tangent, g.mlp.tangent, 1e-12, 0, 'mlp tangent');
    const pool = new nn.MaxPool2d(2);
    const got2 = jvp(
      (d) => pool.forward(bn.forward(conv.forward(d)).relu()),
      f64(g.conv.x, [2, 2, 6, 6]),
      f64(g.conv.v, [2, 2, 6, 6]),
    );
    assertClose(got2.y, g.conv.y, 1e-12, 0, 'conv y');
    assertClose(got2.tangent, g.conv.tangent, 1e-12, 0, 'conv tangent');
  });
  for (const m of [mlp, conv, bn]) m.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('levels: one at a time, left last first, tangents cleared on leaving; named errors', () => {
  const before = torch.liveTensors();
  const x = f64([1, 2]);
  const v = f64([3, 4]);
  assert.equal(forwardAd.currentDualLevel(), -1);
  assert.throws(
    () => forwardAd.makeDual(x, v),
    /tailor: forwardAd\.makeDual: make dual tensors inside dualLevel/,
  );
  assert.equal(forwardAd.unpackDual(x).tangent, null, 'outside any level: no tangent');
  const kept = forwardAd.dualLevel(() => {
    assert.equal(forwardAd.currentDualLevel(), 0);
    assert.throws(
      () => forwardAd.dualLevel(() => 1),
      /forwardAd\.enterDualLevel: Nested forward mode AD is not supported/,
    );
    assert.equal(forwardAd.currentDualLevel(), 0, 'a refused nested level leaves the outer one');
    assert.throws(
      () => torch.tidy(() => forwardAd.makeDual(torch.ones([2], 'int64'), v)),
      /tensor must be floating point or complex, got int64/,
    );
    assert.throws(() => forwardAd.makeDual(x, 3 as never), /forwardAd\.makeDual.*tangent/);
    assert.throws(() => forwardAd.exitDualLevel({ level: 5 }), /level 5 is not the last level entered/);
    return torch.tidy(() => forwardAd.makeDual(x, v).mul(2));
  });
  assert.equal(forwardAd.currentDualLevel(), -1);
  // a new level: the old dual tensor's tangent was cleared when its level ended
  forwardAd.dualLevel(() => torch.tidy(() => assert.equal(forwardAd.unpackDual(kept).tangent, null)));
  assert.throws(() => forwardAd.exitDualLevel(), /is not the last level entered \(none is\)/);
  assert.throws(() => forwardAd.dualLevel(3 as never), /forwardAd\.dualLevel.*fn/);
  for (const t of [x, v, kept]) t.dispose();
  assert.equal(torch.liveTensors(), before);
});
