// Properties of the long-tail losses that golden values alone do not show: the scalarizations'
// limits, the per-class constants, DRW switching, dtype handling and the registry's errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import {
  classBalancedWeights,
  createScalarization,
  inversePrior,
  LDAMLoss,
  ldamMargins,
  linearScalarization,
  mixupLoss,
  releasedStch,
  RIDELoss,
  rideTemperatureFactors,
  smoothTchebycheff,
} from '../../src/longtail/losses/index.js';
import { createLoss, createPrlLoss } from '../../src/longtail/config/losses.js';

const COUNTS = [500, 299, 179, 107, 64, 38, 23, 13, 8, 5];

function labels(values: number[]): torch.Tensor {
  return torch.tensor(BigInt64Array.from(values.map((v) => BigInt(v))));
}

function randomBatch(E: number, N: number, C: number, dtype: torch.DType = 'float64') {
  const logits = torch.randn([E, N, C], dtype).mul(3);
  const output = logits.mean(0);
  const target = torch.randint(0, C, [N]);
  return { output, logits, target };
}

test('smooth Tchebycheff tends to the largest weighted loss as mu -> 0, from above, within mu log E', () => {
  torch.tidy(() => {
    const L = [1.3, 2.0, 0.7];
    const r = [0.5, 0.2, 0.3];
    const z = [0.1, 0.0, 0.2];
    const weighted = L.map((l, e) => r[e]! * (l - z[e]!));
    const max = Math.max(...weighted);
    let previousGap = Infinity;
    for (const mu of [1, 0.3, 0.1, 0.01, 1e-3, 1e-5]) {
      const losses = torch.tensor(Float64Array.from(L)).requiresGrad_();
      const value = smoothTchebycheff(losses, r, { mu, z });
      const gap = value.item() - max;
      assert.ok(gap >= -1e-12, `mu ${mu}: below the max by ${-gap}`);
      assert.ok(gap <= mu * Math.log(3) + 1e-12, `mu ${mu}: gap ${gap} > mu log 3`);
      assert.ok(gap <= previousGap + 1e-15, `gap should shrink with mu`);
      previousGap = gap;
      value.backward();
      if (mu === 1e-5) {
        // All the gradient goes to the expert with the largest weighted loss, with weight r_e.
        const g = losses.grad!.toFloat64Array();
        const argmax = weighted.indexOf(max);
        g.forEach((v, e) => assert.ok(Math.abs(v - (e === argmax ? r[e]! : 0)) < 1e-9, `grad ${e}: ${v}`));
      }
    }
    assert.ok(previousGap < 1e-9);
  });
});

test('smooth Tchebycheff: mu and the ideal point are checked; z defaults to 0', () => {
  torch.tidy(() => {
    const losses = torch.tensor(Float64Array.from([1, 2, 3]));
    assert.throws(() => smoothTchebycheff(losses, [0.2, 0.3, 0.5], { mu: 0 }), /mu must be > 0/);
    assert.throws(
      () => smoothTchebycheff(losses, [0.2, 0.3, 0.5], { z: [0, 1] }),
      /ideal point z has 2 values/,
    );
    assert.throws(() => smoothTchebycheff(losses, [0.5, 0.5]), /preference has 2 weights but there are 3/);
    assert.throws(() => smoothTchebycheff(losses, [0.5, -0.1, 0.6]), /preference\[1\] is -0.1/);
    assert.throws(() => smoothTchebycheff(losses, undefined), /needs a preference/);
    const expected = 0.1 * Math.log(Math.exp(2) + Math.exp(6) + Math.exp(15));
    assert.ok(Math.abs(smoothTchebycheff(losses, [0.2, 0.3, 0.5]).item() - expected) < 1e-12);
  });
});

