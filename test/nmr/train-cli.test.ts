import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { run as train } from '../../src/cli/commands/nmr-train.js';
import { run as denoise } from '../../src/cli/commands/nmr-denoise.js';
import { run as ablate } from '../../src/cli/commands/nmr-ablate.js';
import { readCsvSpectrum } from '../../src/nmr/io/csv.js';
import { readJcamp } from '../../src/nmr/io/jcamp.js';
import { UserError } from '../../src/util/errors.js';
import { NmrDataError } from '../../src/nmr/io/errors.js';
import { NmrFidelityError, blendFidelity } from '../../src/nmr/model/denoise.js';
import { Dataset } from '../../src/nmr/data/dataset.js';
import { runTailor } from '../helpers.js';

const root = mkdtempSync(join(tmpdir(), 'nmr-cli-'));
const data = join(root, 'data');
writeSyntheticDataset(data, 6, 11, { points: 256, levels: 3, ratio: 2 });
const config = {
  out: join(root, 'run'),
  threads: 1,
  data: { train: data, valFraction: 0.2, crop: 64 },
  model: { channels: [4, 8, 8], dilations: [1, 2, 4], groups: 2, se: 'none' },
  stageA: { epochs: 1 },
  stageB: { epochs: 1 },
  optim: { warmupEpochs: 0 },
  batchSamples: 2,
  stepsPerEpoch: 2,
};
const configPath = join(root, 'config.json');
writeFileSync(configPath, JSON.stringify(config));

async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = () => {};
  try {
    return await fn();
  } finally {
    console.log = log;
  }
}

test('nmr train -c, resume with -r, then nmr denoise writes CSV and JCAMP-DX that read back', async () => {
  assert.equal(await quietly(() => train(['-c', configPath, '--epochs', '1,0'])), 0);
  assert.ok(existsSync(join(root, 'run', 'last.json')));
  assert.equal(await quietly(() => train(['-c', configPath, '-r', join(root, 'run', 'last.json')])), 0);
  const history = JSON.parse(readFileSync(join(root, 'run', 'history.json'), 'utf8')) as { stage: string }[];
  assert.deepEqual(
    history.map((h) => h.stage),
    ['A', 'B'],
  );
  const out = join(root, 'denoised');
  assert.equal(
    await quietly(() => denoise(['--model', join(root, 'run', 'best.json'), '--input', data, '--out', out])),
    0,
  );
  const csv = readCsvSpectrum(join(out, 'data-sample0000.denoised.csv'));
  const jdx = readJcamp(join(out, 'data-sample0000.denoised.jdx'));
  assert.equal(csv.real.length, 256);
  assert.equal(jdx.kind, 'spectrum');
  if (jdx.kind === 'spectrum') {
    const scale = Math.max(...csv.real.map(Math.abs));
    for (let i = 0; i < 256; i++) assert.ok(Math.abs(jdx.spectrum.real[i]! - csv.real[i]!) <= 1e-6 * scale);
    assert.ok(Math.abs(jdx.spectrum.ppmFirst - csv.ppmFirst) < 1e-8);
  }
  // --fidelity 1 gives the input back, 0.25 a quarter of the way from the output to it.
  const read = async (f: string) => {
    const dir = join(root, `fidelity-${f}`);
    const args = ['--model', join(root, 'run', 'best.json'), '--input', data, '--out', dir, '--fidelity', f];
    assert.equal(await quietly(() => denoise(args)), 0);
    return readCsvSpectrum(join(dir, 'data-sample0000.denoised.csv')).real;
  };
  const ds = new Dataset(data);
  const x0 = ds.sample(0).spectra[0]!;
  ds.close();
  const one = await read('1');
  const quarter = await read('0.25');
  const expected = blendFidelity(x0, csv.real, 0.25);
  const tol = 1e-5 * Math.max(...x0.map(Math.abs));
  for (let i = 0; i < 256; i++) {
    assert.ok(Math.abs(one[i]! - x0[i]!) <= tol, `point ${i}`);
    assert.ok(Math.abs(quarter[i]! - expected[i]!) <= tol, `point ${i}`);
  }
});

