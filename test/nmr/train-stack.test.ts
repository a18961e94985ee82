// The stack model end to end: training on the clean-spectrum target with all levels as input,
// scoring with evaluate (once per sample, like fusion) and denoising a data set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { Dataset } from '../../src/nmr/data/dataset.js';
import { resolveConfig } from '../../src/nmr/train/config.js';
import { trainNmr } from '../../src/nmr/train/trainer.js';
import { prepareSamples } from '../../src/nmr/train/samples.js';
import { loadDenoiser, modelDenoiser } from '../../src/nmr/model/denoise.js';
import { evaluateDataset } from '../../src/nmr/eval/evaluate.js';
import { run as denoise } from '../../src/cli/commands/nmr-denoise.js';
import { readCsvSpectrum } from '../../src/nmr/io/csv.js';
import { CliError } from '../../src/cli/errors.js';

const root = mkdtempSync(join(tmpdir(), 'nmr-stack-'));
const data = join(root, 'data');
writeSyntheticDataset(data, 8, 5, { points: 256, levels: 3, ratio: 2 });

test('stack model: trains against the truth, evaluate scores it once per sample, denoise needs a data set', async () => {
  const lines: string[] = [];
  const cfg = resolveConfig(
    {
      out: join(root, 'run'),
      seed: 1,
      threads: 1,
      data: { train: data, valFraction: 0.25, crop: 0, target: 'truth' },
      model: { channels: [4, 8], dilations: [1, 2], groups: 2, se: 'none', inputLevels: 3 },
      stageA: { epochs: 2, loss: { cons: 0.5, ratio: 0.2 } },
      stageB: { epochs: 0 },
      optim: { lr: 1e-3, warmupEpochs: 0 },
      batchSamples: 3,
      stepsPerEpoch: 2,
    },
    root,
  );
  const r = trainNmr(cfg, { log: (l) => lines.push(l) });
  assert.ok(lines.some((l) => /stack input: the model sees all 3 levels/.test(l)));
  // Consistency and T are not defined for one output per sample: reported as 0, no NaN.
  assert.ok(r.history.every((h) => h.cons === 0 && h.ratio === 0 && Number.isFinite(h.loss)));
  // It starts at the fusion, far above the level-0 input.
  assert.ok(r.history[0]!.val.energySnrDb > r.history[0]!.val.inputEnergySnrDb + 3);

  const model = loadDenoiser(r.bestCheckpoint);
  assert.equal(model.config.inputLevels, 3);
  const ds = new Dataset(data);
  const report = evaluateDataset(ds, {
    methods: ['raw', 'fusion'],
    extraMethods: { model: modelDenoiser(model) },
    stackMethods: ['model'],
  });
  ds.close();
  assert.equal(report.perLevel.model!.length, 1, 'one entry, as for fusion');
  // Scored on its stack output, the model keeps its lead over the level-0 input.
  assert.ok(
    report.methods.model!.energy_snr_db > report.methods.raw!.energy_snr_db + 3,
    `model ${report.methods.model!.energy_snr_db} dB vs input ${report.methods.raw!.energy_snr_db} dB`,
  );

  const wrong = resolveConfig(
    { ...cfg, out: join(root, 'wrong'), model: { ...cfg.model, inputLevels: 2 } },
    root,
  );
  assert.throws(() => trainNmr(wrong, { log: () => {} }), /inputLevels: 2, but .* K\+1 = 3/);

  const out = join(root, 'denoised');
  const log = console.log;
  console.log = () => {};
  try {
    assert.equal(await denoise(['--model', r.bestCheckpoint, '--input', data, '--out', out]), 0);
  } finally {
    console.log = log;
  }
  assert.ok(existsSync(join(out, 'data-sample0000.denoised.jdx')));
  assert.equal(readCsvSpectrum(join(out, 'data-sample0000.denoised.csv')).real.length, 256);
  await assert.rejects(
    denoise([
      '--model',
      r.bestCheckpoint,
      '--input',
      join(out, 'data-sample0000.denoised.csv'),
      '--out',
      out,
    ]),
    (e: unknown) =>
      e instanceof CliError && /denoises stacks of 3 levels; .* a single spectrum/.test(e.message),
  );
  model.dispose();
});

test("data.peakMask 'truth': the loss masks are the simulator's peak mask and its complement eroded by 2", () => {
  const ds = new Dataset(data);
  const base = resolveConfig({ data: { train: data, target: 'truth' } }, root).data;
  const [estimate] = prepareSamples(ds, [0], base);
  const [truth] = prepareSamples(ds, [0], { ...base, peakMask: 'truth' });
  const mask = ds.sample(0).truthPeakMask;
  ds.close();
  assert.deepEqual(Array.from(truth!.peak), Array.from(mask));
  for (let i = 0; i < mask.length; i++) {
    // Baseline only where no true peak lies within 2 points.
    let near = false;
    for (let j = Math.max(0, i - 2); j <= Math.min(mask.length - 1, i + 2); j++) near ||= mask[j] === 1;
    assert.equal(truth!.base[i], near ? 0 : 1, `point ${i}`);
  }
  assert.notDeepEqual(Array.from(estimate!.peak), Array.from(truth!.peak));
  assert.throws(
    () => resolveConfig({ data: { train: data, peakMask: 'both' } }, root),
    /config\.data\.peakMask: expected one of estimate, truth/,
  );
});