test('linear scalarization is sum r_e L_e and its gradient reaches a tensor preference', () => {
  torch.tidy(() => {
    const losses = torch.tensor(Float64Array.from([1.5, 0.5, 2.5]));
    const r = torch.tensor(Float64Array.from([0.2, 0.3, 0.5])).requiresGrad_();
    const value = linearScalarization(losses, r);
    assert.ok(Math.abs(value.item() - (0.3 + 0.15 + 1.25)) < 1e-12);
    value.backward();
    assert.deepEqual(Array.from(r.grad!.toFloat64Array()), [1.5, 0.5, 2.5]);
  });
});

test("the released code's solvers: STCH ignores the preference, 'ls' is linear", () => {
  torch.tidy(() => {
    const losses = torch.tensor(Float64Array.from([1, 2, 3]));
    const expected = 6 + 0.1 * Math.log(Math.exp(1) + Math.exp(2) + Math.exp(3));
    assert.ok(Math.abs(releasedStch(losses).item() - expected) < 1e-12);
    assert.ok(Math.abs(createScalarization('released_stch')(losses, [1, 0, 0]).item() - expected) < 1e-12);
    assert.ok(Math.abs(createScalarization('ls')(losses, [0.5, 0.5, 0]).item() - 1.5) < 1e-12);
    assert.ok(
      Math.abs(
        createScalarization('STCH', { mu: 0.1 })(losses, [1, 0, 0]).item() -
          smoothTchebycheff(losses, [1, 0, 0]).item(),
      ) < 1e-15,
    );
    assert.throws(() => createScalarization('epo'), /unknown scalarization 'epo'/);
  });
});

test('inverse prior reverses the prior by sorted order; ties keep class order', () => {
  assert.deepEqual(inversePrior([0.5, 0.3, 0.2]), [0.2, 0.3, 0.5]);
  assert.deepEqual(inversePrior([0.1, 0.6, 0.3]), [0.6, 0.1, 0.3]);
  // ties: classes 0 and 2 share 0.4; sorted ascending [0.1, 0.1, 0.4, 0.4] by index -> ranks 2, 0, 3, 1
  assert.deepEqual(inversePrior([0.4, 0.1, 0.4, 0.1]), [0.1, 0.4, 0.1, 0.4]);
});

test('LDAM margins follow n^(-1/4) with the largest 0.5; class-balanced weights sum to C', () => {
  const m = ldamMargins(COUNTS);
  assert.ok(Math.abs(Math.max(...m) - 0.5) < 1e-15);
  assert.equal(m.indexOf(Math.max(...m)), COUNTS.length - 1);
  assert.ok(Math.abs(m[0]! / m[9]! - Math.pow(5 / 500, 0.25)) < 1e-12);
  const w = classBalancedWeights(COUNTS);
  assert.ok(Math.abs(w.reduce((a, b) => a + b, 0) - COUNTS.length) < 1e-9);
  for (let i = 1; i < w.length; i++) assert.ok(w[i]! > w[i - 1]!, 'rarer classes weigh more');
  assert.throws(() => classBalancedWeights([3, 0]), /at least one training image/);
  // a list using fewer classes than num_classes: how many lack images, and what to set
  assert.throws(
    () => ldamMargins([5, 2, 0, 0]),
    /^Error: LDAM margins: every class needs at least one training image, and 2 of the 4 have none; if the data has only 2 classes, set arch.args.num_classes to 2$/,
  );
  assert.throws(() => ldamMargins([]), /empty/);
});

test('DRW switches on after reweight_epoch (1-based epochs) and off again when an earlier epoch is set', () => {
  const loss = new LDAMLoss(COUNTS, { reweightEpoch: 160 });
  const seen: boolean[] = [];
  for (const epoch of [1, 159, 160, 161, 200]) {
    loss.setEpoch(epoch);
    seen.push(loss.reweighting);
  }
  assert.deepEqual(seen, [false, false, false, true, true]);
  loss.setEpoch(5);
  assert.equal(loss.reweighting, false);
  const plain = new LDAMLoss(COUNTS);
  plain.setEpoch(1000);
  assert.equal(plain.reweighting, false, 'reweight_epoch -1 never reweights');
  torch.tidy(() => {
    const { output, target } = randomBatch(1, 8, 10);
    const unweighted = loss.forward({ output }, target).item();
    loss.setEpoch(161);
    assert.notEqual(loss.forward({ output }, target).item(), unweighted);
  });
});

