// The mixture-model package: the EM base shared by the models, and the Gaussian mixture.
export { BaseMixture, type BaseMixtureOptions, type EStepResult, type StartSummary } from './base.js';
export {
  GaussianMixture,
  GAUSSIAN_INITS,
  type GaussianInit,
  type GaussianMixtureOptions,
  type GaussianParameters,
} from './gaussian.js';
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
export { kmeans, kmeansPlusPlus, type KMeansResult } from './kmeans.js';
export { denseMatrix, fromRows, toRows, type DenseMatrix } from './linalg.js';
export { formatBicTable, selectByBic, type SelectionResult, type SelectionRow } from './select.js';
export { type SubgroupData, dropMembership, readSubgroupCsv } from './subgroup/data.js';
export { type SubgroupFitOptions, fitSubgroup } from './subgroup/fit.js';
export { CollinearityError } from './subgroup/em.js';
export {
  membershipLrt,
  selectClasses,
  type SelectionRow as SubgroupSelectionRow,
} from './subgroup/compare.js';
export { fitToJson, lrtToJson, posteriorCsv, selectionTable } from './subgroup/report.js';
