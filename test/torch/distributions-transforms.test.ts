// torch.distributions' transforms and the families PyTorch 1.13 builds on them, against
// test/golden/torch/distributions-transforms.json (scripts/golden/distributions_transforms.py), in
// float64: each transform's forward, inverse, log |det J|, event dims, shapes, sign and gradients;
// the cache; logProb, entropy, mean, variance, cdf/icdf and their parameter gradients of the
// relaxed families, LogisticNormal, Kumaraswamy and TransformedDistributions of the new
// transforms; enumerateSupport. Every seeded draw here is compared exactly (to 1e-12): these
// families sample with uniform_ and normal_ (and Gamma's _standard_gamma) in PyTorch's order, so
// none is compared by distribution only. Then the named errors and leaks.
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
interface TransformCase {
  label: string;
  name: string;
  params: Record<string, Data>;
  x: Data;
  y: Data;
  inverse: Data;
  inverseGrad: number[];
  logAbsDetJacobian?: Data;
  domainEventDim: number;
  codomainEventDim: number;
  bijective: boolean;
  forwardShape: number[];
  inverseShape: number[];
  sign?: number | Data;
  grads: Grads;
}
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
  mean?: Data;
  variance?: Data;
  grads: Grads;
  sample: Data;
  rsample: Data;
  rsampleGrads: Grads;
}
// The golden file writes NaN and the infinities as strings (JSON has no such numbers).
const revive = (_key: string, v: unknown): unknown =>
  v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
const golden = JSON.parse(
  readFileSync(join(goldenDir, 'torch', 'distributions-transforms.json'), 'utf8'),
  revive,
) as {
  transforms: TransformCase[];
  cache: { x: Data; cachedInverse: Data; uncachedInverse: Data };
  cases: Case[];
  enumerate: { label: string; expanded: Data; unexpanded: Data; dtype: string }[];
};

const f64 = (d: Data): torch.Tensor => torch.tensor(d.data, { dtype: 'float64' }).reshape(...d.shape);
const t64 = (data: number[] | number[][]): torch.Tensor => torch.tensor(data, { dtype: 'float64' });

/** The transform `name` of parameters p (the golden script's make_transform). */
function makeTransform(name: string, p: Record<string, torch.Tensor>): D.Transform {
  switch (name) {
    case 'Exp':
      return new D.ExpTransform();
    case 'Sigmoid':
      return new D.SigmoidTransform();
    case 'Tanh':
      return new D.TanhTransform();
    case 'Softplus':
      return new D.SoftplusTransform();
    case 'Abs':
      return new D.AbsTransform();
    case 'Softmax':
      return new D.SoftmaxTransform();
    case 'StickBreaking':
      return new D.StickBreakingTransform();
    case 'Affine':
      return new D.AffineTransform(p.loc, p.scale);
    case 'Affine-event1':
      return new D.AffineTransform(p.loc, p.scale, 1);
    case 'Affine-event2-number':
      return new D.AffineTransform(0.5, -2, 2);
    case 'Power':
      return new D.PowerTransform(p.exponent);
    case 'Power-number':
      return new D.PowerTransform(2.5);
    case 'Reshape':
      return new D.ReshapeTransform([2, 3], [6]);
    case 'Compose-AffineExp':
      return new D.ComposeTransform([new D.AffineTransform(p.loc, p.scale), new D.ExpTransform()]);
    case 'Compose-StickAffine':
      return new D.ComposeTransform([new D.StickBreakingTransform(), new D.AffineTransform(0, p.scale)]);
    case 'Compose-ExpIndependentAffine':
      return new D.ComposeTransform([
        new D.ExpTransform(),
        new D.IndependentTransform(new D.AffineTransform(1, p.scale), 1),
      ]);
    case 'Independent-Tanh':
      return new D.IndependentTransform(new D.TanhTransform(), 2);
    case 'Tanh-inv':
      return new D.TanhTransform().inv;
    case 'Compose-inv':
      return new D.ComposeTransform([new D.SigmoidTransform(), new D.AffineTransform(p.loc, p.scale)]).inv;
    case 'CumulativeDistribution':
      return new D.CumulativeDistributionTransform(new D.Normal(p.loc, p.scale));
  }
  throw new Error(`unknown transform ${name}`);
}

