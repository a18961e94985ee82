import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { SGD, Adam, AdamW, RMSprop, type Optimizer } from '../../src/torch/optim/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface GoldenCase {
  name: string;
  options: Record<string, unknown> & {
    type: 'SGD' | 'Adam' | 'AdamW' | 'RMSprop';
    groupLr?: (number | null)[];
    skip?: [number, number];
  };
  shapes: number[][];
  init: number[][];
  grads: number[][][];
  history: number[][][];
  state: Record<string, Record<string, number | number[]>>;
}

interface ClipCase {
  kind: 'norm' | 'value';
  maxNorm?: number;
  normType?: number | 'inf';
  clipValue?: number;
  total?: number;
  grads: number[][];
}

const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'optim.json'), 'utf8')) as {
  cases: GoldenCase[];
  clip: { shapes: number[][]; grads: number[][]; cases: ClipCase[] };
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyOptimizer = Optimizer<any>;

function build(c: GoldenCase, params: torch.Tensor[]): AnyOptimizer {
  const { type, groupLr, skip: _skip, ...options } = c.options;
  const groups = groupLr ? [{ params: [params[0]!], lr: groupLr[0]! }, { params: [params[1]!] }] : params;
  const Class = { SGD, Adam, AdamW, RMSprop }[type];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return new Class(groups as any, options as any);
}

const stateKeys: Record<string, string> = {
  momentum_buffer: 'momentumBuffer',
  exp_avg: 'expAvg',
  exp_avg_sq: 'expAvgSq',
  max_exp_avg_sq: 'maxExpAvgSq',
  square_avg: 'squareAvg',
  grad_avg: 'gradAvg',
  step: 'step',
};

for (const c of golden.cases) {
  test(`optimizer matches PyTorch 1.13: ${c.name}`, () => {
    const before = torch.liveTensors();
    const params = c.init.map((v, i) =>
      torch.tensor(Float32Array.from(v), { shape: c.shapes[i] }).requiresGrad_(),
    );
    const opt = build(c, params);
    c.grads.forEach((stepGrads, step) => {
      params.forEach((p, i) => {
        if (c.options.skip && c.options.skip[0] === step && c.options.skip[1] === i) {
          p.grad = null;
        } else {
          const g = torch.tensor(Float32Array.from(stepGrads[i]!), { shape: c.shapes[i] });
          p.grad = g;
          g.dispose();
        }
      });
      opt.step();
      params.forEach((p, i) => {
        const actual = p.toFloat32Array();
        const expected = c.history[step]![i]!;
        assertClose(actual, expected, 1e-6, 0, `${c.name} step ${step + 1} param ${i}`);
      });
    });
    const dict = opt.stateDict();
    for (const [index, expected] of Object.entries(c.state)) {
      for (const [key, value] of Object.entries(expected)) {
        const actual = dict.state[index]?.[stateKeys[key]!];
        // PyTorch keeps momentum_buffer = None when momentum is 0; tailor keeps no entry.
        if (value === null) {
          assert.equal(actual, undefined, `${c.name} state ${index}.${key}`);
          continue;
        }
        if (typeof value === 'number') assert.equal(actual, value, `${c.name} state ${index}.${key}`);
        else
          assertClose(
            (actual as torch.Tensor).toFloat32Array(),
            value,
            1e-6,
            0,
            `${c.name} state ${index}.${key}`,
          );
      }
    }
    opt.zeroGrad();
    assert.equal(params[0]!.grad, null);
    opt.dispose();
    torch.dispose(params);
    assert.equal(torch.liveTensors(), before, 'the optimizer leaks no tensors');
  });
}

test('stateDict / loadStateDict resume gives the same trajectory as an uninterrupted run', () => {
  const before = torch.liveTensors();
  torch.manualSeed(3);
  const init = torch.randn([4, 3]);
  const grads = Array.from({ length: 6 }, () => torch.randn([4, 3]));
  const run = (opt: AnyOptimizer, p: torch.Tensor, from: number, to: number) => {
    for (let s = from; s < to; s++) {
      p.grad = grads[s]!;
      opt.step();
    }
  };
  for (const make of [
    (ps: torch.Tensor[]) => new SGD(ps, { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 5e-4 }),
    (ps: torch.Tensor[]) => new AdamW(ps, { lr: 0.01, amsgrad: true }),
    (ps: torch.Tensor[]) => new Adam(ps, { lr: 0.01, weightDecay: 0.01 }),
    (ps: torch.Tensor[]) => new RMSprop(ps, { lr: 0.01, momentum: 0.9, centered: true }),
  ]) {
    const a = init.clone().requiresGrad_();
    const optA = make([a]);
    run(optA, a, 0, 6);

    const b = init.clone().requiresGrad_();
    const optB = make([b]);
    run(optB, b, 0, 3);
    const saved = JSON.parse(
      JSON.stringify(optB.stateDict(), (k, v) => (v instanceof torch.Tensor ? undefined : v)),
    );
    // Rebuild the tensors part as a checkpoint would (copies), then resume in a fresh optimizer.
    const tensors = optB.stateDict().state['0']!;
    for (const [k, v] of Object.entries(tensors))
      if (v instanceof torch.Tensor) saved.state['0'][k] = v.clone();
    optB.dispose();
    const c = b.clone().requiresGrad_();
    const optC = make([c]);
    optC.paramGroups[0]!.lr = 123; // overwritten by the loaded hyperparameters
    optC.loadStateDict(saved);
    torch.dispose(saved.state['0']);
    assert.notEqual(optC.paramGroups[0]!.lr, 123);
    run(optC, c, 3, 6);
    assertClose(c.toFloat32Array(), a.toFloat32Array(), 0, 0, 'resumed parameters');
    optA.dispose();
    optC.dispose();
    torch.dispose([a, b, c]);
  }
  torch.dispose([init, grads]);
  assert.equal(torch.liveTensors(), before);
});

test('param groups: per-group lr, defaults fill the rest, bad input names the field', () => {
  torch.tidy(() => {
    const w = torch.ones([2]).requiresGrad_();
    const b = torch.ones([2]).requiresGrad_();
    const opt = new SGD(
      [
        { params: [w], lr: 0.5 },
        { params: [b], weightDecay: 0.1 },
      ],
      { lr: 0.1, momentum: 0.9 },
    );
    assert.equal(opt.paramGroups[0]!.lr, 0.5);
    assert.equal(opt.paramGroups[1]!.lr, 0.1);
    assert.equal(opt.paramGroups[1]!.momentum, 0.9);
    assert.equal(opt.paramGroups[1]!.weightDecay, 0.1);
    assert.equal(opt.paramGroups[0]!.weightDecay, 0);
    const sd = opt.stateDict();
    assert.deepEqual(
      sd.paramGroups.map((g) => g.params),
      [[0], [1]],
    );
    assert.throws(() => new SGD([w], { lr: -1 }), /invalid lr -1/);
    assert.throws(() => new SGD([w], { lr: 0.1, nesterov: true }), /Nesterov/);
    assert.throws(
      () => new SGD([{ params: [w] }, { params: [w] }], { lr: 0.1 }),
      /more than one parameter group/,
    );
    assert.throws(() => new AdamW([{ params: [w], betas: [0.9, 1.5] }]), /invalid betas/);
    assert.throws(
      () => new SGD([{ params: [w], wd: 1 } as never], { lr: 0.1 }),
      /unknown hyperparameter 'wd'/,
    );
    assert.throws(() => new SGD([], { lr: 0.1 }), /empty parameter list/);
    assert.throws(
      () => opt.loadStateDict({ state: {}, paramGroups: [] }),
      /0 parameter groups, this optimizer has 2/,
    );
    opt.dispose();
  });
});

test('zeroGrad sets grads to none, or zeroes them in place; params without grads are skipped', () => {
  torch.tidy(() => {
    const w = torch.tensor([1, 2, 3]).requiresGrad_();
    const untouched = torch.tensor([5, 5]).requiresGrad_();
    const opt = new SGD([w, untouched], { lr: 1, momentum: 0.5 });
    w.mul(w).sum().backward();
    opt.step();
    assert.deepEqual(w.toNumbers(), [-1, -2, -3]);
    assert.deepEqual(untouched.toNumbers(), [5, 5]);
    assert.equal(Object.keys(opt.stateDict().state).join(), '0', 'state only for parameters that stepped');
    opt.zeroGrad(false);
    assert.deepEqual(w.grad!.toNumbers(), [0, 0, 0]);
    opt.zeroGrad();
    assert.equal(w.grad, null);
    opt.dispose();
  });
});

test('an optimizer step inside a training loop leaks nothing', () => {
  const w = torch.randn([8, 4]).requiresGrad_();
  const opt = new AdamW([w], { lr: 1e-2 });
  const x = torch.randn([16, 8]);
  const before = torch.liveTensors();
  let first = 0;
  let last = 0;
  for (let i = 0; i < 50; i++) {
    const loss = torch.tidy(() => {
      opt.zeroGrad();
      const l = x.matmul(w).square().mean();
      l.backward();
      opt.step();
      return l.item();
    });
    if (i === 0) first = loss;
    last = loss;
  }
  // +2 state tensors (exp_avg, exp_avg_sq) and the grad, which lives on w not as a handle.
  assert.equal(torch.liveTensors(), before + 2);
  assert.ok(last < first * 0.5, `loss went from ${first} to ${last}`);
  opt.dispose();
  torch.dispose([w, x]);
});

test('SGD: the multi-tensor step (foreach) gives the per-parameter step bit for bit', () => {
  const configs = [
    { lr: 0.1 },
    { lr: 0.1, momentum: 0.9 },
    { lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 5e-4 },
    { lr: 0.05, momentum: 0.8, dampening: 0.1, weightDecay: 1e-3 },
    { lr: 0.02, momentum: 0.9, nesterov: true },
  ];
  const run = (options: (typeof configs)[number], foreach: boolean, capturable: boolean) => {
    torch.manualSeed(3);
    const params = [torch.randn([4, 3]), torch.randn([3]), torch.randn([2, 2]), torch.randn([5])].map((p) =>
      p.requiresGrad_(true),
    );
    // a second group that maximizes (always per parameter), and a parameter that never gets a gradient
    const opt = new SGD(
      [{ params: params.slice(0, 3) }, { params: params.slice(3), maximize: true, lr: 0.01 }],
      options,
    );
    opt.foreach = foreach;
    opt.capturable = capturable;
    for (let step = 0; step < 4; step++) {
      torch.tidy(() => {
        const x = torch.randn([3]);
        params[0]!
          .matmul(x)
          .square()
          .sum()
          .add(params[1]!.mul(x).sum())
          .add(params[3]!.square().sum())
          .backward();
      });
      if (step === 2) opt.paramGroups[0]!.lr *= 0.5;
      opt.syncLearningRates();
      opt.step();
      opt.zeroGrad();
    }
    const out = params.map((p) => Array.from(p.toFloat32Array()));
    opt.dispose();
    torch.dispose(params);
    return out;
  };
  for (const options of configs)
    for (const capturable of [false, true])
      assert.deepEqual(
        run(options, true, capturable),
        run(options, false, capturable),
        `${JSON.stringify(options)} capturable ${capturable}`,
      );
  const opt = new SGD([torch.zeros([2]).requiresGrad_(true)], { lr: 0.1 });
  assert.equal(opt.foreach, null, 'default: decided by where the parameters are (the GPU)');
  opt.dispose();
});

test("Adam's and AdamW's capturable mode follows the eager form to float rounding, step counts saved as numbers", () => {
  const configs = [
    { lr: 0.01 },
    { lr: 0.02, weightDecay: 0.05, amsgrad: true },
    { lr: 0.01, weightDecay: 0, betas: [0.8, 0.99], eps: 1e-6 },
  ];
  const run = (options: (typeof configs)[number], capturable: boolean, Class: typeof Adam | typeof AdamW) => {
    torch.manualSeed(4);
    const params = [torch.randn([4, 3]), torch.randn([3]), torch.randn([5])].map((p) =>
      p.requiresGrad_(true),
    );
    // a second group that maximizes, and a parameter that never gets a gradient
    const opt = new Class(
      [{ params: params.slice(0, 2) }, { params: params.slice(2), maximize: true }],
      options,
    );
    opt.capturable = capturable;
    const steps: number[] = [];
    for (let step = 0; step < 6; step++) {
      torch.tidy(() => {
        const x = torch.randn([3]);
        params[0]!.matmul(x).square().sum().add(params[1]!.mul(x).sum()).backward();
      });
      if (step === 3) opt.paramGroups[0]!.lr *= 0.5; // a schedule change between replays
      opt.syncLearningRates();
      opt.step();
      opt.zeroGrad();
      // the state as a checkpoint stores it: step counts are numbers in either form
      if (step === 4) steps.push(...Object.values(opt.stateDict().state).map((s) => s.step as number));
    }
    // back to the eager form: the counts continue from the device tensors
    opt.capturable = false;
    torch.tidy(() => params[0]!.square().sum().backward());
    opt.step();
    const out = { params: params.map((p) => Array.from(p.toFloat32Array())), steps };
    opt.dispose();
    torch.dispose(params);
    return out;
  };
  for (const Class of [Adam, AdamW])
    for (const options of configs) {
      const eager = run(options, false, Class);
      const captured = run(options, true, Class);
      const what = `${Class.name} ${JSON.stringify(options)}`;
      assert.deepEqual(captured.steps, [5, 5], what);
      assert.deepEqual(eager.steps, [5, 5]);
      captured.params.forEach((p, i) =>
        p.forEach((v, j) =>
          assert.ok(
            Math.abs(v - eager.params[i]![j]!) < 1e-5,
            `${what}: parameter ${i}[${j}] ${v} vs ${eager.params[i]![j]}`,
          ),
        ),
      );
    }
});

test('Adam adds weight decay to the gradient, AdamW shrinks the weights: they differ with it, agree without', () => {
  const run = (Class: typeof Adam | typeof AdamW, weightDecay: number) =>
    torch.tidy(() => {
      const w = torch.tensor([1, -2, 3]).requiresGrad_();
      const opt = new Class([w], { lr: 0.1, weightDecay });
      for (let i = 0; i < 3; i++) {
        torch.tidy(() => w.square().sum().backward());
        opt.step();
        opt.zeroGrad();
      }
      opt.dispose();
      return w.toNumbers();
    });
  assert.deepEqual(run(Adam, 0), run(AdamW, 0));
  assert.notDeepEqual(run(Adam, 0.5), run(AdamW, 0.5));
  assert.equal(new Adam([torch.keep(torch.zeros([1]))]).paramGroups[0]!.weightDecay, 0, "Adam's default");
  assert.throws(() => new Adam([torch.zeros([1])], { betas: [1, 0.5] }), /^RangeError: Adam: invalid betas/);
});

test('clipGradNorm_ and clipGradValue_ match PyTorch 1.13 (norm orders 1, 2, 3, inf; a parameter without grad)', () => {
  const before = torch.liveTensors();
  const { shapes, grads, cases } = golden.clip;
  for (const c of cases) {
    const params = shapes.map((s) => torch.zeros(s).requiresGrad_());
    params.forEach((p, i) => {
      const g = torch.tensor(Float32Array.from(grads[i]!), { shape: shapes[i] });
      p.grad = g;
      g.dispose();
    });
    const withoutGrad = torch.zeros([2]).requiresGrad_();
    const what = JSON.stringify({ ...c, grads: undefined });
    if (c.kind === 'norm') {
      const normType = c.normType === 'inf' ? Infinity : c.normType!;
      const total = torch.nn.utils.clipGradNorm_([...params, withoutGrad], c.maxNorm!, { normType });
      assert.deepEqual(total.shape, []);
      assertClose([total.item()], [c.total!], 1e-6, 0, `${what} total`);
      total.dispose();
    } else torch.nn.utils.clipGradValue_([...params, withoutGrad], c.clipValue!);
    params.forEach((p, i) =>
      torch.tidy(() => assertClose(p.grad!.toFloat32Array(), c.grads[i]!, 1e-6, 0, what)),
    );
    assert.equal(withoutGrad.grad, null);
    torch.dispose([...params, withoutGrad]);
  }
  assert.equal(torch.liveTensors(), before, 'clipping leaks no tensors');
});

test('clipGradNorm_: no gradients gives 0; a non-finite norm is an error only when asked; bad arguments are named', () => {
  torch.tidy(() => {
    const w = torch.zeros([3]).requiresGrad_();
    assert.equal(torch.nn.utils.clipGradNorm_(w, 1).item(), 0);
    w.grad = torch.tensor([1, NaN, 2]);
    assert.throws(
      () => torch.nn.utils.clipGradNorm_([w], 1, { errorIfNonfinite: true }),
      /clipGradNorm_: the total norm of order 2 .* is non-finite/,
    );
    assert.ok(Number.isNaN(torch.nn.utils.clipGradNorm_([w], 1).item()));
    assert.throws(
      () => torch.nn.utils.clipGradNorm_([w], -1),
      /clipGradNorm_: maxNorm must be a number >= 0, got -1/,
    );
    assert.throws(
      () => torch.nn.utils.clipGradNorm_([w], 1, { normType: 0 }),
      /options.normType must be a number > 0 or Infinity, got 0/,
    );
    assert.throws(
      () => torch.nn.utils.clipGradNorm_(['w'] as never, 1),
      /parameters must be a Tensor or an array of Tensors, got an array of 1/,
    );
    assert.throws(
      () => torch.nn.utils.clipGradValue_([w], NaN),
      /clipGradValue_: clipValue must be a finite number >= 0/,
    );
  });
});

test("RMSprop's capturable mode follows the eager form to float rounding", () => {
  const run = (capturable: boolean, momentum: number) => {
    torch.manualSeed(6);
    const w = torch.randn([5]).requiresGrad_(true);
    const opt = new RMSprop([w], { lr: 0.01, momentum, centered: momentum > 0 });
    opt.capturable = capturable;
    for (let step = 0; step < 5; step++) {
      torch.tidy(() => w.square().sum().backward());
      if (step === 2) opt.paramGroups[0]!.lr *= 0.5;
      opt.syncLearningRates();
      opt.step();
      opt.zeroGrad();
    }
    const out = Array.from(w.toFloat32Array());
    opt.dispose();
    w.dispose();
    return out;
  };
  for (const momentum of [0, 0.9]) {
    const eager = run(false, momentum);
    run(true, momentum).forEach((v, i) =>
      assert.ok(Math.abs(v - eager[i]!) < 1e-6, `momentum ${momentum}: ${v} vs ${eager[i]}`),
    );
  }
});
