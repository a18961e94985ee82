import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../../src/util/rng.js';
import { tvDenoise } from '../../src/nmr/eval/tv.js';
import { cadzowDenoise } from '../../src/nmr/eval/cadzow.js';
import { energySnrCorrected, matchLevel, runYardstick } from '../../src/nmr/eval/yardstick.js';
import { datasetYardSamples } from '../../src/nmr/eval/yard-data.js';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { formatYardstick } from '../../src/report/nmr-yardstick.js';

/** The TV objective 1/2 ||x - y||^2 + lambda sum |x_{i+1} - x_i|. */
function tvObjective(x: ArrayLike<number>, y: ArrayLike<number>, lambda: number): number {
  let v = 0;
  for (let i = 0; i < y.length; i++) v += 0.5 * (x[i]! - y[i]!) ** 2;
  for (let i = 0; i + 1 < y.length; i++) v += lambda * Math.abs(x[i + 1]! - x[i]!);
  return v;
}

test('tvDenoise: identity at lambda 0, the mean for a huge lambda, and a minimum of the objective', () => {
  const rng = new Rng(3);
  const y = Float64Array.from({ length: 60 }, (_, i) => (i > 20 && i < 35 ? 2 : 0) + 0.3 * rng.normal());
  assert.deepEqual(Array.from(tvDenoise(y, 0)), Array.from(y));
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  for (const v of tvDenoise(y, 1e6)) assert.ok(Math.abs(v - mean) < 1e-9);
  const lambda = 0.4;
  const x = tvDenoise(y, lambda);
  const best = tvObjective(x, y, lambda);
  // No small perturbation of the solution (single points, or whole runs) does better.
  for (let trial = 0; trial < 400; trial++) {
    const p = Float64Array.from(x);
    const from = rng.int(y.length);
    const to = Math.min(y.length, from + 1 + rng.int(10));
    const d = (rng.uniform() - 0.5) * 0.05;
    for (let i = from; i < to; i++) p[i]! += d;
    assert.ok(tvObjective(p, y, lambda) >= best - 1e-12, `trial ${trial}`);
  }
  // The step survives as a plateau and the noise is gone from the flat parts.
  assert.ok(x[27]! > 1.2 && Math.abs(x[5]!) < 0.3);
});

test('cadzowDenoise keeps a low-rank signal and removes much of white noise from Lorentzian lines', () => {
  const n = 512;
  const clean = Float64Array.from({ length: n }, (_, i) => Math.cos(0.3 * i) * Math.exp(-0.002 * i));
  const kept = cadzowDenoise(clean, { rank: 2, window: 64 });
  for (let i = 0; i < n; i++) assert.ok(Math.abs(kept[i]! - clean[i]!) < 1e-6, `point ${i}`);
  const rng = new Rng(5);
  const lines = Float64Array.from(
    { length: n },
    (_, i) => 1 / (1 + ((i - 200) / 3) ** 2) + 0.6 / (1 + ((i - 330) / 4) ** 2),
  );
  const noisy = lines.map((v) => v + 0.08 * rng.normal());
  const out = cadzowDenoise(noisy, { rank: 4, window: 64 });
  const err = (y: ArrayLike<number>): number => lines.reduce((a, v, i) => a + (y[i]! - v) ** 2, 0);
  assert.ok(err(out) < 0.6 * err(noisy), `${err(out)} vs ${err(noisy)}`);
});

test('matchLevel interpolates inside the raw ladder, extrapolates energy SNR and bounds F1', () => {
  const ladder = [0, 6, 12];
  const m = matchLevel(9, ladder, 2, 'energy');
  assert.equal(m.bound, '');
  assert.ok(Math.abs(m.k - 1.5) < 1e-12);
  assert.ok(Math.abs(m.timeFactor - 2 ** 3) < 1e-9);
  const beyond = matchLevel(12 + 20 * Math.log10(2), ladder, 2, 'energy');
  assert.ok(Math.abs(beyond.k - 3) < 1e-9 && Math.abs(beyond.timeFactor - 64) < 1e-6);
  assert.ok(matchLevel(-3, ladder, 2, 'energy').k < 0);
  const f1 = [0.5, 0.8, 0.9];
  assert.deepEqual(matchLevel(0.95, f1, 2, 'f1').bound, '>');
  assert.deepEqual(matchLevel(0.4, f1, 2, 'f1').bound, '<');
  assert.ok(Math.abs(matchLevel(0.85, f1, 2, 'f1').k - 1.5) < 1e-9);
});

