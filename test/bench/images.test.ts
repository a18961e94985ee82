// The image-list pipeline benchmark (bench/images.ts) with --randaugm, as a smoke run on a
// handful of tiny JPEGs: both sides run the plain pipeline and BalPoE's RandAugment one for an
// epoch, and the report gives a row per pipeline and RandAugment's cost per image.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';
import { tempDir } from '../longtail/data-fixtures.js';
import { synthImageList } from '../../src/longtail/data/synth-images.js';

const python = '/usr/bin/python3';
const torchMissing = !pythonHas(python, 'torch', 'PIL');
const dir = tempDir('bench-images');
after(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  rows: {
    workers: number;
    randaugm: boolean;
    images: number;
    tailor_images_per_s: number;
    torch_images_per_s: number;
    tailor_randaugment: boolean;
    torch_impl: string;
  }[];
  randaugment_cost?: { workers: number; tailor_cpu_ms_per_image: number; torch_cpu_ms_per_image: number }[];
}

test(
  'bench images --randaugm: both sides run the plain and the RandAugment pipeline over the list',
  { skip: torchMissing ? `${python} lacks torch or PIL` : false, timeout: 120_000 },
  async () => {
    const written = await synthImageList({
      out: dir,
      classes: 3,
      imbalance: 2,
      maxPerClass: 4,
      valPerClass: 0,
      testPerClass: 0,
      width: 48,
      height: 40,
    });
    const args = [
      '--root',
      dir,
      '--list',
      written.lists.train,
      '--workers',
      '1',
      '--batch',
      '4',
      '--size',
      '32',
    ];
    args.push('--repeats', '1', '--randaugm', '--python', python, '--json');
    const run = spawnSync(process.execPath, [join(repoRoot, 'dist', 'bench', 'images.js'), ...args], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const report = JSON.parse(run.stdout.trim().split('\n').pop()!) as Report;
    const images = written.counts.train.reduce((a, b) => a + b, 0);
    assert.deepEqual(
      report.rows.map((r) => [r.randaugm, r.tailor_randaugment, r.images]),
      [
        [false, false, images],
        [true, true, images],
      ],
    );
    assert.doesNotMatch(report.rows[0]!.torch_impl, /RandAugment/);
    assert.match(report.rows[1]!.torch_impl, /RandAugment/);
    for (const r of report.rows)
      assert.ok(r.tailor_images_per_s > 0 && r.torch_images_per_s > 0, JSON.stringify(r));
    assert.equal(report.randaugment_cost?.length, 1);
    const cost = report.randaugment_cost[0]!;
    assert.ok(Number.isFinite(cost.tailor_cpu_ms_per_image) && Number.isFinite(cost.torch_cpu_ms_per_image));
  },
);
