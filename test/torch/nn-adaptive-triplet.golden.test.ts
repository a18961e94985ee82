// AdaptiveLogSoftmaxWithLoss and TripletMarginWithDistanceLoss against PyTorch 1.13
// (test/golden/torch/nn_embedding_adaptive.json, from scripts/golden/nn_embedding_adaptive.py):
// same-seed initialisation, then in float64 the outputs, logProb, predict and the gradients of
// the inputs and every parameter; then the named errors of bad arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { nn } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  dtype: 'float64' | 'int64';
  data: number[];
}
interface AdaptiveCase {
  name: string;
  seed: number;
  params_init: Record<string, Data>;
  input: Data;
  target: Data;
  output: Data;
  loss: number;
  upstream: number[];
  loss_weight: number;
  input_grad: number[];
  param_grads: Record<string, number[] | null>;
  log_prob: Data;
  predict: Data;
}
interface TripletCase {
  name: string;
  distance: 'default' | 'cosine';
  options: { margin?: number; swap?: boolean };
  args: Data[];
  results: Record<string, { output: Data; upstream: number[]; grads: number[][] }>;
}
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'nn_embedding_adaptive.json'), 'utf8')) as {
  adaptive: AdaptiveCase[];
  triplet: TripletCase[];
};
const F = nn.functional;
const TOL = 1e-10;

const make = (d: Data) => torch.tensor(Float64Array.from(d.data), { shape: d.shape, dtype: d.dtype });

const adaptiveMakers: Record<string, () => nn.AdaptiveLogSoftmaxWithLoss> = {
  two_clusters: () => new nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], { divValue: 2 }),
  head_bias_one_cluster: () => new nn.AdaptiveLogSoftmaxWithLoss(6, 9, [4], { headBias: true }),
  empty_cluster: () => new nn.AdaptiveLogSoftmaxWithLoss(8, 12, [2, 5, 9], { divValue: 2 }),
  unbatched: () => new nn.AdaptiveLogSoftmaxWithLoss(5, 7, [2, 4], { divValue: 1.5 }),
  predict_in_clusters: () => new nn.AdaptiveLogSoftmaxWithLoss(6, 8, [1, 3], { divValue: 1 }),
};

test('every adaptive golden case has a maker', () => {
  assert.deepEqual(golden.adaptive.map((c) => c.name).sort(), Object.keys(adaptiveMakers).sort());
});

for (const c of golden.adaptive) {
  test(`AdaptiveLogSoftmaxWithLoss golden: ${c.name}`, () => {
    const before = torch.liveTensors();
    torch.tidy(() => {
      torch.manualSeed(c.seed);
      const asm = adaptiveMakers[c.name]!();
      const state = asm.stateDict();
      assert.deepEqual(Object.keys(state), Object.keys(c.params_init), `${c.name} parameter names`);
      for (const [name, p] of Object.entries(c.params_init)) {
        assert.deepEqual(state[name]!.shape, p.shape, `${c.name} shape of ${name}`);
        assertClose(state[name]!.toFloat64Array(), p.data, 0, 0, `${c.name} init ${name}`);
      }
      asm.double();
      const x = make(c.input).requiresGrad_();
      const { output, loss } = asm.forward(x, make(c.target));
      assert.deepEqual(output.shape, c.output.shape, `${c.name} output shape`);
      assertClose(output.toFloat64Array(), c.output.data, TOL, 0, `${c.name} output`);
      assertClose([loss.item()], [c.loss], TOL, 0, `${c.name} loss`);
      output
        .mul(torch.tensor(Float64Array.from(c.upstream), { shape: output.shape }))
        .sum()
        .add(loss.mul(c.loss_weight))
        .backward();
      assertClose(x.grad!.toFloat64Array(), c.input_grad, TOL, 0, `${c.name} input grad`);
      const named = Object.fromEntries(asm.namedParameters());
      for (const [name, g] of Object.entries(c.param_grads)) {
        // a tail no target reached takes no gradient (PyTorch's grad stays None)
        if (g === null) assert.equal(named[name]!.grad, null, `${c.name} ${name} has no gradient`);
        else assertClose(named[name]!.grad!.toFloat64Array(), g, TOL, 0, `${c.name} grad ${name}`);
      }
      const batch = x.ndim === 1 ? x.detach().unsqueeze(0) : x.detach();
      const logProb = asm.logProb(batch);
      assert.deepEqual(logProb.shape, c.log_prob.shape);
      assertClose(logProb.toFloat64Array(), c.log_prob.data, TOL, 0, `${c.name} logProb`);
      assert.deepEqual(Array.from(asm.predict(batch).toArray() as BigInt64Array, Number), c.predict.data);
      asm.dispose();
    });
    assert.equal(torch.liveTensors(), before, `${c.name}: no tensor leaks`);
  });
}

