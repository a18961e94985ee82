// torch.distributions beyond the golden values (test/torch/distributions.test.ts): 20k-draw
// moment checks of every sampler, unbiasedness of the rsample gradients, the named errors of
// PyTorch's validate_args, and which tensors a distribution owns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { distributions as D } from '../../src/torch/index.js';

const t64 = (data: number[] | number[][]): torch.Tensor => torch.tensor(data, { dtype: 'float64' });

test('20k draws have the mean and variance of their distribution (a wrong sampler fails)', () => {
  const before = torch.liveTensors();
  const n = 20000;
  const cases: [string, () => D.Distribution][] = [
    ['Normal', () => new D.Normal(t64([0.5, -2]), t64([1, 3]))],
    ['LogNormal', () => new D.LogNormal(t64([0, 0.3]), t64([0.25, 0.5]))],
    ['Laplace', () => new D.Laplace(t64([1, -1]), t64([0.5, 2]))],
    ['Uniform', () => new D.Uniform(t64([0, -3]), t64([1, 5]))],
    ['Exponential', () => new D.Exponential(t64([0.5, 4]))],
    ['StudentT', () => new D.StudentT(t64([7.5, 12]), t64([0, 1]), t64([1, 0.5]))],
    ['Gamma', () => new D.Gamma(t64([0.7, 5]), t64([1, 2]))],
    ['Beta', () => new D.Beta(t64([0.5, 4]), t64([2, 1.5]))],
    ['Dirichlet', () => new D.Dirichlet(t64([0.5, 2, 3]))],
    ['Bernoulli', () => new D.Bernoulli({ logits: t64([-1, 2]) })],
    ['OneHotCategorical', () => new D.OneHotCategorical({ probs: t64([0.1, 0.6, 0.3]) })],
    ['Poisson', () => new D.Poisson(t64([0.5, 12]))],
    ['Binomial', () => new D.Binomial({ totalCount: t64([5, 30]), probs: t64([0.3, 0.9]) })],
    [
      'MultivariateNormal',
      () =>
        new D.MultivariateNormal(t64([1, -1]), {
          covarianceMatrix: t64([
            [2, 0.8],
            [0.8, 1],
          ]),
        }),
    ],
  ];
  torch.manualSeed(11);
  for (const [name, make] of cases) {
    torch.tidy(() => {
      const d = make();
      for (const draws of [d.sample([n]), d.hasRsample ? d.rsample([n]) : null]) {
        if (!draws) continue;
        assert.deepEqual(draws.shape, d.extendedShape([n]), `${name} draw shape`);
        const mean = d.mean.toNumbers();
        const variance = d.variance.toNumbers();
        const m = draws.mean(0).toNumbers();
        const v = draws.var(0).toNumbers();
        mean.forEach((mu, i) => {
          const bound = 5 * Math.sqrt(variance[i] / n);
          assert.ok(Math.abs(m[i] - mu) < bound, `${name} mean[${i}]: ${m[i]} vs ${mu} (bound ${bound})`);
          assert.ok(
            Math.abs(v[i] - variance[i]) < 0.1 * variance[i],
            `${name} variance[${i}]: ${v[i]} vs ${variance[i]}`,
          );
        });
      }
    });
  }
  // Categorical: the frequency of each category.
  torch.tidy(() => {
    const probs = [0.1, 0.6, 0.3];
    const draws = new D.Categorical({ probs: t64(probs) }).sample([n]);
    assert.equal(draws.dtype, 'int64');
    probs.forEach((p, k) => {
      const freq = draws.eq(k).double().mean().item();
      assert.ok(
        Math.abs(freq - p) < 5 * Math.sqrt((p * (1 - p)) / n),
        `Categorical frequency of ${k}: ${freq} vs ${p}`,
      );
    });
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('rsample gradients are unbiased: d E[rsample] / d parameters is the gradient of the mean', () => {
  const before = torch.liveTensors();
  const n = 20000;
  const makers: [string, (p: torch.Tensor[]) => D.Distribution, number[][]][] = [
    [
      'Gamma',
      ([a, r]) => new D.Gamma(a, r),
      [
        [0.7, 3],
        [1.5, 0.5],
      ],
    ],
    [
      'Beta',
      ([a, b]) => new D.Beta(a, b),
      [
        [0.6, 3],
        [2, 1.2],
      ],
    ],
    ['Dirichlet', ([a]) => new D.Dirichlet(a), [[0.5, 2, 3]]],
    [
      'StudentT',
      ([df, l, s]) => new D.StudentT(df, l, s),
      [
        [6, 9],
        [0, 1],
        [1, 2],
      ],
    ],
  ];
  torch.manualSeed(5);
  for (const [name, make, values] of makers) {
    torch.tidy(() => {
      const ps = values.map((v) => t64(v).requiresGrad_());
      const weights = (d: D.Distribution): torch.Tensor =>
        torch
          .linspace(
            1,
            2,
            d.extendedShape().reduce((a, b) => a * b, 1),
            'float64',
          )
          .reshape(...d.extendedShape());
      const d = make(ps);
      d.rsample([n]).mean(0).mul(weights(d)).sum().backward();
      const sampled = ps.map((p) => p.grad?.toNumbers() ?? []);
      const qs = values.map((v) => t64(v).requiresGrad_());
      const d2 = make(qs);
      d2.mean.mul(weights(d2)).sum().backward();
      qs.forEach((q, i) => {
        const exact = q.grad?.toNumbers() ?? [];
        exact.forEach((e, j) => {
          assert.ok(
            Math.abs(sampled[i][j] - e) < 0.05 * Math.max(1, Math.abs(e)),
            `${name} parameter ${i}[${j}]: ${sampled[i][j]} vs ${e}`,
          );
        });
      });
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bad parameters and values are named errors, as PyTorch validate_args=True', () => {
  const before = torch.liveTensors();
  const throwsNamed = (fn: () => unknown, pattern: RegExp): void =>
    assert.throws(
      () => torch.tidy(fn),
      (e: Error) => e.message.startsWith('tailor:') && pattern.test(e.message),
    );
  throwsNamed(() => new D.Normal(0, t64([1, -1])), /Normal: parameter scale .*GreaterThan/);
  throwsNamed(() => new D.Normal(t64([NaN]), 1), /Normal: parameter loc .*Real/);
  throwsNamed(() => new D.Gamma(0, 1), /Gamma: parameter concentration/);
  throwsNamed(() => new D.Uniform(1, 1), /Uniform: parameter low must be below high/);
  throwsNamed(() => new D.Bernoulli({}), /Bernoulli: give exactly one of probs or logits/);
  throwsNamed(() => new D.Bernoulli({ probs: 0.5, logits: 0 }), /exactly one of probs or logits/);
  throwsNamed(() => new D.Bernoulli({ probs: 1.5 }), /Bernoulli: parameter probs .*Interval/);
  throwsNamed(
    () => new D.Categorical({ probs: t64([0.5, -0.1, 0.6]) }),
    /Categorical: parameter probs .*Simplex/,
  );
  throwsNamed(
    () => new D.Categorical({ logits: torch.scalarTensor(0.5, 'float64') }),
    /at least one dimension/,
  );
  throwsNamed(() => new D.Binomial({ totalCount: 2.5, probs: 0.5 }), /Binomial: parameter totalCount/);
  throwsNamed(() => new D.Dirichlet(t64([1, 0])), /Dirichlet: parameter concentration/);
  throwsNamed(() => new D.Normal(t64([0, 0]), t64([1, 1, 1])), /do not broadcast/);
  const loc = t64([0, 0]);
  throwsNamed(
    () => new D.MultivariateNormal(loc, {}),
    /exactly one of covarianceMatrix, precisionMatrix or scaleTril/,
  );
  throwsNamed(
    () =>
      new D.MultivariateNormal(loc, {
        covarianceMatrix: t64([
          [1, 2],
          [2, 1],
        ]),
      }),
    /covarianceMatrix must satisfy PositiveDefinite/,
  );
  throwsNamed(
    () =>
      new D.MultivariateNormal(loc, {
        precisionMatrix: t64([
          [1, 0.5],
          [0, 1],
        ]),
      }),
    /precisionMatrix .*symmetric/,
  );
  throwsNamed(
    () =>
      new D.MultivariateNormal(loc, {
        scaleTril: t64([
          [1, 0],
          [0.5, -1],
        ]),
      }),
    /scaleTril .*LowerCholesky/,
  );
  throwsNamed(
    () => new D.MultivariateNormal(loc, { covarianceMatrix: t64([[1]]) }),
    /covarianceMatrix must be a tensor of shape \[\.\.\., 2, 2\]/,
  );
  // Values outside the support, or of the wrong shape.
  throwsNamed(
    () => new D.Poisson(2).logProb(t64([-1])),
    /Poisson\.logProb: the value argument .*IntegerGreaterThan/,
  );
  throwsNamed(() => new D.Bernoulli({ probs: 0.3 }).logProb(t64([0.5])), /Bernoulli\.logProb: .*Boolean/);
  throwsNamed(
    () => new D.Categorical({ probs: t64([0.5, 0.5]) }).logProb(t64([2])),
    /IntegerInterval\(lower_bound=0, upper_bound=1\)/,
  );
  throwsNamed(() => new D.Beta(1, 1).logProb(t64([1.5])), /Beta\.logProb: .*Interval/);
  throwsNamed(() => new D.Exponential(1).cdf(t64([-1])), /Exponential\.cdf: .*GreaterThanEq/);
  throwsNamed(() => new D.Dirichlet(t64([1, 1])).logProb(t64([0.5, 0.6])), /Simplex/);
  throwsNamed(
    () => new D.Normal(t64([0, 1]), 1).logProb(t64([0, 1, 2])),
    /not broadcastable with batchShape/,
  );
  throwsNamed(
    () =>
      new D.MultivariateNormal(loc, {
        scaleTril: t64([
          [1, 0],
          [0, 1],
        ]),
      }).logProb(t64([0, 0, 0])),
    /rightmost sizes of value \[3\] must equal eventShape \[2\]/,
  );
  // Methods PyTorch lacks, and KL pairs it does not register.
  throwsNamed(() => new D.Bernoulli({ probs: 0.3 }).rsample(), /Bernoulli has no reparameterised sampling/);
  throwsNamed(() => new D.Poisson(1).entropy(), /Poisson has no entropy/);
  throwsNamed(() => new D.Gamma(1, 1).cdf(t64([1])), /Gamma has no cdf/);
  throwsNamed(
    () => new D.Binomial({ totalCount: t64([2, 3]), probs: 0.5 }).entropy(),
    /same totalCount everywhere/,
  );
  throwsNamed(
    () => D.klDivergence(new D.Normal(0, 1), new D.Cauchy(0, 1)),
    /klDivergence has no formula for \(Normal, Cauchy\); the registered pairs are Normal-Normal, .*Uniform-Uniform/,
  );
  loc.dispose();
  assert.equal(torch.liveTensors(), before, 'no tensor leaks from failed constructions');
});

test('memory: a distribution frees only what it created; tidy and keep carry it like a tensor', () => {
  const logits = t64([0.3, -1]);
  const before = torch.liveTensors();
  const d = new D.Bernoulli({ logits });
  assert.ok(torch.liveTensors() > before, 'probs and the broadcast logits are its own');
  d.dispose();
  assert.equal(torch.liveTensors(), before, 'dispose() frees what it created');
  assert.equal(logits.isDisposed, false, 'never the tensors it was given');
  const kept = torch.tidy(
    () =>
      new D.MultivariateNormal(logits, {
        covarianceMatrix: t64([
          [2, 0.5],
          [0.5, 1],
        ]),
      }),
  );
  const lp = torch.tidy(() => kept.logProb(t64([0, 0])).item());
  assert.ok(Number.isFinite(lp), 'the Cholesky factor survived the tidy that returned the distribution');
  torch.tidy(() => {
    const x = kept.sample([4]);
    assert.equal(x.requiresGrad, false);
  });
  kept.dispose();
  assert.equal(torch.liveTensors(), before, 'nothing left after dispose');
  assert.throws(() => new D.Normal(logits, -1), /tailor: Normal: parameter scale/);
  assert.throws(() => new D.Uniform(logits, 0), /tailor: Uniform/);
  const notPositive = t64([
    [1, 2],
    [2, 1],
  ]);
  assert.throws(
    () => new D.MultivariateNormal(logits, { covarianceMatrix: notPositive }),
    /PositiveDefinite/,
  );
  notPositive.dispose();
  assert.equal(torch.liveTensors(), before, 'a failed construction frees what it made');
  const counts = torch.tensor([3, 4], { dtype: 'int64' });
  const binomial = new D.Binomial({ totalCount: counts, logits });
  assert.equal(binomial.totalCount.dtype, 'float64');
  binomial.dispose();
  counts.dispose();
  assert.equal(torch.liveTensors(), before, 'Binomial frees its converted totalCount');
  logits.dispose();
});
