// PRL pieces that need no training: preference aggregation, the simplex grid, preference checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { simplexGrid } from '../../src/longtail/adapt/controllability.js';
import { assertClose } from '../helpers.js';
import { ResNetCifar } from '../../src/longtail/models/resnet-cifar.js';
import { aggregateByPreference } from '../../src/longtail/systems/prl.js';
import { Preference, PreferenceError } from '../../src/longtail/types/preference.js';
import { prlSystemFromConfig } from '../../src/longtail/config/session.js';
import { Rng } from '../../src/util/rng.js';

test('the output weights the experts by the preference; uniform r is the mean', () => {
  torch.tidy(() => {
    const logits = torch.randn([3, 4, 5], 'float64');
    assertClose(
      aggregateByPreference(logits, [1 / 3, 1 / 3, 1 / 3]).toFloat64Array(),
      logits.mean(0).toFloat64Array(),
      1e-12,
    );
    assertClose(
      aggregateByPreference(logits, [0, 0, 1]).toFloat64Array(),
      logits.select(0, 2).toFloat64Array(),
      1e-12,
    );
    const r = torch.tensor([0.2, 0.3, 0.5], { dtype: 'float64' }).requiresGrad_();
    aggregateByPreference(logits, r).sum().backward();
    assertClose(
      r.grad!.toFloat64Array(),
      [0, 1, 2].map((e) => logits.select(0, e).sum().item()),
      1e-9,
    );
  });
});

test('a preference is checked and normalised once: one non-negative weight per expert, not all zero', () => {
  assert.deepEqual(Preference.of([1, 1, 2], 3).weights, [0.25, 0.25, 0.5]);
  const grid = [0.6, 0.3, 0.1];
  assert.notEqual(
    grid.reduce((a, b) => a + b, 0),
    1,
  );
  assert.deepEqual(Preference.of(grid, 3).weights, grid, 'on the simplex up to rounding: kept as given');
  const p = Preference.of([2, 0, 2], null);
  assert.equal(Preference.of(p, 3), p, 'a Preference is not normalised again');
  assert.equal(JSON.stringify({ p }), '{"p":[0.5,0,0.5]}');
  assert.deepEqual(Preference.uniform(4).weights, [0.25, 0.25, 0.25, 0.25]);
  for (const [weights, re] of [
    [[1, 1], /has 2 weights but the run has 3 experts \(one per expert\)/],
    [[1, -1, 1], /must be non-negative numbers, got \[1,-1,1\]/],
    [[1, NaN, 1], /must be non-negative numbers/],
    [[1, '1', 1], /must be non-negative numbers/],
    [[0, 0, 0], /has weights that sum to 0/],
  ] as const)
    assert.throws(
      () => Preference.of(weights, 3),
      (e: unknown) => e instanceof PreferenceError && e.name === 'PreferenceError' && re.test(e.message),
    );
  assert.throws(() => Preference.of(p, 2), /has 3 weights but the run has 2 experts/);
});

test('PRL at a preference: the same modules, its evaluation and cached-feature logits weight the experts generated for it', () => {
  const model = new ResNetCifar({ classes: 4, experts: 3, inChannels: 1, blocksPerStage: 1 });
  const system = prlSystemFromConfig(model, {}, [40, 20, 8, 2], 'p.json');
  try {
    torch.tidy(() => {
      for (const m of Object.values(system.modules)) m.eval();
      assert.deepEqual(system.preference.weights, [1 / 3, 1 / 3, 1 / 3], 'uniform by default');
      const at = system.at([2, 1, 1]);
      assert.deepEqual(at.preference.weights, [0.5, 0.25, 0.25]);
      assert.equal(at.modules, system.modules);
      assert.equal(at.device, system.device);
      assert.deepEqual(system.preference.weights, [1 / 3, 1 / 3, 1 / 3], 'the system itself is unchanged');
      assert.throws(() => system.at([1, 1]), PreferenceError);
      assert.throws(() => system.at([0, 0, 0]), /sum to 0/);
      const x = torch.randn([5, 1, 12, 12]);
      const whole = at.evalForward(x);
      const features = model.expertFeatures(x);
      const [cached, again] = system.logitsAt([2, 1, 1], features, features);
      assertClose(cached!.output.toFloat64Array(), whole.output.toFloat64Array(), 1e-5);
      assertClose(cached!.logits.toFloat64Array(), whole.logits.toFloat64Array(), 1e-5);
      assert.deepEqual(again!.output.toFloat64Array(), cached!.output.toFloat64Array());
      const [byValue] = system.logitsAt(at.preference, features);
      assert.deepEqual(byValue!.output.toFloat64Array(), cached!.output.toFloat64Array());
      // A tensor on the simplex (the test-time search's softmax) is used as it is: gradients reach it.
      const theta = torch.zeros([3]).requiresGrad_();
      const [searched] = system.logitsAt(theta.softmax(0), features);
      searched!.output.sum().backward();
      assert.ok(theta.grad, 'the gradient reaches the preference');
      assert.throws(() => system.logitsAt(torch.zeros([2]), features), PreferenceError);
    });
  } finally {
    for (const m of Object.values(system.modules)) m.dispose();
  }
});

test('the simplex grid covers every point with spacing 1/steps', () => {
  const grid = simplexGrid(3, 10);
  assert.equal(grid.length, 66);
  for (const p of grid) assert.ok(Math.abs(p.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  assert.equal(new Set(grid.map((p) => p.join('/'))).size, 66);
  assert.equal(simplexGrid(2, 4).length, 5);
});

test('several preferences per batch: each draw is the experts generated for its own r on shared features', () => {
  const model = new ResNetCifar({ classes: 4, experts: 3, inChannels: 1, blocksPerStage: 1 });
  const counts = [40, 20, 8, 2];
  const system = prlSystemFromConfig(model, { draws_per_batch: 3 }, counts, 'p.json');
  try {
    torch.tidy(() => {
      for (const m of Object.values(system.modules)) m.eval();
      const x = torch.randn([5, 1, 12, 12]);
      const { out, extra } = system.trainForward(x, new Rng(7));
      const draws = extra!.draws!;
      assert.equal(draws.length, 3);
      assert.deepEqual(extra!.preference, draws[0]!.preference);
      assert.equal(out, draws[0]!.out);
      const expected = new Rng(7);
      for (const d of draws) {
        const preference = d.preference as number[];
        assertClose(preference, expected.dirichlet(1.2, 3), 1e-12);
        const alone = system.at(preference).evalForward(x);
        assertClose(d.out.logits!.toFloat64Array(), alone.logits.toFloat64Array(), 1e-5);
        assertClose(d.out.output.toFloat64Array(), alone.output.toFloat64Array(), 1e-5);
      }
      const y = torch.tensor([0, 1, 2, 3, 0]).long();
      system.loss.forward(out, y, extra).backward();
      assert.ok(system.hyper.head.weight.grad, 'the hypernetwork gets a gradient');
    });
  } finally {
    for (const m of Object.values(system.modules)) m.dispose();
  }
  const other = new ResNetCifar({ classes: 4, experts: 3, inChannels: 1, blocksPerStage: 1 });
  try {
    assert.throws(
      () => prlSystemFromConfig(other, { variant: 'released', draws_per_batch: 4 }, counts, 'p.json'),
      /p\.json: prl\.draws_per_batch: the released variant/,
    );
  } finally {
    other.dispose();
  }
});
