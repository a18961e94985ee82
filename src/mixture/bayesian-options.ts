// What a BayesianGaussianMixture is given and gives back: its options (the priors on weights,
// means and precisions), the priors a fit resolved, and its posterior hyperparameters. Apart from
// bayesian.ts (the variational fit itself), as gaussian-options.ts is from gaussian.ts, so the
// types can be read and reused (gaussian-model.ts) without the class.
import type { GaussianMixtureOptions } from './gaussian-options.js';

/** The prior on the weights: a Dirichlet process (stick-breaking) or a finite Dirichlet distribution. */
export type WeightConcentrationPriorType = 'dirichlet_process' | 'dirichlet_distribution';
/** Every {@link WeightConcentrationPriorType}. */
export const WEIGHT_PRIOR_TYPES: readonly WeightConcentrationPriorType[] = [
  'dirichlet_process',
  'dirichlet_distribution',
];

/** Options of {@link BayesianGaussianMixture}: the Gaussian mixture's (without explicit initial parameters) and the priors (scikit-learn's defaults). */
export interface BayesianGaussianMixtureOptions extends Omit<
  GaussianMixtureOptions,
  'weightsInit' | 'meansInit' | 'precisionsInit'
> {
  /** The prior on the weights (default 'dirichlet_process'). */
  weightConcentrationPriorType?: WeightConcentrationPriorType;
  /** The Dirichlet (process) concentration gamma_0 > 0 (default 1 / K); smaller leaves more components empty. */
  weightConcentrationPrior?: number;
  /** The precision prior beta_0 > 0 on the means (default 1). */
  meanPrecisionPrior?: number;
  /** The prior mean mu_0, d values (default the data's column means). */
  meanPrior?: ArrayLike<number>;
  /** The Wishart degrees of freedom nu_0 > d - 1 (default d). */
  degreesOfFreedomPrior?: number;
  /**
   * The Wishart prior covariance (full / tied: d x d, diag: d values, spherical: one number;
   * default the data's covariance with ddof 1, its diagonal, or their mean).
   */
  covariancePrior?: number | ArrayLike<number> | ArrayLike<ArrayLike<number>>;
}

/** The posterior hyperparameters of a fit, flat row-major. */
export interface VariationalParameters {
  /** Dirichlet process: the Beta parameters a_k then b_k (2K values); Dirichlet: alpha_k (K). */
  weightConcentration: Float64Array;
  /** beta_k (K). */
  meanPrecision: Float64Array;
  means: Float64Array;
  /** nu_k (K; one value for tied). */
  degreesOfFreedom: Float64Array;
  /** The Wishart scale normalised by nu_k (the expected covariances). */
  covariances: Float64Array;
  precisionsCholesky: Float64Array;
}

/** The priors as used in a fit: given, or derived from the data as scikit-learn does. */
export interface ResolvedPriors {
  weightConcentration: number;
  meanPrecision: number;
  mean: Float64Array;
  degreesOfFreedom: number;
  covariance: Float64Array;
}
