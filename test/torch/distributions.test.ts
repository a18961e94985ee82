// torch.distributions against PyTorch 1.13 (test/golden/torch/distributions.json, from
// scripts/golden/distributions.py), in float64: logProb, entropy, mean, variance, cdf, icdf and
// their parameter gradients; seeded sample() and rsample() draws with the gradients of the
// draws (the global generator is libtorch's, so the draws are PyTorch's); KL divergences and
// their gradients. Then 20k-draw moment checks, the named errors, and leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { distributions as D } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

interface Data {
  shape: number[];
  data: number[];
}
type Grads = Record<string, number[] | null>;
interface Case {
  label: string;
  name: string;
  params: Record<string, Data>;
  batchShape: number[];
  eventShape: number[];
  value: Data;
  logProb: Data;
  entropy?: Data;
  cdf?: Data;
  icdf?: Data;
  /** Absent where PyTorch has none (a TransformedDistribution). */
  mean?: Data;
  variance?: Data;
  grads: Grads;
  sample?: Data;
  rsample?: Data;
  rsampleGrads?: Grads;
}
interface KlCase {
  label: string;
  name: string;
  /** The registered pair's family where name is composite or a subclass (Chi2 is a Gamma). */
  family?: string;
  p: Record<string, Data>;
  q: Record<string, Data>;
  kl: Data;
  pGrads: Grads;
  qGrads: Grads;
}
// The golden file writes NaN and the infinities as strings (JSON has no such numbers).
const revive = (_key: string, v: unknown): unknown =>
  v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
const golden = JSON.parse(readFileSync(join(goldenDir, 'torch', 'distributions.json'), 'utf8'), revive) as {
  cases: Case[];
  kl: KlCase[];
};

const f64 = (d: Data): torch.Tensor => torch.tensor(d.data, { dtype: 'float64' }).reshape(...d.shape);

/** The distribution `name` from its named parameters (the golden script's `build`). */
function build(name: string, p: Record<string, torch.Tensor>): D.Distribution {
  switch (name) {
    case 'Normal':
      return new D.Normal(p.loc, p.scale);
    case 'LogNormal':
      return new D.LogNormal(p.loc, p.scale);
    case 'Laplace':
      return new D.Laplace(p.loc, p.scale);
    case 'Uniform':
      return new D.Uniform(p.low, p.high);
    case 'Exponential':
      return new D.Exponential(p.rate);
    case 'Poisson':
      return new D.Poisson(p.rate);
    case 'StudentT':
      return new D.StudentT(p.df, p.loc, p.scale);
    case 'Gamma':
      return new D.Gamma(p.concentration, p.rate);
    case 'Beta':
      return new D.Beta(p.concentration1, p.concentration0);
    case 'Dirichlet':
      return new D.Dirichlet(p.concentration);
    case 'Bernoulli':
      return new D.Bernoulli(p);
    case 'Categorical':
      return new D.Categorical(p);
    case 'OneHotCategorical':
      return new D.OneHotCategorical(p);
    case 'Binomial':
      return new D.Binomial(p);
    case 'MultivariateNormal': {
      const { loc, ...rest } = p;
      return new D.MultivariateNormal(loc, rest);
    }
  }
  return buildMore(name, p);
}

/** The families after MultivariateNormal; composite ones are named `Outer-Inner`. */
function buildMore(name: string, p: Record<string, torch.Tensor>): D.Distribution {
  switch (name) {
    case 'Cauchy':
      return new D.Cauchy(p.loc, p.scale);
    case 'Gumbel':
      return new D.Gumbel(p.loc, p.scale);
    case 'HalfNormal':
      return new D.HalfNormal(p.scale);
    case 'HalfCauchy':
      return new D.HalfCauchy(p.scale);
    case 'Chi2':
      return new D.Chi2(p.df);
    case 'Weibull':
      return new D.Weibull(p.scale, p.concentration);
    case 'Pareto':
      return new D.Pareto(p.scale, p.alpha);
    case 'Geometric':
      return new D.Geometric(p);
    case 'Multinomial': {
      const { totalCount, ...rest } = p;
      return new D.Multinomial(totalCount.item(), rest);
    }
    case 'Independent-Normal':
      return new D.Independent(new D.Normal(p.loc, p.scale), 1);
    case 'MixtureSameFamily-Normal':
      return new D.MixtureSameFamily(
        new D.Categorical({ logits: p.mixLogits }),
        new D.Normal(p.loc, p.scale),
      );
    case 'MixtureSameFamily-IndependentNormal':
      return new D.MixtureSameFamily(
        new D.Categorical({ probs: p.mixProbs }),
        new D.Independent(new D.Normal(p.loc, p.scale), 1),
      );
    case 'VonMises':
      return new D.VonMises(p.loc, p.concentration);
    case 'Transformed-NormalExpAffine':
      return new D.TransformedDistribution(new D.Normal(p.loc, p.scale), [
        new D.ExpTransform(),
        new D.AffineTransform(p.aLoc, p.aScale),
      ]);
    case 'Transformed-NormalSigmoid':
      return new D.TransformedDistribution(new D.Normal(p.loc, p.scale), new D.SigmoidTransform());
  }
  throw new Error(`unknown distribution ${name}`);
}

function leaves(params: Record<string, Data>): Record<string, torch.Tensor> {
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [k, k === 'totalCount' ? f64(v) : f64(v).requiresGrad_()]),
  );
}

