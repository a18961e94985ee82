import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';
import {
  baselineCurvature,
  consistencyL1,
  derivativeL1,
  diff2,
  peakWeightedL1,
  residualRatioLoss,
  SEED_LOSS_WEIGHTS,
  totalLoss,
} from '../../src/nmr/train/losses.js';
import { readExperimentsFile } from '../../src/nmr/data/experiments.js';
import { loadConfig, MAX_CONFIG_BYTES, NmrConfigError, resolveConfig } from '../../src/nmr/train/config.js';
import { readdirSync } from 'node:fs';
import { repoRoot } from '../helpers.js';
import { curriculumMinLevel, stageWeights } from '../../src/nmr/train/schedule.js';
import { drawLevels } from '../../src/nmr/train/samples.js';
import { Rng } from '../../src/util/rng.js';

interface Golden {
  shape: [number, number, number];
  levels: number[];
  T: number[];
  weights: typeof SEED_LOSS_WEIGHTS;
  x: number[];
  y: number[];
  target: number[];
  peak: number[];
  base: number[];
  rec: number;
  deriv: number;
  curv: number;
  cons: number;
  ratio: number;
  total: number;
  grad_y: number[];
}

test('every loss and the gradient of the total match PyTorch 1.13 (scripts/golden/nmr_losses.py)', () => {
  const g = JSON.parse(readFileSync(join(goldenDir, 'nmr', 'losses.json'), 'utf8')) as Golden;
  const [B, G, L] = g.shape;
  torch.tidy(() => {
    const f64 = (a: number[], shape: number[]) => torch.tensor(Float64Array.from(a), { shape });
    const x = f64(g.x, [B, G, L]);
    const y = f64(g.y, [B, G, L]).requiresGrad_(true);
    const target = f64(g.target, [B, L]);
    const peak = f64(g.peak, [B, L]);
    const base = f64(g.base, [B, L]);
    const T = f64(g.T, [B]);
    const parts = totalLoss({ x, y, target, peak, base, levels: g.levels, T }, g.weights);
    for (const k of ['rec', 'deriv', 'curv', 'cons', 'ratio', 'total'] as const)
      assertClose([parts[k].item()], [g[k]], 1e-12, 1e-12, k);
    parts.total.backward();
    assertClose(y.grad!.toFloat64Array(), g.grad_y, 1e-12, 1e-10, 'd total / d y');
  });
});

test('peak-weighted L1, derivative L1 and baseline curvature by hand', () => {
  torch.tidy(() => {
    const y = torch.tensor([[1, 2, 4, 4]]);
    const s = torch.tensor([[0, 2, 2, 5]]);
    const peak = torch.tensor([[0, 0, 1, 1]]);
    // |y - s| = 1, 0, 2, 1 ; weights 1, 1, 6, 6 -> (1 + 0 + 12 + 6) / 4
    assert.equal(peakWeightedL1(y, s, peak, 6).item(), 19 / 4);
    // diff y = 1, 2, 0 ; diff s = 2, 0, 3 -> |.| = 1, 2, 3 -> mean 2
    assert.equal(derivativeL1(y, s).item(), 2);
    // diff2 y = 1, -2 ; B[1:-1] = 1, 0 -> mean(|1|, 0) = 0.5
    assert.deepEqual(diff2(y).toNumbers(), [1, -2]);
    assert.equal(baselineCurvature(y, torch.tensor([[1, 1, 0, 1]])).item(), 0.5);
    // consistency over 3 groups: pairs (0,1) |1-3| = 2, (0,2) 0, (1,2) 2 -> 4 / 3
    assert.ok(Math.abs(consistencyL1(torch.tensor([[[1], [3], [1]]])).item() - 4 / 3) < 1e-6);
    assert.equal(consistencyL1(torch.tensor([[[1, 2]]])).item(), 0);
  });
});

test('recOthers adds the peak-weighted L1 of the other levels to L_rec', () => {
  torch.tidy(() => {
    const target = torch.tensor([[0, 1]]);
    const y = torch.tensor([
      [
        [0, 1],
        [2, 1],
        [0, 3],
      ],
    ]); // level 0 exact; others off by 2 at one point
    const peak = torch.tensor([[0, 1]]);
    const base = torch.tensor([[1, 0]]);
    const w = { ...SEED_LOSS_WEIGHTS, deriv: 0, curv: 0, cons: 0, ratio: 0 };
    const batch = { x: y, y, target, peak, base, levels: [0, 1, 2], T: 2 };
    assert.equal(totalLoss(batch, w).rec.item(), 0);
    // others: weights (1, 6); |err| level 1 (2, 0), level 2 (0, 2) -> (2 + 12) / 4 = 3.5, times 0.5
    assert.equal(totalLoss(batch, { ...w, recOthers: 0.5 }).rec.item(), 1.75);
  });
});

