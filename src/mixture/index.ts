// The mixture-model package: the EM base shared by the models, and the Gaussian mixture.
/**
 * Mixture models fitted by EM, without libtorch (`import ... from 'tailor/mixture'`): the
 * Gaussian mixture (scikit-learn's GaussianMixture) and its variational Bayesian form
 * (BayesianGaussianMixture), model selection by BIC, k-means, and the latent-subgroup linear mixed
 * model with its likelihood-ratio test.
 * @module
 */
export { MixtureArgumentError } from './errors.js';
export { BaseMixture, type BaseMixtureOptions, type EStepResult, type StartSummary } from './base.js';
export { GaussianMixture } from './gaussian.js';
export {
  GAUSSIAN_INITS,
  type GaussianInit,
  type GaussianMixtureOptions,
  type GaussianParameters,
} from './gaussian-options.js';
export { BayesianGaussianMixture } from './bayesian.js';
export {
  WEIGHT_PRIOR_TYPES,
  type BayesianGaussianMixtureOptions,
  type ResolvedPriors,
  type VariationalParameters,
  type WeightConcentrationPriorType,
} from './bayesian-options.js';
export {
  COVARIANCE_TYPES,
  SingularCovarianceError,
  gaussianParameterCount,
  type CovarianceType,
} from './gaussian-params.js';
export {
  GaussianModelError,
  gaussianModelFromJson,
  gaussianModelToJson,
  readDataForModel,
  readGaussianModel,
  GMM_MODEL_FORMAT,
  type BayesianModelJson,
  type GaussianModelJson,
} from './gaussian-model.js';
export {
  gaussianInitByName,
  precisionsFromCholesky,
  warmStartFrom,
  type WarmStart,
} from './gaussian-init.js';
export { predictionsCsv, samplesCsv, scoreSummary } from './gaussian-report.js';
export { CsvError, parseMatrixCsv, readLabelsFile, readMatrixCsv, type CsvMatrix } from './csv.js';
export {
  kmeans,
  kmeansPlusPlus,
  type KMeansOptions,
  type KMeansPlusPlusResult,
  type KMeansResult,
} from './kmeans.js';
export { Rng, type RngState } from '../util/rng.js';
export { denseMatrix, fromRows, toRows, type DenseMatrix } from './linalg.js';
export {
  formatBicTable,
  selectByBic,
  type SelectionOptions,
  type SelectionResult,
  type SelectionRow,
} from './select.js';
export {
  type SubgroupData,
  type LongColumns,
  dropMembership,
  readSubgroupCsv,
  subgroupDataFromRecords,
} from './subgroup/data.js';
export { type SubgroupFit, type SubgroupFitOptions, fitSubgroup } from './subgroup/fit.js';
export type { SubgroupParams } from './subgroup/model.js';
export type { StandardErrors } from './subgroup/se.js';
export type { Correlation } from './subgroup/stats.js';
export { CollinearityError } from './subgroup/em.js';
export {
  membershipLrt,
  selectClasses,
  type LrtResult,
  type Selection as SubgroupSelection,
  type SelectionRow as SubgroupSelectionRow,
} from './subgroup/compare.js';
export { fitToJson, lrtToJson, posteriorCsv, selectionTable } from './subgroup/report.js';