test('float32 logits give a float32 loss and gradients (constants follow the logits dtype)', () => {
  torch.tidy(() => {
    const { logits, target } = randomBatch(3, 6, 10, 'float32');
    const leaf = logits.detach().requiresGrad_();
    for (const [type, args] of [
      ['DiverseExpertLoss', { tau: 2 }],
      ['BSExpertLoss', {}],
      ['LDAMLoss', { reweight_epoch: 0 }],
      ['RIDELoss', { reweight_epoch: 0 }],
      ['FocalLoss', { gamma: 1, reweight: true }],
      ['PRLLoss', {}],
    ] as const) {
      const loss = createLoss(type, args, { classCounts: COUNTS, experts: 3 });
      loss.setEpoch?.(1);
      const value = loss.forward({ output: leaf.mean(0), logits: leaf }, target, {
        preference: [0.3, 0.3, 0.4],
      });
      assert.equal(value.dtype, 'float32', type);
      assert.ok(Number.isFinite(value.item()), type);
      value.backward();
      assert.equal(leaf.grad!.dtype, 'float32');
      leaf.grad = null;
    }
  });
});

test('PRL: the preference changes the loss; the released variant ignores it; mixup mixes expert losses', () => {
  torch.tidy(() => {
    const { output, logits, target } = randomBatch(3, 16, 10);
    const paper = createLoss('PRLLoss', {}, { classCounts: COUNTS, experts: 3 });
    const a = paper.forward({ output, logits }, target, { preference: [0.8, 0.1, 0.1] }).item();
    const b = paper.forward({ output, logits }, target, { preference: [0.1, 0.1, 0.8] }).item();
    assert.notEqual(a, b);
    const released = createPrlLoss({ variant: 'released' }, { classCounts: COUNTS, experts: 3 });
    const diverse = createLoss('DiverseExpertLoss', { tau: 2 }, { classCounts: COUNTS, experts: 3 });
    const r1 = released.forward({ output, logits }, target, { preference: [0.8, 0.1, 0.1] }).item();
    const r2 = released.forward({ output, logits }, target, { preference: [0.1, 0.1, 0.8] }).item();
    assert.equal(r1, r2);
    assert.ok(
      Math.abs(r1 - diverse.forward({ output, logits }, target).item()) < 1e-12,
      'released = DiverseExpertLoss',
    );
    // With the linear scalarization, mixing expert losses or mixing scalarized losses agree.
    const linear = createLoss('PRLLoss', { scalarization: 'linear' }, { classCounts: COUNTS, experts: 3 });
    const yb = torch.randint(0, 10, [16]);
    const extra = { preference: [0.2, 0.3, 0.5] };
    const mixed = mixupLoss(linear, { output, logits }, target, yb, 0.3, extra).item();
    const outer =
      0.3 * linear.forward({ output, logits }, target, extra).item() +
      0.7 * linear.forward({ output, logits }, yb, extra).item();
    assert.ok(Math.abs(mixed - outer) < 1e-12);
    assert.throws(
      () => paper.forward({ output }, target, extra),
      /needs the per-expert logits.*add_extra_info/,
    );
    assert.throws(() => paper.forward({ output, logits }, target), /needs a preference/);
  });
});

