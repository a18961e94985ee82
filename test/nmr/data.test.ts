import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDir, npmDataDir, repoRoot } from '../helpers.js';
import { Rng } from '../../src/util/rng.js';
import { simulateSample, simulationAxis } from '../../src/nmr/data/simulate.js';
import { semiSyntheticSample, prepareReference } from '../../src/nmr/data/semisynthetic.js';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { Dataset } from '../../src/nmr/data/dataset.js';
import { evaluateDataset } from '../../src/nmr/eval/evaluate.js';
import { resolveConfig } from '../../src/nmr/train/config.js';
import { prepareSamples } from '../../src/nmr/train/samples.js';
import { readBrukerFid } from '../../src/nmr/io/bruker.js';
import { robustStd } from '../../src/nmr/stats.js';
import { pickPeaks } from '../../src/nmr/eval/peaks.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'tailor-nmr-data-'));

test('synthetic sample: reproducible, noise ladder sigma_k = sigma_0 / T^k, lines where the table says', () => {
  const options = { points: 8192, levels: 3, ratio: 2, snrRange: [10, 10] as [number, number] };
  const a = simulateSample(new Rng(4), options);
  const b = simulateSample(new Rng(4), options);
  assert.deepEqual(Array.from(a.spectra[0]!.subarray(0, 50)), Array.from(b.spectra[0]!.subarray(0, 50)));
  assert.equal(a.spectra.length, 3);
  for (const m of a.multiplets) assert.ok(m.from <= m.index && m.index <= m.to);
  const height = a.truth.reduce((x, v) => Math.max(x, v), 0);
  // Level noise measured far from any line, in truth units.
  const quiet = a.truthPeakMask.map((v) => (v ? 0 : 1));
  for (let k = 0; k < 3; k++) {
    const lv = a.levels[k]!;
    const resid: number[] = [];
    for (let i = 0; i < 8192; i++) if (quiet[i]) resid.push(a.spectra[k]![i]! / lv.scale - a.truth[i]!);
    const measured = robustStd(resid);
    assert.ok(Math.abs(measured / lv.sigma - 1) < 0.1, `level ${k}: noise ${measured} vs ${lv.sigma}`);
    assert.ok(Math.abs(lv.sigma - a.levels[0]!.sigma / 2 ** k) < 1e-12);
  }
  assert.ok(Math.abs(height / a.levels[0]!.sigma - 10) < 0.6, 'peak SNR of level 0 as asked');
  assert.equal(a.levels[2]!.shift, 0);
  // The tallest clean line sits where the line table puts one.
  const axis = simulationAxis(options);
  assert.ok(axis.ppmFirst > axis.ppmLast);
  const top = pickPeaks(a.truth, 0.5 * height)[0]!;
  assert.ok(
    a.lines.some((l) => Math.abs(l.index - top.index) < 1.5),
    'a true line at the tallest peak',
  );
  // The line table's areas add up to each multiplet's area, and to the integral of the truth over
  // the multiplet's region (within 10 %: Lorentzian tails, drift and neighbours blur it).
  for (const m of a.multiplets.filter((x) => x.kind === 'multiplet')) {
    const areaTable = a.lines.filter((l) => l.multiplet === m.id).reduce((s, l) => s + l.area, 0);
    assert.ok(Math.abs(areaTable - m.area) < 1e-9 * m.area, `multiplet ${m.id}: ${areaTable} vs ${m.area}`);
    let integral = 0;
    for (let i = m.from; i <= m.to; i++) integral += a.truth[i]!;
    assert.ok(
      Math.abs(integral / areaTable - 1) < 0.1,
      `multiplet ${m.id}: integral ${integral}, lines ${areaTable}`,
    );
  }
});

test('semi-synthetic sample from a real FID: noise added in the time domain follows the ladder', () => {
  const fid = readBrukerFid(join(dataDir, 'nmr/single/bruker/aspirin-1h/1'));
  const ref = prepareReference(fid, { points: 16384 });
  const s = semiSyntheticSample(new Rng(8), ref, { points: 16384, levels: 3, ratio: 2, snrRange: [20, 20] });
  const edge = 1500; // the outer ppm ranges of aspirin are empty
  for (let k = 0; k < 3; k++) {
    const x = s.spectra[k]!.map((v) => v / s.levels[k]!.scale);
    const tail = Float64Array.from([...x.subarray(0, edge)].map((v, i) => v - s.truth[i]!));
    const measured = robustStd(tail);
    assert.ok(
      Math.abs(measured / s.levels[k]!.sigma - 1) < 0.12,
      `level ${k}: ${measured} vs ${s.levels[k]!.sigma}`,
    );
  }
  assert.ok(Math.abs(ref.height / s.levels[0]!.sigma - 20) < 1e-9);
});

