import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { UNet1d } from '../../src/nmr/model/unet.js';
import { laplaceNll } from '../../src/nmr/train/losses.js';
import {
  LAPLACE_90,
  confidentPeaks,
  coverageOf,
  errorRatios,
  factorFor90,
} from '../../src/nmr/eval/coverage.js';
import { NmrUncertaintyError, denoiseSpectra, denoiseWithScale } from '../../src/nmr/model/denoise.js';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { run as train } from '../../src/cli/commands/nmr-train.js';
import { run as denoise } from '../../src/cli/commands/nmr-denoise.js';
import { run as calibrate } from '../../src/cli/commands/nmr-calibrate.js';
import { NmrCalibrationDataError } from '../../src/nmr/model/calibration.js';
import { readCsvSpectrum } from '../../src/nmr/io/csv.js';
import { Rng } from '../../src/util/rng.js';
import { NmrConfigError } from '../../src/nmr/train/config.js';
import type { Context } from '../../src/nmr/eval/yard-context.js';

const SMALL = { channels: [4, 8, 8], dilations: [1, 2, 4], groups: 2, se: 'none' as const };

test('scale head: starts at 5 % of the input maximum, same spectrum as without it', () => {
  const withHead = new UNet1d({ ...SMALL, scaleHead: true });
  const x = torch.tensor(
    Float32Array.from({ length: 2 * 64 }, (_, i) => Math.sin(i / 3) * (i < 64 ? 2 : 0.5)),
    {
      shape: [2, 64],
    },
  );
  const { mean, logScale } = withHead.forwardWithScale(x);
  assert.deepEqual(logScale.shape, [2, 64]);
  const s = logScale.toFloat32Array();
  const max = [2, 0.5].map((a, n) =>
    Math.max(...Array.from({ length: 64 }, (_, i) => Math.abs(a * Math.sin((n * 64 + i) / 3)))),
  );
  for (let i = 0; i < 128; i++)
    assert.ok(Math.abs(Math.exp(s[i]!) - 0.05 * max[i < 64 ? 0 : 1]!) < 1e-4, `point ${i}`);
  // The untrained network is the identity with or without the head.
  assert.deepEqual(Array.from(mean.toFloat32Array()), Array.from(withHead.forward(x).toFloat32Array()));
  const plain = new UNet1d(SMALL);
  assert.throws(() => plain.forwardWithScale(x), /no scale head/);
  assert.throws(() => denoiseWithScale(plain, [new Float64Array(64)], 'plain.json'), NmrUncertaintyError);
  const r = denoiseWithScale(withHead, [new Float64Array(64).fill(1)]);
  assert.ok(Math.abs(r.scales[0]![10]! - 0.05) < 1e-6);
  assert.deepEqual(
    Array.from(r.spectra[0]!),
    Array.from(denoiseSpectra(withHead, [new Float64Array(64).fill(1)])[0]!),
  );
  torch.dispose([x, mean, logScale]);
  withHead.dispose();
  plain.dispose();
});

test('laplaceNll is mean |y - t| / b + log b and is smallest at b = |y - t|', () => {
  const y = torch.tensor(Float32Array.from([1, 2, 3, 4]), { shape: [1, 4] });
  const t = torch.tensor(Float32Array.from([1.5, 2, 2, 4.25]), { shape: [1, 4] });
  const s = torch.tensor(Float32Array.from([0, Math.log(2), 0, Math.log(0.25)]), { shape: [1, 4] });
  const expected = (0.5 / 1 + 0 + 0 / 2 + Math.log(2) + 1 / 1 + 0 + 0.25 / 0.25 + Math.log(0.25)) / 4;
  assert.ok(Math.abs(laplaceNll(y, t, s).item() - expected) < 1e-6);
  // For one point with error e, the minimum over b is at b = e.
  const at = (b: number) => {
    const sb = torch.tensor(Float32Array.from([Math.log(b)]), { shape: [1, 1] });
    const v = laplaceNll(
      torch.tensor(Float32Array.from([0]), { shape: [1, 1] }),
      torch.tensor(Float32Array.from([0.3]), { shape: [1, 1] }),
      sb,
    ).item();
    return v;
  };
  assert.ok(at(0.3) < at(0.25) && at(0.3) < at(0.36));
});

