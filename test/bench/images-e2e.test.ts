// The end-to-end image-list training benchmark, as a CPU smoke run of both sides: tailor train
// from a synthetic JPEG list, and the PyTorch script with its DataLoader (the figures come from
// the GPU machine, scripts/gpu-check.sh images_e2e).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';

const python = '/usr/bin/python3';
const torchMissing = !pythonHas(python, 'torch', 'PIL');

test(
  'bench images-e2e: both sides train an epoch from the same image list and report images/s',
  { skip: torchMissing ? `${python} lacks torch or PIL` : false, timeout: 300_000 },
  () => {
    const args = ['--device', 'cpu', '--workers', '1', '--batch', '4', '--images', '16', '--epochs', '1'];
    args.push('--modes', 'float32', '--size', '32', '--classes', '20', '--python', python, '--json');
    const run = spawnSync(process.execPath, [join(repoRoot, 'dist', 'bench', 'images-e2e.js'), ...args], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
      rows: {
        mode: string;
        ratio: number;
        tailor: { images: number; images_per_s: number };
        torch: { images: number };
      }[];
    };
    assert.equal(report.rows.length, 1);
    const row = report.rows[0]!;
    assert.equal(row.mode, 'float32');
    assert.ok(row.tailor.images > 0 && row.tailor.images === row.torch.images, JSON.stringify(row));
    assert.ok(Number.isFinite(row.ratio) && row.ratio > 0, JSON.stringify(row));
  },
);
