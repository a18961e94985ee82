// optim.swaUtils (AveragedModel, SWALR, updateBn, getEmaAvgFn) and BatchNorm's momentum null
// against PyTorch 1.13 (scripts/golden/swa_utils.py), plus the named errors and tensor ownership.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn, optim } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

type State = Record<string, number[]>;
interface Case {
  name: string;
  swaLr: number | number[];
  annealEpochs: number;
  annealStrategy: 'cos' | 'linear';
  resume: boolean;
  rates: number[][];
  lastEpoch: number;
  model: State;
  averaged: Record<'mean' | 'meanBuffers' | 'emaBuffers', State>;
  afterUpdateBn: State;
  trainingAfterUpdateBn: boolean;
  momentumAfterUpdateBn: number;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'swa_utils.json'), 'utf8')) as {
  init: State;
  batches: { x: number[]; y: number[] }[];
  bnLoader: { n: number; x: number[]; y: number[] }[];
  cases: Case[];
  cumulativeBn: {
    inputs: { shape: number[]; values: number[] }[];
    states: State[];
    probe: number[];
    evalOutput: number[];
    repr: string;
  };
};
// float64 throughout: equal to PyTorch up to a few units of double rounding
const TOL = 1e-12;
const f64 = (values: number[], shape: number[]) => torch.tensor(Float64Array.from(values), { shape });
const makeNet = () =>
  new nn.Sequential(new nn.Linear(3, 4), new nn.BatchNorm1d(4), new nn.Linear(4, 2)).double();

/** A module's state dict against PyTorch's: the same keys, the values to TOL. */
function checkState(what: string, module: nn.Module, expected: State): void {
  const state = module.stateDict();
  assert.deepEqual(Object.keys(state).sort(), Object.keys(expected).sort(), `${what}: keys`);
  for (const [key, values] of Object.entries(expected))
    assertClose(state[key]!.toNumbers(), values, TOL, 0, `${what}: ${key}`);
}

/** The golden model: fixed float64 weights. */
function goldenNet(): nn.Sequential {
  const net = makeNet();
  torch.tidy(() => {
    const shapes = Object.fromEntries(Object.entries(net.stateDict()).map(([k, t]) => [k, t.shape]));
    net.loadStateDict(
      Object.fromEntries(Object.entries(golden.init).map(([k, v]) => [k, f64(v, shapes[k]!)])),
    );
  });
  return net;
}

for (const c of golden.cases) {
  test(`swaUtils golden: ${c.name} (SWALR ${c.annealStrategy}, AveragedModel mean/EMA, updateBn)`, () => {
    const before = torch.liveTensors();
    const model = goldenNet();
    const opt = new optim.SGD(
      [
        { params: [...model.layers[0]!.parameters(), ...model.layers[1]!.parameters()], lr: 0.1 },
        { params: model.layers[2]!.parameters(), lr: 0.05 },
      ],
      { lr: 0.1, momentum: 0.9 },
    );
    // as the golden script: another scheduler records the initial rates, SWALR resumes at epoch 4
    if (c.resume) new optim.CosineAnnealingLR(opt, { tMax: 10 });
    const scheduler = new optim.swaUtils.SWALR(opt, {
      swaLr: c.swaLr,
      annealEpochs: c.annealEpochs,
      annealStrategy: c.annealStrategy,
      ...(c.resume ? { lastEpoch: 4 } : {}),
    });
    const averaged = {
      mean: new optim.swaUtils.AveragedModel(model, { copy: makeNet }),
      meanBuffers: new optim.swaUtils.AveragedModel(model, { copy: makeNet, useBuffers: true }),
      emaBuffers: new optim.swaUtils.AveragedModel(model, {
        copy: makeNet,
        avgFn: optim.swaUtils.getEmaAvgFn(0.9),
        useBuffers: true,
      }),
    };
    const rates = [opt.paramGroups.map((g) => g.lr)];
    for (const batch of golden.batches) {
      opt.zeroGrad();
      torch.tidy(() =>
        model
          .forward(f64(batch.x, [6, 3]))
          .sub(f64(batch.y, [6, 2]))
          .pow(2)
          .mean()
          .backward(),
      );
      opt.step();
      for (const avg of Object.values(averaged)) avg.updateParameters(model);
      scheduler.step();
      rates.push(opt.paramGroups.map((g) => g.lr));
    }
    rates.forEach((r, i) => assertClose(r, c.rates[i]!, 1e-15, 0, `rates after step ${i}`));
    assert.equal(scheduler.lastEpoch, c.lastEpoch);
    checkState('model', model, c.model);
    for (const [key, avg] of Object.entries(averaged))
      checkState(`AveragedModel ${key}`, avg, c.averaged[key as keyof Case['averaged']]);

    // a loader of [input, target] batches, as a DataLoader's
    const loader = golden.bnLoader.map((b) => [f64(b.x, [b.n, 3]), f64(b.y, [b.n, 2])]);
    averaged.mean.eval();
    optim.swaUtils.updateBn(loader, averaged.mean);
    checkState('after updateBn', averaged.mean, c.afterUpdateBn);
    assert.equal(averaged.mean.training, c.trainingAfterUpdateBn);
    assert.equal(averaged.mean.module.layers[1]!.training, c.trainingAfterUpdateBn);
    assert.equal((averaged.mean.module.layers[1] as nn.BatchNorm1d).momentum, c.momentumAfterUpdateBn);

    // the averaged model runs its copy
    torch.tidy(() => {
      const x = f64(golden.batches[0]!.x, [6, 3]);
      assertClose(averaged.mean.forward(x).toNumbers(), averaged.mean.module.forward(x).toNumbers(), 0);
    });
    torch.dispose(loader);
    for (const avg of Object.values(averaged)) avg.dispose();
    opt.dispose();
    model.dispose();
    assert.equal(torch.liveTensors(), before, 'no tensor left behind');
  });
}

