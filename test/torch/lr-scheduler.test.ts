import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sched from '../../src/torch/optim/lr-scheduler.js';
import { assertClose, goldenDir } from '../helpers.js';

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'lr_scheduler.json'), 'utf8')) as Record<
  string,
  number[][]
> & {
  base: number[];
};

/** A stand-in optimizer: schedulers only touch paramGroups[i].lr. */
const groups = () => ({ paramGroups: golden.base.map((lr) => ({ lr })) });

function trajectory(scheduler: sched.LRScheduler, epochs: number): number[][] {
  const lrs: number[][] = [];
  for (let e = 0; e < epochs; e++) {
    lrs.push(scheduler.optimizer.paramGroups.map((g) => g.lr));
    scheduler.step();
  }
  return lrs;
}

function assertSame(actual: number[][], expected: number[][], atol: number, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  assertClose(actual.flat(), expected.flat(), atol, 0, what);
}

test('CustomLR (SADE/BalPoE) matches LambdaLR with the reference lambda bit for bit', () => {
  const s = new sched.CustomLR(groups(), { step1: 160, step2: 180, gamma: 0.1, warmupEpoch: 5 });
  const lrs = trajectory(s, 200);
  assertSame(lrs, golden.custom_lr!, 0, 'CustomLR');
  // The recipe itself: warmup 0.02, 0.04, ... 0.1 over epochs 0-4, then x0.1 at 160 and x0.01 at 180.
  assertClose(
    [lrs[0]![0]!, lrs[4]![0]!, lrs[5]![0]!, lrs[159]![0]!, lrs[160]![0]!, lrs[199]![0]!],
    [0.02, 0.1, 0.1, 0.1, 0.01, 0.001],
    1e-15,
  );
  const fromConfig = sched.schedulerFromConfig(groups(), {
    type: 'CustomLR',
    args: { step1: 160, step2: 180, gamma: 0.1, warmup_epoch: 5 },
  });
  assertSame(trajectory(fromConfig, 200), golden.custom_lr!, 0, 'CustomLR from config');
  // warmupMultiStepFactor with the same milestones is the same function.
  for (let e = 0; e < 200; e++) {
    assert.equal(
      sched.warmupMultiStepFactor(e, { warmupEpochs: 5, milestones: [160, 180], gamma: 0.1 }),
      sched.customLrFactor(e, { step1: 160, step2: 180, gamma: 0.1, warmupEpoch: 5 }),
    );
  }
});

// Cosine: within an ulp or two (V8's Math.cos and glibc's cos can differ in the last bit).
test('MultiStepLR, StepLR and CosineAnnealingLR match PyTorch (chainable/recursive forms)', () => {
  assertSame(
    trajectory(new sched.MultiStepLR(groups(), { milestones: [160, 180], gamma: 0.1 }), 200),
    golden.multistep!,
    0,
    'MultiStepLR',
  );
  assertSame(
    trajectory(new sched.StepLR(groups(), { stepSize: 30, gamma: 0.5 }), 100),
    golden.step!,
    0,
    'StepLR',
  );
  assertSame(
    trajectory(new sched.CosineAnnealingLR(groups(), { tMax: 180 }), 200),
    golden.cosine!,
    1e-16,
    'cosine',
  );
  const eta = sched.schedulerFromConfig(groups(), {
    type: 'CosineAnnealingLR',
    args: { T_max: 50, eta_min: 1e-4 },
  });
  assertSame(trajectory(eta, 120), golden.cosine_eta!, 1e-16, 'cosine eta_min');
});

test('closed forms agree with the PyTorch trajectories', () => {
  const closed = (f: (e: number, base: number) => number, n: number) =>
    Array.from({ length: n }, (_, e) => golden.base.map((b) => f(e, b)));
  assertSame(
    closed((e, b) => b * sched.multiStepFactor(e, [160, 180], 0.1), 200),
    golden.multistep!,
    1e-15,
    'multistep closed',
  );
  assertSame(
    closed((e, b) => sched.cosineAnnealingLr(e, b, 180), 200),
    golden.cosine!,
    1e-15,
    'cosine closed',
  );
  assertSame(
    closed((e, b) => sched.cosineAnnealingLr(e, b, 50, 1e-4), 120),
    golden.cosine_eta!,
    1e-15,
    'cosine eta closed',
  );
});

test('warmup + cosine: linear ramp, cosine to minFactor, flat after', () => {
  const o = { warmupSteps: 4, totalSteps: 14, minFactor: 0.1 };
  assertClose(
    [0, 1, 2, 3].map((s) => sched.warmupCosineFactor(s, o)),
    [0.25, 0.5, 0.75, 1],
    1e-15,
  );
  assert.equal(sched.warmupCosineFactor(4, o), 1);
  assertClose([sched.warmupCosineFactor(9, o)], [0.1 + 0.9 * 0.5], 1e-15);
  assertClose([sched.warmupCosineFactor(14, o), sched.warmupCosineFactor(100, o)], [0.1, 0.1], 1e-15);
  const opt = { paramGroups: [{ lr: 0.2 }] };
  const s = new sched.WarmupCosineLR(opt, o);
  assert.equal(opt.paramGroups[0]!.lr, 0.05);
  for (let i = 0; i < 9; i++) s.step();
  assertClose([opt.paramGroups[0]!.lr], [0.2 * (0.1 + 0.9 * 0.5)], 1e-15);
  const wm = new sched.WarmupMultiStepLR(
    { paramGroups: [{ lr: 1 }] },
    { warmupEpochs: 2, milestones: [3, 5], gamma: 0.5 },
  );
  assertSame(trajectory(wm, 7), [[0.5], [1], [1], [0.5], [0.5], [0.25], [0.25]], 0, 'warmup multistep');
});

test('scheduler state round-trips: a resumed scheduler continues the same trajectory', () => {
  const a = new sched.CosineAnnealingLR(groups(), { tMax: 180 });
  for (let i = 0; i < 70; i++) a.step();
  const saved = JSON.parse(JSON.stringify(a.stateDict())) as sched.SchedulerState;
  const opt = groups();
  const b = new sched.CosineAnnealingLR(opt, { tMax: 180 });
  b.loadStateDict(saved);
  assert.deepEqual(
    opt.paramGroups.map((g) => g.lr),
    a.getLastLr(),
  );
  assertSame(trajectory(b, 130), golden.cosine!.slice(70), 1e-16, 'resumed cosine');
  assert.equal(b.lastEpoch, 200);
});

test('bad configs name the field and the supported types', () => {
  assert.throws(
    () => sched.schedulerFromConfig(groups(), { type: 'OneCycleLR' }),
    /unsupported type "OneCycleLR".*CustomLR/,
  );
  assert.throws(
    () => sched.schedulerFromConfig(groups(), { type: 'CustomLR', args: { step1: 1, step2: 2 } }),
    /args\.warmup_epoch/,
  );
  assert.throws(() => new sched.LambdaLR(groups(), [() => 1]), /1 functions for 2 parameter groups/);
});
