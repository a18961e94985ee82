import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import {
  Adagrad,
  Adadelta,
  Adamax,
  NAdam,
  RAdam,
  LBFGS,
  Rprop,
  ASGD,
  type Optimizer,
} from '../../src/torch/optim/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type StateValue = number | number[] | (number[] | number | null)[] | null;
interface FirstOrderCase {
  name: string;
  options: Record<string, unknown> & {
    type: 'Adagrad' | 'Adadelta' | 'Adamax' | 'NAdam' | 'RAdam' | 'Rprop' | 'ASGD';
  };
  shapes: number[][];
  init: number[][];
  grads: number[][][];
  groupLr: (number | null)[] | null;
  skip: [number, number] | null;
  initialState: Record<string, Record<string, StateValue>>;
  history: number[][][];
  state: Record<string, Record<string, StateValue>>;
}
interface LbfgsCase {
  name: string;
  /** The function minimized: the Rosenbrock valley, or a well-conditioned bowl for the line search. */
  problem: 'rosenbrock' | 'bowl';
  options: Record<string, unknown>;
  shapes: number[][];
  init: number[][];
  losses: number[];
  history: number[][][];
  state: Record<string, Record<string, StateValue>>;
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'optim_more.json'), 'utf8')) as {
  cases: FirstOrderCase[];
  lbfgs: LbfgsCase[];
};
// Rprop and ASGD: the same case format, from scripts/golden/optim_rprop_asgd.py
const rpropAsgd = JSON.parse(readFileSync(join(goldenDir, 'torch', 'optim_rprop_asgd.json'), 'utf8')) as {
  cases: FirstOrderCase[];
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyOptimizer = Optimizer<any>;
const classes = { Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD };
// PyTorch's state keys, tailor's camelCase ones
const camel = (key: string): string =>
  key === 'H_diag' ? 'hDiag' : key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const f64 = (values: number[], shape: number[]) => torch.tensor(Float64Array.from(values), { shape });
// float64 throughout: equal to PyTorch up to a few units of double rounding
const TOL = 1e-12;

/** Checks a state dict's entries against PyTorch's (lists as dotted names). */
function checkState(
  what: string,
  actual: Record<string, Record<string, torch.Tensor | number>>,
  expected: Record<string, Record<string, StateValue>>,
): void {
  assert.deepEqual(
    Object.keys(actual).sort(),
    Object.keys(expected).sort(),
    `${what}: parameters with state`,
  );
  for (const [index, entries] of Object.entries(expected)) {
    const flat: Record<string, number | number[]> = {};
    for (const [key, value] of Object.entries(entries)) {
      if (Array.isArray(value) && value.some((v) => Array.isArray(v) || v === null)) {
        value.forEach((v, i) => (flat[`${camel(key)}.${i}`] = v as number | number[]));
      } else flat[camel(key)] = value as number | number[];
    }
    assert.deepEqual(
      Object.keys(actual[index]!).sort(),
      Object.keys(flat).sort(),
      `${what}: state keys of ${index}`,
    );
    for (const [key, value] of Object.entries(flat)) {
      const got = actual[index]![key];
      const label = `${what}: state ${index}.${key}`;
      if (typeof value === 'number') assertClose([got as number], [value], TOL, TOL, label);
      else assertClose((got as torch.Tensor).toFloat64Array(), value, TOL, TOL, label);
    }
  }
}

for (const c of [...golden.cases, ...rpropAsgd.cases]) {
  test(`optimizer matches PyTorch 1.13 in float64: ${c.name}`, () => {
    const before = torch.liveTensors();
    const params = c.init.map((v, i) => f64(v, c.shapes[i]!).requiresGrad_());
    const { type, ...options } = c.options;
    const groups = c.groupLr
      ? [{ params: [params[0]!], lr: c.groupLr[0]! }, { params: [params[1]!] }]
      : params;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const opt: AnyOptimizer = new classes[type](groups as any, options as any);
    checkState(`${c.name} before the first step`, opt.stateDict().state, c.initialState);
    c.grads.forEach((stepGrads, step) => {
      params.forEach((p, i) => {
        if (c.skip && c.skip[0] === step && c.skip[1] === i) p.grad = null;
        else {
          const g = f64(stepGrads[i]!, c.shapes[i]!);
          p.grad = g;
          g.dispose();
        }
      });
      opt.step();
      params.forEach((p, i) =>
        assertClose(
          p.toFloat64Array(),
          c.history[step]![i]!,
          TOL,
          TOL,
          `${c.name} step ${step + 1} param ${i}`,
        ),
      );
    });
    checkState(c.name, opt.stateDict().state, c.state);
    opt.dispose();
    torch.dispose(params);
    assert.equal(torch.liveTensors(), before, 'the optimizer leaks no tensors');
  });
}

function lbfgsProblem(c: LbfgsCase): {
  params: torch.Tensor[];
  closure: (opt: LBFGS) => () => torch.Tensor;
} {
  const params = c.init.map((v, i) => f64(v, c.shapes[i]!).requiresGrad_());
  const closure = (opt: LBFGS) => () => {
    opt.zeroGrad();
    const a = params[0]!;
    const b = params[1]!.reshape(-1);
    const loss =
      c.problem === 'bowl'
        ? a
            .neg()
            .add(1)
            .square()
            .mul(3)
            .add(b.sub(a.mul(0.5)).square())
            .add(a.square().mul(a.square()).mul(0.25))
            .sum()
        : b.sub(a.square()).square().mul(100).add(a.neg().add(1).square()).sum();
    loss.backward();
    return loss;
  };
  return { params, closure };
}

for (const c of golden.lbfgs) {
  test(`LBFGS matches PyTorch 1.13 in float64 on the ${c.problem === 'bowl' ? 'bowl' : 'Rosenbrock function'}: ${c.name}`, () => {
    const before = torch.liveTensors();
    const { params, closure } = lbfgsProblem(c);
    const opt = new LBFGS(params, c.options);
    const evaluate = closure(opt);
    c.losses.forEach((loss, step) => {
      const got = torch.tidy(() => opt.step(evaluate));
      assertClose([got], [loss], TOL, TOL, `${c.name} step ${step + 1} loss`);
      params.forEach((p, i) =>
        assertClose(
          p.toFloat64Array(),
          c.history[step]![i]!,
          TOL,
          TOL,
          `${c.name} step ${step + 1} param ${i}`,
        ),
      );
    });
    checkLbfgsState(c, opt);
    opt.dispose();
    torch.dispose(params);
    assert.equal(torch.liveTensors(), before, 'LBFGS leaks no tensors');
  });
}

/** LBFGS's state on the first parameter, its lists as dotted names, PyTorch's scratch list `al` left out. */
/**
 * The relative tolerance of LBFGS's quotients of dot products (ro = 1 / y.s, H_diag = y.s / y.y):
 * near the minimum the last bits of the dots, which differ between the CPUs' BLAS kernels, show
 * in them at 1e-12.
 */
const DOT_RTOL = 1e-9;

function checkLbfgsState(c: LbfgsCase, opt: LBFGS): void {
  const actual = opt.stateDict().state;
  const expected = c.state['0']!;
  const got = actual['0']!;
  assert.equal(got.funcEvals, expected.func_evals, `${c.name}: func_evals`);
  assert.equal(got.nIter, expected.n_iter, `${c.name}: n_iter`);
  for (const key of ['old_dirs', 'old_stps', 'ro'] as const) {
    const list = expected[key] as (number[] | number)[];
    list.forEach((v, i) => {
      const value = got[`${camel(key)}.${i}`];
      const values = value instanceof torch.Tensor ? value.toFloat64Array() : [value as number];
      const rtol = key === 'ro' ? DOT_RTOL : TOL;
      assertClose(values, typeof v === 'number' ? [v] : v, TOL, rtol, `${c.name}: ${key}.${i}`);
    });
    assert.equal(
      got[`${camel(key)}.${list.length}`],
      undefined,
      `${c.name}: ${key} has ${list.length} items`,
    );
  }
  for (const key of ['d', 'prev_flat_grad', 't', 'H_diag', 'prev_loss']) {
    const value = got[camel(key)];
    const v = expected[key] as number | number[];
    const values = value instanceof torch.Tensor ? value.toFloat64Array() : [value as number];
    const rtol = key === 'H_diag' ? DOT_RTOL : TOL;
    assertClose(values, typeof v === 'number' ? [v] : v, TOL, rtol, `${c.name}: ${key}`);
  }
}

test('the new optimizers refuse capturable mode by name, and bad hyperparameters name the field', () => {
  const before = torch.liveTensors();
  const p = torch.zeros([2]).requiresGrad_();
  for (const make of [
    () => new Adagrad([p]),
    () => new Adadelta([p]),
    () => new Adamax([p]),
    () => new NAdam([p]),
    () => new RAdam([p]),
    () => new Rprop([p]),
    () => new ASGD([p]),
    () => new LBFGS([p]),
  ]) {
    const opt: AnyOptimizer = make();
    const name = opt.constructor.name;
    assert.throws(
      () => (opt.capturable = true),
      (e: Error) => e.message.startsWith(`${name}: no capturable mode`),
    );
    assert.equal(opt.capturable, false);
    opt.capturable = false; // turning it off is always fine
    opt.dispose();
  }
  assert.throws(() => new Adagrad([p], { lrDecay: -1 }), /Adagrad: invalid lrDecay -1/);
  assert.throws(() => new Adadelta([p], { rho: 1.5 }), /Adadelta: invalid rho 1.5/);
  assert.throws(() => new NAdam([p], { betas: [0.9, 1] }), /NAdam: invalid betas/);
  assert.throws(() => new RAdam([p], { eps: Number.NaN }), /RAdam: invalid eps/);
  assert.throws(
    () => new Rprop([p], { etas: [1.2, 0.5] }),
    /Rprop: invalid etas \[1.2,0.5\] \(expected \[etaminus, etaplus\] with 0 < etaminus < 1 < etaplus\)/,
  );
  assert.throws(() => new Rprop([p], { stepSizes: [1, 0.1] }), /Rprop: invalid stepSizes \[1,0.1\]/);
  assert.throws(() => new Rprop([{ params: [p], stepSizes: [0] }]), /Rprop: invalid stepSizes \[0\]/);
  assert.throws(() => new ASGD([p], { lambd: -1 }), /ASGD: invalid lambd -1/);
  assert.throws(() => new ASGD([p], { t0: Number.POSITIVE_INFINITY }), /ASGD: invalid t0 Infinity/);
  assert.throws(() => new ASGD([p], { weightDecay: -0.1 }), /ASGD: invalid weightDecay -0.1/);
  assert.throws(
    () => new Adamax([{ params: [p], momentum: 0.9 } as never]),
    /unknown hyperparameter 'momentum'/,
  );
  assert.throws(() => new LBFGS([p], { maxIter: 0 }), /LBFGS: invalid maxIter 0/);
  assert.throws(
    () => new LBFGS([p], { lineSearchFn: 'backtracking' as never }),
    /LBFGS: invalid lineSearchFn "backtracking" \(expected 'strong_wolfe' or null\)/,
  );
  const q = torch.zeros([1]).requiresGrad_();
  assert.throws(() => new LBFGS([{ params: [p] }, { params: [q] }]), /LBFGS: no parameter groups/);
  const lbfgs = new LBFGS([p]);
  assert.throws(() => lbfgs.step(), /LBFGS.step needs a closure/);
  assert.throws(
    () => lbfgs.step(() => torch.zeros([2])),
    /the closure must return the loss, a one-element tensor or a number/,
  );
  lbfgs.dispose();
  torch.dispose([p, q]);
  assert.equal(torch.liveTensors(), before);
});

test('stateDict / loadStateDict resume: the same trajectory as an uninterrupted run (Adagrad, NAdam, Rprop, ASGD, LBFGS)', () => {
  const before = torch.liveTensors();
  torch.manualSeed(5);
  const init = torch.randn([3, 2], 'float64');
  const grads = Array.from({ length: 6 }, () => torch.randn([3, 2], 'float64'));
  const firstOrder = (make: (ps: torch.Tensor[]) => AnyOptimizer) => {
    const run = (opt: AnyOptimizer, p: torch.Tensor, from: number, to: number) => {
      for (let s = from; s < to; s++) {
        p.grad = grads[s]!;
        opt.step();
      }
    };
    const a = init.clone().requiresGrad_();
    const optA = make([a]);
    run(optA, a, 0, 6);
    const b = init.clone().requiresGrad_();
    const optB = make([b]);
    run(optB, b, 0, 3);
    const c = torch.noGrad(() => b.clone()).requiresGrad_();
    const optC = make([c]);
    optC.loadStateDict(optB.stateDict()); // copies the tensors
    optB.dispose();
    run(optC, c, 3, 6);
    assertClose(c.toFloat64Array(), a.toFloat64Array(), 0, 0, `${optA.constructor.name} resumed`);
    optA.dispose();
    optC.dispose();
    torch.dispose([a, b, c]);
  };
  firstOrder((ps) => new Adagrad(ps, { lr: 0.1, lrDecay: 0.01, initialAccumulatorValue: 0.1 }));
  firstOrder((ps) => new NAdam(ps, { lr: 0.01 }));
  firstOrder((ps) => new Rprop(ps, { lr: 0.05, etas: [0.4, 1.3] }));
  firstOrder((ps) => new ASGD(ps, { lr: 0.05, lambd: 0.01, t0: 1 }));

  // LBFGS on a quadratic with two parameters: three steps, or one, a save, and two more
  const target = torch.tensor(Float64Array.from([1, -2, 3, 0.5, 4]));
  const lbfgsRun = (x: torch.Tensor[], opt: LBFGS, steps: number) => {
    const closure = () => {
      opt.zeroGrad();
      const flat = torch.cat([x[0]!.reshape(-1), x[1]!.reshape(-1)]);
      const loss = flat
        .sub(target)
        .square()
        .mul(torch.tensor(Float64Array.from([1, 10, 3, 7, 2])))
        .sum();
      loss.backward();
      return loss;
    };
    for (let i = 0; i < steps; i++) torch.tidy(() => opt.step(closure));
  };
  const params = () => [
    torch.zeros([2], 'float64').requiresGrad_(),
    torch.zeros([3, 1], 'float64').requiresGrad_(),
  ];
  const options = { maxIter: 3, maxEval: 10, historySize: 2, lineSearchFn: 'strong_wolfe' as const };
  const full = params();
  const optFull = new LBFGS(full, options);
  lbfgsRun(full, optFull, 3);
  const part = params();
  const optPart = new LBFGS(part, options);
  lbfgsRun(part, optPart, 1);
  assert.ok(
    optPart.stateDict().state['0']!['oldDirs.0'] instanceof torch.Tensor,
    'the history is in the state dict',
  );
  // through a checkpoint's files: the dotted state names and lineSearchFn's string survive
  const dir = mkdtempSync(join(tmpdir(), 'tailor-lbfgs-'));
  torch.saveCheckpoint(join(dir, 'ck'), {
    weights: { a: part[0]!, b: part[1]! },
    optimizer: optPart.stateDict(),
  });
  optPart.dispose();
  const loaded = torch.loadCheckpoint(join(dir, 'ck'));
  rmSync(dir, { recursive: true, force: true });
  const dict = loaded.optimizer!;
  const resumed = [loaded.weights.a!.requiresGrad_(), loaded.weights.b!.requiresGrad_()];
  const optResumed = new LBFGS(resumed, { ...options, maxIter: 7, lineSearchFn: null });
  optResumed.loadStateDict(dict);
  torch.dispose(dict.state);
  assert.equal(optResumed.paramGroups[0]!.maxIter, 3, 'the saved hyperparameters are restored');
  assert.equal(optResumed.paramGroups[0]!.lineSearchFn, 'strong_wolfe');
  lbfgsRun(resumed, optResumed, 2);
  resumed.forEach((p, i) =>
    assertClose(p.toFloat64Array(), full[i]!.toFloat64Array(), 0, 0, `LBFGS resumed ${i}`),
  );
  assert.throws(
    () => optResumed.loadStateDict({ ...dict, state: { '1': {} } }),
    /LBFGS keeps its state on the first one only/,
  );
  optFull.dispose();
  optResumed.dispose();
  torch.dispose([init, grads, target, full, part, resumed]);
  assert.equal(torch.liveTensors(), before, 'nothing leaks');
});

test('LBFGS in float32 reaches the Rosenbrock minimum, as in float64, and leaks nothing outside a tidy', () => {
  const before = torch.liveTensors();
  const x = torch.tensor([-1.2, 1]).requiresGrad_();
  const opt = new LBFGS([x], { lineSearchFn: 'strong_wolfe', maxIter: 100 });
  const closure = () => {
    opt.zeroGrad();
    const [a, b] = x.unbind(0) as [torch.Tensor, torch.Tensor];
    const loss = b.sub(a.square()).square().mul(100).add(a.neg().add(1).square());
    loss.backward();
    return loss;
  };
  // no tidy around step: it frees its own temporaries
  const first = opt.step(closure);
  assertClose([first], [24.2], 1e-5, 0, 'the loss before the first iteration');
  opt.step(closure);
  assertClose(x.toFloat32Array(), [1, 1], 1e-3, 0, 'the minimum');
  opt.dispose();
  x.dispose();
  assert.equal(torch.liveTensors(), before);
});
