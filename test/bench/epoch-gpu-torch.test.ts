// The PyTorch side of bench/epoch-gpu.ts on the CPU: its device-data mode trains full batches
// only, so its images/s counts those images, and a set smaller than one batch is a named skip
// rather than the figure of an empty epoch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';

const python = '/usr/bin/python3';
const torchMissing = !pythonHas(python, 'torch');

interface TimedMode {
  epoch_s?: number[];
  median_s?: number;
  img_s?: number;
  images?: number;
  skipped?: string;
  error?: string;
}

function torchSide(maxPerClass: number): { images: number; batch: number } & Record<string, TimedMode> {
  // (the DataLoader with 8 workers and the CUDA-graph modes add nothing on the CPU but time)
  const args = ['--device', 'cpu', '--configs', 'sade', '--sides', 'tailor_eager', '--torch'];
  args.push('--torch-modes', 'dataloader-4,device');
  args.push('--python', python, '--epochs', '2', '--max-per-class', String(maxPerClass), '--json');
  const run = spawnSync(process.execPath, [join(repoRoot, 'dist', 'bench', 'epoch-gpu.js'), ...args], {
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
    sade: { torch: { images: number; batch: number } & Record<string, TimedMode> };
  };
  return report.sade.torch;
}

test(
  'bench epoch-gpu, PyTorch side: device-data images/s counts the full batches it trains; too few images is a skip',
  { skip: torchMissing ? `${python} lacks torch` : false, timeout: 300_000 },
  () => {
    // 60 per class: 143 images, one full batch of 128 and a partial one
    const some = torchSide(60);
    const full = Math.floor(some.images / some.batch) * some.batch;
    assert.ok(full > 0 && full < some.images, `a set with a partial last batch: ${some.images} images`);
    const device = some.device!;
    assert.equal(device.images, full, JSON.stringify(device));
    // (median_s is rounded to the millisecond)
    const expected = full / device.median_s!;
    assert.ok(Math.abs(device.img_s! - expected) <= 0.02 * expected, JSON.stringify(device));
    assert.equal(some['dataloader-4']!.images, undefined, 'the DataLoader trains every image');
    const tiny = torchSide(15);
    assert.ok(tiny.images < tiny.batch);
    assert.equal(tiny.device!.skipped, `fewer images (${tiny.images}) than one batch (${tiny.batch})`);
    assert.equal(tiny.device!.img_s, undefined);
  },
);
