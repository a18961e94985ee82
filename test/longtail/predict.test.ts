// tailor predict end to end on a tiny Fashion-MNIST-LT PRL run, through the real CLI: a folder of
// PNG files (one of another size, one corrupt), each output format, the summary, the adaptations
// and the bad inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { runTailor } from '../helpers.js';
import { loadRun } from '../../src/longtail/index.js';
import type { ImageDataset } from '../../src/longtail/data/types.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

const tailor = (...args: string[]) => runTailor(args);

/** Six 28x28 grey PNGs, a 40x30 RGB one in a subfolder, and a corrupt one. */
async function writeImages(dir: string): Promise<void> {
  mkdirSync(join(dir, 'sub'), { recursive: true });
  for (let i = 0; i < 6; i++) {
    const pixels = Buffer.alloc(28 * 28);
    for (let k = 0; k < pixels.length; k++) pixels[k] = (k * 7 + i * 31) % 256;
    await sharp(pixels, { raw: { width: 28, height: 28, channels: 1 } })
      .toColourspace('b-w')
      .png()
      .toFile(join(dir, `img${i}.png`));
  }
  await sharp(Buffer.alloc(40 * 30 * 3, 120), { raw: { width: 40, height: 30, channels: 3 } })
    .png()
    .toFile(join(dir, 'sub', 'large.png'));
  writeFileSync(join(dir, 'corrupt.png'), 'not a png at all');
}

// float64 probabilities; the searched preference is a float32 softmax.
const sumsToOne = (ps: number[], tolerance = 1e-9) => Math.abs(ps.reduce((s, v) => s + v, 0) - 1) < tolerance;

