import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detectRunKind, renderRunReport, runPage } from '../../src/report/index.js';
import type { ScatterChart } from '../../src/report/types.js';
import { runYardstick, type YardMethod } from '../../src/nmr/eval/yardstick.js';
import { datasetYardSamples } from '../../src/nmr/eval/yard-data.js';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { InputError } from '../../src/util/errors.js';

test('NMR yardstick report: operating-point table and the two sweep charts per reference', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nmr-yard-report-'));
  try {
    writeSyntheticDataset(join(dir, 'data'), 6, 2, { points: 512, levels: 3, ratio: 2 });
    const { samples, ratio } = datasetYardSamples(join(dir, 'data'));
    // A method whose name is markup: the page must show it as text.
    const evil: YardMethod = { name: '<b>x</b>', stack: false, run: (pre) => pre.spectra[0]! };
    const report = runYardstick(samples, { baselines: ['raw', 'matched'], ratio, methods: [evil] });
    const run = join(dir, 'run');
    mkdirSync(run);
    writeFileSync(join(run, 'results.json'), JSON.stringify(report));
    assert.equal(detectRunKind(JSON.parse(JSON.stringify(report))), 'nmr-yardstick');
    const page = runPage(run);
    assert.equal(page.kind, 'nmr-yardstick');
    // Two references (truth, held-out level K), each with a PR and a false-rate chart.
    assert.deepEqual(Object.keys(page.charts).sort(), ['fr0', 'fr1', 'pr0', 'pr1']);
    const pr = page.charts.pr0 as ScatterChart;
    // 3 raw levels, raw, matched, the extra method and fusion.
    assert.equal(pr.series.length, 7);
    assert.equal(pr.series[0]!.label, 'raw level 0');
    for (const s of pr.series) for (const p of s.y) assert.ok(p >= 0 && p <= 1);
    const fr = page.charts.fr0 as ScatterChart;
    for (const s of fr.series) for (const x of s.x) assert.ok(x > 0, 'log axis: no zero false-peak rate');
    const html = renderRunReport(run);
    assert.ok(html.includes('id="nmr-operating-0"'));
    assert.ok(html.includes('&lt;b&gt;x&lt;/b&gt; (x0)'));
    assert.ok(!html.includes('<b>x</b>'));
    // A damaged field is named.
    const bad = JSON.parse(JSON.stringify(report)) as {
      references: { methods: { operating: { auc: unknown } }[] }[];
    };
    bad.references[0]!.methods[0]!.operating.auc = 'high';
    writeFileSync(join(run, 'results.json'), JSON.stringify(bad));
    assert.throws(
      () => runPage(run),
      (e: Error) =>
        e instanceof InputError && /references\[0\]\.methods\[0\]\.operating\.auc/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
