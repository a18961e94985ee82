// Report renderers on synthetic results: the page carries the charts' data, escapes names, is
// self-contained (no external resources), and errors name the bad field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderLongtailReport, writeLongtailReport } from '../../src/report/longtail.js';
import { detectRunKind, renderRunReport, runPage, writeRunReport } from '../../src/report/index.js';
import { jsonForScript } from '../../src/report/html.js';
import { parseControllability } from '../../src/report/controllability.js';
import { projectedEllipse } from '../../src/report/gmm.js';
import { parsePosteriorCsv } from '../../src/report/subgroup.js';
import type {
  ChartSpec,
  HeatmapChart,
  LinesChart,
  ScatterChart,
  TernaryChart,
} from '../../src/report/types.js';
import {
  DISTRIBUTIONS,
  HOSTILE_NAME,
  syntheticGmm,
  syntheticGrid,
  syntheticLongtail,
  writeRun,
} from './fixtures.js';
import { assertClose } from '../helpers.js';

function chartsOf(html: string): Record<string, ChartSpec> {
  const m = /<script id="report-data" type="application\/json">([\s\S]*?)<\/script>/.exec(html);
  assert.ok(m, 'the page has its data block');
  return (JSON.parse(m[1]!) as { charts: Record<string, ChartSpec> }).charts;
}

function assertSelfContained(html: string): void {
  assert.doesNotMatch(html, /<script[^>]+src=/i, 'no external scripts');
  assert.doesNotMatch(html, /<link[^>]+href=/i, 'no external stylesheets');
  assert.doesNotMatch(
    html,
    /(src|href)\s*=\s*["']?https?:|url\(\s*["']?https?:|fetch\(\s*["']https?:/i,
    'no network resources',
  );
  assert.match(html, /uPlot/, 'uPlot is inlined');
}

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'tailor-report-'));
}

test('long-tail report carries curves, per-class, distributions and confusion data', () => {
  const r = syntheticLongtail();
  const html = renderLongtailReport(r);
  assertSelfContained(html);
  const charts = chartsOf(html);
  for (const id of ['loss', 'accuracy', 'lr', 'perClass', 'distributions', 'confusion']) {
    assert.ok(html.includes(`data-chart="${id}"`), `section for ${id}`);
    assert.ok(charts[id], `chart ${id}`);
  }
  const loss = charts.loss as LinesChart;
  assert.deepEqual(loss.x, [1, 2, 3, 4, 5, 6]);
  assertClose(
    loss.series[0]!.values as number[],
    r.history!.map((h) => h.train_loss),
    1e-12,
  );
  const dist = charts.distributions as LinesChart;
  assert.deepEqual(dist.xTicks, DISTRIBUTIONS);
  assertClose(
    dist.series[0]!.values as number[],
    DISTRIBUTIONS.map((d) => r.distributions[d]!.top1!),
    1e-12,
  );
  const perClass = charts.perClass as ScatterChart;
  const xs = perClass.series.flatMap((s) => s.x).sort((a, b) => a - b);
  assert.deepEqual(
    xs,
    [...r.dataset.train_counts].sort((a, b) => a - b),
  );
  assert.ok(perClass.logX);
  assert.deepEqual((charts.confusion as HeatmapChart).matrix, r.uniform.confusion);
  // Each distribution's row is in the table, with percentages.
  assert.ok(
    html.includes(
      `<td>backward50</td><td>1000</td><td>${(100 * r.distributions.backward50!.top1!).toFixed(2)}</td>`,
    ),
  );
  assert.ok(!html.includes('data-chart="simplex"'), 'no simplex for a non-PRL run');
});

test('class names and run names are escaped in HTML and in the JSON block', () => {
  const r = syntheticLongtail();
  r.name = 'run </script><b>x</b>';
  const html = renderLongtailReport(r);
  assert.ok(!html.includes(HOSTILE_NAME), 'the raw name never appears');
  assert.ok(!html.includes('<script>alert'), 'no injected script element');
  assert.ok(
    html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;co'),
    'escaped in the per-class table',
  );
  assert.ok(html.includes('\\u003cscript\\u003ealert'), 'escaped in the JSON block');
  assert.ok(html.includes('run &lt;/script&gt;&lt;b&gt;x&lt;/b&gt;'), 'title escaped');
  const heat = chartsOf(html).confusion as HeatmapChart;
  assert.equal(heat.rows[3], HOSTILE_NAME, 'the JSON round-trips to the original name');
  assert.equal(jsonForScript('</script>\u2028'), '"\\u003c/script\\u003e\\u2028"');
});

