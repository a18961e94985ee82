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
