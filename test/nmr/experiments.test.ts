import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../src/util/rng.js';
import { simulateSample } from '../../src/nmr/data/simulate.js';
import { writeCsvSpectrum } from '../../src/nmr/io/csv.js';
import {
  experimentsJsonSchema,
  parseExperimentsArg,
  readExperimentsFile,
} from '../../src/nmr/data/experiments.js';
import { experimentSpectra } from '../../src/nmr/realstack.js';
import { run as train } from '../../src/cli/commands/nmr-train.js';
import { run as denoise } from '../../src/cli/commands/nmr-denoise.js';
import { run as yardstick } from '../../src/cli/commands/nmr-yardstick.js';
import { CliError } from '../../src/cli/errors.js';
import { checkDomain, type TrainingDomain } from '../../src/nmr/model/domain.js';

const root = mkdtempSync(join(tmpdir(), 'nmr-exp-'));

/** Writes the levels of simulated samples as CSV files; returns one '--experiments' list per sample. */
function writeSamples(count: number, seed: number, snrRange: [number, number] = [8, 16]): string[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, (_, s) => {
    const sample = simulateSample(rng, { points: 512, levels: 3, ratio: 2, snrRange });
    return sample.spectra
      .map((x, k) => {
        const path = join(root, `seed${seed}-s${s}-k${k}.csv`);
        writeCsvSpectrum(path, { real: x, ppmFirst: 11, ppmLast: -1, refMHz: 400, source: path }, 'test');
        return path;
      })
      .join(',');
  });
}

async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const log = console.log;
  const err = console.error;
  console.log = () => {};
  console.error = () => {};
  try {
    return await fn();
  } finally {
    console.log = log;
    console.error = err;
  }
}

test('parseExperimentsArg: commas separate experiments, + co-adds files', () => {
  assert.deepEqual(parseExperimentsArg('a,b+c,d', 0).experiments, ['a', ['b', 'c'], 'd']);
  assert.throws(() => parseExperimentsArg('only-one', 0), /at least two experiments/);
  assert.throws(() => parseExperimentsArg('a,,b', 0), /empty experiment/);
});

test('experiments file: zod errors name the field; the published schema is the current one', () => {
  const bad = join(root, 'bad.json');
  writeFileSync(bad, JSON.stringify({ size: 1000, samples: [{ experiments: ['x'] }] }));
  assert.throws(
    () => readExperimentsFile(bad),
    (e: Error) =>
      /bad\.json: size: expected a power of two/.test(e.message) &&
      /samples\[0\]\.experiments/.test(e.message),
  );
  const published = JSON.parse(
    readFileSync(new URL('../../../configs/schema/nmr-experiments.schema.json', import.meta.url), 'utf8'),
  ) as unknown;
  assert.deepEqual(published, JSON.parse(JSON.stringify(experimentsJsonSchema())));
  const good = join(root, 'good.json');
  writeFileSync(
    good,
    JSON.stringify({ ppm: [0, 10], samples: [{ experiments: ['a.csv', ['b.csv', 'c.csv']] }] }),
  );
  const spec = readExperimentsFile(good);
  assert.deepEqual(spec.samples[0]!.experiments, [
    join(root, 'a.csv'),
    [join(root, 'b.csv'), join(root, 'c.csv')],
  ]);
  assert.deepEqual(spec.options.ppmRange, [0, 10]);
});

test('a co-added experiment is the sum of its files', () => {
  const [list] = writeSamples(1, 1);
  const [a, b, c] = list!.split(',');
  const e = experimentSpectra([a!, [b!, c!]], { axis: 'index' });
  const single = experimentSpectra([b!, c!], { axis: 'index' });
  for (let i = 0; i < e.spectra[1]!.length; i += 37)
    assert.ok(Math.abs(e.spectra[1]![i]! - (single.spectra[0]![i]! + single.spectra[1]![i]!)) < 1e-9);
});

test('checkDomain: inside, outside (warn) and far outside (refuse) in noise and ppm range', () => {
  const domain: TrainingDomain = {
    relSigma: { p5: 0.01, p95: 0.02, min: 0.01, max: 0.02 },
    ppm: [-1, 11],
    points: [512, 512],
    samples: 4,
    levels: 3,
  };
  const rng = new Rng(2);
  const spectrum = (sigma: number, ppmFirst = 11, ppmLast = -1) => ({
    real: Float64Array.from({ length: 2048 }, (_, i) => (i === 700 ? 1 : 0) + sigma * rng.normal()),
    ppmFirst,
    ppmLast,
  });
  assert.equal(checkDomain(domain, spectrum(0.015)).verdict, 'inside');
  assert.equal(checkDomain(domain, spectrum(0.06)).verdict, 'outside');
  assert.equal(checkDomain(domain, spectrum(0.5)).verdict, 'far');
  assert.equal(checkDomain(domain, spectrum(0.015, 200, 0)).verdict, 'far');
});