test('energySnrCorrected removes the held-out reference noise from both energies', () => {
  const rng = new Rng(9);
  const n = 20000;
  const s = Float64Array.from({ length: n }, (_, i) => Math.sin(i / 50));
  const sigmaRef = 0.3;
  const r = s.map((v) => v + sigmaRef * rng.normal());
  const y = s.map((v) => v + 0.1 * rng.normal());
  let es = 0;
  let ee = 0;
  for (let i = 0; i < n; i++) {
    es += s[i]! ** 2;
    ee += (y[i]! - s[i]!) ** 2;
  }
  const trueDb = 10 * Math.log10(es / ee);
  const naive = energySnrCorrected(y, r, 0);
  const corrected = energySnrCorrected(y, r, sigmaRef);
  assert.ok(Math.abs(corrected - trueDb) < 0.5, `${corrected} vs ${trueDb}`);
  assert.ok(naive < trueDb - 5);
});

test('runYardstick: the raw ladder rises about 20 log10 T per level and raw x0 matches level 0', () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'nmr-yard-')), 'data');
  writeSyntheticDataset(dir, 8, 4, { points: 1024, levels: 3, ratio: 2, snrRange: [10, 20] });
  const { samples, ratio } = datasetYardSamples(dir);
  const report = runYardstick(samples, {
    baselines: ['raw', 'tv', 'cadzow'],
    ratio,
    validationFraction: 0.25,
    // The raw scan with the noise sigma of x0 as its scale: a Gaussian error under a Laplace
    // interval of +- sigma ln 10 = 2.3 sigma covers about 98 % of the points.
    methods: [
      {
        name: 'scaled',
        stack: false,
        run: (pre) => pre.spectra[0]!,
        scale: (pre) => new Float64Array(pre.spectra[0]!.length).fill(pre.sigmas[0]!),
        calibration: { factor: 0.5, confidence: { definition: 'snr', cut: 1.2 } },
      },
    ],
  });
  assert.equal(report.samples, 6);
  assert.equal(report.validationSamples, 2);
  const truth = report.references.find((r) => r.reference === 'truth')!;
  const heldOut = report.references.find((r) => r.reference === 'held-out level K')!;
  assert.equal(truth.ladder.length, 3);
  assert.equal(heldOut.ladder.length, 2);
  for (let k = 1; k < 3; k++) {
    const step = truth.ladder[k]!.energy_snr_db - truth.ladder[k - 1]!.energy_snr_db;
    assert.ok(step > 4 && step < 8, `level ${k}: +${step} dB`);
  }
  const raw = truth.methods.find((m) => m.name === 'raw')!;
  assert.ok(Math.abs(raw.matchedEnergy.k) < 1e-9 && raw.timeUnits === 1);
  // Fusion uses every level: it is scored against the truth only, with the time of all levels.
  const fusion = truth.methods.find((m) => m.stack)!;
  assert.equal(fusion.timeUnits, 1 + 4 + 16);
  assert.ok(!heldOut.methods.some((m) => m.stack));
  // The held-out reference (noise-corrected) agrees with the truth on the raw input to a few dB.
  assert.ok(Math.abs(heldOut.ladder[0]!.energy_snr_db - truth.ladder[0]!.energy_snr_db) < 2);
  // Operating points: raw x0 is level 0's spectrum, so its sweep is the ladder's first.
  assert.equal(truth.ladderOperating.length, 3);
  assert.deepEqual(raw.operating, truth.ladderOperating[0]);
  for (const m of truth.methods) {
    assert.ok(m.operating.auc >= 0 && m.operating.auc <= 1, m.name);
    assert.ok(m.operating.tuned !== null && m.operating.atFalseRate.length === 2, m.name);
  }
  // Cleaner levels find at least as many peaks at one false peak per spectrum.
  const at1 = truth.ladderOperating.map((o) => o.atFalseRate[0]!.recall);
  assert.ok(at1[2]! >= at1[0]! - 1e-9, at1.join(' '));
  const text = formatYardstick(report);
  assert.match(text, /PR AUC/);
  const scaled = truth.methods.find((m) => m.name === 'scaled')!.coverage90!;
  assert.ok(scaled.all > 0.95 && scaled.all < 1, String(scaled.all));
  // The factor fitted on the tuning samples brings it near 90 %.
  assert.ok(scaled.factor < 1 && Math.abs(scaled.calibrated - 0.9) < 0.05, JSON.stringify(scaled));
  assert.ok(!heldOut.methods.find((m) => m.name === 'scaled')!.coverage90);
  // The stored factor (half the scale) covers less; the stored confidence rule is the one in use.
  assert.ok(scaled.storedFactor === 0.5 && scaled.stored < scaled.all, JSON.stringify(scaled));
  assert.deepEqual(scaled.confidence!.rule, { definition: 'snr', cut: 1.2 });
  assert.deepEqual(
    scaled.confidence!.scores.map((c) => c.definition),
    ['interval', 'snr'],
  );
  assert.match(text, /peak confidence/);
  assert.match(text, /\| scaled \(x0\) \| 0\.9\d\d \|/);
  assert.match(text, /raw level 2 \| 16x/);
  assert.match(text, /tv \(x0\)/);
});