test('PRL report has the ternary controllability map and its table', () => {
  const r = syntheticLongtail({ prl: true });
  const html = renderLongtailReport(r);
  const t = chartsOf(html).simplex as TernaryChart;
  assert.equal(t.type, 'ternary');
  assert.equal(t.points.length, 15);
  assert.deepEqual(t.metrics.slice(0, 4), ['top1', 'many', 'medium', 'few']);
  assert.ok(t.metrics.includes('backward50'));
  const grid = syntheticGrid();
  assert.equal(t.points[4]!.values.few, grid.points[4]!.few);
  assert.equal(t.points[4]!.values.forward10, grid.points[4]!.distributions.forward10);
  const rows = /<table class="numbers" id="controllability">[\s\S]*?<\/table>/
    .exec(html)![0]
    .match(/<tr>/g)!.length;
  assert.equal(rows, 16, 'header + 15 preferences');
});

test('bad results name the field', () => {
  assert.throws(() => renderLongtailReport({ ...syntheticLongtail(), kind: 'gmm' } as never), /field 'kind'/);
  const bad = syntheticGrid();
  bad.points[2]!.preference = [0.5, 0.5];
  assert.throws(
    () => parseControllability(bad, 'results.json controllability'),
    /results\.json controllability: points\[2\]\.preference is not 3 numbers/,
  );
  assert.throws(
    () => parseControllability({ experts: 3, points: [{ ...syntheticGrid().points[0], many: 'x' }] }, 'g'),
    /points\[0\]\.many/,
  );
});