function checkGrads(ps: Record<string, torch.Tensor>, expected: Grads, what: string): void {
  for (const [k, g] of Object.entries(expected)) {
    const actual = ps[k].grad;
    if (g === null) {
      assert.ok(actual === null || actual.toNumbers().every((x) => x === 0), `${what} ${k}: no gradient`);
    } else {
      assert.ok(actual, `${what} ${k}: a gradient`);
      assertClose(actual.toNumbers(), g, 1e-9, 1e-9, `${what} ${k}`);
    }
  }
}

/** Shapes equal, NaN and infinities where expected, the finite values close. */
function same(actual: torch.Tensor, expected: Data, what: string, tol = 1e-10): void {
  assert.deepEqual(actual.shape, expected.shape, `${what} shape`);
  const a = actual.toNumbers();
  const finite = expected.data.map((e, i) => {
    if (Number.isFinite(e)) return true;
    assert.ok(
      Object.is(a[i], e) || (Number.isNaN(a[i]) && Number.isNaN(e)),
      `${what}[${i}]: ${a[i]} is not ${e}`,
    );
    return false;
  });
  assertClose(
    a.filter((_, i) => finite[i]),
    expected.data.filter((_, i) => finite[i]),
    tol,
    tol,
    what,
  );
}

test('distributions match PyTorch 1.13: densities, moments, cdf/icdf, entropy, gradients, seeded draws', () => {
  const before = torch.liveTensors();
  for (const c of golden.cases) {
    torch.tidy(() => {
      const ps = leaves(c.params);
      const d = build(c.name, ps);
      const what = c.label;
      assert.deepEqual(d.batchShape, c.batchShape, `${what} batchShape`);
      assert.deepEqual(d.eventShape, c.eventShape, `${what} eventShape`);
      const value = f64(c.value);
      const lp = d.logProb(value);
      same(lp, c.logProb, `${what} logProb`);
      let total = lp.sum();
      if (c.entropy) {
        const h = d.entropy();
        same(h, c.entropy, `${what} entropy`);
        total = total.add(h.sum());
      }
      if (c.cdf) {
        const f = d.cdf(value);
        same(f, c.cdf, `${what} cdf`);
        total = total.add(f.sum());
      }
      if (c.icdf) {
        const q = d.icdf(torch.full(d.batchShape, 0.3, 'float64'));
        same(q, c.icdf, `${what} icdf`);
        total = total.add(q.sum());
      }
      for (const key of ['mean', 'variance'] as const) {
        const expected = c[key];
        if (expected) same(d[key], expected, `${what} ${key}`);
        else assert.throws(() => d[key], new RegExp(`has no ${key}`), `${what}: no ${key}, as in PyTorch`);
      }
      total.backward();
      checkGrads(ps, c.grads, `${what} gradient`);
      if (c.sample) {
        torch.manualSeed(7);
        const s = d.sample([3]);
        assert.equal(s.requiresGrad, false, `${what}: sample() has no gradient path`);
        same(s, c.sample, `${what} seeded sample`, 1e-12);
      }
      if (c.rsample) {
        const ps2 = leaves(c.params);
        const d2 = build(c.name, ps2);
        torch.manualSeed(7);
        const r = d2.rsample([3]);
        same(r, c.rsample, `${what} seeded rsample`, 1e-12);
        const w = torch.linspace(-1, 1, r.numel, 'float64').reshape(...r.shape);
        r.mul(w).sum().backward();
        checkGrads(ps2, c.rsampleGrads ?? {}, `${what} rsample gradient`);
      }
      assert.equal(d.hasRsample, c.rsample !== undefined, `${what} hasRsample`);
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('klDivergence matches PyTorch 1.13 for every registered pair, gradients included', () => {
  const before = torch.liveTensors();
  for (const c of golden.kl) {
    torch.tidy(() => {
      const pp = leaves(c.p);
      const qp = leaves(c.q);
      const kl = D.klDivergence(build(c.name, pp), build(c.name, qp));
      same(kl, c.kl, `KL ${c.label}`);
      kl.sum().backward();
      checkGrads(pp, c.pGrads, `KL ${c.label} p gradient`);
      checkGrads(qp, c.qGrads, `KL ${c.label} q gradient`);
    });
  }
  // The cross-family pairs and the newer families' are distributions-families.test.ts's.
  const sameFamilyHere = (pair: string): boolean =>
    pair.split('-')[0] === pair.split('-')[1] &&
    !/^(Binomial|OneHotCategorical|ContinuousBernoulli|LowRankMultivariateNormal)-/.test(pair);
  assert.deepEqual(
    D.registeredKlPairs.filter(sameFamilyHere).sort(),
    [...new Set(golden.kl.map((c) => `${c.family ?? c.name}-${c.family ?? c.name}`))].sort(),
    'the golden file covers every registered pair',
  );
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('VonMises.sample: a concentration the sampler cannot resolve gives loc (or NaN), not an endless loop', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    torch.manualSeed(0);
    // r rounds to 1 at 4.6e18 and overflows at 1e30 in float32: no proposal is ever accepted there
    const d = new D.VonMises(torch.tensor([0.5, 1, -2]), torch.tensor([4.6e18, 2, 1e30]));
    const s = d.sample([4]).reshape(-1).toNumbers();
    assert.deepEqual(
      s.filter((_, i) => i % 3 !== 1),
      [0.5, -2, 0.5, -2, 0.5, -2, 0.5, -2],
    );
    assert.ok(s.filter((_, i) => i % 3 === 1).every((v) => v >= -Math.PI && v <= Math.PI && v !== 1));
    const nan = new D.VonMises(torch.tensor([0.5]), torch.tensor([NaN]), { validateArgs: false });
    assert.ok(nan.sample([2]).toNumbers().every(Number.isNaN));
    d.dispose();
    nan.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
