import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, openSync, readFileSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeSyntheticDataset } from '../../src/nmr/data/generate.js';
import { resolveConfig, type NmrTrainConfig } from '../../src/nmr/train/config.js';
import { trainNmr, TrainingDivergedError } from '../../src/nmr/train/trainer.js';
import { loadDenoiser, denoiseSpectra } from '../../src/nmr/model/denoise.js';

const root = mkdtempSync(join(tmpdir(), 'nmr-train-'));
const data = join(root, 'data');
writeSyntheticDataset(data, 8, 3, { points: 512, levels: 3, ratio: 2 });

function tinyConfig(out: string, overrides: Record<string, unknown> = {}): NmrTrainConfig {
  return resolveConfig(
    {
      out,
      seed: 7,
      threads: 1,
      data: { train: data, valFraction: 0.25, crop: 128 },
      model: { channels: [4, 8, 8], dilations: [1, 2, 4], groups: 2, se: 'bottleneck', seReduction: 2 },
      stageA: { epochs: 2 },
      stageB: { epochs: 1, curriculumEpochs: 1 },
      optim: { lr: 3e-3, warmupEpochs: 1 },
      batchSamples: 2,
      stepsPerEpoch: 3,
      logEvery: 2,
      ...overrides,
    },
    root,
  );
}

test('a tiny stage-A run on a simulated set lowers the training and validation losses and writes checkpoints', () => {
  const lines: string[] = [];
  // Whole spectra, all 6 training samples per batch: the loss curve is smooth enough to test.
  const cfg = tinyConfig(join(root, 'lower'), {
    data: { train: data, valFraction: 0.25, crop: 0 },
    model: { channels: [8, 16, 16], dilations: [1, 2, 4], groups: 2, se: 'bottleneck', seReduction: 2 },
    stageA: { epochs: 8 },
    stageB: { epochs: 0 },
    batchSamples: 6,
    stepsPerEpoch: 2,
    logEvery: 1,
  });
  const r = trainNmr(cfg, { log: (l) => lines.push(l) });
  assert.equal(r.history.length, 8);
  const first = r.history[0]!;
  const last = r.history[7]!;
  // The network starts as the identity (zero head); training moves it towards the target.
  assert.ok(last.rec < 0.8 * first.rec, `training rec ${first.rec} -> ${last.rec}`);
  assert.ok(last.val.rec < 0.9 * first.val.rec, `validation rec ${first.val.rec} -> ${last.val.rec}`);
  assert.ok(
    last.val.energySnrDb > last.val.inputEnergySnrDb + 1,
    `energy SNR ${last.val.inputEnergySnrDb} -> ${last.val.energySnrDb} dB`,
  );
  assert.ok(
    lines.some((l) => /^\[A\] epoch 8\/8 loss [\d.e-]+ \(rec .* val rec .* energy SNR .* dB/.test(l)),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => /step 1\/2 loss .* lr .* \| [\d.]+ steps\/s, ETA \d+:\d\d$/.test(l)),
    'progress line within an epoch, with the pace and the time left',
  );
  assert.ok(
    lines.some((l) => /^\[A\] epoch 7\/8 .*\| [\d.]+ s, [\d.]+ steps\/s, ETA \d+:\d\d$/.test(l)),
    'each epoch but the last says the pace and the time left',
  );
  for (const f of ['last.json', 'last.safetensors', 'last.optim.safetensors', 'best.json', 'history.json'])
    assert.ok(existsSync(join(cfg.out, f)), f);
  const model = loadDenoiser(join(cfg.out, 'best.json'));
  assert.equal(denoiseSpectra(model, [new Float64Array(512)])[0]!.length, 512);
  model.dispose();
});