test('writeLongtailReport writes report.html atomically and falls back to metrics.jsonl', () => {
  const dir = tempDir();
  try {
    const r = syntheticLongtail();
    const history = r.history!;
    delete r.history;
    writeRun(dir, r, { 'metrics.jsonl': history.map((h) => JSON.stringify(h)).join('\n') + '\n' });
    const out = writeLongtailReport(dir);
    assert.equal(out, join(dir, 'report.html'));
    assert.deepEqual(
      readdirSync(dir).sort(),
      ['metrics.jsonl', 'report.html', 'results.json'],
      'no temporary file left',
    );
    const loss = chartsOf(readFileSync(out, 'utf8')).loss as LinesChart;
    assert.deepEqual(
      loss.x,
      history.map((h) => h.epoch),
    );
    writeFileSync(join(dir, 'metrics.jsonl'), '{"epoch": 1}\nnot json\n');
    assert.throws(() => writeLongtailReport(dir), /metrics\.jsonl line 2/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('projected ellipses: axis-aligned and rotated covariances', () => {
  const e = projectedEllipse(
    [1, 2],
    [
      [4, 0],
      [0, 1],
    ],
    [
      [1, 0],
      [0, 1],
    ],
  );
  assertClose([e.cx, e.cy, e.rx, e.ry, e.angle], [1, 2, 4, 2, 0], 1e-12);
  // Covariance with eigenvectors (1,1)/sqrt2 (variance 9) and (1,-1)/sqrt2 (variance 1).
  const r = projectedEllipse(
    [0, 0, 5],
    [
      [5, 4, 0],
      [4, 5, 0],
      [0, 0, 7],
    ],
    [
      [1, 0, 0],
      [0, 1, 0],
    ],
  );
  assertClose([r.rx, r.ry, r.angle], [6, 2, Math.PI / 4], 1e-12);
});

test('GMM run: scatter with every point on the principal plane, ellipses, BIC curve', () => {
  const dir = tempDir();
  try {
    const g = syntheticGmm();
    writeRun(dir, g.model, { 'data.csv': g.csv, 'select.json': JSON.stringify(g.selection) });
    assert.equal(detectRunKind(g.model), 'gmm');
    const html = renderRunReport(dir);
    assertSelfContained(html);
    const charts = chartsOf(html);
    const s = charts.scatter as ScatterChart;
    assert.equal(
      s.series.reduce((n, x) => n + x.x.length, 0),
      200,
    );
    assert.equal(s.ellipses!.length, 2);
    assert.match(s.xLabel, /^PC1/);
    // The clusters differ along (5, 3, 0): the first component separates them.
    const gap = Math.abs(s.ellipses![0]!.cx - s.ellipses![1]!.cx);
    assertClose([gap], [Math.hypot(5, 3)], 0.3);
    // Points are coloured by component: the two well separated clusters split 100/100.
    assert.deepEqual(s.series.map((x) => x.x.length).sort(), [100, 100]);
    const bic = charts.bic as LinesChart;
    assert.deepEqual(bic.x, [1, 2, 3]);
    assert.deepEqual(
      bic.series.map((x) => x.label),
      ['full', 'diag'],
    );
    assert.deepEqual(bic.series[0]!.values, [1705, 1650, 1715]);
    const trace = charts.trace as LinesChart;
    assert.deepEqual(trace.x, [1, 2, 3, 4]);
    assert.deepEqual(trace.series[0]!.values, [-5, -4.2, -3.95, -3.9]);
    // Without the data, the means still place the components.
    rmSync(join(dir, 'data.csv'));
    const s2 = chartsOf(renderRunReport(dir)).scatter as ScatterChart;
    assert.equal(
      s2.series.reduce((n, x) => n + x.x.length, 0),
      2,
    );
    assert.match(renderRunReport(dir), /was not found/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('subgroup run: posterior probabilities and class trajectories', () => {
  const dir = tempDir();
  try {
    const ids = ['s1', 's2', 's3', 's4'];
    const data = ['id,time,y,x'];
    ids.forEach((id, i) =>
      [0, 1, 2].forEach((t) => data.push(`${id},${t},${(i < 2 ? 0 : 10) + t + 0.1 * i},${t}`)),
    );
    const fit = {
      model: 'latent-subgroup linear mixed model',
      K: 2,
      correlation: 'independent',
      nSubjects: 4,
      nObservations: 12,
      fixed: ['x'],
      membership: ['(intercept)'],
      alpha: [1],
      mu: [0.05, 10.25],
      sigmaB2: 0.1,
      sigmaEps2: 0.01,
      phi: 0,
      gamma: [[0], [0.1]],
      logLik: -3,
      bic: 14,
      aic: 12,
      nIter: 10,
      converged: true,
      classSizes: [2, 2],
      meanPosterior: [0.5, 0.5],
      warnings: [],
      data: 'data.csv',
    };
    const posterior =
      'id,class,prob1,prob2\ns1,1,0.99,0.01\ns2,1,0.8,0.2\ns3,2,0.05,0.95\ns4,2,0.001,0.999\n';
    writeRun(dir, fit, { 'data.csv': data.join('\n') + '\n', 'posterior.csv': posterior });
    assert.equal(detectRunKind(fit), 'subgroup');
    const charts = chartsOf(renderRunReport(dir));
    const post = charts.posterior as ScatterChart;
    assert.equal(post.series.length, 2);
    assert.deepEqual(post.series[0]!.y, [0.99, 0.8, 0.001, 0.05]);
    const traj = charts.trajectories as LinesChart;
    assert.deepEqual(traj.x, [0, 1, 2]);
    assertClose(traj.series[0]!.values as number[], [0.05, 1.05, 2.05], 1e-12, 0, 'class 1 observed');
    assertClose(
      traj.series[3]!.values as number[],
      [10.25, 11.25, 12.25],
      1e-12,
      0,
      'class 2 model mu + x alpha',
    );
    assert.throws(() => parsePosteriorCsv('a,b\n', 'p.csv'), /p\.csv line 1/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('NMR evaluation: metrics table and an overlay recomputed from the data set', async () => {
  const dir = tempDir();
  try {
    const { writeSyntheticDataset } = await import('../../src/nmr/data/generate.js');
    const { Dataset } = await import('../../src/nmr/data/dataset.js');
    const { evaluateDataset } = await import('../../src/nmr/eval/evaluate.js');
    writeSyntheticDataset(join(dir, 'data'), 3, 1, { points: 512, levels: 3, ratio: 2 });
    const ds = new Dataset(join(dir, 'data'));
    const report = evaluateDataset(ds, {});
    const truth = ds.sample(report.validationSamples).truth;
    ds.close();
    writeRun(join(dir, 'run'), { ...report, dataset: { ...report.dataset, dir: join(dir, 'data') } });
    const page = runPage(join(dir, 'run'));
    assert.equal(page.kind, 'nmr');
    const overlay = page.charts.overlay as LinesChart;
    assert.deepEqual(overlay.series.map((s) => s.label).slice(0, 2), ['input (level 0)', 'reference']);
    assert.ok(overlay.series.some((s) => s.label === 'fusion'));
    assert.equal(overlay.x.length, 512);
    assert.ok(overlay.x[0]! < overlay.x[511]!, 'x ascending for uPlot');
    assert.ok(overlay.reverseX, 'ppm drawn decreasing');
    // The ppm axis of the data set runs downwards, so the reference is reversed with it.
    assertClose(overlay.series[1]!.values as number[], Array.from(truth).reverse(), 1e-4, 1e-4);
    const html = renderRunReport(join(dir, 'run'));
    assert.ok(html.includes('id="nmr-metrics"'));
    assert.ok(html.includes('<td>fusion</td>'));
    const out = writeRunReport(join(dir, 'run'));
    assert.ok(existsSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('unknown results.json is an error that names the file', () => {
  const dir = tempDir();
  try {
    writeRun(dir, { hello: 1 });
    assert.throws(() => runPage(dir), /results\.json: unknown kind of results/);
    writeFileSync(join(dir, 'results.json'), '{oops');
    assert.throws(() => runPage(dir), /results\.json: not valid JSON/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tailor report --run DIR writes the page and names a missing results.json', async () => {
  const { run } = await import('../../src/cli/commands/report.js');
  const dir = tempDir();
  const log = console.log;
  const lines: string[] = [];
  console.log = (s: string) => lines.push(s);
  try {
    writeRun(join(dir, 'run'), syntheticLongtail({ prl: true }));
    assert.equal(await run(['--run', join(dir, 'run')]), 0);
    assert.match(lines.join('\n'), /wrote .*report\.html \(longtail report\)/);
    assert.ok(readFileSync(join(dir, 'run', 'report.html'), 'utf8').includes('data-chart="simplex"'));
    assert.equal(await run(['--run', join(dir, 'run'), '--out', join(dir, 'elsewhere.html')]), 0);
    assert.ok(existsSync(join(dir, 'elsewhere.html')));
    await assert.rejects(run(['--run', join(dir, 'missing')]), /missing[/\\]results\.json: cannot read/);
    // an nmr train run (checkpoints and history, no results) gets its training report
    const nmrRun = join(dir, 'nmr-run');
    mkdirSync(nmrRun);
    writeFileSync(join(nmrRun, 'history.json'), '[]');
    writeFileSync(join(nmrRun, 'best.json'), '{"epoch": 0}');
    await assert.rejects(run(['--run', nmrRun]), /history\.json: .*holds no epoch yet .*nmr train -r/);
    await assert.rejects(run([]), /give --run DIR/);
  } finally {
    console.log = log;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('test-time section: a line per method over the distributions, weights and means in the table', () => {
  const r = syntheticLongtail({ prl: true });
  const group = (top1: number) => ({ top1, many: null, medium: null, few: null });
  const distributions = Object.fromEntries(
    DISTRIBUTIONS.map((d, i) => [
      d,
      {
        ...group(0.5),
        weights: [0.2, 0.3, 0.5],
        aggregation: group(0.5),
        preference: [0.6, 0.3, 0.1],
        preference_search: group(0.55),
        prior_matching: { ...group(0.6 + i / 100), preference: [0.7, 0.2, 0.1], estimated_prior: [0.5, 0.5] },
        prior_adjusted: group(0.58),
        before: group(0.4),
        oracle: group(0.7),
      },
    ]),
  );
  r.test_time = { distributions } as never;
  const html = renderLongtailReport(r);
  const chart = chartsOf(html).testTime as LinesChart;
  assert.deepEqual(chart.xTicks, DISTRIBUTIONS);
  assert.deepEqual(
    chart.series.map((s) => s.label),
    [
      'before',
      'SADE aggregation',
      'preference search',
      'prior matching',
      'EM-adjusted scores',
      'oracle prior',
    ],
  );
  assertClose(
    chart.series[3]!.values as number[],
    DISTRIBUTIONS.map((_, i) => 0.6 + i / 100),
    1e-12,
  );
  const table = /<table class="numbers" id="test-time">[\s\S]*?<\/table>/.exec(html)![0];
  assert.ok(table.includes('<td>0.70/0.20/0.10</td>'), 'prior-matched preference');
  assert.ok(table.includes(`<b>${(100 * (0.6 + 0.05)).toFixed(2)}</b>`), 'mean of prior matching');
  // A run saved before prior matching existed shows only its methods.
  for (const d of Object.values(distributions) as Record<string, unknown>[]) {
    delete d.prior_matching;
    delete d.prior_adjusted;
  }
  const older = chartsOf(renderLongtailReport(r)).testTime as LinesChart;
  assert.equal(older.series.length, 4);
});