test('data set on disk: write, read back, shapes and metadata; bad manifests are named', () => {
  const dir = tmp();
  const manifest = writeSyntheticDataset(dir, 3, 5, { points: 1024, levels: 2, ratio: 3 });
  assert.equal(manifest.samples, 3);
  const ds = new Dataset(dir);
  assert.equal(ds.size, 3);
  const s = ds.sample(2);
  assert.equal(s.spectra.length, 2);
  assert.equal(s.spectra[1]!.length, 1024);
  assert.equal(s.meta.levels.length, 2);
  // float32 storage: the regenerated sample equals the stored one to float32 precision.
  const again = simulateSample(new Rng(new Rng(5).nextUint32()), { points: 1024, levels: 2, ratio: 3 });
  const first = ds.sample(0);
  for (let i = 0; i < 1024; i++) {
    assert.ok(
      Math.abs(first.spectra[1]![i]! - again.spectra[1]![i]!) <=
        1e-6 * Math.abs(again.spectra[1]![i]!) + 1e-30,
    );
    assert.ok(Math.abs(first.truth[i]! - again.truth[i]!) <= 1e-6 * Math.abs(again.truth[i]!) + 1e-30);
  }
  assert.throws(() => ds.sample(3), /out of range/);
  ds.close();
  const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, samples: 4 }));
  assert.throws(() => new Dataset(dir), /spectra\.f32: size: \d+ bytes, expected \d+/);
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...m, format: 'other' }));
  assert.throws(() => new Dataset(dir), /manifest\.json: format: expected 'tailor-nmr-multisnr'/);
  assert.throws(() => new Dataset(join(dir, 'missing')), /manifest\.json: file: not found/);
});

test('evaluation: baselines beat raw where they should, and fusion gains about 10 log10(21/16) dB over level K', () => {
  const dir = tmp();
  writeSyntheticDataset(dir, 10, 2, { points: 4096, levels: 3, ratio: 2, snrRange: [20, 40] });
  const ds = new Dataset(dir);
  const r = evaluateDataset(ds, { validationFraction: 0.2 });
  ds.close();
  assert.equal(r.validationSamples, 2);
  assert.equal(r.evaluatedSamples, 8);
  const raw0 = r.perLevel.raw![0]!;
  const rawK = r.perLevel.raw![2]!;
  assert.ok(
    rawK.energy_snr_db - raw0.energy_snr_db > 9 && rawK.energy_snr_db - raw0.energy_snr_db < 15,
    'two factors of 2 in SNR = 12 dB',
  );
  for (const name of ['savgol', 'matched', 'wavelet', 'tv', 'cadzow'])
    assert.ok(r.methods[name]!.energy_snr_db > raw0.energy_snr_db + 1, `${name} improves on raw`);
  // TV and Cadzow are tuned per level on the validation samples, like Savitzky-Golay.
  assert.equal(r.tuned.tv.length, 3);
  assert.equal(r.tuned.cadzow.length, 3);
  assert.ok(r.tuned.tv.every((t) => t.factor > 0) && r.tuned.cadzow.every((c) => c.rank >= 2));
  const gain = r.methods.fusion!.energy_snr_db - rawK.energy_snr_db;
  assert.ok(gain > 0.3 && gain < 2.5, `fusion over the best level: ${gain} dB`);
  assert.ok(Math.abs(r.pipeline.t_hat - 2) < 0.3);
  assert.equal(r.methods.raw!.snr_gain_db, 0);
});