test('nmr train / denoise: user errors are UserErrors that name the problem', async () => {
  await assert.rejects(
    () => train([]),
    (e: Error) =>
      e instanceof UserError && /-c\/--config \(or --experiments \/ --samples\) is required/.test(e.message),
  );
  const bad = join(root, 'bad.json');
  writeFileSync(bad, JSON.stringify({ ...config, batchSamples: 0 }));
  await assert.rejects(
    () => train(['-c', bad]),
    (e: Error) => e instanceof UserError && /bad\.json: config\.batchSamples/.test(e.message),
  );
  await assert.rejects(
    () => denoise(['--model', join(root, 'nope.json'), '--input', data, '--out', root]),
    (e: Error) => e instanceof UserError && /nope\.json/.test(e.message),
  );
  for (const f of ['1.5', '-0.1', 'x'])
    await assert.rejects(
      () =>
        denoise([
          '--model',
          join(root, 'run', 'best.json'),
          '--input',
          data,
          '--out',
          root,
          `--fidelity=${f}`,
        ]),
      (e: Error) => e instanceof NmrFidelityError && e.message.includes(`fidelity ${f} is outside [0, 1]`),
      f,
    );
  // A missing data set and a one-level --experiments sample: named data errors, not stack traces.
  await assert.rejects(
    () => train(['-c', configPath, '--data', join(root, 'no-such-set')]),
    (e: Error) => e instanceof NmrDataError && /no-such-set: does not exist/.test(e.message),
  );
  await assert.rejects(
    () => train(['--experiments', 'a', '--out', join(root, 'one-level')]),
    (e: Error) => e instanceof NmrDataError && /needs at least two experiments/.test(e.message),
  );
  assert.equal(await quietly(() => train(['-c', configPath, '--params'])), 0);
});

test('nmr ablate: trains and scores the chosen ablation variants', async () => {
  const val = join(root, 'val');
  writeSyntheticDataset(val, 2, 12, { points: 256, levels: 3, ratio: 2 });
  const code = await quietly(() =>
    ablate([
      '-c',
      configPath,
      '--data',
      val,
      '--variants',
      'full,no-cons-T',
      '--epochs',
      '1,0',
      '--out',
      join(root, 'abl'),
    ]),
  );
  assert.equal(code, 0);
  const result = JSON.parse(readFileSync(join(root, 'abl', 'ablation', 'ablation.json'), 'utf8')) as {
    rows: {
      variant: string;
      model: { metrics: { energy_snr_db: number; peak_f1: number }; matchedEnergy: { k: number } };
      ladder: { energy_snr_db: number }[];
    }[];
  };
  assert.deepEqual(
    result.rows.map((r) => r.variant),
    ['full', 'no-cons-T'],
  );
  assert.ok(result.rows.every((r) => Number.isFinite(r.model.metrics.energy_snr_db)));
  // The variants train differently (no-cons-T drops two loss terms), so they score differently.
  assert.notEqual(result.rows[0]!.model.metrics.energy_snr_db, result.rows[1]!.model.metrics.energy_snr_db);
  // Scored by the yardstick: the raw ladder of all 3 levels and the level the model matches.
  assert.equal(result.rows[0]!.ladder.length, 3);
  assert.ok(Number.isFinite(result.rows[0]!.model.matchedEnergy.k));
  const table = readFileSync(join(root, 'abl', 'ablation', 'ablation.md'), 'utf8');
  assert.match(table, /\| no-cons-T \|/);
  // With the operating points: PR area, tuned F1 and recall at one false peak per spectrum.
  assert.match(table, /\| PR AUC \| tuned F1 \| recall at 1 false \/ spectrum \|/);
  // --seeds: each variant once per seed, then each variant's mean ± sample sd over them.
  const seeded = await quietly(() =>
    ablate([
      '-c',
      configPath,
      '--data',
      val,
      '--variants',
      'full',
      '--epochs',
      '1,0',
      '--seeds',
      '0,1',
      '--out',
      join(root, 'abl2'),
    ]),
  );
  assert.equal(seeded, 0);
  const twice = JSON.parse(readFileSync(join(root, 'abl2', 'ablation', 'ablation.json'), 'utf8')) as {
    seeds: number[];
    rows: { variant: string; seed: number; model: { metrics: { energy_snr_db: number } } }[];
  };
  assert.deepEqual(twice.seeds, [0, 1]);
  assert.deepEqual(
    twice.rows.map((r) => [r.variant, r.seed]),
    [
      ['full', 0],
      ['full', 1],
    ],
  );
  // Seed 0 is the config's own seed: the same run as above, to the bit (one thread).
  assert.equal(twice.rows[0]!.model.metrics.energy_snr_db, result.rows[0]!.model.metrics.energy_snr_db);
  assert.notEqual(twice.rows[1]!.model.metrics.energy_snr_db, twice.rows[0]!.model.metrics.energy_snr_db);
  const spread = readFileSync(join(root, 'abl2', 'ablation', 'ablation.md'), 'utf8');
  assert.match(spread, /\| full \(seed 1\) \|/);
  assert.match(spread, /\| full \| 0, 1 \| -?\d+\.\d\d ± \d+\.\d\d \|/);
  await assert.rejects(
    () => ablate(['-c', configPath, '--data', val, '--seeds', '1,1']),
    /--seeds 1,1: a seed is given twice/,
  );
  await assert.rejects(
    () => ablate(['-c', configPath, '--data', val, '--variants', 'nope']),
    /unknown variant 'nope'/,
  );
});

