// The named errors of NegativeBinomial, ContinuousBernoulli, FisherSnedecor,
// LowRankMultivariateNormal, LKJCholesky and Wishart, of their KL pairs and of expand(), as
// PyTorch 1.13 with validate_args=True raises them; failed constructions leak no tensor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { distributions as D } from '../../src/torch/index.js';

const t64 = (data: number[] | number[][]): torch.Tensor => torch.tensor(data, { dtype: 'float64' });

test('the newer families give named errors, as PyTorch validate_args=True', () => {
  const before = torch.liveTensors();
  const throwsNamed = (fn: () => unknown, pattern: RegExp): void =>
    assert.throws(
      () => torch.tidy(fn),
      (e: Error) => e.message.startsWith('tailor:') && pattern.test(e.message),
      String(pattern),
    );
  throwsNamed(
    () => new D.NegativeBinomial(-1, { probs: 0.5 }),
    /NegativeBinomial: parameter totalCount .*GreaterThanEq/,
  );
  throwsNamed(
    () => new D.NegativeBinomial(2, { probs: t64([0.5, 1]) }),
    /NegativeBinomial: parameter probs .*HalfOpenInterval/,
  );
  throwsNamed(() => new D.NegativeBinomial(2, {}), /NegativeBinomial: give exactly one of probs or logits/);
  throwsNamed(
    () => new D.NegativeBinomial(2, { probs: 0.5 }).logProb(t64([1.5])),
    /NegativeBinomial.logProb: .*IntegerGreaterThan/,
  );
  throwsNamed(
    () => new D.ContinuousBernoulli({ probs: t64([1.2]) }),
    /ContinuousBernoulli: parameter probs .*Interval/,
  );
  throwsNamed(
    () => new D.ContinuousBernoulli({ logits: 0, lims: [0.4] as never }),
    /ContinuousBernoulli: lims must be/,
  );
  throwsNamed(
    () => new D.ContinuousBernoulli({ probs: 0.3 }).logProb(t64([1.5])),
    /ContinuousBernoulli.logProb: .*Interval\(lower_bound=0.0, upper_bound=1.0\)/,
  );
  throwsNamed(() => new D.FisherSnedecor(t64([1, 0]), 2), /FisherSnedecor: parameter df1 .*GreaterThan/);
  throwsNamed(
    () => new D.FisherSnedecor(1, 2).entropy(),
    /FisherSnedecor has no entropy, as in PyTorch 1.13/,
  );
  const z3 = (): torch.Tensor => torch.zeros([3], 'float64');
  throwsNamed(
    () => new D.LowRankMultivariateNormal(torch.zeros([], 'float64'), torch.ones([3, 1], 'float64'), z3()),
    /LowRankMultivariateNormal: parameter loc must be a tensor of at least one dimension/,
  );
  throwsNamed(
    () => new D.LowRankMultivariateNormal(z3(), torch.ones([2, 1], 'float64'), z3().add(1)),
    /parameter covFactor must be a tensor of shape \[\.\.\., 3, m\]/,
  );
  throwsNamed(
    () => new D.LowRankMultivariateNormal(z3(), torch.ones([3, 1], 'float64'), torch.ones([2], 'float64')),
    /parameter covDiag must be a tensor of shape \[\.\.\., 3\]/,
  );
  throwsNamed(
    () => new D.LowRankMultivariateNormal(z3(), torch.ones([3, 1], 'float64'), z3()),
    /LowRankMultivariateNormal: parameter covDiag .*IndependentConstraint\(GreaterThan/,
  );
  throwsNamed(
    () =>
      new D.LowRankMultivariateNormal(
        torch.zeros([2, 3], 'float64'),
        torch.ones([4, 3, 1], 'float64'),
        z3().add(1),
      ),
    /LowRankMultivariateNormal: parameter shapes .* do not broadcast/,
  );
  throwsNamed(
    () =>
      D.klDivergence(
        new D.Binomial({ totalCount: t64([2, 5]), probs: 0.5 }),
        new D.Binomial({ totalCount: t64([3, 5]), probs: 0.5 }),
      ),
    /klDivergence\(Binomial, Binomial\) needs p.totalCount >= q.totalCount/,
  );
  throwsNamed(
    () =>
      D.klDivergence(
        new D.LowRankMultivariateNormal(z3(), torch.ones([3, 1], 'float64'), z3().add(1)),
        new D.MultivariateNormal(torch.zeros([2], 'float64'), { scaleTril: torch.eye(2, 'float64') }),
      ),
    /klDivergence\(LowRankMultivariateNormal, MultivariateNormal\): the event sizes differ \(3 and 2\)/,
  );
  throwsNamed(
    () => D.klDivergence(new D.NegativeBinomial(2, { probs: 0.5 }), new D.Poisson(1)),
    /klDivergence has no formula for \(NegativeBinomial, Poisson\)/,
  );
  throwsNamed(
    () => new D.LKJCholesky(1),
    /LKJCholesky: dim must be an integer greater than or equal to 2, got 1/,
  );
  throwsNamed(() => new D.LKJCholesky(3, t64([1, 0])), /LKJCholesky: parameter concentration .*GreaterThan/);
  throwsNamed(
    () =>
      new D.LKJCholesky(2).logProb(
        t64([
          [1, 0],
          [0.5, 0.5],
        ]),
      ),
    /LKJCholesky.logProb: .*CorrCholesky\(\)/,
  );
  const eye2 = (): torch.Tensor => torch.eye(2, 'float64');
  throwsNamed(
    () => new D.Wishart(1, { covarianceMatrix: eye2() }),
    /Wishart: parameter df .*GreaterThan\(lower_bound=1\)/,
  );
  throwsNamed(() => new D.Wishart(3, {}), /Wishart: give exactly one of covarianceMatrix/);
  throwsNamed(
    () =>
      new D.Wishart(3, {
        covarianceMatrix: t64([
          [1, 2],
          [2, 1],
        ]),
      }),
    /Wishart: parameter covarianceMatrix must satisfy PositiveDefinite\(\)/,
  );
  throwsNamed(
    () =>
      new D.Wishart(3, {
        scaleTril: t64([
          [1, 1],
          [0, 1],
        ]),
      }),
    /Wishart: parameter scaleTril .*LowerCholesky/,
  );
  throwsNamed(
    () =>
      new D.Wishart(3, { covarianceMatrix: eye2() }).logProb(
        t64([
          [1, 0],
          [0, -1],
        ]),
      ),
    /Wishart.logProb: .*PositiveDefinite\(\)/,
  );
  throwsNamed(() => new D.Wishart(3, { covarianceMatrix: eye2() }).cdf(eye2()), /Wishart has no cdf/);
  throwsNamed(
    () => new D.Bernoulli({ probs: t64([0.5, 0.5]) }).expand([3]),
    /Bernoulli.expand: batchShape \[3\]/,
  );
  throwsNamed(
    () =>
      new D.Categorical({
        probs: t64([
          [0.5, 0.5],
          [0.2, 0.8],
        ]),
      }).expand([3]),
    /Categorical.expand: batchShape \[3\]/,
  );
  assert.equal(torch.liveTensors(), before, 'no tensor leaks');
});
