// `tailor predict` against `tailor test-time-train` on one resampled test distribution: the
// distribution's images (backward50 by default) written out as PNG files in a folder, classified
// by predict with an adaptation, and the same method run by test-time-train on that distribution
// of the same checkpoint. The labels never reach predict; this script scores its output. The two
// top-1 accuracies should be equal: predict adapts with test-time-train's code.
//
//   npm run bench -- predict-parity -r RUN [--distribution backward50] [--adapt em-bcts] [--json]
//
// RUN must hold the full test set (trained without --test-per-class) for the distribution to be
// the published one.
import './lib/user-errors.js';
import { count } from './lib/options.js';
import { CliError } from '../src/cli/errors.js';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { loadRun } from '../src/longtail/index.js';
import { ADAPTATION_METHOD } from '../src/longtail/adapt/unlabeled.js';
import { testDistributionSubset } from '../src/longtail/data/longtail.js';
import type { ImageDataset } from '../src/longtail/data/types.js';

const { values: args } = parseArgs({
  options: {
    resume: { type: 'string', short: 'r' },
    distribution: { type: 'string', default: 'backward50' },
    adapt: { type: 'string', default: 'em-bcts' },
    epochs: { type: 'string', default: '5' },
    threads: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
  },
});
if (!args.resume)
  throw new CliError('give the run with -r RUN (an in-memory data set run, e.g. Fashion-MNIST-LT)');
const epochs = count('epochs', args.epochs!);
const threads = String(count('threads', args.threads!));
const root = new URL('../../', import.meta.url).pathname;
const tailor = join(root, 'bin/tailor');
const method = ADAPTATION_METHOD[args.adapt as keyof typeof ADAPTATION_METHOD];
if (!method) throw new CliError(`--adapt: one of ${Object.keys(ADAPTATION_METHOD).join(', ')}`);

const loaded = loadRun(args.resume);
const test = loaded.session.data.test as ImageDataset;
if (!('images' in test))
  throw new CliError('the run reads an image list; use a run on an in-memory data set');
const subset = testDistributionSubset(test.labels, args.distribution!, {
  trainCounts: loaded.session.data.trainCounts,
});
for (const m of Object.values(loaded.session.system.modules)) m.dispose();
const [channels, height, width] = test.shape;
const size = channels * height * width;

const dir = mkdtempSync(join(tmpdir(), 'tailor-bench-predict-parity-'));
try {
  const folder = join(dir, 'images');
  mkdirSync(folder);
  const labels: number[] = [];
  for (let k = 0; k < subset.indices.length; k++) {
    const i = subset.indices[k]!;
    labels.push(test.labels[i]!);
    const chw = test.images.subarray(i * size, (i + 1) * size);
    // PNG wants interleaved channels.
    const hwc = Buffer.alloc(size);
    for (let p = 0; p < height * width; p++)
      for (let c = 0; c < channels; c++) hwc[p * channels + c] = chw[c * height * width + p]!;
    const image = sharp(hwc, { raw: { width, height, channels: channels as 1 | 3 } });
    await (channels === 1 ? image.toColourspace('b-w') : image)
      .png()
      .toFile(join(folder, `${String(k).padStart(5, '0')}.png`));
  }
  const out = join(dir, 'predictions.jsonl');
  const predicted = spawnSync(
    tailor,
    [
      'predict',
      '-r',
      args.resume,
      '--input',
      folder,
      '--out',
      out,
      '--adapt',
      args.adapt!,
      '--epochs',
      args.epochs!,
      '--threads',
      threads,
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  if (predicted.status !== 0) throw new CliError(`tailor predict failed: ${predicted.stderr}`);
  const rows = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { top: { index: number }[] });
  const correct = rows.filter((r, k) => r.top[0]!.index === labels[k]).length;
  const predictTop1 = correct / rows.length;

  const config = join(dir, 'test-time.json');
  writeFileSync(
    config,
    JSON.stringify({
      methods: [method],
      distributions: [args.distribution],
      trainer: { epochs },
    }),
  );
  const tt = spawnSync(
    tailor,
    ['test-time-train', '-c', config, '-r', args.resume, '--threads', threads, '--json', '--quiet'],
    {
      encoding: 'utf8',
    },
  );
  if (tt.status !== 0) throw new CliError(`tailor test-time-train failed: ${tt.stderr}`);
  const entry = (
    JSON.parse(tt.stdout) as { distributions: Record<string, { methods: Record<string, { top1: number }> }> }
  ).distributions[args.distribution!]!;
  const testTimeTop1 = entry.methods[method]!.top1;
  const row = {
    distribution: args.distribution,
    images: rows.length,
    adapt: args.adapt,
    predict_top1: predictTop1,
    test_time_train_top1: testTimeTop1,
    equal: Math.abs(predictTop1 - testTimeTop1) < 0.5 / rows.length,
  };
  if (args.json) console.log(JSON.stringify(row));
  else
    console.log(
      `${row.distribution} (${row.images} images), --adapt ${row.adapt}: predict top-1 ${(100 * predictTop1).toFixed(2)} %, test-time-train ${(100 * testTimeTop1).toFixed(2)} %: ${row.equal ? 'equal' : 'DIFFERENT'}`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