test('nmr train --experiments on files, nmr denoise of one scan (refusing far-off inputs), nmr yardstick', async () => {
  const lists = writeSamples(4, 7);
  const out = join(root, 'run');
  const config = join(root, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      out,
      threads: 1,
      data: { train: 'unused', valFraction: 0.25, crop: 128 },
      model: { channels: [4, 8, 8], dilations: [1, 2, 4], groups: 2, se: 'none' },
      stageA: { epochs: 1, loss: { recOthers: 1 } },
      stageB: { epochs: 1, curriculumEpochs: 1 },
      optim: { warmupEpochs: 0 },
      batchSamples: 2,
      stepsPerEpoch: 2,
    }),
  );
  const args = lists.flatMap((l) => ['--experiments', l]);
  assert.equal(await quietly(() => train(['-c', config, ...args])), 0);
  assert.ok(existsSync(join(out, 'best.json')));
  const recorded = JSON.parse(readFileSync(join(out, 'experiments.json'), 'utf8')) as { samples: unknown[] };
  assert.equal(recorded.samples.length, 4);
  // One new low-SNR scan in.
  const [fresh] = writeSamples(1, 8);
  const scan = fresh!.split(',')[0]!;
  const den = join(root, 'den');
  assert.equal(
    await quietly(() => denoise(['--model', join(out, 'best.json'), '--input', scan, '--out', den])),
    0,
  );
  assert.ok(existsSync(join(den, `seed8-s0-k0.denoised.csv`)));
  // Far noisier than anything trained on: refused, unless forced.
  const [noisy] = writeSamples(1, 9, [0.05, 0.06]);
  const far = noisy!.split(',')[0]!;
  await assert.rejects(
    quietly(() => denoise(['--model', join(out, 'best.json'), '--input', far, '--out', den])),
    (e: unknown) =>
      e instanceof CliError &&
      /no line stands 5 sigma above the noise/.test(e.message) &&
      /--force/.test(e.message),
  );
  assert.equal(
    await quietly(() =>
      denoise(['--model', join(out, 'best.json'), '--input', far, '--out', den, '--force']),
    ),
    0,
  );
  // The yardstick on held-out real-file samples (against level K).
  const held = writeSamples(2, 10).flatMap((l) => ['--experiments', l]);
  const md = join(root, 'yard.md');
  assert.equal(
    await quietly(() =>
      yardstick(['--model', join(out, 'best.json'), ...held, '--out', md, '--baselines', 'raw,tv']),
    ),
    0,
  );
  const text = readFileSync(md, 'utf8');
  assert.match(text, /held-out high-SNR measurement/);
  assert.match(text, /\| model \(x0\)/);
});

test('pseudo targets leave each level out of its own target (never fused into itself)', async () => {
  const { prepareRecords } = await import('../../src/nmr/train/samples.js');
  const { resolveConfig } = await import('../../src/nmr/train/config.js');
  const rng = new Rng(12);
  const sample = simulateSample(rng, {
    points: 1024,
    levels: 3,
    ratio: 2,
    snrRange: [20, 30],
    maxShiftPoints: 0,
  });
  // A spike that only level 1 has.
  const spectra = sample.spectra.map((x) => Float64Array.from(x));
  let max = 0;
  for (const v of spectra[1]!) max = Math.max(max, Math.abs(v));
  const at = 5;
  spectra[1]![at]! += 0.5 * max;
  const cfg = { ...resolveConfig({ data: { train: 'x', rescale: 'none' } }, '/tmp').data, T: 2 };
  const record = (x: Float64Array[]) => ({
    name: 't',
    spectra: x,
    truth: null,
    truthPeakMask: null,
    scaleK: 1,
    ratio: 2,
    ppmFirst: 11,
    ppmLast: -1,
    refMHz: 400,
  });
  const [p] = prepareRecords([record(spectra)], cfg);
  const [q] = prepareRecords([record(sample.spectra)], cfg);
  // targets[1] with and without the spike agree up to the per-sample unit; targets[0] does not.
  const residual = (a: Float32Array, b: Float32Array): number => {
    let ab = 0;
    let bb = 0;
    for (let i = 0; i < a.length; i++) {
      ab += a[i]! * b[i]!;
      bb += b[i]! * b[i]!;
    }
    const c = ab / bb;
    return Math.abs(a[at]! - c * b[at]!) / Math.max(...Array.from(a, Math.abs));
  };
  assert.ok(residual(p!.targets[1]!, q!.targets[1]!) < 0.01, 'level 1 is not in its own target');
  assert.ok(residual(p!.targets[0]!, q!.targets[0]!) > 0.05, 'level 1 is in the target of level 0');
  assert.deepEqual(p!.target, p!.targets[0]);
});
