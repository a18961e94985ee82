import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { assertClose } from '../helpers.js';

test('creation, dtype and read-back keep data and shape', () => {
  torch.tidy(() => {
    const a = torch.tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    assert.deepEqual(a.shape, [2, 3]);
    assert.equal(a.dtype, 'float32');
    assert.deepEqual(a.toNumbers(), [1, 2, 3, 4, 5, 6]);
    const i = torch.tensor(new Int32Array([1, 2]));
    assert.equal(i.dtype, 'int32');
    const l = torch.tensor(new BigInt64Array([5n]), { shape: [1] });
    assert.equal(l.dtype, 'int64');
    assert.equal(l.item(), 5);
    const b = torch.tensor([true, false]);
    assert.equal(b.dtype, 'bool');
    assert.deepEqual(b.toNumbers(), [1, 0]);
    const d = torch.tensor([1.5], { dtype: 'float64' });
    assert.equal(d.dtype, 'float64');
    assert.equal(torch.arange(5).dtype, 'int64');
    assert.deepEqual(a.transpose(0, 1).contiguous().toNumbers(), [1, 4, 2, 5, 3, 6]);
    assert.deepEqual(a.transpose(0, 1).strides, [1, 3]);
  });
});

test('broadcasting and type promotion follow PyTorch', () => {
  torch.tidy(() => {
    const a = torch.tensor([[1], [2]]);
    const b = torch.tensor([10, 20, 30]);
    assert.deepEqual(a.add(b).shape, [2, 3]);
    assert.deepEqual(a.add(b).toNumbers(), [11, 21, 31, 12, 22, 32]);
    const i = torch.arange(3);
    assert.equal(i.add(1).dtype, 'int64');
    assert.equal(i.add(0.5).dtype, 'float32');
    assert.equal(i.mul(torch.tensor([2.0, 2.0, 2.0])).dtype, 'float32');
    assert.equal(i.div(2).dtype, 'float32');
  });
});

test('autograd: gradients of a small expression, backward with a gradient, no-grad', () => {
  torch.tidy(() => {
    const x = torch.tensor([1, 2, 3], { dtype: 'float64', requiresGrad: true });
    const y = x.mul(x).sum();
    y.backward();
    assertClose(x.grad!.toFloat64Array(), [2, 4, 6], 1e-12);
    x.grad = null;
    const z = x.exp();
    z.backward(torch.tensor([1, 0, 1], { dtype: 'float64' }));
    assertClose(x.grad!.toFloat64Array(), [Math.exp(1), 0, Math.exp(3)], 1e-12);
    const w = torch.noGrad(() => x.mul(2));
    assert.equal(w.requiresGrad, false);
    assert.equal(torch.isGradEnabled(), true);
    assert.throws(
      () =>
        torch.noGrad(() => {
          throw new Error('boom');
        }),
      /boom/,
    );
    assert.equal(torch.isGradEnabled(), true);
    const [g] = torch.grad([x.pow(3).sum()], [x]);
    assertClose(g!.toFloat64Array(), [3, 12, 27], 1e-12);
  });
});

test('errors are JS errors naming the operator: shapes, disposed tensors, backward twice', () => {
  torch.tidy(() => {
    const a = torch.zeros([2, 3]);
    const b = torch.zeros([4, 5]);
    assert.throws(() => a.matmul(b), /aten::matmul.*cannot be multiplied/s);
    const c = torch.ones([2]);
    c.dispose();
    assert.throws(() => c.add(1), /already disposed/);
    const x = torch.ones([2], 'float32').requiresGrad_();
    const y = x.mul(x).sum();
    y.backward();
    assert.throws(() => y.backward(), /second time/);
    assert.throws(() => torch.tensor([1, 2, 3]).item(), /one element/);
  });
});

test('tidy frees intermediates and keeps what it returns', () => {
  const before = torch.liveTensors();
  const kept = torch.tidy(() => {
    const a = torch.ones([10]);
    const b = a.mul(3);
    const inner = torch.tidy(() => b.add(1).add(1));
    return { result: inner.sum() };
  });
  assert.equal(torch.liveTensors(), before + 1);
  assert.equal(kept.result.item(), 50);
  kept.result.dispose();
  assert.equal(torch.liveTensors(), before);
});

test('seeded random draws are reproducible and RNG state restores', () => {
  torch.tidy(() => {
    torch.manualSeed(3);
    const a = torch.randn([5]).toNumbers();
    torch.manualSeed(3);
    assert.deepEqual(torch.randn([5]).toNumbers(), a);
    const state = torch.getRngState();
    const b = torch.rand([4]).toNumbers();
    torch.setRngState(state);
    assert.deepEqual(torch.rand([4]).toNumbers(), b);
  });
});

test('x.split takes a size or a list of sizes and x.cumsum a dtype, as PyTorch 1.13', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.arange(0, 10).to('int32').reshape(2, 5);
    const parts = (ts: torch.Tensor[]) => ts.map((t) => t.toNumbers());
    // expected: PyTorch's x.split([1, 3, 1], 1), x.split(2, -1) and x.split(1)
    assert.deepEqual(parts(x.split([1, 3, 1], 1)), [
      [0, 5],
      [1, 2, 3, 6, 7, 8],
      [4, 9],
    ]);
    assert.deepEqual(parts(x.split(2, -1)), [
      [0, 1, 5, 6],
      [2, 3, 7, 8],
      [4, 9],
    ]);
    assert.deepEqual(parts(x.split(1)), [
      [0, 1, 2, 3, 4],
      [5, 6, 7, 8, 9],
    ]);
    assert.throws(
      () => x.split([1, 3], 1),
      /^ArgumentError: split: splitSizeOrSections must be sizes that add up/,
    );
    assert.throws(() => x.split(0), /split: splitSizeOrSections must be an integer >= 1, got 0/);
    // an integer cumsum is int64 (as PyTorch's), unless a dtype is given
    const sums = x.cumsum(1);
    assert.equal(sums.dtype, 'int64');
    assert.deepEqual(sums.toNumbers(), [0, 1, 3, 6, 10, 5, 11, 18, 26, 35]);
    const wide = x.cumsum(-1, { dtype: 'float64' });
    assert.equal(wide.dtype, 'float64');
    assert.deepEqual(wide.toNumbers(), [0, 1, 3, 6, 10, 5, 11, 18, 26, 35]);
    // summed in float64: PyTorch's [0.1, 0.2, 0.3] (float32) cumsum(0, dtype=float64)
    const f = torch.tensor([0.1, 0.2, 0.3]).cumsum(0, { dtype: 'float64' });
    assertClose(f.toFloat64Array(), [0.10000000149011612, 0.30000000447034836, 0.6000000163912773], 1e-15);
    assert.throws(() => x.cumsum(2), /cumsum: dim/);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
