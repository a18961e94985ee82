// The benchmarks' GPU utilisation sampler, with a stand-in nvidia-smi on PATH (the real one is on
// the GPU machine only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGpuUtil } from '../../bench/lib/gpu-util.js';

function withFakeSmi(script: string, body: () => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-fake-smi-'));
  writeFileSync(join(dir, 'nvidia-smi'), `#!/bin/sh\n${script}\n`);
  chmodSync(join(dir, 'nvidia-smi'), 0o755);
  const path = process.env.PATH;
  process.env.PATH = `${dir}:${path}`;
  return body().finally(() => {
    process.env.PATH = path;
    rmSync(dir, { recursive: true, force: true });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('startGpuUtil: the mean of the samples taken while it ran, from GPU index given', async () => {
  // 40 on GPU 0 and 90 on GPU 1, as `nvidia-smi -i N --query-gpu=utilization.gpu` prints them
  await withFakeSmi(
    'case "$*" in *"-L"*) echo "GPU 0: fake";; *"-i 1 "*) echo 90;; *) echo 40;; esac',
    async () => {
      const zero = startGpuUtil(0);
      const one = startGpuUtil(1);
      await sleep(900);
      const [a, b] = [zero.stop(), one.stop()];
      assert.ok(a && a.samples >= 2, `several samples in 0.9 s: ${JSON.stringify(a)}`);
      assert.equal(a.mean_percent, 40);
      assert.equal(b?.mean_percent, 90);
    },
  );
});

test('startGpuUtil: null without a working nvidia-smi, and no samples after stop', async () => {
  await withFakeSmi('exit 9', async () => {
    assert.equal(startGpuUtil().stop(), null);
  });
  await withFakeSmi('case "$*" in *"-L"*) exit 0;; *) echo "[N/A]";; esac', async () => {
    const u = startGpuUtil();
    await sleep(500);
    assert.equal(u.stop(), null, 'lines that are not numbers are not samples');
  });
});
