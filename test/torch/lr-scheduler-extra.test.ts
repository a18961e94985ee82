// ConstantLR, MultiplicativeLR, PolynomialLR, CosineAnnealingWarmRestarts, CyclicLR, SequentialLR,
// ChainedScheduler and the closed forms of step(epoch) against PyTorch 1.13
// (test/golden/torch/losses_schedules.json, from scripts/golden/losses_schedules.py): every rate
// (and CyclicLR's momentum) over enough steps to cross restarts and milestones; then resuming
// from a state dict, and the named errors of bad options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as sched from '../../src/torch/optim/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Trajectory {
  lrs: number[][];
  momenta?: number[][];
}
interface AtEpochs {
  epochs: number[];
  lrs: number[][];
}
const golden = (
  JSON.parse(readFileSync(join(goldenDir, 'torch', 'losses_schedules.json'), 'utf8')) as {
    schedules: Record<string, Trajectory & AtEpochs> & { base: number[] };
  }
).schedules;

type Group = { lr: number; momentum?: number; betas?: number[] };
/** A stand-in optimizer (schedulers only touch the groups): SGD's groups, with momentum or Adam's betas. */
const groups = (kind: 'plain' | 'momentum' | 'betas' = 'plain') => ({
  paramGroups: golden.base.map((lr): Group =>
    kind === 'momentum' ? { lr, momentum: 0.9 } : kind === 'betas' ? { lr, betas: [0.9, 0.999] } : { lr },
  ),
});

// Within an ulp or two: V8's Math.cos and ** may differ from glibc's in the last bit.
const TOL = 1e-15;

function trajectory(s: sched.LRScheduler, steps: number, key?: 'momentum' | 'betas'): Trajectory {
  const lrs: number[][] = [];
  const momenta: number[][] = [];
  for (let i = 0; i < steps; i++) {
    const gs = s.optimizer.paramGroups as Group[];
    lrs.push(gs.map((g) => g.lr));
    if (key) momenta.push(gs.map((g) => (key === 'momentum' ? g.momentum! : g.betas![0]!)));
    s.step();
  }
  return key ? { lrs, momenta } : { lrs };
}

function check(name: string, got: Trajectory, tol = TOL): void {
  const want = golden[name]!;
  assert.equal(got.lrs.length, want.lrs.length, `${name}: steps`);
  assertClose(got.lrs.flat(), want.lrs.flat(), tol, tol, `${name}: rates`);
  if (want.momenta) assertClose(got.momenta!.flat(), want.momenta.flat(), tol, tol, `${name}: momentum`);
}

function atEpochs(name: string, s: sched.LRScheduler): void {
  const want = golden[name]!;
  const lrs = want.epochs.map((e) => {
    s.step(e);
    return s.getLastLr();
  });
  assertClose(lrs.flat(), want.lrs.flat(), TOL, TOL, name);
}

test('ConstantLR, MultiplicativeLR and PolynomialLR match PyTorch 1.13', () => {
  check('constant', trajectory(new sched.ConstantLR(groups(), { factor: 0.5, totalIters: 4 }), 10));
  check('constant_default', trajectory(new sched.ConstantLR(groups()), 8));
  check('multiplicative', trajectory(new sched.MultiplicativeLR(groups(), () => 0.95), 15));
  const perGroup = new sched.MultiplicativeLR(groups(), [(e) => (e % 2 ? 0.9 : 1), (e) => 1 / (1 + 0.1 * e)]);
  check('multiplicative_per_group', trajectory(perGroup, 15));
  check('polynomial', trajectory(new sched.PolynomialLR(groups(), { totalIters: 6, power: 2 }), 10));
  check('polynomial_default', trajectory(new sched.PolynomialLR(groups()), 8));
});

test('CosineAnnealingWarmRestarts matches PyTorch 1.13 across restarts, and at fractional epochs', () => {
  check(
    'warm_restarts',
    trajectory(new sched.CosineAnnealingWarmRestarts(groups(), { t0: 5, etaMin: 0.001 }), 23),
  );
  check(
    'warm_restarts_mult',
    trajectory(new sched.CosineAnnealingWarmRestarts(groups(), { t0: 3, tMult: 2 }), 30),
  );
  atEpochs('warm_restarts_fractional', new sched.CosineAnnealingWarmRestarts(groups(), { t0: 3, tMult: 2 }));
  atEpochs(
    'warm_restarts_fractional_mult1',
    new sched.CosineAnnealingWarmRestarts(groups(), { t0: 4, etaMin: 0.002 }),
  );
});

