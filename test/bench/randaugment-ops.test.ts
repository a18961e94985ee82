// bench randaugment-ops runs every RandAugment operation (both filters for the geometric ones) on
// tailor's side and on Pillow's, and reports a finite cost and ratio for each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';
import { RAND_AUGMENT_GEOMETRIC, RAND_AUGMENT_OPS } from '../../src/longtail/data/randaugment.js';

const hasPillow = pythonHas('/usr/bin/python3', 'PIL', 'numpy');

test(
  'bench randaugment-ops: a row per operation and filter, both sides timed',
  { skip: !hasPillow && 'no Pillow/numpy' },
  () => {
    const r = spawnSync(
      process.execPath,
      [join(repoRoot, 'dist/bench/randaugment-ops.js'), '--calls', '2', '--json'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      calls: number;
      rows: { op: string; tailor_ms: number; tailor_fresh_ms: number; pillow_ms: number; ratio: number }[];
    };
    assert.equal(out.calls, 2);
    const expected = RAND_AUGMENT_OPS.flatMap((op) =>
      RAND_AUGMENT_GEOMETRIC.has(op) ? [`${op}/bilinear`, `${op}/bicubic`] : [op],
    );
    assert.deepEqual(
      out.rows.map((row) => row.op),
      expected,
    );
    for (const row of out.rows)
      for (const v of [row.tailor_ms, row.tailor_fresh_ms, row.pillow_ms, row.ratio])
        assert.ok(Number.isFinite(v) && v >= 0, `${row.op}: ${v}`);
  },
);