test('mse adds the peak-weighted squared error of level 0 to L_rec', () => {
  torch.tidy(() => {
    const target = torch.tensor([[0, 1, 1]]);
    const y = torch.tensor([[[1, 1, 3]]]); // errors 1, 0, 2
    const peak = torch.tensor([[0, 1, 1]]);
    const base = torch.tensor([[1, 0, 0]]);
    const w = { ...SEED_LOSS_WEIGHTS, deriv: 0, curv: 0, cons: 0, ratio: 0 };
    const batch = { x: y, y, target, peak, base, levels: [0], T: 2 };
    // L1: (1 * 1 + 6 * 0 + 6 * 2) / 3 = 13 / 3 ; squared: (1 * 1 + 0 + 6 * 4) / 3 = 25 / 3
    assert.ok(Math.abs(totalLoss(batch, w).rec.item() - 13 / 3) < 1e-6);
    assert.ok(Math.abs(totalLoss(batch, { ...w, mse: 2 }).rec.item() - (13 / 3 + 50 / 3)) < 1e-5);
  });
});

test('T constraint: zero when the baseline residuals fall by exactly T per level, |log| otherwise', () => {
  torch.tidy(() => {
    const base = torch.tensor([[1, 1, 1, 1, 1, 1, 1, 1, 0, 0]]);
    const noise = [0.3, -0.2, 0.5, 0.1, -0.4, 0.2, -0.1, 0.3, 9, 9];
    // Residual of level k is noise * 2^(2 - k) on the baseline (levels 0, 1, 2; T = 2); outputs 0.
    const x = torch.tensor([[noise.map((v) => v * 4), noise.map((v) => v * 2), noise]]);
    const y = torch.zerosLike(x);
    const opts = { levels: [0, 1, 2], T: 2, eps: 0 };
    assert.ok(Math.abs(residualRatioLoss(x, y, base, opts).item()) < 1e-6);
    // With T = 4 the pairs are off by log 2, log 2 and 2 log 2: mean (4/3) log 2.
    assert.ok(
      Math.abs(residualRatioLoss(x, y, base, { ...opts, T: 4 }).item() - (4 / 3) * Math.log(2)) < 1e-6,
    );
    // A sample with too little baseline is left out.
    assert.equal(residualRatioLoss(x, y, torch.tensor([[1, 1, 0, 0, 0, 0, 0, 0, 0, 0]]), opts).item(), 0);
  });
});

test('config: seed defaults, and errors name the field', () => {
  const cfg = resolveConfig({ data: { train: 'd' } }, '/tmp');
  assert.deepEqual(cfg.data.train, ['/tmp/d']);
  assert.equal(cfg.optim.lr, 3e-4);
  assert.equal(cfg.optim.weightDecay, 1e-4);
  assert.equal(cfg.optim.warmupEpochs, 5);
  assert.equal(cfg.stageA.loss.peakWeight, 6);
  assert.equal(cfg.stageA.loss.deriv, 0.5);
  assert.equal(cfg.stageA.loss.curv, 0.1);
  assert.equal(cfg.stageA.loss.cons, 0.5);
  assert.ok(cfg.stageB.loss.cons > cfg.stageA.loss.cons && cfg.stageB.loss.ratio > cfg.stageA.loss.ratio);
  assert.throws(
    () => resolveConfig({ data: { train: 'd' }, optim: { lr: 'fast' } }, '/tmp', 'c.json'),
    /c\.json: config\.optim\.lr: expected a number/,
  );
  assert.throws(() => resolveConfig({ data: { train: 'd', T: 0.5 } }, '/tmp'), /config\.data\.T/);
  assert.throws(
    () => resolveConfig({ data: { train: 'd' }, stageA: { loss: { lambda9: 1 } } }, '/tmp'),
    /config\.stageA\.loss\.lambda9: unknown field/,
  );
  assert.throws(() => resolveConfig({ data: {} }, '/tmp'), /config\.data\.train: expected a path/);
  assert.throws(
    () => resolveConfig({ data: { train: 'd' }, model: { channels: [8] } }, '/tmp'),
    /config\.model\.channels/,
  );
  // A network too large to allocate is refused before libtorch is asked, as a named error.
  const huge = (model: object) => () => resolveConfig({ data: { train: 'd' }, model }, '/tmp', 'c.json');
  assert.throws(
    huge({ channels: [1e9, 2] }),
    (e: Error) => e instanceof NmrConfigError && /integers in \[1, 4096\]/.test(e.message),
  );
  assert.throws(
    huge({ channels: [4096, 4096, 4096, 4096], kernel: 255 }),
    /c\.json: config\.model: about 6\.\d+e\+10 parameters, over the limit/,
  );
  assert.throws(huge({ kernel: 257 }), /config\.model\.kernel: expected an odd integer in \[1, 255\]/);
  assert.throws(huge({ channels: Array(13).fill(8), dilations: Array(13).fill(1) }), /at most 12 levels/);
  // The default network's size passes.
  assert.equal(
    resolveConfig({ data: { train: 'd' }, model: { channels: [64, 128, 256, 256] } }, '/tmp').model.kernel,
    9,
  );
});

