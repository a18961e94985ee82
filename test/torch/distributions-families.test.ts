// NegativeBinomial, ContinuousBernoulli, FisherSnedecor, LowRankMultivariateNormal, LKJCholesky
// and Wishart, expand() of the families that gained it, and the cross-family KL pairs, against
// PyTorch 1.13 (test/golden/torch/distributions-families.json, from
// scripts/golden/distributions_families.py) in float64: values, parameter gradients, and seeded
// draws. Every draw here is compared exactly (to 1e-12), none by distribution only: each family
// draws with libtorch's samplers in PyTorch's order (_standard_gamma then poisson, uniform_,
// normal_, multinomial, bernoulli, binomial, _sample_dirichlet, LKJCholesky's Beta then normal_,
// Wishart's Bartlett draws with 1.13's redraw round). Leaks are checked throughout; the named
// errors are distributions-families-errors.test.ts's.
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
  /** Absent where PyTorch has none (LKJCholesky). */
  mean?: Data;
  variance?: Data;
  grads: Grads;
  sample: Data;
  rsample?: Data;
  rsampleGrads?: Grads;
}
interface ExpandCase {
  label: string;
  name: string;
  params: Record<string, Data>;
  batchShape: number[];
  eventShape: number[];
  value: Data;
  logProb: Data;
  mean?: Data;
  grads: Grads;
  sample: Data;
}
interface Side {
  name: string;
  params: Record<string, Data>;
}
interface KlCase {
  label: string;
  p: Side;
  q: Side;
  kl: Data;
  pGrads: Grads;
  qGrads: Grads;
}
// The golden files write NaN and the infinities as strings (JSON has no such numbers).
const revive = (_key: string, v: unknown): unknown =>
  v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
const read = (file: string): unknown =>
  JSON.parse(readFileSync(join(goldenDir, 'torch', file), 'utf8'), revive);
const golden = read('distributions-families.json') as { cases: Case[]; expand: ExpandCase[]; kl: KlCase[] };

const f64 = (d: Data): torch.Tensor => torch.tensor(d.data, { dtype: 'float64' }).reshape(...d.shape);
const t64 = (data: number[] | number[][]): torch.Tensor => torch.tensor(data, { dtype: 'float64' });

/** The distribution `name` from its named parameters (the golden script's `build`). */
function build(name: string, p: Record<string, torch.Tensor>): D.Distribution {
  const kind = (): D.ProbsOrLogits => (p.probs ? { probs: p.probs } : { logits: p.logits });
  switch (name) {
    case 'Normal':
      return new D.Normal(p.loc, p.scale);
    case 'Laplace':
      return new D.Laplace(p.loc, p.scale);
    case 'Gumbel':
      return new D.Gumbel(p.loc, p.scale);
    case 'Uniform':
      return new D.Uniform(p.low, p.high);
    case 'Exponential':
      return new D.Exponential(p.rate);
    case 'Poisson':
      return new D.Poisson(p.rate);
    case 'Gamma':
      return new D.Gamma(p.concentration, p.rate);
    case 'Beta':
      return new D.Beta(p.concentration1, p.concentration0);
    case 'Pareto':
      return new D.Pareto(p.scale, p.alpha);
    case 'Dirichlet':
      return new D.Dirichlet(p.concentration);
    case 'FisherSnedecor':
      return new D.FisherSnedecor(p.df1, p.df2);
    case 'LowRankMultivariateNormal':
      return new D.LowRankMultivariateNormal(p.loc, p.covFactor, p.covDiag);
    case 'Bernoulli':
      return new D.Bernoulli(kind());
    case 'Categorical':
      return new D.Categorical(kind());
    case 'OneHotCategorical':
      return new D.OneHotCategorical(kind());
    case 'ContinuousBernoulli':
      return new D.ContinuousBernoulli(kind());
    case 'Binomial':
      return new D.Binomial({ totalCount: p.totalCount, ...kind() });
    case 'NegativeBinomial':
      return new D.NegativeBinomial(p.totalCount, kind());
    case 'Multinomial':
      return new D.Multinomial(p.totalCount.item(), kind());
    case 'LKJCholesky':
      return new D.LKJCholesky(p.dim.item(), p.concentration);
    case 'MultivariateNormal': {
      const { loc, ...rest } = p;
      return new D.MultivariateNormal(loc, rest);
    }
    case 'Wishart': {
      const { df, ...rest } = p;
      return new D.Wishart(df, rest);
    }
    case 'Independent-Normal':
      return new D.Independent(new D.Normal(p.loc, p.scale), 1);
    case 'MixtureSameFamily-Normal':
      return new D.MixtureSameFamily(
        new D.Categorical({ logits: p.mixLogits }),
        new D.Normal(p.loc, p.scale),
      );
    case 'Transformed-NormalExpAffine':
      return new D.TransformedDistribution(new D.Normal(p.loc, p.scale), [
        new D.ExpTransform(),
        new D.AffineTransform(p.aLoc, p.aScale),
      ]);
  }
  throw new Error(`unknown distribution ${name}`);
}

