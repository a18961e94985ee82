// bench/suite-compare.ts: two benchmark outputs side by side. On the stored Fashion-MNIST-LT
// suites (graph mode against eager mode) it gives the figures BENCHMARKS.md reports; on a made-up
// pair, each statistic is checked by hand, including a seed only one side has and a method a
// model cannot run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareSuites, comparisonTable, readSuiteRuns } from '../../bench/lib/suite-compare.js';
import { repoRoot } from '../helpers.js';

test('suite-compare: the stored graph-mode suite against the eager one gives the reported figures', () => {
  const rows = compareSuites(
    readSuiteRuns(join(repoRoot, 'bench/results/fmnist_lt_ir100_full_graph')),
    readSuiteRuns(join(repoRoot, 'bench/results/fmnist_lt_ir100_full')),
  );
  const row = (model: string, method: string) => rows.find((r) => r.model === model && r.method === method)!;
  const ce = row('CE', 'plain');
  assert.equal(ce.reference.mean!.toFixed(2), '87.73');
  assert.equal(ce.reference.sd!.toFixed(2), '0.43');
  assert.equal(ce.difference!.toFixed(2), '0.37');
  assert.deepEqual(
    Object.values(ce.sameSeed).map((v) => v.toFixed(2)),
    ['0.57', '0.67'],
  );
  const ldam = row('LDAM-DRW', 'bbse');
  assert.equal(ldam.difference!.toFixed(2), '-0.13');
  assert.equal(ldam.differenceSd!.toFixed(1), '-2.6');
  assert.equal(ldam.withinRange, false);
  assert.equal(row('SADE', 'prior').differenceSd!.toFixed(1), '-2.0');
  // plain and the reference's best method per model
  assert.equal(rows.length, 12);
});

function writeRun(dir: string, model: string, seed: number, methods: Record<string, number | null>): void {
  const run = join(dir, 'runs', model, `seed-${seed}`);
  mkdirSync(run, { recursive: true });
  const records = Object.fromEntries(
    Object.entries(methods).map(([m, v]) => [
      m,
      v === null ? { unsupported: 'not this model' } : { mean_top1: v },
    ]),
  );
  writeFileSync(join(run, 'benchmark-methods.json'), JSON.stringify(records));
}

test('suite-compare: statistics, the best method, seeds on one side only, unsupported methods', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-suite-compare-'));
  try {
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    for (const [seed, plain, em] of [
      [0, 0.8, 0.9],
      [1, 0.82, 0.92],
      [2, 0.84, 0.94],
    ] as const)
      writeRun(b, 'M', seed, { plain, em, oracle: 0.99, preference: null });
    writeRun(a, 'M', 0, { plain: 0.85, em: 0.9, oracle: 0.99, preference: null });
    writeRun(a, 'M', 5, { plain: 0.81, em: 0.91, oracle: 0.99, preference: null });
    writeRun(b, 'OnlyB', 0, { plain: 0.5 });
    mkdirSync(join(a, 'runs', 'M', 'seed-7'), { recursive: true }); // unfinished: no methods file

    const rows = compareSuites(readSuiteRuns(a), readSuiteRuns(b));
    assert.deepEqual(
      rows.map((r) => r.method),
      ['plain', 'em'],
      'plain and the best non-oracle method; no row for a model A lacks',
    );
    const plain = rows[0]!;
    assert.equal(plain.reference.mean!.toFixed(6), '82.000000');
    assert.equal(plain.reference.sd!.toFixed(6), '2.000000');
    assert.deepEqual([plain.reference.min, plain.reference.max], [80, 84]);
    assert.equal(plain.other.n, 2);
    assert.equal(plain.difference!.toFixed(6), '1.000000');
    assert.equal(plain.differenceSd!.toFixed(6), '0.500000');
    assert.equal(plain.withinRange, true);
    assert.deepEqual(Object.keys(plain.sameSeed), ['0'], 'seed 5 has no partner');
    assert.equal(plain.sameSeed[0]!.toFixed(6), '5.000000');
    const em = rows[1]!;
    assert.equal(em.difference!.toFixed(6), '-1.500000');
    assert.equal(em.withinRange, true);

    const all = compareSuites(readSuiteRuns(a), readSuiteRuns(b), 'all').map((r) => r.method);
    assert.deepEqual(all.sort(), ['em', 'oracle', 'plain']);
    const table = comparisonTable(rows, ['graph', 'eager']);
    assert.match(
      table,
      /\| M \| plain \| 82\.00 \+- 2\.00 \[80\.00, 84\.00\] \(3\) \| 85\.00 \/ 81\.00 \| \+1\.00 \(\+0\.5 sd\) \| yes \| \+5\.00 \|/,
    );
    assert.throws(() => readSuiteRuns(join(dir, 'none')), /holds no runs\/ directory/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
