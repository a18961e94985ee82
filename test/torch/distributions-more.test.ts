// torch.distributions' composite families and expand() beyond the golden values of
// test/torch/distributions.test.ts: expand() against the broadcast it stands for (values and
// seeded draws exactly), the named errors of the newer families, and which tensors they own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { distributions as D } from '../../src/torch/index.js';

const t64 = (data: number[] | number[][]): torch.Tensor => torch.tensor(data, { dtype: 'float64' });

test('expand() broadcasts the batch: the same values and seeded draws as the broadcast parameters', () => {
  const before = torch.liveTensors();
  torch.tidy(() => {
    // Counts, so that the Geometric has them in its support too.
    const value = t64([
      [1, 2],
      [3, 1],
      [2, 4],
    ]);
    const pairs: [D.Distribution, D.Distribution][] = [
      [
        new D.Normal(t64([0, 1]), t64([1, 2])),
        new D.Normal(t64([0, 1]).expand(3, 2), t64([1, 2]).expand(3, 2)),
      ],
      [new D.Gamma(t64([0.7, 2]), 1.5), new D.Gamma(t64([0.7, 2]).expand(3, 2), 1.5)],
      [
        new D.Gumbel(t64([[0], [1], [2]]), 0.5),
        new D.Gumbel(
          t64([
            [0, 0],
            [1, 1],
            [2, 2],
          ]),
          0.5,
        ),
      ],
      [new D.Chi2(t64([3, 1.5])), new D.Chi2(t64([3, 1.5]).expand(3, 2))],
      [new D.Geometric({ logits: t64([0.2, -1]) }), new D.Geometric({ logits: t64([0.2, -1]).expand(3, 2) })],
    ];
    for (const [small, broad] of pairs) {
      const big = small.expand([3, 2]);
      assert.deepEqual(big.batchShape, [3, 2], `${small.name} batchShape`);
      assert.ok(big instanceof small.constructor, `${small.name}.expand keeps the family`);
      assert.deepEqual(
        big.logProb(value).toNumbers(),
        broad.logProb(value).toNumbers(),
        `${small.name} logProb`,
      );
      torch.manualSeed(3);
      const a = big.sample([2]);
      torch.manualSeed(3);
      assert.deepEqual(a.toNumbers(), broad.sample([2]).toNumbers(), `${small.name} seeded sample`);
    }
    const ind = new D.Independent(new D.Normal(t64([0, 1, 2]), 1), 1).expand([4]);
    assert.deepEqual([ind.batchShape, ind.eventShape], [[4], [3]]);
    assert.deepEqual(ind.logProb(t64([0, 0, 0])).shape, [4]);
  });
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});