test('CyclicLR matches PyTorch 1.13: the three modes, scale functions, momentum and Adam beta1', () => {
  const tri = new sched.CyclicLR(groups('momentum'), { baseLr: 0.01, maxLr: 0.1, stepSizeUp: 4 });
  check('cyclic_triangular', trajectory(tri, 20, 'momentum'));
  const options: sched.CyclicLROptions = {
    baseLr: [0.01, 0.001],
    maxLr: [0.1, 0.02],
    stepSizeUp: 3,
    stepSizeDown: 5,
    mode: 'triangular2',
    baseMomentum: 0.85,
    maxMomentum: 0.95,
  };
  check('cyclic_triangular2', trajectory(new sched.CyclicLR(groups('momentum'), options), 33, 'momentum'));
  // Adam's beta1 follows the formula of SGD's momentum (PyTorch 2.x), beta2 stays
  const adam = new sched.CyclicLR(groups('betas'), options);
  check('cyclic_triangular2', trajectory(adam, 33, 'betas'));
  assert.equal((adam.optimizer.paramGroups[0] as Group).betas![1], 0.999);
  const exp = new sched.CyclicLR(groups('momentum'), {
    baseLr: 0.01,
    maxLr: 0.1,
    stepSizeUp: 2,
    mode: 'exp_range',
    gamma: 0.9,
  });
  check('cyclic_exp_range', trajectory(exp, 20, 'momentum'));
  for (const scaleMode of ['cycle', 'iterations'] as const) {
    const s = new sched.CyclicLR(groups(), {
      baseLr: 0.01,
      maxLr: 0.1,
      stepSizeUp: 3,
      scaleFn: (x) => 1 / (1 + 0.5 * x),
      scaleMode,
      cycleMomentum: false,
    });
    check(`cyclic_scale_fn_${scaleMode}`, trajectory(s, 20));
  }
});

test('SequentialLR and ChainedScheduler match PyTorch 1.13 across milestones', () => {
  let opt = groups();
  let s: sched.LRScheduler = new sched.SequentialLR(opt, {
    schedulers: [
      new sched.LinearLR(opt, { startFactor: 0.1, totalIters: 4 }),
      new sched.ExponentialLR(opt, { gamma: 0.9 }),
    ],
    milestones: [4],
  });
  check('sequential_warmup_exponential', trajectory(s, 15));
  opt = groups();
  s = new sched.SequentialLR(opt, {
    schedulers: [
      new sched.ConstantLR(opt, { factor: 0.5, totalIters: 3 }),
      new sched.CosineAnnealingLR(opt, { tMax: 6 }),
      new sched.StepLR(opt, { stepSize: 3, gamma: 0.5 }),
    ],
    milestones: [3, 9],
  });
  check('sequential_three', trajectory(s, 20));
  opt = groups();
  s = new sched.SequentialLR(opt, {
    schedulers: [
      new sched.LinearLR(opt, { startFactor: 0.5, totalIters: 3 }),
      new sched.CosineAnnealingWarmRestarts(opt, { t0: 4 }),
    ],
    milestones: [3],
  });
  check('sequential_restarts', trajectory(s, 16));
  opt = groups();
  s = new sched.ChainedScheduler([
    new sched.ConstantLR(opt, { factor: 0.1, totalIters: 2 }),
    new sched.ExponentialLR(opt, { gamma: 0.9 }),
  ]);
  check('chained', trajectory(s, 10));
  opt = groups();
  s = new sched.ChainedScheduler([
    new sched.LinearLR(opt, { startFactor: 0.5, totalIters: 4 }),
    new sched.MultiStepLR(opt, { milestones: [3, 6], gamma: 0.5 }),
  ]);
  check('chained_linear_multistep', trajectory(s, 10));
});

test("step(epoch) uses PyTorch's closed forms", () => {
  atEpochs('closed_step', new sched.StepLR(groups(), { stepSize: 3, gamma: 0.5 }));
  atEpochs('closed_multistep', new sched.MultiStepLR(groups(), { milestones: [2, 5, 5], gamma: 0.5 }));
  atEpochs('closed_exponential', new sched.ExponentialLR(groups(), { gamma: 0.9 }));
  atEpochs('closed_linear', new sched.LinearLR(groups(), { startFactor: 0.25, totalIters: 8 }));
  atEpochs('closed_cosine', new sched.CosineAnnealingLR(groups(), { tMax: 10, etaMin: 0.001 }));
  atEpochs('closed_constant', new sched.ConstantLR(groups(), { factor: 0.5, totalIters: 4 }));
  atEpochs('closed_polynomial', new sched.PolynomialLR(groups(), { totalIters: 6, power: 2 }));
});