test('AdaptiveLogSoftmaxWithLoss: bad arguments are named errors with the remedy', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const A = nn.AdaptiveLogSoftmaxWithLoss;
    assert.throws(
      () => new A(8, 10, []),
      /AdaptiveLogSoftmaxWithLoss: cutoffs must be an array of at least 1/,
    );
    assert.throws(
      () => new A(8, 10, [3, 3]),
      /AdaptiveLogSoftmaxWithLoss: cutoffs must increase strictly \(each cluster holds at least one class\), got \[3, 3\]/,
    );
    assert.throws(
      () => new A(8, 10, [3, 10]),
      /AdaptiveLogSoftmaxWithLoss: cutoffs\[1\] must be an integer >= 1 and <= 9, got 10/,
    );
    assert.throws(
      () => new A(8, 10, [3, 6], { divValue: 4 }),
      /AdaptiveLogSoftmaxWithLoss: cluster 1's projection would have inFeatures \/\/ divValue\^2 = 0 features: lower options\.divValue or use fewer cutoffs/,
    );
    assert.throws(
      () => new A(8, 10, [3], { divValue: 0 }),
      /options\.divValue must be a finite number > 0, got 0/,
    );
    const asm = new A(4, 6, [2, 4], { divValue: 2 });
    const x = torch.randn([3, 4]);
    assert.throws(
      () => asm.forward(x, torch.tensor([0, 6, 1], { dtype: 'int64' })),
      /AdaptiveLogSoftmaxWithLoss\.forward: target values must be in \[0, 5\] \(nClasses 6\), got values in \[0, 6\]/,
    );
    assert.throws(
      () => asm.forward(x, torch.tensor([0, 1], { dtype: 'int64' })),
      /AdaptiveLogSoftmaxWithLoss\.forward: input \[3, 4\] and target \[2\] must have one batch size/,
    );
    assert.throws(
      () => asm.forward(x, torch.tensor([0, 1, 2])),
      /AdaptiveLogSoftmaxWithLoss\.forward: target must hold int64 class indices, got float32: convert it with \.long\(\)/,
    );
    assert.throws(
      () => asm.forward(torch.randn([3, 5]), torch.tensor([0, 1, 2], { dtype: 'int64' })),
      /AdaptiveLogSoftmaxWithLoss\.forward: input must be \[N, inFeatures\] for a 1-d target with inFeatures 4, got \[3, 5\]/,
    );
    assert.throws(
      () => asm.logProb(torch.randn([4])),
      /AdaptiveLogSoftmaxWithLoss\.logProb: input must be \[N, inFeatures\]/,
    );
    asm.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

const cosineDistance = (a: torch.Tensor, b: torch.Tensor) => F.cosineSimilarity(a, b).neg().add(1);

for (const c of golden.triplet) {
  test(`tripletMarginWithDistanceLoss golden: ${c.name} (functional and module)`, () => {
    const before = torch.liveTensors();
    const distanceFunction = c.distance === 'cosine' ? cosineDistance : undefined;
    for (const [reduction, r] of Object.entries(c.results)) {
      const options = { ...c.options, distanceFunction, reduction: reduction as nn.functional.Reduction };
      const loss = new nn.TripletMarginWithDistanceLoss(options);
      const forms = [
        (a: torch.Tensor[]) => F.tripletMarginWithDistanceLoss(a[0]!, a[1]!, a[2]!, options),
        (a: torch.Tensor[]) => loss.forward(a[0]!, a[1]!, a[2]!),
      ];
      for (const form of forms)
        torch.tidy(() => {
          const args = c.args.map((d) => make(d).requiresGrad_());
          const out = form(args);
          assert.deepEqual(out.shape, r.output.shape, `${c.name} ${reduction} shape`);
          assertClose(out.toFloat64Array(), r.output.data, TOL, 0, `${c.name} ${reduction} output`);
          out
            .mul(torch.tensor(Float64Array.from(r.upstream), { shape: out.shape }))
            .sum()
            .backward();
          args.forEach((a, i) =>
            assertClose(a.grad!.toFloat64Array(), r.grads[i]!, TOL, 0, `${c.name} ${reduction} grad ${i}`),
          );
        });
      loss.dispose();
    }
    assert.equal(torch.liveTensors(), before, `${c.name}: no tensor leaks`);
  });
}

test('tripletMarginWithDistanceLoss: the options are checked, the distance must give a tensor', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.randn([2, 3]);
    assert.throws(
      () => new nn.TripletMarginWithDistanceLoss({ margin: -1 }),
      /TripletMarginWithDistanceLoss: options\.margin must be a finite number >= 0, got -1/,
    );
    assert.throws(
      () => new nn.TripletMarginWithDistanceLoss({ distanceFunction: 'cosine' as never }),
      /TripletMarginWithDistanceLoss: options\.distanceFunction must be a function \(x1, x2\) => Tensor, or null for the pairwise distance, got 'cosine'/,
    );
    assert.throws(
      () => F.tripletMarginWithDistanceLoss(x, x, x, { reduction: 'avg' as never }),
      /tripletMarginWithDistanceLoss: options\.reduction must be one of 'none', 'mean', 'sum', got 'avg'/,
    );
    assert.throws(
      () => F.tripletMarginWithDistanceLoss(x, x, x, { distanceFunction: () => 1 as never }),
      /tripletMarginWithDistanceLoss: options\.distanceFunction\(anchor, positive\) must be a Tensor, got 1/,
    );
    const loss = new nn.TripletMarginWithDistanceLoss();
    assert.equal(loss.distanceFunction, null);
    assert.equal(loss.margin, 1);
    // the default distance is pairwiseDistance (eps 1e-6 inside the norm)
    const a = torch.tensor([[0, 0]], { dtype: 'float64' });
    const p = torch.tensor([[3, 4]], { dtype: 'float64' });
    assertClose(F.pairwiseDistance(a, p).toFloat64Array(), [Math.hypot(3 - 1e-6, 4 - 1e-6)], 1e-15);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('PairwiseDistance: the module of pairwiseDistance, its options checked', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x1 = torch.tensor(
      [
        [0, 0, 0],
        [1, 1, 1],
      ],
      { dtype: 'float64' },
    );
    const x2 = torch.tensor(
      [
        [1, 2, 2],
        [1, 1, 1],
      ],
      { dtype: 'float64' },
    );
    const d = new nn.PairwiseDistance({ p: 1, eps: 0, keepdim: true });
    assert.deepEqual(d.forward(x1, x2).shape, [2, 1]);
    assert.deepEqual(Array.from(d.forward(x1, x2).toFloat64Array()), [5, 0]);
    assert.equal(new nn.PairwiseDistance().toString(), 'PairwiseDistance()');
    assert.throws(
      () => new nn.PairwiseDistance({ p: -1 }),
      /PairwiseDistance: options\.p must be a finite number >= 0, got -1/,
    );
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