/** The distribution `name` of parameters p (the golden script's build). */
function build(name: string, p: Record<string, torch.Tensor>): D.Distribution {
  const { temperature, ...rest } = p;
  switch (name) {
    case 'RelaxedBernoulli':
      return new D.RelaxedBernoulli(temperature, rest);
    case 'LogitRelaxedBernoulli':
      return new D.LogitRelaxedBernoulli(temperature, rest);
    case 'RelaxedOneHotCategorical':
      return new D.RelaxedOneHotCategorical(temperature, rest);
    case 'ExpRelaxedCategorical':
      return new D.ExpRelaxedCategorical(temperature, rest);
    case 'LogisticNormal':
      return new D.LogisticNormal(p.loc, p.scale);
    case 'Kumaraswamy':
      return new D.Kumaraswamy(p.concentration1, p.concentration0);
    case 'Transformed-NormalStickBreaking':
      return new D.TransformedDistribution(new D.Normal(p.loc, p.scale), [new D.StickBreakingTransform()]);
    case 'Transformed-NormalTanhAffine1':
      return new D.TransformedDistribution(new D.Normal(p.loc, p.scale), [
        new D.TanhTransform(),
        new D.AffineTransform(p.aLoc, p.aScale, 1),
      ]);
    case 'Transformed-NormalReshape':
      return new D.TransformedDistribution(new D.Normal(p.loc, p.scale), [
        new D.ReshapeTransform([2, 2], [4]),
      ]);
    case 'Transformed-GammaPower':
      return new D.TransformedDistribution(new D.Gamma(p.concentration, p.rate), [
        new D.PowerTransform(p.exponent),
      ]);
  }
  throw new Error(`unknown distribution ${name}`);
}

const leaves = (params: Record<string, Data>): Record<string, torch.Tensor> =>
  Object.fromEntries(Object.entries(params).map(([k, v]) => [k, f64(v).requiresGrad_()]));

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
  const keep = <T>(xs: T[]): T[] => xs.filter((_, i) => finite[i]);
  assertClose(keep(a), keep(expected.data), tol, tol, what);
}