test('registry: unknown types and misspelled args name the field and suggest the closest', () => {
  const ctx = { classCounts: COUNTS, experts: 3, file: 'configs/x.json' };
  assert.throws(
    () => createLoss('LDAMLos', {}, ctx),
    /configs\/x\.json: loss\.type: unknown loss 'LDAMLos'; did you mean 'LDAMLoss'\?/,
  );
  assert.throws(
    () => createLoss('LDAMLoss', { reweight_epoc: 160 }, ctx),
    /loss\.args\.reweight_epoc: unknown key; did you mean 'reweight_epoch'\?/,
  );
  assert.throws(() => createLoss('BSExpertLoss', { tau_lst: [0, 1, 2] }, ctx), /did you mean 'tau_list'/);
  assert.throws(
    () => createLoss('DiverseExpertLoss', { tau: 'two' }, ctx),
    /loss\.args\.tau: expected a number/,
  );
  assert.throws(() => createLoss('DiverseExpertLoss', {}, { ...ctx, experts: 2 }), /3 experts.*BSExpertLoss/);
  assert.throws(
    () => createLoss('BSExpertLoss', { tau_list: [0, 1] }, ctx),
    /tau_list has 2 values but the model has 3 experts/,
  );
  assert.throws(
    () => createLoss('DiverseExpertLoss', { num_experts: 4 }, ctx),
    /loss\.args\.num_experts: is 4 but the model has 3/,
  );
  assert.throws(
    () => createLoss('PRLLoss', { expert_losses: [{ type: 'forward' }, { type: 'uniform' }] }, ctx),
    /2 expert losses .* 3 experts/,
  );
  assert.throws(
    () => createLoss('PRLLoss', { expert_losses: [{ type: 'forwrd' }] }, ctx),
    /did you mean 'forward'/,
  );
  assert.throws(
    () =>
      createLoss(
        'PRLLoss',
        { expert_losses: [{ type: 'forward', tau: 1 }, { type: 'uniform' }, { type: 'backward' }] },
        ctx,
      ),
    /'forward' expert is plain cross-entropy and takes no tau/,
  );
  assert.throws(
    () => createLoss('PRLLoss', { z: [0, 1] }, ctx),
    /loss: PRL: the ideal point z has 2 values for 3 experts/,
  );
  assert.throws(
    () => createLoss('PRLLoss', { Z: 'zero' }, ctx),
    /loss\.args\.Z: expected a number, one number per expert, or "running_min"/,
  );
  assert.throws(
    () => createLoss('FocalLoss', { weight: [1, 2] }, ctx),
    /loss\.args\.weight: has 2 values for 10 classes/,
  );
  assert.throws(
    () => createLoss('CrossEntropyLoss', { reweight_CE: true, reweight_epoch: 160 }, ctx),
    /either always-on re-weighting or a DRW reweight_epoch/,
  );
  assert.throws(
    () => createLoss('FocalLoss', { weight: new Array<number>(10).fill(1), reweight: true }, ctx),
    /explicit "weight" or class-balanced re-weighting/,
  );
  // Official configs work as written (SADE, BalPoE, LDAM-DRW).
  createLoss('DiverseExpertLoss', { tau: 2 }, ctx);
  createLoss('BSExpertLoss', { tau_list: [0, 1.0, 2.0] }, ctx);
  createLoss('LDAMLoss', { max_m: 0.5, s: 30, reweight_epoch: 160 }, ctx);
  createLoss('CrossEntropyLoss', { reweight_CE: true }, ctx);
  createLoss('BalancedSoftmaxCE', {}, ctx);
  // RIDE's CIFAR-100 and ImageNet-LT configs, and its name as an alias.
  createLoss('RIDELoss', { additional_diversity_factor: -0.45, reweight: true, reweight_epoch: 160 }, ctx);
  createLoss('RIDE', { reweight: true, reweight_factor: 0.02, reweight_epoch: 80 }, ctx);
  assert.throws(
    () => createLoss('RIDELoss', { reweight_factor: 1.5 }, ctx),
    /loss\.args\.reweight_factor: .*1/,
  );
  assert.throws(
    () => createLoss('RIDELoss', { additional_diversity_factr: -0.45 }, ctx),
    /did you mean 'additional_diversity_factor'/,
  );
  assert.throws(
    () => createLoss('RIDELoss', { num_experts: 4 }, ctx),
    /loss\.args\.num_experts: is 4 but the model has 3/,
  );
});

