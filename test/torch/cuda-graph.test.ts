// CUDA graphs where there is no CUDA: every entry point says why, by name, and nothing crashes.
// (A capture itself is checked on a GPU: bench/epoch-gpu.ts --check, run by scripts/gpu-check.sh.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

test(
  'without CUDA, CUDA graphs report unavailable with the reason, and refuse to start',
  { skip: torch.cuda.isAvailable() && 'a GPU is visible' },
  () => {
    const info = torch.cudaGraphsInfo();
    assert.equal(info.available, false);
    assert.ok(info.reason && info.reason.length > 10, String(info.reason));
    assert.throws(
      () => new torch.CUDAGraph(),
      (e: Error) => e instanceof torch.CudaGraphUnavailableError && e.message.includes(info.reason!),
    );
    assert.throws(() => torch.onSideStream('cuda', () => 1), /CUDA is not available/);
    assert.throws(() => torch.onSideStream('cpu', () => 1), /CUDA is not available|needs a CUDA device/);
  },
);

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
