// validateArgs: false (PyTorch's validate_args=False): parameters and values outside their
// constraints give the formulas' values, against the validate section of
// test/golden/torch/distributions-transforms2.json (scripts/golden/distributions_transforms2.py);
// the default stays on, Distribution.setDefaultValidateArgs changes it, expand hands it on, and
// the families built on others pass it to them.
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
// The golden file writes NaN and the infinities as strings (JSON has no such numbers).
const revive = (_key: string, v: unknown): unknown =>
  v === 'NaN' ? NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v;
const golden = JSON.parse(
  readFileSync(join(goldenDir, 'torch', 'distributions-transforms2.json'), 'utf8'),
  revive,
) as { validate: { label: string; value: Data; logProb: Data; cdf?: Data }[] };

const f64 = (d: Data): torch.Tensor => torch.tensor(d.data, { dtype: 'float64' }).reshape(...d.shape);
const s64 = (x: number): torch.Tensor => torch.tensor(x, { dtype: 'float64' });
const off = { validateArgs: false };

/** The unvalidated distribution of `label` (the golden script's unvalidated cases). */
function build(label: string): D.Distribution {
  switch (label) {
    case 'exponential':
      return new D.Exponential(s64(2), off);
    case 'exponential-expanded':
      return new D.Exponential(s64(2), off).expand([2, 2]);
    case 'normal-negative-scale':
      return new D.Normal(s64(0), s64(-1), off);
    case 'uniform':
      return new D.Uniform(s64(0), s64(1), off);
    case 'poisson':
      return new D.Poisson(s64(2), off);
    case 'lognormal':
      return new D.LogNormal(s64(0), s64(1), off);
    case 'halfnormal':
      return new D.HalfNormal(s64(1), off);
    case 'gamma-negative':
      return new D.Gamma(s64(-1), s64(1), off);
    case 'beta':
      return new D.Beta(s64(2), s64(3), off);
  }
  throw new Error(`unknown case ${label}`);
}

/** Shapes equal, NaN and infinities where expected, the finite values close. */
function same(actual: torch.Tensor, expected: Data, what: string): void {
  assert.deepEqual(actual.shape, expected.shape, `${what} shape`);
  const a = actual.toNumbers();
  expected.data.forEach((e, i) => {
    if (Number.isFinite(e)) assertClose([a[i]], [e], 1e-10, 1e-10, `${what}[${i}]`);
    else
      assert.ok(
        Object.is(a[i], e) || (Number.isNaN(a[i]) && Number.isNaN(e)),
        `${what}[${i}]: ${a[i]} is not ${e}`,
      );
  });
}

test('validateArgs: false gives the formulas outside the support and the constraints, as PyTorch', () => {
  const before = torch.liveTensors();
  for (const c of golden.validate) {
    torch.tidy(() => {
      const d = build(c.label);
      assert.equal(d.validateArgs, false, `${c.label}: validateArgs`);
      same(d.logProb(f64(c.value)), c.logProb, `${c.label} logProb`);
      if (c.cdf) same(d.cdf(f64(c.value)), c.cdf, `${c.label} cdf`);
      d.dispose();
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('validateArgs stays on by default; setDefaultValidateArgs changes the default of later constructions', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    assert.equal(D.Distribution.defaultValidateArgs, true);
    assert.throws(() => new D.Normal(0, -1), /Normal: parameter scale .* must satisfy GreaterThan/);
    const on = new D.Exponential(2);
    assert.equal(on.validateArgs, true);
    assert.throws(
      () => on.logProb(s64(-1)),
      /Exponential.logProb: the value argument .* must lie in the support/,
    );
    D.Distribution.setDefaultValidateArgs(false);
    try {
      const normal = new D.Normal(0, -1);
      assert.equal(normal.validateArgs, false);
      assert.ok(Number.isNaN(normal.logProb(s64(0.5)).item()));
      assert.equal(on.validateArgs, true, 'an existing distribution keeps its setting');
      assert.equal(new D.Normal(0, 1, { validateArgs: true }).validateArgs, true, 'the option wins');
      assert.throws(() => new D.Normal(0, -1, { validateArgs: true }), /must satisfy GreaterThan/);
    } finally {
      D.Distribution.setDefaultValidateArgs(true);
    }
    assert.throws(() => new D.HalfNormal(-1), /HalfNormal: parameter scale must satisfy GreaterThan/);
    // The shape checks stay: they are not PyTorch's validate_args.
    const mvn = new D.MultivariateNormal(torch.zeros([2], 'float64'), {
      covarianceMatrix: torch.eye(2, 'float64'),
      validateArgs: false,
    });
    assert.throws(() => mvn.logProb(torch.zeros([3], 'float64')), /must equal eventShape \[2\]/);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('validateArgs reaches expansions and the distributions a family builds on', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const bern = new D.Bernoulli({ probs: s64(1.5), validateArgs: false });
    assert.equal(bern.expand([3]).validateArgs, false, 'expand hands it on');
    assert.equal(new D.Exponential(2).expand([3]).validateArgs, true);
    const lognormal = new D.LogNormal(0, -1, off);
    assert.equal((lognormal as unknown as { baseDist: D.Distribution }).baseDist.validateArgs, false);
    const relaxed = new D.RelaxedBernoulli(0.5, { probs: s64(2), validateArgs: false });
    assert.equal(relaxed.baseDist.validateArgs, false, 'RelaxedBernoulli hands it to its base');
    const ind = new D.Independent(new D.Normal(torch.zeros([2], 'float64'), 1, off), 1, off);
    assert.ok(Number.isNaN(new D.Normal(0, -1, off).logProb(s64(0)).item()));
    assert.equal(ind.logProb(torch.zeros([2], 'float64')).shape.length, 0);
    const td = new D.TransformedDistribution(new D.Normal(s64(0), s64(1), off), [new D.ExpTransform()], off);
    assert.ok(Number.isNaN(td.logProb(s64(-1)).item()), 'no support check: log of a negative value');
    assert.equal(new D.Chi2(-1, off).validateArgs, false);
    assert.equal(
      new D.Categorical({ probs: torch.tensor([0.5, -0.5]), validateArgs: false }).validateArgs,
      false,
    );
    for (const d of [bern, lognormal, relaxed, ind, td]) d.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('named errors: a validateArgs that is not a boolean', () => {
  assert.throws(
    () => new D.Normal(0, 1, { validateArgs: 'no' as unknown as boolean }),
    /tailor: Normal: validateArgs must be true or false, got/,
  );
  assert.throws(
    () => D.Distribution.setDefaultValidateArgs(0 as unknown as boolean),
    /Distribution.setDefaultValidateArgs: value must be true or false/,
  );
  assert.equal(D.Distribution.defaultValidateArgs, true);
});
