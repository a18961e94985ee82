// Operator counts (torch.profiler): the dispatcher operators a piece of work runs, forward and
// backward, with the calls that are not launches of their own on a GPU told apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

const count = (counts: Map<string, torch.profiler.OpCount>, name: string) =>
  counts.get(name) ?? { calls: 0, outermost: 0, inForeach: 0, redispatched: 0 };

test('countOps counts the forward operators and the backward the autograd engine runs', () => {
  torch.tidy(() => {
    const x = torch.randn([4, 3]).requiresGrad_();
    const { counts, result } = torch.profiler.countOps(() => {
      const y = x.relu().sum();
      y.backward();
      return y.item();
    });
    assert.ok(Number.isFinite(result));
    assert.deepEqual(count(counts, 'aten::relu'), { calls: 1, outermost: 1, inForeach: 0, redispatched: 0 });
    assert.equal(count(counts, 'aten::threshold_backward').calls, 1);
    assert.equal(count(counts, 'aten::threshold_backward').outermost, 0); // inside ReluBackward0
    assert.ok(count(counts, 'autograd::engine::evaluate_function: ReluBackward0').calls === 1);
    // nothing is counted once the count is over
    x.relu();
    assert.equal(count(counts, 'aten::relu').calls, 1);
  });
});

test('an overload passing the work on and the CPU fallback of a _foreach_ operator are told apart', () => {
  torch.tidy(() => {
    const a = torch.zeros([3]);
    const { counts } = torch.profiler.countOps(() => a.add_(1));
    const add = count(counts, 'aten::add_');
    // add_(Scalar) runs add_(Tensor): two calls, one computation
    assert.equal(add.calls - add.redispatched, 1);
    const tensors = [torch.zeros([2]), torch.zeros([3]), torch.zeros([4])];
    const foreach = torch.profiler.countOps(() => torch.aten._foreach_add__List(tensors, tensors, 1)).counts;
    assert.equal(count(foreach, 'aten::_foreach_add_').calls, 1);
    const inner = count(foreach, 'aten::add_');
    assert.equal(inner.calls, inner.inForeach, 'every per-tensor call is inside the _foreach_ operator');
    assert.ok(inner.calls >= tensors.length);
  });
});

test('the counter stops however the work ends, and one count runs at a time', () => {
  assert.throws(
    () =>
      torch.profiler.countOps(() => {
        torch.zeros([2]).relu();
        throw new Error('stop here');
      }),
    /stop here/,
  );
  const counter = torch.profiler.startCountingOps(); // the failed count left no counter on
  assert.throws(() => torch.profiler.startCountingOps(), /already on/);
  const counts = counter.stop();
  assert.ok(counts instanceof Map);
  assert.throws(() => counter.stop(), /already stopped/);
});

test('unbind: the slices without the dimension, and one stack of gradients in backward', () => {
  torch.tidy(() => {
    const x = torch.arange(0, 12, 1, 'float32').reshape(3, 2, 2).requiresGrad_();
    const parts = x.unbind(0);
    assert.equal(parts.length, 3);
    assert.deepEqual(parts[1]!.shape, [2, 2]);
    assert.deepEqual([...parts[2]!.toFloat32Array()], [8, 9, 10, 11]);
    const { counts } = torch.profiler.countOps(() => parts[0]!.mul(1).add(parts[2]!.mul(2)).sum().backward());
    assert.deepEqual([...x.grad!.toFloat32Array()], [1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2]);
    assert.equal(count(counts, 'aten::select_backward').calls, 0);
    assert.equal(count(counts, 'aten::stack').calls, 1);
  });
});