function leaves(params: Record<string, Data>): Record<string, torch.Tensor> {
  return Object.fromEntries(
    Object.entries(params).map(([k, v]) => [
      k,
      k === 'totalCount' || k === 'dim' ? f64(v) : f64(v).requiresGrad_(),
    ]),
  );
}

/** Shapes equal, NaN and infinities where expected, the finite values close. */
function same(actual: torch.Tensor, expected: Data, what: string, tol = 1e-10): void {
  assert.deepEqual(actual.shape, expected.shape, `${what} shape`);
  closeNumbers(actual.toNumbers(), expected.data, what, tol);
}

function closeNumbers(a: number[], e: number[], what: string, tol: number): void {
  assert.equal(a.length, e.length, `${what} length`);
  const finite = e.map((x, i) => {
    if (Number.isFinite(x)) return true;
    assert.ok(
      Object.is(a[i], x) || (Number.isNaN(a[i]) && Number.isNaN(x)),
      `${what}[${i}]: ${a[i]} is not ${x}`,
    );
    return false;
  });
  const keep = <T>(xs: T[]): T[] => xs.filter((_, i) => finite[i]);
  assertClose(keep(a), keep(e), tol, tol, what);
}

function checkGrads(ps: Record<string, torch.Tensor>, expected: Grads, what: string): void {
  for (const [k, g] of Object.entries(expected)) {
    const actual = ps[k].grad;
    if (g === null) {
      assert.ok(actual === null || actual.toNumbers().every((x) => x === 0), `${what} ${k}: no gradient`);
    } else {
      assert.ok(actual, `${what} ${k}: a gradient`);
      closeNumbers(actual.toNumbers(), g, `${what} ${k}`, 1e-9);
    }
  }
}

