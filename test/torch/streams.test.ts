// Branch streams where there is no CUDA: the branches run in order on the CPU, and the path
// that would use CUDA streams says by name that CUDA is missing. (The streams themselves are
// checked on a GPU: bench/epoch-gpu.ts --check, run by scripts/gpu-check.sh.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

test('onParallelStreams runs the branches in order; on the CPU one after another, without CUDA a named error', () => {
  const order: number[] = [];
  const outputs = torch.tidy(() =>
    torch
      .onParallelStreams(
        'cpu',
        [1, 2, 3].map((k) => () => {
          order.push(k);
          return torch.full([2], k);
        }),
      )
      .map((t) => [...t.toFloat32Array()]),
  );
  assert.deepEqual(order, [1, 2, 3]);
  assert.deepEqual(outputs, [
    [1, 1],
    [2, 2],
    [3, 3],
  ]);
  assert.throws(
    () =>
      torch.onParallelStreams('cpu', [
        () => torch.zeros([1]),
        () => {
          throw new Error('branch failed');
        },
      ]),
    /branch failed/,
  );
  if (!torch.cuda.isAvailable())
    assert.throws(
      () => torch.onParallelStreams('cuda', [() => torch.zeros([1]), () => torch.zeros([1])]),
      (e: Error) => e instanceof torch.DeviceUnavailableError,
    );
});

test(
  'parallelBranches uses streams only inside withBranchStreams, and not for branches sharing parameters under autocast',
  { skip: torch.cuda.isAvailable() && 'a GPU is visible' },
  () => {
    // On a CPU-only libtorch, going to streams on 'cuda' is a DeviceUnavailableError, and running
    // the branches in order is not: which one happens shows which path was taken.
    const branches = [() => torch.zeros([1]), () => torch.ones([1])];
    const inOrder = (fn: () => torch.Tensor[]) => torch.tidy(() => fn().map((t) => t.item()));
    const streams = (e: Error) => e instanceof torch.DeviceUnavailableError;
    assert.equal(torch.branchStreamsEnabled(), false);
    assert.deepEqual(
      inOrder(() => torch.parallelBranches('cuda', branches)),
      [0, 1],
    );
    assert.throws(
      () => torch.withBranchStreams(true, () => torch.parallelBranches('cuda', branches)),
      streams,
    );
    assert.equal(torch.branchStreamsEnabled(), false);
    torch.withBranchStreams(true, () => {
      assert.equal(torch.branchStreamsEnabled(), true);
      torch.autocast('bf16', 'cpu', () => {
        assert.deepEqual(
          inOrder(() => torch.parallelBranches('cuda', branches, { sharedParameters: true })),
          [0, 1],
        );
        assert.throws(() => torch.parallelBranches('cuda', branches), streams);
      });
      assert.throws(() => torch.parallelBranches('cuda', branches, { sharedParameters: true }), streams);
    });
  },
);