test('RIDE: experts that agree with the ensemble pay no diversity term; disagreement is rewarded', () => {
  torch.tidy(() => {
    const { output, target } = randomBatch(1, 8, 10);
    const ctx = { classCounts: COUNTS, experts: 3 };
    const ride = createLoss('RIDELoss', { reweight_epoch: 2 }, ctx);
    const ldam = createLoss('LDAMLoss', { reweight_epoch: 2 }, ctx);
    for (const epoch of [1, 3]) {
      ride.setEpoch!(epoch);
      ldam.setEpoch!(epoch);
      // Identical experts: the KL vanishes and each expert's term is LDAM-DRW of the output.
      const same = torch.stack([output, output, output]);
      const agree = ride.forward({ output, logits: same }, target).item();
      const expected = 3 * ldam.forward({ output }, target).item();
      assert.ok(Math.abs(agree - expected) < 1e-9, `epoch ${epoch}: ${agree} != ${expected}`);
    }
    // With a negative factor, spreading the experts apart (the ensemble fixed) lowers the term.
    const spread = torch.randn([3, 8, 10], 'float64');
    const centred = spread.sub(spread.mean(0, true));
    const apart = torch.stack([0, 1, 2].map((e) => output.add(centred.select(0, e))));
    const noDiversity = createLoss('RIDELoss', { additional_diversity_factor: 0 }, ctx);
    const rewarded = createLoss('RIDELoss', { additional_diversity_factor: -0.45 }, ctx);
    const penalised = createLoss('RIDELoss', { additional_diversity_factor: 0.45 }, ctx);
    const base = createLoss('RIDELoss', { additional_diversity_factor: 1e-300 }, ctx);
    const plain = base.forward({ output, logits: apart }, target).item();
    assert.ok(rewarded.forward({ output, logits: apart }, target).item() < plain);
    assert.ok(penalised.forward({ output, logits: apart }, target).item() > plain);
    // A factor of 0 trains each expert's LDAM term on the ensemble output, as the reference does.
    const onOutput = noDiversity.forward({ output, logits: apart }, target).item();
    ldam.setEpoch!(1);
    assert.ok(Math.abs(onOutput - 3 * ldam.forward({ output }, target).item()) < 1e-9);
    // DRW switches the class weights and the per-class temperatures on after reweight_epoch only.
    const drw = createLoss('RIDELoss', { reweight_epoch: 2 }, ctx);
    drw.setEpoch!(2);
    const before = drw.forward({ output, logits: apart }, target).item();
    const keyBefore = drw.captureKey!();
    drw.setEpoch!(3);
    assert.notEqual(drw.forward({ output, logits: apart }, target).item(), before);
    assert.notEqual(drw.captureKey!(), keyBefore);
    assert.throws(
      () => drw.forward({ output, logits: apart }, torch.full([8, 10], 0.1, 'float64')),
      /class indices/,
    );
  });
});

test('RIDE: the per-class diversity temperatures rise with the class prior, the largest is 1', () => {
  const factors = rideTemperatureFactors(COUNTS, 0.05);
  assert.equal(Math.max(...factors), 1);
  for (let c = 1; c < factors.length; c++) assert.ok(factors[c]! < factors[c - 1]!);
  assert.deepEqual(rideTemperatureFactors(COUNTS, 0), new Array<number>(10).fill(1));
  assert.throws(() => new RIDELoss(COUNTS, 3, { reweightFactor: 5 }), /reweight_factor 5 is too large/);
  assert.throws(() => new RIDELoss(COUNTS, 0), /at least one expert/);
});