test('BatchNorm1d with momentum null: the cumulative average of the batches, as PyTorch', () => {
  const g = golden.cumulativeBn;
  const bn = new nn.BatchNorm1d(4, { momentum: null }).double();
  assert.equal(bn.toString(), g.repr);
  g.inputs.forEach((input, i) => {
    torch.tidy(() => bn.forward(f64(input.values, input.shape)));
    checkState(`after batch ${i}`, bn, g.states[i]!);
  });
  bn.eval();
  torch.tidy(() =>
    assertClose(bn.forward(f64(g.probe, [3, 4])).toNumbers(), g.evalOutput, TOL, 0, 'eval output'),
  );
  // settable and checked, as PyTorch's attribute
  bn.momentum = 0.2;
  assert.equal(bn.momentum, 0.2);
  assert.throws(
    () => (bn.momentum = -1),
    /^ArgumentError: BatchNorm1d.momentum: momentum must be a finite number >= 0/,
  );
  assert.throws(
    () => new nn.BatchNorm2d(3, { momentum: Number.NaN }),
    /^ArgumentError: BatchNorm2d: options.momentum must be a finite number >= 0/,
  );
  bn.resetRunningStats();
  assert.deepEqual(bn.runningMean!.toNumbers(), [0, 0, 0, 0]);
  assert.deepEqual(bn.runningVar!.toNumbers(), [1, 1, 1, 1]);
  assert.equal(bn.numBatchesTracked!.item(), 0);
  bn.dispose();
});

test('AveragedModel: copies without drawing random numbers, owns its tensors, device and clone()', () => {
  const before = torch.liveTensors();
  const model = makeNet();
  (model.layers[0] as nn.Linear).weight.requiresGrad_(false);
  model.layers[2]!.eval();
  torch.manualSeed(3);
  const avg = new optim.swaUtils.AveragedModel(model, { copy: makeNet, device: 'cpu' });
  // the copy drew nothing: the generator is where the seed left it
  const drawn = torch.tidy(() => torch.rand([2]).toNumbers());
  torch.manualSeed(3);
  assert.deepEqual(
    torch.tidy(() => torch.rand([2]).toNumbers()),
    drawn,
  );
  const own = avg.stateDict();
  for (const [name, t] of Object.entries(model.stateDict())) {
    assert.notEqual(own[`module.${name}`], t, `${name} is a copy`);
    assert.equal(own[`module.${name}`]!.dtype, t.dtype);
    assertClose(own[`module.${name}`]!.toNumbers(), t.toNumbers(), 0, 0, name);
  }
  assert.equal(own.n_averaged!.dtype, 'int64');
  assert.equal((avg.module.layers[0] as nn.Linear).weight.requiresGrad, false, 'requires_grad copied');
  assert.equal((avg.module.layers[1] as nn.BatchNorm1d).weight!.requiresGrad, true);
  assert.equal(avg.module.layers[2]!.training, false, 'training mode copied per module');
  avg.updateParameters(model);
  assert.equal(avg.nAveraged.item(), 1);

  // a module with clone() needs no copy function
  const layer = new nn.TransformerEncoderLayer(8, 2, { dimFeedforward: 16, dropout: 0 });
  const layerAvg = new optim.swaUtils.AveragedModel(layer);
  assert.equal(layerAvg.module.parameters().length, layer.parameters().length);
  for (const m of [avg, model, layerAvg, layer]) m.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor left behind');
});

