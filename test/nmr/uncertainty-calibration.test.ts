import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { UNet1d } from '../../src/nmr/model/unet.js';
import { loadDenoiserInfo, modelMetadata } from '../../src/nmr/model/denoise.js';
import {
  NmrCalibrationDataError,
  NmrCalibrationFactorError,
  saveScaleCalibration,
  type ScaleCalibration,
} from '../../src/nmr/model/calibration.js';
import { calibrateScale } from '../../src/nmr/eval/calibrate.js';
import { coverageOf, confidentPeaks } from '../../src/nmr/eval/coverage.js';
import { chooseConfidenceRule, scoreConfidence, type LabelledPeak } from '../../src/nmr/eval/confidence.js';
import { CheckpointError } from '../../src/util/errors.js';
import type { Context } from '../../src/nmr/eval/yard-context.js';
import type { YardSample } from '../../src/nmr/eval/yardstick.js';

const SMALL = { channels: [4, 8, 8], dilations: [1, 2, 4], groups: 2, se: 'none' as const };

const CALIBRATION: ScaleCalibration = {
  factor: 0.41,
  coverage: 0.9,
  rawCoverage: 0.986,
  data: 'runs/nmr/y-test',
  samples: 12,
  confidence: { definition: 'snr', cut: 1.17 },
  fitted: '2026-01-01T00:00:00.000Z',
};

test('a scale calibration round-trips through the checkpoint sidecar; the weights file is untouched', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nmr-cal-'));
  const model = new UNet1d({ ...SMALL, scaleHead: true });
  torch.saveCheckpoint(join(dir, 'best'), {
    weights: model.stateDict(),
    metadata: modelMetadata(model.config),
    torchRng: false,
    extra: { config: { name: 'x' } },
  });
  model.dispose();
  const weights = readFileSync(join(dir, 'best.safetensors'));
  const before = loadDenoiserInfo(join(dir, 'best.json'));
  assert.equal(before.calibration, null);
  before.model.dispose();
  saveScaleCalibration(join(dir, 'best.json'), CALIBRATION);
  const after = loadDenoiserInfo(join(dir, 'best.safetensors'));
  assert.deepEqual(after.calibration, CALIBRATION);
  after.model.dispose();
  assert.deepEqual(readFileSync(join(dir, 'best.safetensors')), weights);
  // The training's own extra data stays beside it.
  const sidecar = JSON.parse(readFileSync(join(dir, 'best.json'), 'utf8'));
  assert.deepEqual(sidecar.extra.config, { name: 'x' });
  // A factor that is not finite is refused before anything is written.
  for (const factor of [NaN, Infinity, 0, -1])
    assert.throws(
      () => saveScaleCalibration(join(dir, 'best.json'), { ...CALIBRATION, factor }),
      NmrCalibrationFactorError,
    );
  // An edited sidecar names the field.
  sidecar.extra.calibration.factor = 'big';
  writeFileSync(join(dir, 'best.json'), JSON.stringify(sidecar));
  assert.throws(
    () => loadDenoiserInfo(join(dir, 'best.json')),
    (e: Error) => e instanceof CheckpointError && /extra\.calibration\.factor/.test(e.message),
  );
});

test('coverageOf with a stored factor; confidence scores on hand-made peaks', () => {
  // Errors 0.05, 0.15, ..., 0.95 against a scale of 1 / ln 10: ratios 0.05 .. 0.95.
  const n = 10;
  const truth = new Float64Array(n);
  const y = Float64Array.from({ length: n }, (_, i) => (i + 0.5) / 10);
  const scale = new Float64Array(n).fill(1 / Math.LN10);
  const ctx = {
    truth,
    sigmaIn: 1,
    hzPerPoint: 1,
    peakMask: new Uint8Array(n),
    baselineMask: [],
    multiplets: [],
  } as unknown as Context;
  const c = coverageOf(y, scale, ctx, 0.5, 0.3);
  assert.equal(c.all, 1);
  assert.equal(c.calibrated, 0.5);
  assert.ok(Math.abs(c.stored - 0.3) < 1e-12 && c.storedFactor === 0.3);
  assert.ok(Number.isNaN(coverageOf(y, scale, ctx).stored));
  // Three real peaks and one false one; by height over 3 sigma the false one ranks second lowest.
  const peak = (height: number, scaleAt: number, real: boolean): LabelledPeak => ({
    height,
    scale: scaleAt,
    sigma: 1,
    real,
  });
  const peaks = [peak(10, 1, true), peak(6, 1, true), peak(4, 0.5, true), peak(5, 2, false)];
  const snr = scoreConfidence(peaks, { definition: 'snr', cut: 5.5 / 3 }, 1);
  assert.equal(snr.rocAuc, 2 / 3);
  assert.equal(snr.falseFlagged, 1);
  assert.equal(snr.realFlagged, 1 / 3);
  // Average precision: true at ranks 1, 2 and 4 -> (1 + 1 + 3/4) / 3.
  assert.ok(Math.abs(snr.prAuc - 2.75 / 3) < 1e-12);
  // By height over the scale the false peak (5 / 2) ranks last: the interval rule wins.
  const interval = scoreConfidence(peaks, { definition: 'interval', cut: 1 }, 1);
  assert.equal(interval.rocAuc, 1);
  assert.deepEqual(chooseConfidenceRule(peaks, 1), { definition: 'interval', cut: 1 });
  // confidentPeaks applies the factor to the scale and the rule's cut.
  const spectrum = Float64Array.from({ length: 64 }, (_, i) => 2 / (1 + ((i - 30) / 2) ** 2));
  const [top] = confidentPeaks(spectrum, new Float64Array(64).fill(1), 0.3, 0.5);
  assert.ok(Math.abs(top!.confidence - 2 / (0.5 * Math.LN10)) < 1e-6 && !top!.low);
  assert.ok(
    confidentPeaks(spectrum, new Float64Array(64).fill(1), 0.3, 1, { definition: 'snr', cut: 10 })[0]!.low,
  );
});

test('calibrateScale refuses too few samples and samples without truth', () => {
  const model = new UNet1d({ ...SMALL, scaleHead: true });
  const sample = (truth: Float64Array | null): YardSample => ({
    name: 'set#0',
    spectra: [new Float64Array(256), new Float64Array(256)],
    truth,
    truthPeakMask: truth ? new Uint8Array(256) : null,
    regions: null,
    trueSigmas: truth ? [1, 0.5] : null,
    scaleK: 1,
    hzPerPoint: 1,
  });
  assert.throws(
    () => calibrateScale(model, [sample(null)], 'set'),
    (e: Error) => e instanceof NmrCalibrationDataError && /at least 2/.test(e.message),
  );
  assert.throws(
    () => calibrateScale(model, [sample(null), sample(null)], 'set'),
    (e: Error) =>
      e instanceof NmrCalibrationDataError && /no true spectrum.*tailor nmr simulate/.test(e.message),
  );
  model.dispose();
});