test('transforms match PyTorch 1.13: forward, inverse, log |det J|, event dims, shapes, sign, gradients', () => {
  const before = torch.liveTensors();
  for (const c of golden.transforms) {
    torch.tidy(() => {
      const what = c.label;
      const ps = leaves(c.params);
      const tr = makeTransform(c.name, ps);
      const x = f64(c.x).requiresGrad_();
      const y = tr.forward(x);
      same(y, c.y, `${what} forward`);
      assert.equal(tr.domain.eventDim, c.domainEventDim, `${what} domain eventDim`);
      assert.equal(tr.codomain.eventDim, c.codomainEventDim, `${what} codomain eventDim`);
      assert.equal(tr.bijective, c.bijective, `${what} bijective`);
      assert.deepEqual(tr.forwardShape(c.x.shape), c.forwardShape, `${what} forwardShape`);
      assert.deepEqual(tr.inverseShape(c.y.shape), c.inverseShape, `${what} inverseShape`);
      if (c.sign === undefined) assert.throws(() => tr.sign, /has no sign/, `${what}: no sign`);
      else if (typeof c.sign === 'number') assert.equal(tr.sign, c.sign, `${what} sign`);
      else same(tr.sign as torch.Tensor, c.sign, `${what} sign`);
      const yLeaf = f64(c.y).requiresGrad_();
      const xi = tr.inv.forward(yLeaf);
      same(xi, c.inverse, `${what} inverse`);
      const [inverseGrad] = torch.grad([xi.sum()], [yLeaf]);
      assertClose(inverseGrad!.toNumbers(), c.inverseGrad, 1e-9, 1e-9, `${what} inverse gradient`);
      const w = torch.linspace(-1, 1, y.numel, 'float64').reshape(...y.shape);
      let total = y.mul(w).sum();
      if (c.logAbsDetJacobian) {
        const ladj = tr.logAbsDetJacobian(x, y);
        same(ladj, c.logAbsDetJacobian, `${what} logAbsDetJacobian`);
        total = total.add(ladj.sum());
      } else {
        assert.throws(() => tr.logAbsDetJacobian(x, y), /has no logAbsDetJacobian/, `${what}: no ladj`);
      }
      total.backward();
      checkGrads({ x, ...ps }, c.grads, `${what} gradient`);
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('cacheSize 1 inverts the last forward output to the very x, as PyTorch; withCache and inv', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = f64(golden.cache.x);
    const cached = new D.TanhTransform(1);
    const y = cached.forward(x);
    same(cached.inverse(y), golden.cache.cachedInverse, 'cached inverse');
    same(cached.inv.forward(y), golden.cache.cachedInverse, 'cached inv.forward');
    same(new D.TanhTransform().inverse(y), golden.cache.uncachedInverse, 'uncached inverse');
    // A copy of y is another tensor: recomputed, as PyTorch's identity check.
    same(cached.inverse(y.clone()), golden.cache.uncachedInverse, 'a copy misses the cache');
    // The gradient flows through the cached x to the leaf.
    const leaf = f64(golden.cache.x).requiresGrad_();
    const yl = cached.forward(leaf);
    cached.inverse(yl).sum().backward();
    assert.deepEqual(leaf.grad!.toNumbers(), [1, 1, 1], 'the cached inverse is x itself');
    cached.dispose();
    const plain = new D.ExpTransform();
    assert.equal(plain.withCache(0), plain, 'withCache of the same size is the same transform');
    assert.equal(plain.withCache(1).cacheSize, 1);
    assert.equal(plain.inv.inv, plain, 'inv.inv is the transform');
    const chain = new D.ComposeTransform([plain]);
    assert.equal(chain.inv.inv, chain, "a ComposeTransform's inv.inv is itself");
    assert.ok(
      new D.ComposeTransform([plain, new D.TanhTransform()]).inv.equals(
        new D.ComposeTransform([new D.TanhTransform().inv, plain.inv]),
      ),
    );
  });
  assert.equal(torch.liveTensors(), before, 'the cache frees its views on dispose()');
});

test('the families built on transforms match PyTorch 1.13, gradients and seeded draws included', () => {
  const before = torch.liveTensors();
  for (const c of golden.cases) {
    torch.tidy(() => {
      const what = c.label;
      const ps = leaves(c.params);
      const d = build(c.name, ps);
      assert.deepEqual([d.batchShape, d.eventShape], [c.batchShape, c.eventShape], `${what} shapes`);
      const value = f64(c.value);
      const lp = d.logProb(value);
      same(lp, c.logProb, `${what} logProb`);
      let total = lp.sum();
      const checks: [keyof Case, () => torch.Tensor][] = [
        ['entropy', () => d.entropy()],
        ['cdf', () => d.cdf(value)],
        ['icdf', () => d.icdf(torch.full(d.batchShape, 0.3, 'float64'))],
        ['mean', () => d.mean],
        ['variance', () => d.variance],
      ];
      for (const [key, fn] of checks) {
        const expected = c[key] as Data | undefined;
        if (expected === undefined) {
          if (key !== 'cdf' && key !== 'icdf') assert.throws(fn, /has no/, `${what}: no ${key}, as PyTorch`);
          continue;
        }
        const r = fn();
        same(r, expected, `${what} ${key}`);
        total = total.add(r.sum());
      }
      total.backward();
      checkGrads(ps, c.grads, `${what} gradient`);
      torch.manualSeed(7);
      const s = d.sample([3]);
      assert.equal(s.requiresGrad, false, `${what}: sample() has no gradient path`);
      same(s, c.sample, `${what} seeded sample`, 1e-12);
      const ps2 = leaves(c.params);
      const d2 = build(c.name, ps2);
      assert.ok(d2.hasRsample, `${what} hasRsample`);
      torch.manualSeed(7);
      const r = d2.rsample([3]);
      same(r, c.rsample, `${what} seeded rsample`, 1e-12);
      r.mul(torch.linspace(-1, 1, r.numel, 'float64').reshape(...r.shape))
        .sum()
        .backward();
      checkGrads(ps2, c.rsampleGrads, `${what} rsample gradient`);
      d.dispose();
      d2.dispose();
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('enumerateSupport of Bernoulli, Categorical, OneHotCategorical, Binomial is PyTorch 1.13’s', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const dists: Record<string, D.Distribution> = {
      bernoulli: new D.Bernoulli({ probs: t64([0.1, 0.5]) }),
      categorical: new D.Categorical({
        probs: t64([
          [0.2, 0.3, 0.5],
          [0.6, 0.1, 0.3],
        ]),
      }),
      onehot: new D.OneHotCategorical({
        logits: t64([
          [0.2, 0.3, 0.5],
          [0.6, 0.1, 0.3],
        ]),
      }),
      binomial: new D.Binomial({ totalCount: t64([3, 3]), probs: t64([0.2, 0.7]) }),
    };
    for (const e of golden.enumerate) {
      const d = dists[e.label];
      assert.ok(d.hasEnumerateSupport, `${e.label} hasEnumerateSupport`);
      const expanded = d.enumerateSupport();
      assert.equal(expanded.dtype, e.dtype, `${e.label} dtype`);
      same(expanded, e.expanded, `${e.label} enumerateSupport()`, 0);
      same(d.enumerateSupport(false), e.unexpanded, `${e.label} enumerateSupport(false)`, 0);
    }
    assert.equal(new D.Normal(0, 1).hasEnumerateSupport, false);
    assert.throws(() => new D.Normal(0, 1).enumerateSupport(), /Normal has no enumerateSupport/);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bijectTo and transformTo map the reals onto tailor’s constraints', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = t64([[0.3, -1.2, 2.0]]);
    const { constraints: c } = D;
    for (const [constraint, name] of [
      [c.real, 'ComposeTransform'],
      [c.realVector, 'IndependentTransform'],
      [c.positive, 'ExpTransform'],
      [c.nonnegative, 'ExpTransform'],
      [c.unitInterval, 'SigmoidTransform'],
      [c.simplex, 'StickBreakingTransform'],
    ] as const) {
      const tr = D.bijectTo(constraint);
      assert.equal(tr.name, name, `bijectTo(${constraint.name})`);
      const y = tr.forward(x);
      if (name === 'ComposeTransform') assert.deepEqual(y.toNumbers(), x.toNumbers(), 'the identity');
      assert.equal(torch.aten.all(constraint.check(y)).item(), 1, `${name} lands in ${constraint.name}`);
    }
    assert.equal(D.transformTo(c.simplex).name, 'SoftmaxTransform');
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the transforms and the new families give named errors', () => {
  const before = torch.liveTensors();
  const throwsNamed = (fn: () => unknown, pattern: RegExp): void =>
    assert.throws(
      () => torch.tidy(fn),
      (e: Error) => e.message.startsWith('tailor:') && pattern.test(e.message),
    );
  throwsNamed(() => new D.TanhTransform(2), /TanhTransform: cacheSize must be 0 or 1/);
  throwsNamed(() => new D.ExpTransform().withCache(3), /ExpTransform.withCache: cacheSize must be 0 or 1/);
  throwsNamed(
    () => new D.PowerTransform('2' as never),
    /PowerTransform: exponent must be a Tensor or a number/,
  );
  throwsNamed(
    () => new D.ReshapeTransform([2, 3], [5]),
    /ReshapeTransform: inShape \[2, 3\] and outShape \[5\] have different numbers/,
  );
  throwsNamed(
    () => new D.ReshapeTransform([2, 3], [6]).forward(t64([1, 2, 3])),
    /ReshapeTransform: shape mismatch/,
  );
  throwsNamed(
    () => new D.ComposeTransform([new D.ExpTransform(), 3 as never]),
    /ComposeTransform: parts\[1\] must be a Transform/,
  );
  throwsNamed(
    () => new D.IndependentTransform(new D.ExpTransform(), -1),
    /IndependentTransform: reinterpretedBatchNdims/,
  );
  throwsNamed(() => new D.AffineTransform(0, 1, 0.5), /AffineTransform: eventDim must be an integer/);
  throwsNamed(
    () => new D.SoftmaxTransform().logAbsDetJacobian(t64([1]), t64([1])),
    /SoftmaxTransform has no logAbsDetJacobian/,
  );
  throwsNamed(() => new D.SoftmaxTransform().sign, /SoftmaxTransform has no sign/);
  throwsNamed(
    () => new D.StickBreakingTransform().forwardShape([]),
    /StickBreakingTransform: too few dimensions/,
  );
  throwsNamed(() => new D.ExpTransform().forward([1] as never), /ExpTransform.forward: x must be a Tensor/);
  throwsNamed(
    () => D.bijectTo(D.constraints.boolean),
    /bijectTo: no transform is registered for the constraint Boolean\(\)/,
  );
  throwsNamed(
    () => new D.TransformedDistribution(new D.Normal(0, 1), [new D.StickBreakingTransform()]),
    /TransformedDistribution: baseDistribution needs at least 1 dims/,
  );
  throwsNamed(
    () => new D.TransformedDistribution(new D.Normal(0, 1), [{} as never]),
    /transforms\[0\] must be a Transform/,
  );
  throwsNamed(
    () => new D.RelaxedBernoulli(0.5, { probs: t64([1.5]) }),
    /LogitRelaxedBernoulli: parameter probs .*Interval/,
  );
  throwsNamed(() => new D.RelaxedBernoulli(0.5, {}), /give exactly one of probs or logits/);
  throwsNamed(
    () => new D.RelaxedOneHotCategorical('hot' as never, { logits: t64([0, 1]) }),
    /ExpRelaxedCategorical: temperature must be/,
  );
  throwsNamed(
    () => new D.RelaxedOneHotCategorical(1, { probs: t64([0.5, -0.1]) }),
    /Categorical: parameter probs/,
  );
  throwsNamed(
    () => new D.Kumaraswamy(t64([1, -1]), 2),
    /Kumaraswamy: parameter concentration1 .*GreaterThan/,
  );
  throwsNamed(() => new D.Kumaraswamy(1, 0), /Kumaraswamy: parameter concentration0/);
  throwsNamed(() => new D.LogisticNormal(0, -1), /Normal: parameter scale/);
  throwsNamed(() => new D.LogisticNormal(0, 1).logProb(t64([0.5, 0.6])), /LogisticNormal.logProb: .*Simplex/);
  throwsNamed(() => new D.Kumaraswamy(1, 2).logProb(t64([1.5])), /Kumaraswamy.logProb: .*Interval/);
  throwsNamed(
    () => new D.Bernoulli({ probs: 0.3 }).enumerateSupport('yes' as never),
    /expand must be a boolean/,
  );
  throwsNamed(
    () => new D.Binomial({ totalCount: t64([2, 3]), probs: 0.5 }).enumerateSupport(),
    /Binomial.enumerateSupport needs the same totalCount/,
  );
  assert.equal(torch.liveTensors(), before, 'failed constructions leave no tensors');
});

test('families made outside tidy free what they made on dispose()', () => {
  const before = torch.liveTensors();
  const given = [t64([0.3, 0.6]), t64([0.2, -0.1]), t64([1, 3])];
  const [probs, loc, c0] = given;
  const normal = new D.Normal(loc, 1);
  const big = normal.expand([3, 2]);
  const dists = [
    new D.RelaxedBernoulli(0.5, { probs }),
    new D.RelaxedOneHotCategorical(0.5, { logits: loc }),
    new D.LogisticNormal(0.3, 1.2),
    new D.Kumaraswamy(2, c0),
    new D.TransformedDistribution(big, new D.StickBreakingTransform()),
  ];
  const made = (dists[4] as D.TransformedDistribution).baseDist;
  assert.ok(
    made instanceof D.Independent && made.baseDist === big,
    'a base of fewer event dims is made Independent',
  );
  for (const d of [...dists, big, normal]) d.dispose();
  assert.equal(torch.liveTensors(), before + given.length, 'only the caller’s tensors are left');
  for (const t of given) t.dispose();
});
