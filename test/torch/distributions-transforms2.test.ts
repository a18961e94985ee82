// CatTransform, StackTransform, LowerCholeskyTransform, CorrCholeskyTransform and
// PositiveDefiniteTransform, the constraints of bounds, Independent, cat, stack and matrices, and
// bijectTo/transformTo of each, against test/golden/torch/distributions-transforms2.json
// (scripts/golden/distributions_transforms2.py) in float64: forward, inverse, log |det J|, event
// dims, shapes, the domain's and codomain's checks and the gradients. Then the named errors and leaks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { distributions as D } from '../../src/torch/index.js';
import { assertClose, goldenDir } from '../helpers.js';

const C = D.constraints;

interface Data {
  shape: number[];
  data: number[];
}
interface Applied {
  label: string;
  x: Data;
  y: Data;
  inverse: Data;
  inverseGrad: number[];
  logAbsDetJacobian?: Data;
  gradX: number[];
  domainEventDim: number;
  codomainEventDim: number;
  bijective: boolean;
  forwardShape: number[];
  inverseShape: number[];
  domainCheck: Data | null;
  codomainCheck: Data | null;
}
interface TransformCase extends Applied {
  name: string;
}
interface RegistryCase extends Applied {
  which: 'biject' | 'transform';
  constraintName?: string;
  constraintCheck: Data;
}
const golden = JSON.parse(
  readFileSync(join(goldenDir, 'torch', 'distributions-transforms2.json'), 'utf8'),
) as {
  transforms: TransformCase[];
  registry: RegistryCase[];
  checks: { label: string; value: Data; result: Data }[];
};

const f64 = (d: Data): torch.Tensor => torch.tensor(d.data, { dtype: 'float64' }).reshape(...d.shape);
const t64 = (data: number[] | number[][]): torch.Tensor => torch.tensor(data, { dtype: 'float64' });

/** The transform `name` (the golden script's make_transform). */
function makeTransform(name: string): D.Transform {
  switch (name) {
    case 'Cat-dim1':
      return new D.CatTransform(
        [new D.ExpTransform(), new D.SigmoidTransform(), new D.AffineTransform(0.5, -2)],
        1,
        [2, 2, 1],
      );
    case 'Cat-dim0-default-lengths':
      return new D.CatTransform([new D.ExpTransform(), new D.TanhTransform()], 0);
    case 'Cat-event-cat':
      return new D.CatTransform(
        [new D.IndependentTransform(new D.ExpTransform(), 1), new D.SigmoidTransform()],
        0,
        [1, 1],
      );
    case 'Cat-event-sum':
      return new D.CatTransform(
        [
          new D.IndependentTransform(new D.ExpTransform(), 1),
          new D.IndependentTransform(new D.SigmoidTransform(), 1),
        ],
        -1,
        [2, 1],
      );
    case 'Cat-stickbreaking-rows':
      return new D.CatTransform([new D.StickBreakingTransform(), new D.StickBreakingTransform()], 0, [1, 1]);
    case 'Stack-dim1':
      return new D.StackTransform(
        [new D.ExpTransform(), new D.SigmoidTransform(), new D.AffineTransform(1, 3)],
        1,
      );
    case 'Stack-dim-last':
      return new D.StackTransform([new D.SoftplusTransform(), new D.TanhTransform()], -1);
    case 'LowerCholesky':
      return new D.LowerCholeskyTransform();
    case 'CorrCholesky':
      return new D.CorrCholeskyTransform();
    case 'PositiveDefinite':
      return new D.PositiveDefiniteTransform();
  }
  throw new Error(`unknown transform ${name}`);
}