test('CLI: nmr simulate writes a data set, nmr evaluate --json prints the methods table', () => {
  const dir = tmp();
  const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
  const sim = spawnSync(
    process.execPath,
    [
      cli,
      'nmr',
      'simulate',
      '--samples',
      '6',
      '--levels',
      '3',
      '--ratio',
      '2',
      '--points',
      '2048',
      '--seed',
      '1',
      '--out',
      dir,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(sim.status, 0, sim.stderr);
  assert.match(sim.stdout, /wrote 6 synthetic samples x 3 levels x 2048 points/);
  const ev = spawnSync(
    process.execPath,
    [cli, 'nmr', 'evaluate', '--data', dir, '--baselines', 'raw,fusion,savgol', '--json'],
    { encoding: 'utf8' },
  );
  assert.equal(ev.status, 0, ev.stderr);
  const report = JSON.parse(ev.stdout) as {
    methods: Record<string, { energy_snr_db: number; peak_f1: number; integral_rel_error: number }>;
  };
  assert.deepEqual(Object.keys(report.methods).sort(), ['fusion', 'raw', 'savgol']);
  // Inverse-variance fusion of three levels a factor 2 apart in noise sigma gains about
  // 10 log10(21) = 13 dB over the lowest-SNR input (weights that favour the noisy level: ~2 dB);
  // and the CLI reports what the library computes.
  assert.ok(
    report.methods.fusion!.energy_snr_db > report.methods.raw!.energy_snr_db + 9,
    `fusion ${report.methods.fusion!.energy_snr_db} dB vs raw ${report.methods.raw!.energy_snr_db} dB`,
  );
  const ds = new Dataset(dir);
  const direct = evaluateDataset(ds, { methods: ['raw', 'fusion', 'savgol'] });
  ds.close();
  for (const name of ['raw', 'fusion', 'savgol'])
    assert.equal(report.methods[name]!.energy_snr_db, direct.methods[name]!.energy_snr_db, name);
  const text = spawnSync(process.execPath, [cli, 'nmr', 'baseline', '--data', dir, '--baselines', 'raw'], {
    encoding: 'utf8',
  });
  assert.match(text.stdout, /input level 0 \(lowest SNR\)/);
  const bad = spawnSync(
    process.execPath,
    [cli, 'nmr', 'simulate', '--samples', '2', '--points', '1000', '--out', dir],
    { encoding: 'utf8' },
  );
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--points must be a power of two/);
  const missing = spawnSync(process.execPath, [cli, 'nmr', 'evaluate', '--data', join(dir, 'nope')], {
    encoding: 'utf8',
  });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /manifest\.json: file: not found/);
  const processed = spawnSync(
    process.execPath,
    [
      cli,
      'nmr',
      'process',
      '--input',
      join(npmDataDir('jcamp-data-test'), 'data/aspirin-1h.fid.dx'),
      '--out',
      join(dir, 'a.csv'),
    ],
    { encoding: 'utf8' },
  );
  assert.equal(processed.status, 0, processed.stderr);
  assert.match(
    readFileSync(join(dir, 'a.csv'), 'utf8').split('\n').slice(0, 4).join('\n'),
    /ppm,intensity\n1[56]\.\d+,/,
  );
});

test('training samples: normalized aligned stack, masks, leave-one-out pseudo truth, truth in the same units', () => {
  const dir = tmp();
  writeSyntheticDataset(dir, 2, 9, { points: 2048, levels: 3, ratio: 2, snrRange: [30, 30] });
  const ds = new Dataset(dir);
  const data = resolveConfig({ data: { train: dir } }, dir).data;
  const [s] = prepareSamples(ds, [0], data);
  ds.close();
  assert.equal(s!.levels.length, 3);
  assert.equal(s!.levels[0]!.length, 2048);
  // One factor per sample puts the level-0 target's largest value at 1.
  const maxAbs = s!.target.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  assert.ok(Math.abs(maxAbs - 1) < 1e-6);
  assert.deepEqual(s!.targets[0], s!.target);
  const error = (x: Float32Array, y: Float32Array): number => x.reduce((a, v, i) => a + (v - y[i]!) ** 2, 0);
  const energy = s!.truth!.reduce((a, v) => a + v * v, 0);
  // The highest level and the truth agree up to its noise.
  const errK = error(s!.levels[2]!, s!.truth!);
  assert.ok(errK < 0.2 * energy, `level K vs truth: ${errK} / ${energy}`);
  // The input's target is far cleaner than the input.
  assert.ok(error(s!.target, s!.truth!) < 0.2 * error(s!.levels[0]!, s!.truth!));
  // Leave one out: no level is fused into its own target, so the target's error does not follow
  // the level's noise, while it does follow the noise of the levels fused into it.
  const noiseCorrelation = (a: Float32Array, b: Float32Array): number => {
    const t = s!.truth!;
    let ab = 0;
    let aa = 0;
    let bb = 0;
    for (let i = 0; i < t.length; i++) {
      ab += (a[i]! - t[i]!) * (b[i]! - t[i]!);
      aa += (a[i]! - t[i]!) ** 2;
      bb += (b[i]! - t[i]!) ** 2;
    }
    return ab / Math.sqrt(aa * bb);
  };
  for (let k = 0; k < 3; k++) {
    const own = noiseCorrelation(s!.targets[k]!, s!.levels[k]!);
    const other = noiseCorrelation(s!.targets[k]!, s!.levels[(k + 1) % 3]!);
    assert.ok(
      Math.abs(own) < 0.1 && other > 0.3,
      `level ${k}: ${own} (own), ${other} (level ${(k + 1) % 3})`,
    );
  }
  for (let i = 0; i < 2048; i++) assert.ok(!(s!.peak[i] && s!.base[i]));
  assert.ok(Math.abs(s!.T - 2) < 0.5);
});
