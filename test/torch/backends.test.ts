import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

test('backends.cudnn: benchmark and deterministic read back what was set, each on its own', () => {
  const { benchmark, deterministic } = torch.backends.cudnn;
  try {
    torch.backends.cudnn.benchmark = !benchmark;
    assert.equal(torch.backends.cudnn.benchmark, !benchmark);
    assert.equal(torch.backends.cudnn.deterministic, deterministic, 'setting one flag leaves the other');
    torch.backends.cudnn.deterministic = !deterministic;
    assert.equal(torch.backends.cudnn.deterministic, !deterministic);
    assert.equal(torch.backends.cudnn.benchmark, !benchmark);
  } finally {
    torch.backends.cudnn.benchmark = benchmark;
    torch.backends.cudnn.deterministic = deterministic;
  }
  assert.deepEqual(
    [torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic],
    [benchmark, deterministic],
  );
});