test('the newer families match PyTorch 1.13: values, gradients, seeded sample and rsample', () => {
  const before = torch.liveTensors();
  assert.ok(golden.cases.length >= 7);
  for (const c of golden.cases) {
    torch.tidy(() => {
      const ps = leaves(c.params);
      const d = build(c.name, ps);
      const what = c.label;
      assert.deepEqual([d.batchShape, d.eventShape], [c.batchShape, c.eventShape], `${what} shapes`);
      const value = f64(c.value);
      const lp = d.logProb(value);
      same(lp, c.logProb, `${what} logProb`);
      let total = lp.sum();
      const optional: [keyof Case, () => torch.Tensor][] = [
        ['entropy', () => d.entropy()],
        ['cdf', () => d.cdf(value)],
        ['icdf', () => d.icdf(torch.full(d.batchShape, 0.3, 'float64'))],
      ];
      for (const [key, fn] of optional) {
        const expected = c[key] as Data | undefined;
        if (!expected) {
          assert.throws(fn, /tailor: .* has no/, `${what}: no ${key}, as in PyTorch 1.13`);
          continue;
        }
        const r = fn();
        same(r, expected, `${what} ${key}`);
        total = total.add(r.sum());
      }
      for (const key of ['mean', 'variance'] as const) {
        const expected = c[key];
        if (expected) same(d[key], expected, `${what} ${key}`);
        else assert.throws(() => d[key], new RegExp(`has no ${key}`), `${what}: no ${key}, as in PyTorch`);
      }
      total.backward();
      checkGrads(ps, c.grads, `${what} gradient`);
      torch.manualSeed(7);
      const s = d.sample([3]);
      assert.equal(s.requiresGrad, false, `${what}: sample() has no gradient path`);
      same(s, c.sample, `${what} seeded sample`, 1e-12);
      assert.equal(d.hasRsample, c.rsample !== undefined, `${what} hasRsample`);
      if (c.rsample) {
        const ps2 = leaves(c.params);
        torch.manualSeed(7);
        const r = build(c.name, ps2).rsample([3]);
        same(r, c.rsample, `${what} seeded rsample`, 1e-12);
        r.mul(torch.linspace(-1, 1, r.numel, 'float64').reshape(...r.shape))
          .sum()
          .backward();
        checkGrads(ps2, c.rsampleGrads ?? {}, `${what} rsample gradient`);
      }
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('LowRankMultivariateNormal: its covariance, precision and scale_tril agree with a MultivariateNormal', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const W = t64([
      [1, 0.2],
      [-0.5, 0.3],
      [0.4, -1],
    ]);
    const lr = new D.LowRankMultivariateNormal(t64([[0, 1, -1]]).expand(2, 3), W, t64([0.5, 1, 2]));
    const full = new D.MultivariateNormal(lr.loc, { covarianceMatrix: lr.covarianceMatrix });
    const close = (a: torch.Tensor, b: torch.Tensor, what: string): void =>
      assertClose(a.toNumbers(), b.toNumbers(), 1e-10, 1e-10, what);
    close(lr.scaleTril, full.scaleTril, 'scaleTril');
    close(lr.precisionMatrix, full.precisionMatrix, 'precisionMatrix');
    close(lr.entropy(), full.entropy(), 'entropy');
    const x = t64([0.3, -0.2, 1]);
    close(lr.logProb(x), full.logProb(x), 'logProb');
    close(D.klDivergence(lr, full), torch.zeros([2], 'float64'), 'KL to itself as a MultivariateNormal');
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('expand() of the families that gained it matches PyTorch 1.13: shapes, values, gradients, seeded draws', () => {
  const before = torch.liveTensors();
  for (const c of golden.expand) {
    torch.tidy(() => {
      const ps = leaves(c.params);
      const small = build(c.name, ps);
      const d = small.expand(c.batchShape);
      const what = `${c.label}.expand`;
      assert.ok(d instanceof small.constructor, `${what} keeps the family`);
      assert.deepEqual([d.batchShape, d.eventShape], [c.batchShape, c.eventShape], `${what} shapes`);
      const lp = d.logProb(f64(c.value));
      same(lp, c.logProb, `${what} logProb`, 1e-9);
      let total = lp.sum();
      if (c.mean) {
        const m = d.mean;
        same(m, c.mean, `${what} mean`, 1e-9);
        if (m.toNumbers().every(Number.isFinite)) total = total.add(m.sum());
      }
      total.backward();
      checkGrads(ps, c.grads, `${what} gradient`);
      torch.manualSeed(7);
      same(d.sample([2]), c.sample, `${what} seeded sample`, 1e-12);
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('expand() keeps whichever of probs or logits built the distribution, and owns what it creates', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const probs = t64([0.2, 0.9]);
    const logits = t64([-1, 3]);
    const byProbs = new D.Bernoulli({ probs }).expand([3, 2]);
    const byLogits = new D.Bernoulli({ logits }).expand([3, 2]);
    // The given parameter is an expanded view (exact); the other is derived from it.
    assert.deepEqual(byProbs.probs.toNumbers(), probs.expand(3, 2).toNumbers());
    assert.deepEqual(byLogits.logits.toNumbers(), logits.expand(3, 2).toNumbers());
    const nb = new D.NegativeBinomial(2, { logits }).expand([2, 2]);
    assert.deepEqual(nb.logits.toNumbers(), logits.expand(2, 2).toNumbers());
    const cb = new D.ContinuousBernoulli({ probs }).expand([2, 2]);
    assert.deepEqual(cb.probs.toNumbers(), probs.expand(2, 2).toNumbers());
  });
  // dispose() of an expansion frees everything it made, its expanded parts included.
  torch.tidy(() => {
    const loc = t64([0, 1]);
    const made: D.Distribution[] = [
      new D.MixtureSameFamily(new D.Categorical({ logits: loc }), new D.Normal(loc, 1)),
      new D.TransformedDistribution(new D.Normal(loc, 1), new D.ExpTransform()),
      new D.MultivariateNormal(loc, { covarianceMatrix: torch.eye(2, 'float64') }),
      new D.Dirichlet(loc.add(1)),
      new D.LowRankMultivariateNormal(loc, t64([[1], [2]]), loc.add(1)),
      new D.LKJCholesky(3, 2),
      new D.Wishart(3, { precisionMatrix: torch.eye(2, 'float64') }),
    ];
    const afterMade = torch.liveTensors();
    for (const d of made) {
      const e = d.expand([3, ...d.batchShape]);
      assert.ok(torch.liveTensors() > afterMade, `${d.name}.expand makes tensors`);
      e.dispose();
      assert.equal(torch.liveTensors(), afterMade, `${d.name}.expand().dispose() frees them all`);
    }
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('klDivergence matches PyTorch 1.13 for the cross-family and newer pairs, +inf where 1.13 gives it', () => {
  const before = torch.liveTensors();
  for (const c of golden.kl) {
    torch.tidy(() => {
      const pp = leaves(c.p.params);
      const qp = leaves(c.q.params);
      const kl = D.klDivergence(build(c.p.name, pp), build(c.q.name, qp));
      same(kl, c.kl, `KL ${c.label}`);
      if (kl.requiresGrad) kl.sum().backward();
      checkGrads(pp, c.pGrads, `KL ${c.label} p gradient`);
      checkGrads(qp, c.qGrads, `KL ${c.label} q gradient`);
    });
  }
  // With distributions.json's same-family pairs, the golden files cover every registered pair.
  const older = read('distributions.json') as { kl: { name: string; family?: string }[] };
  const covered = new Set([
    ...older.kl.map((c) => `${c.family ?? c.name}-${c.family ?? c.name}`),
    ...golden.kl.map((c) => `${c.p.name}-${c.q.name}`),
  ]);
  assert.deepEqual([...D.registeredKlPairs].sort(), [...covered].sort());
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