test('resume: 1 epoch + resume gives the same weights, optimizer state and history as an uninterrupted run', () => {
  const straight = tinyConfig(join(root, 'straight'));
  const a = trainNmr(straight, { log: () => {} });
  const split = tinyConfig(join(root, 'split'));
  trainNmr(split, { log: () => {}, stopAfterEpochs: 2 });
  const lines: string[] = [];
  const b = trainNmr(split, { log: (l) => lines.push(l), resume: join(split.out, 'last.json') });
  assert.ok(lines.some((l) => /resumed from .* after epoch 2\/3/.test(l)));
  assert.equal(b.history.length, 3);
  const strip = (h: typeof a.history) => h.map(({ seconds: _s, ...rest }) => rest);
  assert.deepEqual(strip(b.history), strip(a.history));
  assert.equal(a.history[2]!.stage, 'B');
  assert.ok(a.history[2]!.ratio > 0 && a.history[2]!.cons > 0, 'stage B uses the consistency and T terms');
  for (const f of ['last.safetensors', 'last.optim.safetensors'])
    assert.ok(readFileSync(join(straight.out, f)).equals(readFileSync(join(split.out, f))), `${f} identical`);
});

test('a non-finite loss stops training with a message that names the step and the remedy', () => {
  const bad = join(root, 'bad');
  writeSyntheticDataset(bad, 4, 4, { points: 512, levels: 3, ratio: 2 });
  // Poison one value of the stored truth, which is the training target with target = truth.
  const fd = openSync(join(bad, 'truth.f32'), 'r+');
  writeSync(fd, new Uint8Array(new Float32Array([NaN]).buffer), 0, 4, 40);
  closeSync(fd);
  const cfg = tinyConfig(join(root, 'bad-run'), {
    data: { train: bad, target: 'truth', valFraction: 0, crop: 0 },
  });
  assert.throws(
    () => trainNmr(cfg, { log: () => {} }),
    (e: Error) =>
      e instanceof TrainingDivergedError &&
      /loss is NaN at epoch 1 step \d+ .*Lower optim\.lr/.test(e.message),
  );
});

test('without validation samples best.json follows the schedule to its last epoch (stage B included)', () => {
  const lines: string[] = [];
  const cfg = tinyConfig(join(root, 'no-val'), { data: { train: data, valFraction: 0, crop: 128 } });
  const r = trainNmr(cfg, { log: (l) => lines.push(l) });
  assert.equal(r.history.length, 3);
  assert.equal(r.history[2]!.stage, 'B');
  // the stages' training losses weigh different terms: the lowest one is no reason to stop at A
  const best = JSON.parse(readFileSync(join(cfg.out, 'best.json'), 'utf8')) as { epoch: number };
  assert.equal(best.epoch, 2, 'best.json is the last epoch');
  assert.ok(
    readFileSync(join(cfg.out, 'best.safetensors')).equals(readFileSync(join(cfg.out, 'last.safetensors'))),
    'best and last hold the same weights',
  );
  assert.ok(lines.includes('no validation samples: best.json follows the schedule to its last epoch'));
  assert.ok(
    lines.some((l) => /^\[B\] epoch 3\/3 .*\| no validation \| [\d.]+ s$/.test(l)),
    lines.join('\n'),
  );
  assert.ok(!lines.some((l) => /NaN/.test(l)), 'no NaN in the epoch lines');
});

test("the validation loss that picks best.json weighs peaks alike in every epoch (stage B's peakWeightEnd ramp aside)", () => {
  // lr at its floor and no weight decay: the weights hardly move, so the validation loss of every
  // epoch is the same whatever stage B's peak weight ramps to
  const run = (name: string, peakWeightEnd: number) =>
    trainNmr(
      tinyConfig(join(root, name), {
        stageA: { epochs: 1 },
        stageB: { epochs: 2, curriculumEpochs: 1, peakWeightEnd },
        optim: { lr: 1e-8, weightDecay: 0, warmupEpochs: 0 },
      }),
      { log: () => {} },
    ).history.map((h) => h.val.rec);
  const flat = run('ramp-flat', 6);
  const steep = run('ramp-steep', 600);
  assert.equal(steep.length, 3);
  for (let e = 0; e < 3; e++)
    assert.ok(
      Math.abs(steep[e]! - flat[e]!) <= 1e-4 * flat[e]!,
      `epoch ${e + 1}: ${flat[e]} against ${steep[e]}`,
    );
});
