// The report of `tailor nmr ablate` output: each variant's mean and spread over its seeds, a chart
// per deciding figure with every run beside its variant, and named errors for files it cannot read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPage, writeRunReport } from '../../src/report/index.js';
import { InputError } from '../../src/util/errors.js';
import { ablationRow, writeAblationDir } from './fixtures.js';

test('nmr ablate output: mean ± sd per variant, a chart per figure with each run, names escaped', () => {
  const dir = writeAblationDir(mkdtempSync(join(tmpdir(), 'tailor-ablation-report-')));
  try {
    const page = runPage(dir);
    assert.equal(page.kind, 'nmr-ablation');
    assert.equal(page.subtitle, '2 variants x 2 seeds, scored on runs/nmr/y-test');
    assert.deepEqual(Object.keys(page.charts).sort(), ['energy', 'f1', 'weak']);
    const energy = page.charts.energy as {
      xTicks: string[];
      series: { label: string; x: number[]; y: number[] }[];
    };
    assert.deepEqual(energy.xTicks, ['full', '<b>odd</b>']);
    assert.deepEqual(
      energy.series.map((s) => s.label),
      ['seed 0', 'seed 1', 'mean'],
    );
    // the mean at its variant, each seed's runs to its right (one place per seed)
    assert.deepEqual(energy.series[0]!.x, [0.1, 1.1]);
    assert.deepEqual(energy.series[1]!.x, [0.35, 1.35]);
    assert.deepEqual(energy.series[2]!.x, [0, 1]);
    assert.deepEqual(energy.series[2]!.y, [7.5, 6.25]);
    // a figure the yardstick could not compute (null) is left out, not drawn as 0
    const f1 = page.charts.f1 as { series: { label: string; y: number[] }[] };
    assert.deepEqual(f1.series[1]!.y, [0.77]);
    const html = readFileSync(writeRunReport(dir), 'utf8');
    assert.match(html, /<td>full<\/td><td>0, 1<\/td><td>7\.50 ± 0\.71<\/td><td>0\.760 ± 0\.014<\/td>/);
    // one finite value: the value alone, no spread
    assert.match(
      html,
      /<td>&lt;b&gt;odd&lt;\/b&gt;<\/td><td>0, 1<\/td><td>6\.25 ± 0\.35<\/td><td>0\.700<\/td>/,
    );
    assert.doesNotMatch(html, /<b>odd<\/b>/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('nmr ablate output of one seed says so; unreadable files are named errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-ablation-report-'));
  try {
    // an ablation.json from before --seeds: no seeds, no seed per row
    const old = { ...ablationRow('full', 0, 7, 0.75) } as Record<string, unknown>;
    delete old.seed;
    writeFileSync(join(dir, 'ablation.json'), JSON.stringify({ data: 'd', rows: [old] }));
    const page = runPage(dir);
    assert.equal(page.subtitle, '1 variant x 1 seed, scored on d');
    assert.match(page.sections.join(''), /One seed per variant/);
    const cases: [unknown, RegExp][] = [
      [{ rows: [] }, /ablation\.json: field 'rows' is empty \(no variant finished training yet\)/],
      [{ rows: 'x' }, /field 'rows' is not an array/],
      [{ rows: [{ variant: 'a', model: {} }] }, /field 'rows\[0\]\.model\.metrics' is not an object/],
      [
        { rows: [{ ...ablationRow('a', 0, 1, 1), seed: -1 }] },
        /field 'rows\[0\]\.seed' is -1, below 0 \(expected the ablation\.json that 'tailor nmr ablate' writes/,
      ],
    ];
    for (const [value, message] of cases) {
      writeFileSync(join(dir, 'ablation.json'), JSON.stringify(value));
      assert.throws(
        () => runPage(dir),
        (e: unknown) => e instanceof InputError && message.test(e.message),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