test('nmr train --quiet keeps the epoch lines and drops the step lines within an epoch', async () => {
  const lines: string[] = [];
  const capture = async (args: string[]) => {
    lines.length = 0;
    const log = console.log;
    console.log = (line: string) => void lines.push(line);
    try {
      return await train(args);
    } finally {
      console.log = log;
    }
  };
  const every = { ...config, out: join(root, 'loud'), stepsPerEpoch: 4, logEvery: 1 };
  const file = join(root, 'loud.json');
  writeFileSync(file, JSON.stringify(every));
  assert.equal(await capture(['-c', file, '--epochs', '2,0']), 0);
  assert.equal(lines.filter((l) => /^ {2}\[A\] epoch \d\/2 step \d\/4 /.test(l)).length, 6);
  assert.equal(await capture(['-c', file, '--epochs', '2,0', '--quiet', '--out', join(root, 'quiet')]), 0);
  assert.equal(lines.filter((l) => / step \d\/4 /.test(l)).length, 0);
  assert.equal(lines.filter((l) => /^\[A\] epoch \d\/2 loss /.test(l)).length, 2);
});

test('nmr denoise shows its progress on stderr (not with --quiet), and writes what one pass would', async () => {
  // the run trained by the first test; 70 spectra: more than one round of 64
  const many = join(root, 'many');
  writeSyntheticDataset(many, 70, 5, { points: 256, levels: 3, ratio: 2 });
  const model = join(root, 'run', 'best.json');
  const denoiseTo = (out: string, ...more: string[]) =>
    runTailor([
      'nmr',
      'denoise',
      '--model',
      model,
      '--input',
      many,
      '--out',
      join(root, out),
      '--force',
      ...more,
    ]);
  const loud = denoiseTo('loud-den');
  assert.equal(loud.code, 0, loud.err);
  assert.match(loud.err, /^denoise 70\/70 [\d.]+ spectra\/s ETA 0:00/m);
  assert.match(loud.out, /denoised 70 spectra in /);
  const quiet = denoiseTo('quiet-den', '--quiet');
  assert.equal(quiet.code, 0, quiet.err);
  assert.doesNotMatch(quiet.err, /^denoise /m);
  // the spectra of the second round are written, named as in one pass
  for (const name of ['many-sample0000', 'many-sample0069'])
    assert.ok(existsSync(join(root, 'quiet-den', `${name}.denoised.csv`)), name);
});
