// The page of a `tailor predict` output, from a summary written by hand: the priors and the
// confidence histogram reach the charts, thumbnails are embedded for images inside the input root
// only, names are escaped, and a bad summary is an error naming the field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { predictionsPage, readPredictionSummary } from '../../src/report/index.js';
import { renderPage } from '../../src/report/html.js';
import type { LinesChart } from '../../src/report/types.js';
import { HOSTILE_NAME } from './fixtures.js';

function summary(root: string, examplePaths: string[]) {
  return {
    kind: 'predictions',
    run: 'runs/prl',
    checkpoint: 'runs/prl/checkpoint-last.json',
    input: root,
    input_root: root,
    input_kind: 'folder',
    streamed: false,
    output: 'out.csv',
    n: 10,
    mode: 'em-bcts',
    chosen: { prior: [0.7, 0.3] },
    calibration: { kind: 'bcts', temperature: 1.2, source: 'results.json' },
    top_k: 2,
    classes: 2,
    class_names: ['cat', HOSTILE_NAME],
    training_prior: [0.9, 0.1],
    estimated_prior: [0.7, 0.3],
    predicted_counts: { cat: 7, [HOSTILE_NAME]: 3 },
    confidence_histogram: { bins: 4, counts: [0, 1, 3, 6] },
    examples: [examplePaths.map((path, k) => ({ path, probability: 0.9 - k / 10 })), []],
    converted: 0,
    skipped: 0,
    seconds: 1.5,
  };
}

test('prediction page: charts, thumbnails inside the input root only, escaping', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-predictions-page-'));
  try {
    const root = join(dir, 'images');
    mkdirSync(root);
    await sharp(Buffer.alloc(12 * 12 * 3, 200), { raw: { width: 12, height: 12, channels: 3 } })
      .png()
      .toFile(join(root, 'a.png'));
    // Outside the root: never read, even though it exists.
    await sharp(Buffer.alloc(12 * 12 * 3, 10), { raw: { width: 12, height: 12, channels: 3 } })
      .png()
      .toFile(join(dir, 'secret.png'));
    const file = join(dir, 'out.csv');
    writeFileSync(
      `${file}.summary.json`,
      JSON.stringify(summary(root, ['a.png', '../secret.png', 'gone.png'])),
    );
    const page = await predictionsPage(file);
    const prior = page.charts.prior as LinesChart;
    assert.deepEqual(prior.series[0]!.values, [0.9, 0.1]);
    assert.deepEqual(prior.series[1]!.values, [0.7, 0.3]);
    assert.deepEqual(prior.series[2]!.values, [0.7, 0.3]);
    assert.deepEqual((page.charts.confidence as LinesChart).series[0]!.values, [0, 1, 3, 6]);
    const html = renderPage(page);
    assert.equal(html.match(/<img src="data:image\/png;base64,/g)?.length, 1);
    assert.match(html, /2 image\(s\) could not be read/);
    assert.ok(!html.includes(HOSTILE_NAME), 'class names are escaped');
    assert.ok(!html.includes('secret.png"'), 'no image outside the input root');
    // The summary path itself works as well.
    assert.equal(readPredictionSummary(`${file}.summary.json`).n, 10);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('prediction page: an index-only input and bad summaries', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-predictions-page-'));
  try {
    const file = join(dir, 'idx.jsonl');
    const s = summary(dir, []);
    writeFileSync(
      `${file}.summary.json`,
      JSON.stringify({ ...s, input_kind: 'idx', examples: [[{ index: 3, probability: 0.8 }], []] }),
    );
    assert.match(renderPage(await predictionsPage(file)), /has no image files to show/);

    const bad = (patch: Record<string, unknown>, pattern: RegExp) => {
      writeFileSync(`${file}.summary.json`, JSON.stringify({ ...s, ...patch }));
      return assert.rejects(predictionsPage(file), pattern);
    };
    await bad({ kind: 'longtail' }, /field 'kind' is "longtail", not "predictions"/);
    await bad({ estimated_prior: [1] }, /field 'estimated_prior' has 1 entries for 2 classes/);
    await bad({ class_names: ['one'] }, /field 'class_names' has 1 names for 2 classes/);
    await bad(
      { confidence_histogram: { counts: [1, -1] } },
      /confidence_histogram\.counts\[1\]' is -1, below 0/,
    );
    await assert.rejects(predictionsPage(join(dir, 'none.csv')), /none\.csv\.summary\.json: no such file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