test('LDAM refuses soft targets (its margin needs the class); mixupLoss handles mixup', () => {
  torch.tidy(() => {
    const { output, target } = randomBatch(1, 4, 10);
    const loss = createLoss('LDAMLoss', {}, { classCounts: COUNTS, experts: 1 });
    const soft = torch.full([4, 10], 0.1, 'float64');
    assert.throws(() => loss.forward({ output }, soft), /needs class indices.*mixupLoss/);
    assert.throws(() => mixupLoss(loss, { output }, target, target, 1.5), /lambda must be in \[0, 1\]/);
    const same = mixupLoss(loss, { output }, target, target, 0.3).item();
    assert.ok(Math.abs(same - loss.forward({ output }, target).item()) < 1e-12);
    assert.equal(labels([1]).dtype, 'int64');
  });
});

test('PRL running ideal point: z is the lowest loss each expert reached, and no gradient flows into it', () => {
  torch.tidy(() => {
    const loss = createPrlLoss({ z: 'running_min' }, { classCounts: COUNTS, experts: 3 });
    assert.ok(loss.ideal, 'running_min creates the online ideal point');
    const r = [0.2, 0.3, 0.5];
    const seen: number[][] = [];
    for (let step = 0; step < 3; step++) {
      const { output, logits, target } = randomBatch(3, 16, 10);
      const leaf = logits.detach().requiresGrad_();
      const perExpert = loss.expertLosses({ output, logits: leaf }, target).toNumbers();
      seen.push(perExpert);
      const value = loss.forward({ output, logits: leaf }, target, { preference: r });
      const best = perExpert.map((_, e) => Math.min(...seen.map((s) => s[e]!)));
      // float32 storage: equal to 1e-5, not digit for digit after rounding (a value near a
      // rounding boundary fell on either side)
      const stored: number[] = loss.ideal.best.toNumbers();
      assert.equal(stored.length, best.length);
      stored.forEach((v: number, e: number) =>
        assert.ok(Math.abs(v - best[e]!) < 1e-5, `expert ${e}: z ${v} vs ${best[e]}`),
      );
      const expected = smoothTchebycheff(torch.tensor(perExpert), r, { z: best }).item();
      assert.ok(Math.abs(value.item() - expected) < 1e-5, `step ${step}: ${value.item()} vs ${expected}`);
      value.backward();
      assert.ok(leaf.grad, 'the experts get a gradient');
    }
    assert.throws(
      () => createPrlLoss({ z: 'running_min', scalarization: 'linear' }, { classCounts: COUNTS, experts: 3 }),
      /running_min.*no effect with 'linear'/,
    );
  });
});

test('PRL with several preferences per batch: the loss is the mean of each draw scalarized with its own r', () => {
  torch.tidy(() => {
    const loss = createPrlLoss({}, { classCounts: COUNTS, experts: 3 });
    const { target } = randomBatch(3, 16, 10);
    const draws = [
      [0.2, 0.3, 0.5],
      [0.7, 0.2, 0.1],
      [0.1, 0.1, 0.8],
    ].map((preference) => {
      const { output, logits } = randomBatch(3, 16, 10);
      return { preference, out: { output, logits: logits.detach().requiresGrad_() } };
    });
    const each = draws.map((d) => loss.forward(d.out, target, { preference: d.preference }).item());
    const value = loss.forward(draws[0]!.out, target, { preference: draws[0]!.preference, draws });
    const mean = each.reduce((a, b) => a + b, 0) / each.length;
    assert.ok(Math.abs(value.item() - mean) < 1e-12, `${value.item()} vs ${mean}`);
    value.backward();
    for (const d of draws) assert.ok(d.out.logits.grad, 'every draw gets a gradient');
    const lam = 0.3;
    const ya = target;
    const yb = target.flip(0);
    const mixed = loss.forwardMixup(draws[0]!.out, ya, yb, lam, { draws }).item();
    const mixedEach = draws.map((d) =>
      loss.forwardMixup(d.out, ya, yb, lam, { preference: d.preference }).item(),
    );
    assert.ok(Math.abs(mixed - mixedEach.reduce((a, b) => a + b, 0) / 3) < 1e-12);
  });
});
