// torch.distributions: probability distributions with sampling on libtorch's global generator,
// log densities, entropies and KL divergences as in PyTorch 1.13.
export {
  Distribution,
  broadcastShapes,
  type Constraint,
  type DistributionOptions,
  type Param,
} from './distribution.js';
/** The support and parameter constraints (torch.distributions.constraints), with PyTorch's names. */
export * as constraints from './constraints.js';
export { Normal, LogNormal, Laplace, Uniform, Exponential, StudentT } from './continuous.js';
export { Gamma, Beta, Dirichlet } from './gamma.js';
export {
  Bernoulli,
  Categorical,
  OneHotCategorical,
  Poisson,
  Binomial,
  type ProbsOrLogits,
} from './discrete.js';
export { Cauchy, HalfNormal, HalfCauchy, Chi2 } from './more.js';
export { Gumbel, Weibull, Pareto } from './transformed-families.js';
export { Geometric, Multinomial } from './counts.js';
export { VonMises } from './von-mises.js';
export { Independent, MixtureSameFamily } from './mixture.js';
export {
  TransformedDistribution,
  ExpTransform,
  AffineTransform,
  SigmoidTransform,
  type Transform,
} from './transforms.js';
export { MultivariateNormal, type MultivariateNormalOptions } from './multivariate-normal.js';
export { klDivergence, registeredKlPairs } from './kl.js';
export { TransformBase, InverseTransform, ComposeTransform, IndependentTransform } from './transform-base.js';
export {
  TanhTransform,
  PowerTransform,
  SoftplusTransform,
  AbsTransform,
  SoftmaxTransform,
  StickBreakingTransform,
  ReshapeTransform,
  CumulativeDistributionTransform,
} from './transforms-more.js';
export { CatTransform, StackTransform } from './transforms-cat.js';
export {
  LowerCholeskyTransform,
  CorrCholeskyTransform,
  PositiveDefiniteTransform,
} from './transforms-matrix.js';
export { bijectTo, transformTo } from './constraint-registry.js';
export {
  LogitRelaxedBernoulli,
  RelaxedBernoulli,
  ExpRelaxedCategorical,
  RelaxedOneHotCategorical,
} from './relaxed.js';
export { LogisticNormal, Kumaraswamy } from './logistic-kumaraswamy.js';
export {
  NegativeBinomial,
  ContinuousBernoulli,
  FisherSnedecor,
  type ContinuousBernoulliLims,
} from './families-more.js';
export { LowRankMultivariateNormal } from './low-rank-mvn.js';
export { LKJCholesky } from './lkj-cholesky.js';
export { Wishart } from './wishart.js';