/** The constraint of `label` (the golden script's make_constraint). */
function makeConstraint(label: string): D.Constraint {
  switch (label) {
    case 'greater-than':
      return C.greaterThan(2);
    case 'greater-than-eq':
      return C.greaterThanEq(-1.5);
    case 'less-than':
      return C.lessThan(0.5);
    case 'interval':
      return C.interval(-1, 3);
    case 'half-open-unit':
      return C.halfOpenInterval(0, 1);
    case 'half-open':
      return C.halfOpenInterval(0.5, 2.5);
    case 'unit-interval':
      return C.unitInterval;
    case 'positive':
      return C.positive;
    case 'interval-tensor':
      return C.interval(t64([0, -1, 2]), t64([1, 5, 2.5]));
    case 'greater-than-tensor':
      return C.greaterThan(t64([[0.5], [-2]]));
    case 'independent-interval':
      return C.independent(C.interval(-1, 3), 1);
    case 'independent-positive-2':
      return C.independent(C.positive, 2);
    case 'cat':
      return C.cat([C.positive, C.interval(0, 2), C.real], -1, [1, 1, 1]);
    case 'stack':
      return C.stack([C.greaterThan(1), C.lessThan(0)], 0);
    case 'simplex':
      return C.simplex;
    case 'corr-cholesky':
      return C.corrCholesky;
    case 'lower-cholesky':
      return C.lowerCholesky;
    case 'positive-definite':
      return C.positiveDefinite;
  }
  throw new Error(`unknown constraint ${label}`);
}

/** Shapes equal and the values close (booleans compared as 0/1). */
function same(actual: torch.Tensor, expected: Data, what: string, tol = 1e-10): void {
  assert.deepEqual(actual.shape, expected.shape, `${what} shape`);
  assertClose(actual.toNumbers(), expected.data, tol, tol, what);
}

/** Checks tr against a golden case: the map, its inverse, log |det J|, event dims, shapes, checks, gradients. */
function checkApplied(tr: D.Transform, c: Applied, what: string): void {
  const x = f64(c.x).requiresGrad_();
  const y = tr.forward(x);
  same(y, c.y, `${what} forward`);
  assert.equal(tr.domain.eventDim, c.domainEventDim, `${what} domain eventDim`);
  assert.equal(tr.codomain.eventDim, c.codomainEventDim, `${what} codomain eventDim`);
  assert.equal(tr.bijective, c.bijective, `${what} bijective`);
  assert.deepEqual(tr.forwardShape(c.x.shape), c.forwardShape, `${what} forwardShape`);
  assert.deepEqual(tr.inverseShape(c.y.shape), c.inverseShape, `${what} inverseShape`);
  if (c.domainCheck) same(tr.domain.check(x).double(), c.domainCheck, `${what} domain check`);
  if (c.codomainCheck) {
    same(tr.codomain.check(y.detach()).double(), c.codomainCheck, `${what} codomain check`);
  }
  const yLeaf = f64(c.y).requiresGrad_();
  const xi = tr.inv.forward(yLeaf);
  same(xi, c.inverse, `${what} inverse`, 1e-9);
  const [inverseGrad] = torch.grad([xi.sum()], [yLeaf]);
  assertClose(inverseGrad!.toNumbers(), c.inverseGrad, 1e-8, 1e-8, `${what} inverse gradient`);
  const w = torch.linspace(-1, 1, y.numel, 'float64').reshape(...y.shape);
  let total = y.mul(w).sum();
  if (c.logAbsDetJacobian) {
    const ladj = tr.logAbsDetJacobian(x, y);
    same(ladj, c.logAbsDetJacobian, `${what} logAbsDetJacobian`);
    total = total.add(ladj.sum());
  } else {
    assert.throws(() => tr.logAbsDetJacobian(x, y), /has no logAbsDetJacobian/, `${what}: no ladj`);
  }
  const [gradX] = torch.grad([total], [x]);
  assertClose(gradX!.toNumbers(), c.gradX, 1e-9, 1e-9, `${what} gradient`);
}