test('expand() and the newer families give named errors, as PyTorch validate_args=True', () => {
  const before = torch.liveTensors();
  const throwsNamed = (fn: () => unknown, pattern: RegExp): void =>
    assert.throws(
      () => torch.tidy(fn),
      (e: Error) => e.message.startsWith('tailor:') && pattern.test(e.message),
    );
  throwsNamed(() => new D.Normal(t64([0, 1]), 1).expand([3]), /Normal.expand: batchShape \[3\]/);
  throwsNamed(() => new D.Normal(0, 1).expand([-1]), /Normal.expand: batchShape/);
  throwsNamed(() => new D.Dirichlet(t64([1, 2])).expand([3]), /Dirichlet has no expand/);
  throwsNamed(() => new D.Cauchy(0, t64([1, 0])), /Cauchy: parameter scale .*GreaterThan/);
  throwsNamed(() => new D.HalfNormal(-1), /HalfNormal: parameter scale .*GreaterThan/);
  throwsNamed(() => new D.HalfCauchy(t64([0])), /HalfCauchy: parameter scale/);
  throwsNamed(() => new D.Chi2(t64([2, 0])), /Chi2: parameter df/);
  throwsNamed(() => new D.Gumbel(t64([NaN]), 1), /Gumbel: parameter loc .*Real/);
  throwsNamed(() => new D.Weibull(1, -2), /Weibull: parameter concentration/);
  throwsNamed(() => new D.Pareto(0, 1), /Pareto: parameter scale/);
  throwsNamed(() => new D.VonMises(0, t64([1, -1])), /VonMises: parameter concentration/);
  throwsNamed(
    () => new D.Pareto(2, 1).logProb(t64([1.5])),
    /Pareto.logProb: .*GreaterThanEq\(lower_bound=scale\)/,
  );
  throwsNamed(() => new D.Geometric({ probs: t64([0.5, 0]) }), /Geometric: parameter probs .*GreaterThan/);
  throwsNamed(
    () => new D.Geometric({ probs: 0.5 }).logProb(t64([1.5])),
    /Geometric.logProb: .*IntegerGreaterThan/,
  );
  throwsNamed(() => new D.Multinomial(2.5, { probs: t64([0.5, 0.5]) }), /Multinomial: totalCount must be/);
  throwsNamed(
    () => new D.Multinomial(3, { probs: t64([0.5, 0.5]) }).logProb(t64([3, 1])),
    /Multinomial.logProb: .*Multinomial\(upper_bound=3\)/,
  );
  const normal = (): D.Normal => new D.Normal(t64([[0, 1, 2]]), 1);
  throwsNamed(() => new D.Independent(normal(), 3), /Independent: reinterpretedBatchNdims .*\[0, 2\]/);
  throwsNamed(
    () => new D.Independent(normal(), 1).logProb(t64([0, 1])),
    /Independent.logProb: the rightmost sizes/,
  );
  throwsNamed(
    () => new D.MixtureSameFamily(new D.Normal(0, 1) as never, normal()),
    /mixtureDistribution must be a Categorical/,
  );
  throwsNamed(
    () => new D.MixtureSameFamily(new D.Categorical({ logits: t64([0, 0]) }), normal()),
    /2 categories but componentDistribution.batchShape ends in 3/,
  );
  throwsNamed(
    () =>
      new D.MixtureSameFamily(
        new D.Categorical({
          logits: t64([
            [0, 0, 0],
            [1, 1, 1],
          ]),
        }),
        new D.Normal(t64([[0, 1, 2]]).expand(3, 3), 1),
      ),
    /mixtureDistribution.batchShape \[2\] is not compatible/,
  );
  throwsNamed(
    () => new D.MixtureSameFamily(new D.Categorical({ logits: t64([0]) }), new D.Normal(0, 1)),
    /needs a batch dimension of the K components/,
  );
  throwsNamed(
    () => D.klDivergence(new D.Independent(normal(), 1), new D.Independent(normal(), 2)),
    /reinterpretedBatchNdims differ \(1 and 2\)/,
  );
  throwsNamed(
    () => new D.TransformedDistribution(normal(), [{ name: 'Mine' } as never]),
    /transforms\[0\] must be a Transform \(such as new ExpTransform\(\)\)/,
  );
  throwsNamed(
    () => new D.AffineTransform('1' as never, 2),
    /AffineTransform: loc must be a Tensor or a number/,
  );
  throwsNamed(() => new D.TransformedDistribution(normal(), new D.ExpTransform()).mean, /has no mean/);
  throwsNamed(
    () => new D.TransformedDistribution(normal(), new D.ExpTransform()).logProb(t64([[1, -1, 2]])),
    /TransformedDistribution.logProb: .*GreaterThan/,
  );
  throwsNamed(
    () =>
      D.klDivergence(
        new D.TransformedDistribution(normal(), new D.AffineTransform(0, 2)),
        new D.TransformedDistribution(normal(), new D.AffineTransform(0, 3)),
      ),
    /needs equal transforms/,
  );
  assert.equal(torch.liveTensors(), before, 'a failed construction frees what it made');
});

test('the newer families own only what they make: dispose() frees it, the given tensors stay', () => {
  const scale = t64([1, 2]);
  const before = torch.liveTensors();
  const logits = t64([0, 1, 2]);
  const probs = t64([0.5, 0.5]);
  const loc = t64([0, 1]);
  const column = scale.reshape(2, 1, 1);
  const made = [
    new D.Cauchy(0, scale),
    new D.HalfNormal(scale),
    new D.HalfCauchy(scale),
    new D.Chi2(scale),
    new D.Gumbel(0, scale),
    new D.Weibull(scale, 1.5),
    new D.Pareto(scale, 3),
    new D.VonMises(0, scale),
    new D.Geometric({ probs: 0.25 }),
    new D.Multinomial(4, { logits }),
  ];
  const normal = new D.Normal(loc, scale);
  const expanded = normal.expand([3, 2]);
  // An AffineTransform that broadcasts the batch makes an expanded base, which it then owns.
  const transformed = new D.TransformedDistribution(normal, [
    new D.ExpTransform(),
    new D.AffineTransform(1, column),
  ]);
  assert.deepEqual(transformed.batchShape, [2, 1, 2]);
  const independent = new D.Independent(normal, 1);
  const mixture = new D.MixtureSameFamily(new D.Categorical({ probs }), normal);
  torch.tidy(() => {
    for (const d of [...made, expanded, transformed, independent, mixture]) d.sample([2]);
  });
  for (const d of [...made, expanded, transformed, independent, mixture]) d.dispose();
  assert.equal(scale.isDisposed, false, 'the given scale stays');
  assert.equal(normal.loc.isDisposed, false, 'the component given to a mixture stays');
  mixture.mixtureDistribution.dispose();
  normal.dispose();
  for (const t of [logits, probs, loc, column]) t.dispose();
  assert.equal(torch.liveTensors(), before, 'every tensor they made is freed');
  scale.dispose();
});
