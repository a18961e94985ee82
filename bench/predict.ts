// `tailor predict` end to end on the Fashion-MNIST test images written out as PNG files: the
// whole process (start, loading the run, decoding, the model's passes, the adaptation, writing the
// outputs), as a user runs it. The target: 10,000 images with --adapt em-bcts under 60 s on
// the 2-core machine.
//
//   npm run bench -- predict -r RUN [--n 10000] [--adapt em-bcts] [--threads 2] [--json]
import './lib/user-errors.js';
import { count } from './lib/options.js';
import { CliError } from '../src/cli/errors.js';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { readIdx } from '../src/longtail/data/idx.js';

const { values: args } = parseArgs({
  options: {
    resume: { type: 'string', short: 'r' },
    n: { type: 'string', default: '10000' },
    adapt: { type: 'string', default: 'em-bcts' },
    threads: { type: 'string', default: '2' },
    images: { type: 'string', default: '/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz' },
    json: { type: 'boolean', default: false },
  },
});
if (!args.resume)
  throw new CliError('give the run with -r RUN (e.g. one trained on configs/fmnist_lt_ir100_prl.json)');
const wanted = count('n', args.n!);
const threads = count('threads', args.threads!);
const root = new URL('../../', import.meta.url).pathname;
const tailor = join(root, 'bin/tailor');

const { dims, data } = readIdx(args.images);
const n = Math.min(wanted, dims[0]!);
const plane = dims[1]! * dims[2]!;
const dir = mkdtempSync(join(tmpdir(), 'tailor-bench-predict-'));
try {
  const folder = join(dir, 'images');
  // A hundred images per subfolder, as a photo collection would be split.
  for (let k = 0; k < n; k++) {
    const sub = join(folder, String(Math.floor(k / 100)).padStart(3, '0'));
    if (k % 100 === 0) mkdirSync(sub, { recursive: true });
    await sharp(Buffer.from(data.subarray(k * plane, (k + 1) * plane)), {
      raw: { width: dims[2]!, height: dims[1]!, channels: 1 },
    })
      .toColourspace('b-w')
      .png()
      .toFile(join(sub, `${String(k).padStart(5, '0')}.png`));
  }
  const out = join(dir, 'predictions.csv');
  const start = performance.now();
  const r = spawnSync(
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
      '--threads',
      String(threads),
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  const seconds = (performance.now() - start) / 1000;
  if (r.status !== 0) throw new CliError(`tailor predict failed (${r.status}): ${r.stderr}`);
  const summary = JSON.parse(readFileSync(`${out}.summary.json`, 'utf8')) as { n: number; seconds: number };
  const row = {
    n: summary.n,
    adapt: args.adapt,
    threads,
    cores: cpus().length,
    seconds,
  };
  if (args.json) console.log(JSON.stringify(row));
  else
    console.log(
      `tailor predict --adapt ${row.adapt}: ${row.n} PNG images in ${seconds.toFixed(1)} s end to end (${(row.n / seconds).toFixed(0)} img/s; ${row.threads} threads, ${row.cores} cores; in-process ${summary.seconds.toFixed(1)} s)`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