test('coverageOf: Laplace errors of the predicted scale cover 90 %; confidentPeaks marks weak tops', () => {
  const rng = new Rng(2);
  const n = 20000;
  const truth = new Float64Array(n);
  const b = Float64Array.from({ length: n }, (_, i) => (i < n / 2 ? 0.1 : 0.4));
  // Laplace draws: sign x exponential.
  const y = Float64Array.from(
    truth,
    (v, i) => v + (rng.uniform() < 0.5 ? -1 : 1) * -Math.log(1 - rng.uniform()) * b[i]!,
  );
  const peakMask = Uint8Array.from({ length: n }, (_, i) => (i % 4 === 0 ? 1 : 0));
  const ctx = { truth, sigmaIn: 0.2, hzPerPoint: 1, peakMask, baselineMask: [], multiplets: [] } as Context;
  const c = coverageOf(y, b, ctx);
  assert.ok(Math.abs(c.all - 0.9) < 0.01, String(c.all));
  assert.ok(Math.abs(c.peak - 0.9) < 0.02, String(c.peak));
  assert.ok(Math.abs(c.meanScaleSigma - 1.25) < 1e-9);
  // Too small a scale under-covers; the factor fitted on other draws (the first half) restores 90 %.
  const small = b.map((v) => v / 3);
  assert.ok(coverageOf(y, small, ctx).all < 0.6);
  const half = (a: Float64Array) => a.subarray(0, n / 2);
  const factor = factorFor90(errorRatios(half(y), half(small), { ...ctx, truth: half(truth) }));
  assert.ok(Math.abs(factor - 3) < 0.15, String(factor));
  const fixed = coverageOf(y, small, ctx, factor);
  assert.ok(Math.abs(fixed.calibrated - 0.9) < 0.02 && fixed.factor === factor, String(fixed.calibrated));
  const spectrum = Float64Array.from(
    { length: 100 },
    (_, i) => 2 / (1 + ((i - 30) / 2) ** 2) + 0.5 / (1 + ((i - 70) / 2) ** 2),
  );
  const peaks = confidentPeaks(spectrum, new Float64Array(100).fill(0.3), 0.1);
  assert.equal(peaks.length, 2);
  // The other line's tail adds about 0.001 to the height.
  assert.ok(Math.abs(peaks[0]!.confidence - 2 / (0.3 * LAPLACE_90)) < 1e-2 && !peaks[0]!.low);
  assert.ok(peaks[1]!.low, 'a 0.5 top with a 90 % half-width of 0.69 may not be real');
});

test('nmr denoise --uncertainty writes the scale and rated peaks, calibrated after nmr calibrate; a model without the head refuses', async () => {
  const root = mkdtempSync(join(tmpdir(), 'nmr-unc-'));
  const data = join(root, 'data');
  writeSyntheticDataset(data, 6, 11, { points: 256, levels: 3, ratio: 2 });
  const config = (out: string, scaleHead: boolean, nll: number) => ({
    out: join(root, out),
    threads: 1,
    data: { train: data, valFraction: 0.2, crop: 64 },
    model: { ...SMALL, scaleHead },
    stageA: { epochs: 1, loss: { nll } },
    stageB: { epochs: 0 },
    optim: { warmupEpochs: 0 },
    batchSamples: 2,
    stepsPerEpoch: 2,
  });
  const write = (name: string, c: object) => {
    writeFileSync(join(root, name), JSON.stringify(c));
    return join(root, name);
  };
  const log = console.log;
  console.log = () => {};
  try {
    await assert.rejects(
      () => train(['-c', write('bad.json', config('bad', false, 0.1))]),
      (e: Error) =>
        e instanceof NmrConfigError && /loss\.nll: the Laplace NLL trains the scale head/.test(e.message),
    );
    assert.equal(await train(['-c', write('scale.json', config('scale', true, 0.1))]), 0);
    assert.equal(await train(['-c', write('plain.json', config('plain', false, 0))]), 0);
    const out = join(root, 'den');
    assert.equal(
      await denoise([
        '--model',
        join(root, 'scale', 'best.json'),
        '--input',
        data,
        '--out',
        out,
        '--uncertainty',
      ]),
      0,
    );
    const scale = readCsvSpectrum(join(out, 'data-sample0000.scale.csv'));
    assert.equal(scale.real.length, 256);
    assert.ok(scale.real.every((v) => v > 0));
    assert.ok(existsSync(join(out, 'data-sample0000.scale.jdx')));
    const peaks = readFileSync(join(out, 'data-sample0000.peaks.csv'), 'utf8').split('\n');
    assert.equal(peaks[1], 'ppm,height,scale,confidence,flag');
    assert.match(peaks[0]!, /uncalibrated/);
    // Calibrated on the first 2 samples, the written scale is the raw one times the stored factor.
    const model = join(root, 'scale', 'best.json');
    await assert.rejects(
      () => calibrate(['--model', model, '--data', data, '--samples', '1']),
      (e: Error) => e instanceof NmrCalibrationDataError && /at least 2/.test(e.message),
    );
    const lines: string[] = [];
    console.log = (line: string) => lines.push(line);
    assert.equal(await calibrate(['--model', model, '--data', data, '--samples', '2']), 0);
    const factor = Number(/factor ([\d.e-]+);/.exec(lines.join('\n'))![1]);
    assert.ok(factor > 0, lines.join('\n'));
    const calibrated = join(root, 'den-cal');
    assert.equal(await denoise(['--model', model, '--input', data, '--out', calibrated, '--uncertainty']), 0);
    assert.match(lines.at(-2)!, /scale calibrated: factor [\d.]+ fitted on 2 samples of/);
    const scaled = readCsvSpectrum(join(calibrated, 'data-sample0000.scale.csv')).real;
    scale.real.forEach((b, i) => assert.ok(Math.abs(scaled[i]! / b / factor - 1) < 2e-3, `point ${i}`));
    assert.match(readFileSync(join(calibrated, 'data-sample0000.peaks.csv'), 'utf8'), /scale calibrated/);
    await assert.rejects(
      () => calibrate(['--model', join(root, 'plain', 'best.json'), '--data', data]),
      NmrUncertaintyError,
    );
    await assert.rejects(
      () =>
        denoise([
          '--model',
          join(root, 'plain', 'best.json'),
          '--input',
          data,
          '--out',
          out,
          '--uncertainty',
        ]),
      (e: Error) => e instanceof NmrUncertaintyError && /trained without the scale head/.test(e.message),
    );
  } finally {
    console.log = log;
  }
});