test('swaUtils: named errors', () => {
  const before = torch.liveTensors();
  const model = makeNet();
  const { AveragedModel, SWALR, updateBn, getEmaAvgFn } = optim.swaUtils;
  assert.throws(
    () => new AveragedModel(model),
    /^ArgumentError: AveragedModel: options.copy must be a function that builds a new Sequential of the model's configuration, such as \(\) => new Sequential\(...\) \(the model has no clone\(\)\)/,
  );
  assert.throws(
    () => new AveragedModel(model, { copy: (m) => m }),
    /^ArgumentError: AveragedModel: options.copy must return a new module \(not the model itself\)/,
  );
  assert.throws(
    () => new AveragedModel(model, { copy: () => new nn.Sequential(new nn.Linear(3, 5)).double() as never }),
    /^ArgumentError: AveragedModel: the module from options.copy has '0.weight' \[5,3\] where the model has '0.weight' \[4,3\]: build it with the model's configuration/,
  );
  assert.throws(
    () => new AveragedModel(model, { copy: () => new nn.Sequential(model.layers[0]!) as never }),
    /^ArgumentError: AveragedModel: the module from options.copy shares '0.weight' with the model: build a new module/,
  );
  assert.throws(
    () => new AveragedModel(model, { copy: makeNet, avgFn: 3 as never }),
    /options.avgFn must be a function/,
  );
  const avg = new AveragedModel(model, { copy: makeNet, avgFn: () => 1 as never });
  const other = new nn.Linear(3, 4).double();
  assert.throws(
    () => avg.updateParameters(other),
    /^ArgumentError: AveragedModel.updateParameters: the model has 2 parameters, the average 6: pass the model the AveragedModel was built from/,
  );
  avg.updateParameters(model);
  assert.throws(
    () => avg.updateParameters(model),
    /^ArgumentError: AveragedModel.updateParameters: avgFn must return a Tensor, got 1/,
  );
  assert.throws(
    () => getEmaAvgFn(1.5),
    /^ArgumentError: getEmaAvgFn: decay must be a finite number >= 0 and <= 1, got 1.5/,
  );

  const opt = new optim.SGD(
    [{ params: model.layers[0]!.parameters() }, { params: model.layers[2]!.parameters() }],
    {
      lr: 0.1,
    },
  );
  assert.throws(
    () => new SWALR(opt, { swaLr: [0.1, 0.2, 0.3] }),
    /^ArgumentError: SWALR: options.swaLr must be a number, or 2 of them \(one per parameter group\), got an array of 3/,
  );
  assert.throws(
    () => new SWALR(opt, { swaLr: 0.1, annealEpochs: 1.5 }),
    /^ArgumentError: SWALR: options.annealEpochs must be/,
  );
  assert.throws(
    () => new SWALR(opt, { swaLr: 0.1, annealStrategy: 'step' as never }),
    /^ArgumentError: SWALR: options.annealStrategy must be 'cos' or 'linear', got 'step'/,
  );
  assert.throws(
    () => new SWALR(opt, { swaLr: 0.1, lastEpoch: 3 }),
    /^ArgumentError: SWALR: options.lastEpoch 3 resumes a schedule, but parameter group 0 has no initial rate; build the optimizer's first scheduler with the default lastEpoch \(-1\), or leave lastEpoch out/,
  );
  // state dicts round-trip, and a bad one changes nothing
  const scheduler = new SWALR(opt, { swaLr: 0.01, annealEpochs: 4 });
  scheduler.step();
  const saved = scheduler.stateDict();
  assert.equal(saved.stepCount, 2);
  assert.throws(
    () => scheduler.loadStateDict({ ...saved, stepCount: undefined as never }),
    /^ArgumentError: SWALR.loadStateDict: state.stepCount must be/,
  );
  scheduler.step();
  scheduler.loadStateDict(saved);
  assert.equal(scheduler.stepCount, 2);
  assert.deepEqual(scheduler.getLastLr(), saved.lastLrs);

  assert.throws(
    () => updateBn([[1, 2]] as never, model),
    /^ArgumentError: updateBn: loader item 0 must be a Tensor or an array whose first element is the input Tensor, got an array of 2/,
  );
  assert.throws(
    () => updateBn(5 as never, model),
    /^ArgumentError: updateBn: loader must be an iterable of tensors/,
  );
  // an error in the loop puts the momenta and the mode back
  model.eval();
  const wrongWidth = torch.zeros([2, 7], 'float64');
  assert.throws(() => updateBn([wrongWidth], model), /shapes cannot be multiplied|size|shape/i);
  wrongWidth.dispose();
  assert.equal((model.layers[1] as nn.BatchNorm1d).momentum, 0.1);
  assert.equal(model.training, false);
  // a generator's tensors are freed item by item
  const live = torch.liveTensors();
  updateBn(
    (function* () {
      for (let i = 0; i < 3; i++) yield torch.randn([4, 3], 'float64');
    })(),
    model,
  );
  assert.equal(torch.liveTensors(), live);
  for (const m of [avg, other, model]) m.dispose();
  opt.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor left behind');
});