test('a resumed scheduler continues the same trajectory (warm restarts, sequential)', () => {
  const want = golden.warm_restarts_mult!.lrs;
  const a = new sched.CosineAnnealingWarmRestarts(groups(), { t0: 3, tMult: 2 });
  for (let i = 0; i < 11; i++) a.step();
  const opt = groups();
  const b = new sched.CosineAnnealingWarmRestarts(opt, { t0: 3, tMult: 2 });
  b.loadStateDict(JSON.parse(JSON.stringify(a.stateDict())));
  const rest = trajectory(b, 19).lrs;
  assertClose(rest.flat(), want.slice(11).flat(), TOL, TOL, 'resumed warm restarts');
  const build = () => {
    const o = groups();
    return new sched.SequentialLR(o, {
      schedulers: [
        new sched.ConstantLR(o, { factor: 0.5, totalIters: 3 }),
        new sched.CosineAnnealingLR(o, { tMax: 6 }),
        new sched.StepLR(o, { stepSize: 3, gamma: 0.5 }),
      ],
      milestones: [3, 9],
    });
  };
  const s1 = build();
  for (let i = 0; i < 7; i++) s1.step();
  const s2 = build();
  s2.loadStateDict(JSON.parse(JSON.stringify(s1.stateDict())));
  assertClose(
    trajectory(s2, 13).lrs.flat(),
    golden.sequential_three!.lrs.slice(7).flat(),
    TOL,
    TOL,
    'resumed sequential',
  );
});

test('bad schedule options are named errors with the remedy', () => {
  const cases: [() => unknown, RegExp][] = [
    [
      () => new sched.CyclicLR(groups(), { baseLr: 0.01, maxLr: 0.1 }),
      /^ArgumentError: CyclicLR: options.cycleMomentum needs an optimizer with momentum \(SGD, RMSprop\) or betas \(Adam, AdamW\); parameter group 0 has neither: set cycleMomentum: false/,
    ],
    [
      () => new sched.CyclicLR(groups('momentum'), { baseLr: 0.01, maxLr: 0.1, mode: 'cosine' as never }),
      /CyclicLR: options.mode must be one of 'triangular', 'triangular2', 'exp_range', got 'cosine'/,
    ],
    [
      () => new sched.CyclicLR(groups('momentum'), { baseLr: [0.01], maxLr: 0.1 }),
      /CyclicLR: options.baseLr must be one number or 2 \(one per parameter group\)/,
    ],
    [
      () => new sched.ConstantLR(groups(), { factor: 2 }),
      /ConstantLR: options.factor must be a finite number >= 0 and <= 1, got 2/,
    ],
    [
      () => new sched.CosineAnnealingWarmRestarts(groups(), { t0: 0 }),
      /options.t0 must be an integer >= 1, got 0/,
    ],
    [
      () => new sched.CosineAnnealingWarmRestarts(groups(), { t0: 2, tMult: 1.5 }),
      /options.tMult must be an integer >= 1/,
    ],
    [
      () => new sched.CosineAnnealingWarmRestarts(groups(), { t0: 2 }).step(-1),
      /step: epoch must be a finite number >= 0, got -1/,
    ],
    [
      () => new sched.MultiplicativeLR(groups(), [() => 1]),
      /MultiplicativeLR: lrLambda must be a function, or 2 of them/,
    ],
    [
      () => new sched.StepLR(groups(), { stepSize: 2 }).step(1.5),
      /StepLR.step: epoch must be an integer >= 0/,
    ],
    [
      () => {
        const o = groups();
        return new sched.SequentialLR(o, {
          schedulers: [new sched.ConstantLR(o), new sched.ExponentialLR(o, { gamma: 0.9 })],
          milestones: [],
        });
      },
      /SequentialLR: options.milestones must hold one epoch fewer than there are schedulers \(1\), got 0/,
    ],
    [
      () =>
        new sched.SequentialLR(groups(), { schedulers: [new sched.ConstantLR(groups())], milestones: [] }),
      /SequentialLR: schedulers\[0\] drives another optimizer: build every scheduler on the optimizer given/,
    ],
    [
      () => new sched.ChainedScheduler([new sched.ReduceLROnPlateau(groups())] as never),
      /ChainedScheduler: schedulers\[0\] must be an LRScheduler \(ReduceLROnPlateau steps on a metric/,
    ],
  ];
  for (const [fn, pattern] of cases) assert.throws(fn, pattern);
});
