import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sched from '../../src/torch/optim/index.js';
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

const more = golden as unknown as {
  one_cycle: { lrs: number[][]; momenta: number[][] };
  one_cycle_linear_three_phase_adamw: { lrs: number[][]; momenta: number[][] };
  plateau: { metrics: number[]; lrs: number[][] };
  plateau_max_abs: { metrics: number[]; lrs: number[][] };
};

test('ExponentialLR and LinearLR (warm-up and decay) match PyTorch 1.13', () => {
  assertSame(
    trajectory(new sched.ExponentialLR(groups(), { gamma: 0.95 }), 60),
    golden.exponential!,
    1e-15,
    'exponential',
  );
  assertSame(
    trajectory(new sched.LinearLR(groups(), { startFactor: 0.25, endFactor: 1, totalIters: 8 }), 20),
    golden.linear!,
    1e-15,
    'linear warm-up',
  );
  assertSame(
    trajectory(new sched.LinearLR(groups(), { startFactor: 1, endFactor: 0.1, totalIters: 10 }), 20),
    golden.linear_decay!,
    1e-15,
    'linear decay',
  );
});

test('OneCycleLR matches PyTorch 1.13: rates and momentum (SGD) or beta1 (AdamW), two and three phases', () => {
  const run = (scheduler: sched.OneCycleLR, steps: number, key: 'momentum' | 'betas') => {
    const lrs: number[][] = [];
    const momenta: number[][] = [];
    for (let s = 0; s < steps; s++) {
      const gs = scheduler.optimizer.paramGroups as unknown as {
        lr: number;
        momentum: number;
        betas: number[];
      }[];
      lrs.push(gs.map((g) => g.lr));
      momenta.push(gs.map((g) => (key === 'momentum' ? g.momentum : g.betas[0]!)));
      scheduler.step();
    }
    return { lrs, momenta };
  };
  const sgd = () => ({
    paramGroups: [
      { lr: 0.1, momentum: 0.9 },
      { lr: 0.01, momentum: 0.9 },
    ],
  });
  const two = run(new sched.OneCycleLR(sgd(), { maxLr: [1, 0.05], totalSteps: 50 }), 50, 'momentum');
  assertSame(two.lrs, more.one_cycle.lrs, 1e-15, 'one cycle rates');
  assertSame(two.momenta, more.one_cycle.momenta, 1e-15, 'one cycle momentum');
  const adam = () => ({
    paramGroups: [
      { lr: 0.1, betas: [0.9, 0.999] },
      { lr: 0.01, betas: [0.9, 0.999] },
    ],
  });
  const three = run(
    new sched.OneCycleLR(adam(), {
      maxLr: 0.3,
      epochs: 4,
      stepsPerEpoch: 10,
      pctStart: 0.25,
      annealStrategy: 'linear',
      threePhase: true,
      divFactor: 10,
      finalDivFactor: 100,
    }),
    40,
    'betas',
  );
  const c = more.one_cycle_linear_three_phase_adamw;
  assertSame(three.lrs, c.lrs, 1e-15, 'three-phase rates');
  assertSame(three.momenta, c.momenta, 1e-15, 'three-phase beta1');
  const done = new sched.OneCycleLR(sgd(), { maxLr: 1, totalSteps: 3 });
  for (let s = 0; s < 3; s++) done.step();
  assert.throws(() => done.step(), /^RangeError: OneCycleLR: stepped 4 times, past its 3 total steps/);
  assert.throws(
    () => new sched.OneCycleLR({ paramGroups: [{ lr: 0.1 }] }, { maxLr: 1, totalSteps: 10 }),
    /cycleMomentum needs an optimizer with momentum/,
  );
  assert.throws(
    () => new sched.OneCycleLR(sgd(), { maxLr: 1 }),
    /options must be totalSteps, or epochs and stepsPerEpoch/,
  );
});

test('ReduceLROnPlateau matches PyTorch 1.13 (patience, cooldown, per-group floor; max mode with an absolute threshold) and resumes', () => {
  for (const [key, options] of [
    ['plateau', { patience: 2, factor: 0.5, cooldown: 1, minLr: [0.02, 0] }],
    ['plateau_max_abs', { mode: 'max', threshold: 0.01, thresholdMode: 'abs', patience: 1 }],
  ] as const) {
    const c = more[key];
    const s = new sched.ReduceLROnPlateau(groups(), options as sched.ReduceLROnPlateauOptions);
    const lrs = c.metrics.map((m) => {
      s.step(m);
      return s.getLastLr();
    });
    assertSame(lrs, c.lrs, 1e-15, key);
    // a scheduler rebuilt from the state after 10 epochs continues the same way
    const a = new sched.ReduceLROnPlateau(groups(), options as sched.ReduceLROnPlateauOptions);
    c.metrics.slice(0, 10).forEach((m) => a.step(m));
    const b = new sched.ReduceLROnPlateau(
      { paramGroups: a.getLastLr().map((lr) => ({ lr })) },
      options as sched.ReduceLROnPlateauOptions,
    );
    b.loadStateDict(JSON.parse(JSON.stringify(a.stateDict())));
    const rest = c.metrics.slice(10).map((m) => {
      b.step(m);
      return b.getLastLr();
    });
    assertSame(rest, c.lrs.slice(10), 1e-15, `${key} resumed`);
  }
  assert.throws(
    () => new sched.ReduceLROnPlateau(groups(), { factor: 1 }),
    /options.factor must be a number < 1, got 1/,
  );
  assert.throws(
    () => new sched.ReduceLROnPlateau(groups()).step(NaN),
    /ReduceLROnPlateau.step: metric must be a number/,
  );
});