test('Cat, Stack, LowerCholesky, CorrCholesky and PositiveDefinite transforms match PyTorch', () => {
  const before = torch.liveTensors();
  for (const c of golden.transforms) torch.tidy(() => checkApplied(makeTransform(c.name), c, c.label));
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('bijectTo and transformTo of bounded, Independent, cat, stack and matrix constraints match PyTorch', () => {
  const before = torch.liveTensors();
  for (const c of golden.registry) {
    torch.tidy(() => {
      const what = `${c.which} ${c.label}`;
      const constraint = makeConstraint(c.label);
      if (c.constraintName !== undefined) assert.equal(constraint.name, c.constraintName, `${what} name`);
      const tr = c.which === 'biject' ? D.bijectTo(constraint) : D.transformTo(constraint);
      checkApplied(tr, c, what);
      same(constraint.check(tr.forward(f64(c.x))).double(), c.constraintCheck, `${what} lands inside`);
    });
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the constraints check values as PyTorch', () => {
  const before = torch.liveTensors();
  for (const c of golden.checks) {
    torch.tidy(() => same(makeConstraint(c.label).check(f64(c.value)).double(), c.result, c.label));
  }
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('the registries pick the transforms PyTorch registers, and the families use the shared constraints', () => {
  assert.ok(D.bijectTo(C.interval(0, 1)) instanceof D.SigmoidTransform, 'the unit interval: a plain Sigmoid');
  assert.ok(D.bijectTo(C.halfOpenInterval(0, 1)) instanceof D.SigmoidTransform);
  const half = D.bijectTo(C.lessThan(2)) as D.ComposeTransform;
  assert.ok(half.parts[0] instanceof D.ExpTransform && half.parts[1] instanceof D.AffineTransform);
  assert.equal((half.parts[1] as D.AffineTransform).scale, -1);
  assert.ok(D.bijectTo(C.corrCholesky) instanceof D.CorrCholeskyTransform);
  assert.ok(D.transformTo(C.lowerCholesky) instanceof D.LowerCholeskyTransform);
  assert.ok(D.transformTo(C.positiveDefinite) instanceof D.PositiveDefiniteTransform);
  const stack = D.transformTo(C.stack([C.simplex, C.simplex], -2)) as D.StackTransform;
  assert.ok(
    stack.transforms.every((t) => t instanceof D.SoftmaxTransform),
    'transformTo recurses with itself',
  );
  torch.tidy(() => {
    const lkj = new D.LKJCholesky(3, 1.5);
    assert.ok(D.bijectTo(lkj.support) instanceof D.CorrCholeskyTransform, "LKJCholesky's support");
    const w = new D.Wishart(4, { covarianceMatrix: torch.eye(2, 'float64') });
    assert.ok(D.transformTo(w.support) instanceof D.PositiveDefiniteTransform, "Wishart's support");
    assert.equal(new D.TanhTransform().codomain.name, 'Interval(lower_bound=-1.0, upper_bound=1.0)');
  });
});

test('named errors: registries, constraints and the functors', () => {
  assert.throws(
    () => D.bijectTo(C.lowerCholesky),
    /bijectTo: no transform is registered for the constraint LowerCholesky\(\)/,
  );
  assert.throws(() => D.bijectTo(C.positiveDefinite), /bijectTo: no transform .* PositiveDefinite\(\)/);
  assert.throws(() => D.bijectTo(C.boolean), /bijectTo: no transform .* Boolean\(\).*knows real/);
  assert.throws(
    () => C.greaterThan('1' as unknown as number),
    /constraints.greaterThan: lower must be a Tensor or a number/,
  );
  assert.throws(
    () => C.independent(C.real, -1),
    /constraints.independent: reinterpreted must be an integer >= 0/,
  );
  assert.throws(
    () => C.cat([C.real, C.positive], 0, [1]),
    /constraints.cat: lengths must be 2 integer sizes/,
  );
  assert.throws(() => C.stack([]), /constraints.stack: cseq must be a non-empty array/);
  assert.throws(() => new D.CatTransform([]), /CatTransform: tseq must be a non-empty array of Transforms/);
  assert.throws(
    () => new D.CatTransform([new D.ExpTransform(), 3 as unknown as D.Transform]),
    /CatTransform: tseq\[1\] must be a Transform/,
  );
  assert.throws(
    () => new D.StackTransform([new D.ExpTransform()], 0.5),
    /StackTransform: dim must be an integer/,
  );
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = torch.zeros([2, 3], 'float64');
    const catT = new D.CatTransform([new D.ExpTransform(), new D.TanhTransform()], 1, [1, 1]);
    assert.throws(() => catT.forward(x), /CatTransform.forward: the size along dim 1 of \[2, 3\] must be 2/);
    assert.throws(() => new D.CatTransform([new D.ExpTransform()], 2).forward(x), /dim 2 is out of range/);
    const stackT = new D.StackTransform([new D.ExpTransform()], 0);
    assert.throws(() => stackT.inverse(x), /StackTransform.inverse: the size along dim 0 .* must be 1/);
    const mixed = new D.CatTransform([new D.CorrCholeskyTransform()], 0, [2]);
    assert.throws(
      () => mixed.logAbsDetJacobian(x, x),
      /CorrCholeskyTransform has domain and codomain of different event dims/,
    );
    assert.throws(() => new D.CorrCholeskyTransform().forwardShape([4]), /the last dim 4 is not D\(D-1\)\/2/);
    assert.throws(() => new D.LowerCholeskyTransform().forward(x), /expected square matrices/);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('cacheSize 1 reaches the parts of Cat and Stack; dispose frees their views', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    const x = t64([[5, 19, -0.5]]);
    const catT = new D.CatTransform([new D.TanhTransform(), new D.TanhTransform()], 1, [2, 1], 1);
    assert.ok(catT.transforms.every((t) => t.cacheSize === 1));
    const y = catT.forward(x);
    assert.deepEqual(catT.inverse(y).toNumbers(), [5, 19, -0.5], 'the cached x, exact');
    catT.dispose();
    const stackT = new D.StackTransform([new D.TanhTransform()], 0).withCache(1) as D.StackTransform;
    assert.ok(stackT.transforms[0].cacheSize === 1);
    stackT.forward(x);
    stackT.dispose();
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('hostile arguments (found by the API fuzz campaign) fail by name, without a hang', () => {
  const before = torch.liveTensors();
  const junk = <T>(value: unknown): T => value as T;
  let deep: unknown = [1];
  for (let k = 0; k < 100_000; k++) deep = [deep];
  torch.tidy(() => {
    // a constraint's check of a value that is not a tensor
    assert.throws(() => C.real.check(junk(NaN)), /tailor: Real\(\).check: value must be a Tensor, got NaN/);
    assert.throws(
      () => C.positive.check(junk(null)),
      /GreaterThan\(lower_bound=0.0\).check: value must be a Tensor/,
    );
    assert.throws(() => C.lowerCholesky.check(junk({})), /LowerCholesky\(\).check: value must be a Tensor/);
    // an Independent constraint of more dims than the value has: PyTorch's error, not 1e12 reductions
    assert.throws(
      () => C.independent(C.simplex, 1e12).check(torch.ones([3])),
      /constraints.independent\(...\).check: expected value.dim >= 1000000000001, got 1/,
    );
    assert.throws(() => C.independent(C.real, 2).check(torch.ones([3])), /expected value.dim >= 2, got 1/);
    // bounds and names that are not numbers or strings (a nested array printed overflowed the stack)
    assert.throws(
      () => C.integerInterval(junk(deep), 3),
      /constraints.integerInterval: lower must be a number/,
    );
    assert.throws(
      () => C.integerInterval(0, junk(deep)),
      /constraints.integerInterval: upper must be a Tensor or a number/,
    );
    assert.throws(() => C.lessThan(0, junk(Symbol('s'))), /constraints.lessThan: upperName must be a string/);
    assert.throws(
      () => C.multinomial(junk(Symbol('s'))),
      /constraints.multinomial: totalCount must be a number/,
    );
    // transforms: a base that is not a transform, log |det J| and shapes of junk
    assert.throws(() => new D.InverseTransform(junk({})), /InverseTransform: base\[0\] must be a Transform/);
    const x = torch.zeros([2, 3]);
    assert.throws(
      () => new D.SigmoidTransform().logAbsDetJacobian(junk(-1)),
      /SigmoidTransform.logAbsDetJacobian: x must be a Tensor, got -1/,
    );
    assert.throws(
      () => new D.ExpTransform().inv.logAbsDetJacobian(x, junk(undefined)),
      /ExpTransform.inv.logAbsDetJacobian: y must be a Tensor/,
    );
    assert.throws(
      () => new D.StickBreakingTransform().forwardShape(junk(x)),
      /StickBreakingTransform.forwardShape: shape must be an array of sizes/,
    );
    assert.throws(
      () => new D.PositiveDefiniteTransform().inv.inverseShape(junk([2, -1])),
      /PositiveDefiniteTransform.inv.inverseShape: shape must be an array of sizes/,
    );
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