test('predict on a folder of PNGs', { skip: !fmnistAvailable && 'Fashion-MNIST not installed' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-predict-'));
  try {
    const run = join(dir, 'prl');
    const trained = tailor(
      'train',
      '-c',
      'configs/fmnist_lt_ir100_prl.json',
      '--epochs',
      '1',
      '--train-max-per-class',
      '12',
      '--test-per-class',
      '4',
      '--quiet',
      '--out',
      run,
    );
    assert.equal(trained.code, 0, trained.err);
    const images = join(dir, 'images');
    await writeImages(images);
    const predict = (out: string, ...args: string[]) =>
      tailor('predict', '-r', run, '--input', images, '--out', join(dir, out), '--epochs', '1', ...args);

    // The help names every adaptation.
    const help = tailor('predict', '--help');
    assert.equal(help.code, 0);
    for (const m of ['none', 'em', 'em-bcts', 'bbse', 'prior', 'aggregation', 'preference'])
      assert.match(help.out, new RegExp(`^\\s+${m}\\s`, 'm'), m);

    // The corrupt image is a named error; nothing is written.
    const corrupt = predict('bad.csv');
    assert.equal(corrupt.code, 2);
    assert.match(corrupt.err, /corrupt\.png/);
    assert.match(corrupt.err, /--skip-bad/);
    assert.ok(!existsSync(join(dir, 'bad.csv')));
    // --strict refuses the image of another size and names it.
    const strict = predict('strict.csv', '--skip-bad', '--strict');
    assert.equal(strict.code, 2);
    assert.match(strict.err, /large\.png: 40x30 with 3 channel\(s\)/);
    assert.ok(!existsSync(join(dir, 'strict.csv')));

    // --adapt none, CSV: every readable image, top-3, one warning line for the converted image.
    const none = predict('none.csv', '--skip-bad', '--top-k', '3');
    assert.equal(none.code, 0, none.err);
    assert.equal(none.err.match(/warning: 1 image\(s\) converted/g)?.length, 1);
    assert.match(none.err, /1 unreadable image\(s\) skipped/);
    const lines = readFileSync(join(dir, 'none.csv'), 'utf8').trim().split('\n');
    assert.equal(lines[0], 'path,class_1,probability_1,class_2,probability_2,class_3,probability_3');
    assert.deepEqual(
      lines.slice(1).map((l) => l.split(',')[0]),
      ['img0.png', 'img1.png', 'img2.png', 'img3.png', 'img4.png', 'img5.png', 'sub/large.png'],
    );
    const s0 = JSON.parse(readFileSync(join(dir, 'none.csv.summary.json'), 'utf8'));
    assert.equal(s0.mode, 'none');
    assert.equal(s0.n, 7);
    assert.equal(s0.skipped, 1);
    assert.equal(s0.converted, 1);
    assert.match(s0.skipped_files[0].file, /corrupt\.png$/);
    assert.equal(s0.calibration.kind, 'temperature');
    assert.ok(s0.calibration.temperature > 0);
    assert.equal(s0.class_names.length, 10);
    assert.equal(s0.training_prior.length, 10);
    assert.ok(sumsToOne(s0.training_prior));
    assert.ok(sumsToOne(s0.estimated_prior));
    assert.equal(
      Object.values(s0.predicted_counts as Record<string, number>).reduce((a, b) => a + b, 0),
      7,
    );
    assert.ok(s0.seconds > 0);

    // Its page: thumbnails of the predicted images, written beside the output.
    const page = tailor('report', '--predictions', join(dir, 'none.csv'));
    assert.equal(page.code, 0, page.err);
    const html = readFileSync(join(dir, 'none.csv.report.html'), 'utf8');
    assert.ok((html.match(/<img src="data:image\/png;base64,/g)?.length ?? 0) >= 1);
    assert.match(html, /Class prior of the input/);

    // --adapt em, JSON Lines with every class: the probabilities sum to 1; the summary has EM's prior.
    const em = predict('em.jsonl', '--skip-bad', '--adapt', 'em', '--top-k', '10');
    assert.equal(em.code, 0, em.err);
    // The input has no labels: no accuracy line of the pool is printed.
    assert.doesNotMatch(em.err, /^input: before/m);
    const rows = readFileSync(join(dir, 'em.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(rows.length, 7);
    for (const r of rows) {
      assert.equal(r.top.length, 10);
      assert.ok(sumsToOne(r.top.map((t: { probability: number }) => t.probability)), r.path);
      assert.equal(typeof r.top[0].class, 'string');
      // Best first.
      assert.ok(r.top[0].probability >= r.top[9].probability);
    }
    const s1 = JSON.parse(readFileSync(join(dir, 'em.jsonl.summary.json'), 'utf8'));
    assert.equal(s1.mode, 'em');
    assert.equal(s1.chosen.prior.length, 10);
    assert.ok(sumsToOne(s1.chosen.prior));

    // PRL: the preference search and prior matching choose a preference; JSON output.
    for (const adapt of ['preference', 'prior']) {
      const r = predict(`${adapt}.json`, '--skip-bad', '--adapt', adapt);
      assert.equal(r.code, 0, r.err);
      const out = JSON.parse(readFileSync(join(dir, `${adapt}.json`), 'utf8'));
      assert.equal(out.length, 7);
      assert.equal(out[0].top.length, 5);
      const s = JSON.parse(readFileSync(join(dir, `${adapt}.json.summary.json`), 'utf8'));
      assert.equal(s.mode, adapt);
      assert.equal(s.chosen.preference.length, 3);
      assert.ok(sumsToOne(s.chosen.preference, 1e-6), `${s.chosen.preference}`);
    }

    // An image list (paths relative to its folder, labels ignored) and an idx file of images.
    writeFileSync(join(images, 'list.txt'), 'img1.png 0\nsub/large.png 3\n');
    const list = tailor(
      'predict',
      '-r',
      run,
      '--input',
      join(images, 'list.txt'),
      '--out',
      join(dir, 'l.csv'),
    );
    assert.equal(list.code, 0, list.err);
    const listed = readFileSync(join(dir, 'l.csv'), 'utf8').trim().split('\n');
    assert.deepEqual(
      listed.slice(1).map((l) => l.split(',')[0]),
      ['img1.png', 'sub/large.png'],
    );
    const idx = join(dir, 'three-ubyte');
    const header = Buffer.from([0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 28, 0, 0, 0, 28]);
    writeFileSync(idx, Buffer.concat([header, Buffer.alloc(3 * 28 * 28, 77)]));
    const fromIdx = tailor('predict', '-r', run, '--input', idx, '--out', join(dir, 'idx.jsonl'));
    assert.equal(fromIdx.code, 0, fromIdx.err);
    const idxRows = readFileSync(join(dir, 'idx.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      idxRows.map((r) => r.index),
      [0, 1, 2],
    );

    // The same code as test-time-train: on the run's own test images written out as PNG files (the
    // uniform distribution is that whole pool, in that order), EM after BCTS estimates the same
    // prior and SADE's aggregation finds the same weights.
    const pool = join(dir, 'pool');
    mkdirSync(pool);
    const loaded = loadRun(run);
    const testSet = loaded.session.data.test as ImageDataset;
    const plane = 28 * 28;
    for (let k = 0; k < testSet.labels.length; k++)
      await sharp(Buffer.from(testSet.images.subarray(k * plane, (k + 1) * plane)), {
        raw: { width: 28, height: 28, channels: 1 },
      })
        .toColourspace('b-w')
        .png()
        .toFile(join(pool, `${String(k).padStart(4, '0')}.png`));
    for (const m of Object.values(loaded.session.system.modules)) m.dispose();
    const ttConfig = join(dir, 'tt.json');
    writeFileSync(
      ttConfig,
      JSON.stringify({
        methods: ['em_bcts', 'aggregation'],
        distributions: ['uniform'],
        trainer: { epochs: 1 },
      }),
    );
    const tt = tailor('test-time-train', '-c', ttConfig, '-r', run, '--json', '--quiet');
    assert.equal(tt.code, 0, tt.err);
    const uniform = JSON.parse(tt.out).distributions.uniform;
    for (const [adapt, expected, key] of [
      ['em-bcts', uniform.methods.em_bcts.estimated_prior, 'prior'],
      ['aggregation', uniform.weights, 'weights'],
    ] as const) {
      const r = tailor(
        'predict',
        '-r',
        run,
        '--input',
        pool,
        '--out',
        join(dir, `pool-${adapt}.csv`),
        '--adapt',
        adapt,
        '--epochs',
        '1',
        '--quiet',
      );
      assert.equal(r.code, 0, r.err);
      const s = JSON.parse(readFileSync(join(dir, `pool-${adapt}.csv.summary.json`), 'utf8'));
      assert.equal(s.converted, 0);
      const chosen = s.chosen[key] as number[];
      assert.equal(chosen.length, expected.length);
      chosen.forEach((v, i) =>
        assert.ok(Math.abs(v - expected[i]) < 1e-6, `${adapt} ${chosen} vs ${expected}`),
      );
    }

    // A pool over --pool-memory is streamed (decoded again on every pass): the same predictions
    // as held in memory, for a one-pass method and for the aggregation's epochs over two views.
    for (const adapt of ['em-bcts', 'aggregation']) {
      const streamed = tailor(
        'predict',
        '-r',
        run,
        '--input',
        pool,
        '--out',
        join(dir, `streamed-${adapt}.csv`),
        '--adapt',
        adapt,
        '--epochs',
        '1',
        '--pool-memory',
        '0',
      );
      assert.equal(streamed.code, 0, streamed.err);
      assert.match(streamed.err, /streamed: over --pool-memory/);
      assert.equal(
        readFileSync(join(dir, `streamed-${adapt}.csv`), 'utf8'),
        readFileSync(join(dir, `pool-${adapt}.csv`), 'utf8'),
        adapt,
      );
      const s = JSON.parse(readFileSync(join(dir, `streamed-${adapt}.csv.summary.json`), 'utf8'));
      assert.equal(s.streamed, true);
      assert.equal(
        s.confidence_histogram.counts.reduce((a: number, b: number) => a + b, 0),
        s.n,
      );
    }

    // A PNG whose header reads but whose pixels are cut off: named without --skip-bad, and with it
    // left out alike whether the pool is held in memory or streamed.
    const cut = join(dir, 'cut');
    mkdirSync(cut);
    for (const f of ['img0.png', 'img1.png']) copyFileSync(join(images, f), join(cut, f));
    const whole = readFileSync(join(images, 'img2.png'));
    writeFileSync(join(cut, 'truncated.png'), whole.subarray(0, Math.floor(whole.length / 2)));
    for (const memory of ['1024', '0']) {
      const strictCut = tailor(
        'predict',
        '-r',
        run,
        '--input',
        cut,
        '--out',
        join(dir, 'cut.csv'),
        '--pool-memory',
        memory,
      );
      assert.equal(strictCut.code, 2, `${memory}: ${strictCut.err}`);
      assert.match(strictCut.err, /truncated\.png/);
      const skipping = tailor(
        'predict',
        '-r',
        run,
        '--input',
        cut,
        '--out',
        join(dir, `cut-${memory}.csv`),
        '--pool-memory',
        memory,
        '--skip-bad',
      );
      assert.equal(skipping.code, 0, skipping.err);
      const kept = readFileSync(join(dir, `cut-${memory}.csv`), 'utf8')
        .trim()
        .split('\n');
      assert.deepEqual(
        kept.slice(1).map((l) => l.split(',')[0]),
        ['img0.png', 'img1.png'],
      );
      const s = JSON.parse(readFileSync(join(dir, `cut-${memory}.csv.summary.json`), 'utf8'));
      assert.equal(s.skipped, 1);
      assert.equal(s.n, 2);
    }

    // A fixed preference of the wrong length, an empty folder, a run without weights: named errors.
    const wrong = predict('wrong.csv', '--skip-bad', '--preference', '0.5,0.5');
    assert.equal(wrong.code, 2);
    assert.match(wrong.err, /--preference has 2 weights but the run has 3 experts/);
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const e = tailor('predict', '-r', run, '--input', empty, '--out', join(dir, 'empty.csv'));
    assert.equal(e.code, 2);
    assert.match(e.err, /no PNG or JPEG images/);
    const bare = join(dir, 'bare');
    mkdirSync(bare);
    copyFileSync(join(run, 'checkpoint-last.json'), join(bare, 'checkpoint-last.json'));
    const w = tailor('predict', '-r', bare, '--input', images, '--out', join(dir, 'bare.csv'));
    assert.equal(w.code, 2);
    assert.match(w.err, /safetensors, which is missing/);
    for (const f of ['wrong.csv', 'empty.csv', 'bare.csv']) assert.ok(!existsSync(join(dir, f)), f);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