test('loadConfig: an unreadable, oversized or non-JSON file is a named error naming it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-nmr-config-'));
  try {
    const big = join(dir, 'big.json');
    writeFileSync(big, ' '.repeat(MAX_CONFIG_BYTES + 1));
    assert.throws(
      () => loadConfig(big),
      (e: Error) => e instanceof NmrConfigError && /big\.json: \d+ bytes, more than/.test(e.message),
    );
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"data": ');
    assert.throws(
      () => loadConfig(bad),
      (e: Error) => e instanceof NmrConfigError && /bad\.json: not valid JSON/.test(e.message),
    );
    assert.throws(
      () => loadConfig(join(dir, 'none.json')),
      (e: Error) => e instanceof NmrConfigError && /none\.json/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SNR curriculum, stage-B ramps and level draws', () => {
  const cfg = resolveConfig(
    { data: { train: 'd' }, stageB: { epochs: 10, curriculumEpochs: 6, curvEnd: 0.05, peakWeightEnd: 8 } },
    '/tmp',
  );
  const B = (e: number) => ({ name: 'B' as const, cfg: cfg.stageB, epochInStage: e });
  // K = 3: lowest level k >= 2 (the two highest), then 1, then 0 (every level).
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 9].map((e) => curriculumMinLevel(B(e), 3)),
    [2, 2, 1, 1, 0, 0, 0, 0],
  );
  assert.equal(curriculumMinLevel({ name: 'A', cfg: cfg.stageA, epochInStage: 0 }, 3), 1);
  assert.equal(stageWeights(B(0)).curv, 0.1);
  assert.ok(Math.abs(stageWeights(B(9)).curv - 0.05) < 1e-12);
  assert.equal(stageWeights(B(9)).peakWeight, 8);
  const rng = new Rng(5);
  for (let i = 0; i < 20; i++) {
    const lv = drawLevels(4, [1, 2], 1, rng);
    assert.equal(lv[0], 0);
    assert.ok(lv.length >= 2 && lv.length <= 3);
    assert.ok(lv.slice(1).every((k, j, a) => k >= 1 && k <= 4 && (j === 0 || k > a[j - 1]!)));
  }
  assert.deepEqual(drawLevels(4, 'all', 2, rng), [0, 2, 3, 4]);
});

test('the shipped configs/nmr_*.json validate, and nmr_unet.json is the full-size setting', () => {
  const files = readdirSync(join(repoRoot, 'configs')).filter((f) => /^nmr_.*\.json$/.test(f));
  assert.ok(files.length >= 2);
  for (const f of files) loadConfig(join(repoRoot, 'configs', f), repoRoot);
  const seed = loadConfig(join(repoRoot, 'configs', 'nmr_unet.json'), repoRoot);
  assert.deepEqual(seed.model.channels, [64, 128, 256, 256]);
  assert.deepEqual(seed.model.dilations, [1, 2, 4, 8]);
  assert.equal(seed.model.kernel, 9);
  assert.equal(seed.stageA.epochs, 40);
  assert.equal(seed.stageB.epochs, 50);
  assert.deepEqual(seed.stageA.extraLevels, [1, 2]);
  // The shipped experiments files (the user's own measurements) validate against their schema.
  const experiments = readdirSync(join(repoRoot, 'configs')).filter((f) => /^experiments_.*\.json$/.test(f));
  assert.ok(experiments.length >= 1);
  for (const f of experiments)
    assert.ok(readExperimentsFile(join(repoRoot, 'configs', f)).samples.length >= 1);
});
