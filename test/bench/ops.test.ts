// The operator-count benchmark as a regression check: the training step graph mode captures for
// SADE and PRL, and the ResNeXt-50 step of the image benchmarks in float32, bf16 and bf16 +
// channels-last, run no more computing operators than the same steps in plain PyTorch (counted
// on the CPU; on a GPU each is at least one kernel launch, which bounds the small models' steps).
// The Fashion-MNIST-LT steps run at batch 16: the counts do not depend on the batch size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';

const python = '/usr/bin/python3';
const torchMissing = !pythonHas(python, 'torch');
const fmnistMissing = !existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const skip = torchMissing ? `${python} lacks torch` : fmnistMissing ? 'Fashion-MNIST not installed' : false;

test(
  "bench ops: tailor's captured SADE and PRL steps run no more operators than PyTorch's",
  { skip, timeout: 300_000 },
  () => {
    const run = spawnSync(
      process.execPath,
      [
        join(repoRoot, 'dist', 'bench', 'ops.js'),
        '--configs',
        'sade,prl,resnext50',
        '--batch',
        '16',
        '--json',
      ],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<
      string,
      { tailor_kernel_ops: number; torch_kernel_ops: number; tailor_between_kernel_ops: number }
    >;
    for (const name of ['sade', 'prl']) {
      const r = report[name]!;
      assert.ok(r.torch_kernel_ops > 1000, `${name}: ${JSON.stringify(r)}`);
      // parity within 1 %: the device-side figures (accuracy, the first non-finite loss) are
      // tailor's own few operators
      assert.ok(r.tailor_kernel_ops <= r.torch_kernel_ops * 1.01, `${name}: ${JSON.stringify(r)}`);
      // drawing the next batch on the device and writing it into the graph's inputs
      assert.ok(
        r.tailor_between_kernel_ops > 0 && r.tailor_between_kernel_ops < 60,
        `${name}: ${JSON.stringify(r)}`,
      );
    }
  },
);
