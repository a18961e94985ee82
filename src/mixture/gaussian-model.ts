// The JSON form of a fitted Gaussian mixture (what `tailor gmm fit --out` writes and
// `tailor gmm predict --model` reads): parameters in scikit-learn's shapes plus the fit summary.
import { readFileSync, statSync } from 'node:fs';
import { InputError } from '../util/errors.js';
import { GaussianMixture } from './gaussian.js';
import { BayesianGaussianMixture } from './bayesian.js';
import { WEIGHT_PRIOR_TYPES, type WeightConcentrationPriorType } from './bayesian-options.js';
import { COVARIANCE_TYPES, type CovarianceType } from './gaussian-params.js';
import { readMatrixCsv, type CsvMatrix } from './csv.js';
import type { DenseMatrix } from './linalg.js';

/** A model file that cannot be used (unreadable, not a model, or not fitting the data given). */
export class GaussianModelError extends InputError {}

/** The `format` field of a saved Gaussian mixture (`tailor gmm fit --out`). */
export const GMM_MODEL_FORMAT = 'tailor-gmm';

/** What a saved {@link BayesianGaussianMixture} adds: its priors and posterior hyperparameters. */
export interface BayesianModelJson {
  weightConcentrationPriorType: WeightConcentrationPriorType;
  /** The priors of the fit (given, or derived from the data); absent for a model that was loaded, not fitted. */
  priors?: {
    weightConcentration: number;
    meanPrecision: number;
    mean: number[];
    degreesOfFreedom: number;
    /** Flat: d x d (full, tied), d (diag) or one value (spherical). */
    covariance: number[];
  };
  /** Dirichlet process: a_k then b_k (2K values); Dirichlet: alpha_k (K). */
  weightConcentration: number[];
  meanPrecision: number[];
  /** K values (one for tied). */
  degreesOfFreedom: number[];
}

/**
 * A fitted Gaussian mixture as JSON: its parameters (row-major arrays), fit statistics and
 * options. A variational fit (`bayesian` present) has no BIC, AIC or parameter count (null), and
 * its weights, means and covariances are the posterior expectations.
 */
export interface GaussianModelJson {
  format: typeof GMM_MODEL_FORMAT;
  version: 1;
  covarianceType: CovarianceType;
  nComponents: number;
  nFeatures: number;
  columns?: string[];
  regCovar: number;
  weights: number[];
  means: number[][];
  covariances: number[] | number[][] | number[][][];
  precisionsCholesky: number[] | number[][] | number[][][];
  /** Mean log-likelihood per sample on the training data, at the final parameters. */
  score: number;
  /**
   * The final lower bound: EM's mean log-likelihood at the parameters before the last M step, or
   * the variational fit's evidence lower bound of the whole data (up to constants).
   */
  lowerBound: number;
  logLik: number;
  nSamples: number;
  nParameters: number | null;
  bic: number | null;
  aic: number | null;
  nIter: number;
  converged: boolean;
  trace: number[];
  starts: { start: number; lowerBound: number; nIter: number; converged: boolean }[];
  warnings: string[];
  options: Record<string, unknown>;
  bayesian?: BayesianModelJson;
}

/**
 * A fitted mixture as JSON (what `tailor gmm fit` writes; {@link gaussianModelFromJson} reads it
 * back), with its score, BIC and AIC on the data `x` it was fitted to.
 */
export function gaussianModelToJson(
  gm: GaussianMixture,
  x: DenseMatrix,
  extra: { columns?: string[]; options?: Record<string, unknown> } = {},
): GaussianModelJson {
  const bayes = gm instanceof BayesianGaussianMixture ? gm : undefined;
  const fit = bayes ? variationalFit(bayes, x) : gm.criteria(x);
  return {
    format: GMM_MODEL_FORMAT,
    version: 1,
    covarianceType: gm.covarianceType,
    nComponents: gm.nComponents,
    nFeatures: gm.nFeatures,
    ...(extra.columns ? { columns: extra.columns } : {}),
    regCovar: gm.regCovar,
    ...gm.parametersAsArrays(),
    score: fit.score,
    lowerBound: gm.lowerBound,
    logLik: fit.logLik,
    nSamples: x.rows,
    nParameters: fit.nParameters,
    bic: fit.bic,
    aic: fit.aic,
    nIter: gm.nIter,
    converged: gm.converged,
    trace: gm.trace,
    starts: gm.starts,
    warnings: gm.warnings,
    options: extra.options ?? {},
    ...(bayes ? { bayesian: bayesianJson(bayes) } : {}),
  };
}

/** The fit statistics of a variational model: the likelihood only (no parameter count, so no BIC or AIC). */
function variationalFit(model: GaussianMixture, x: DenseMatrix) {
  const score = model.score(x);
  return { score, logLik: score * x.rows, bic: null, aic: null, nParameters: null };
}

function bayesianJson(m: BayesianGaussianMixture): BayesianModelJson {
  const p = m.priors;
  return {
    weightConcentrationPriorType: m.weightConcentrationPriorType,
    ...(p && {
      priors: {
        weightConcentration: p.weightConcentration,
        meanPrecision: p.meanPrecision,
        mean: Array.from(p.mean),
        degreesOfFreedom: p.degreesOfFreedom,
        covariance: Array.from(p.covariance),
      },
    }),
    weightConcentration: Array.from(m.weightConcentration),
    meanPrecision: Array.from(m.meanPrecision),
    degreesOfFreedom: Array.from(m.degreesOfFreedom),
  };
}

/** Rebuilds a fitted mixture from its JSON; `source` names the file in errors. */
export function gaussianModelFromJson(
  value: unknown,
  source: string,
): { model: GaussianMixture; columns?: string[] } {
  const fail = (what: string): never => {
    throw new GaussianModelError(`${source}: ${what} (expected a model written by 'tailor gmm fit --out')`);
  };
  if (typeof value !== 'object' || value === null) fail('not a JSON object');
  const m = value as Partial<GaussianModelJson>;
  if (m.format !== GMM_MODEL_FORMAT)
    fail(`field 'format' is ${JSON.stringify(m.format)}, not '${GMM_MODEL_FORMAT}'`);
  if (!COVARIANCE_TYPES.includes(m.covarianceType as CovarianceType))
    fail(`field 'covarianceType' is invalid`);
  if (!Number.isInteger(m.nComponents) || m.nComponents! < 1) fail(`field 'nComponents' is invalid`);
  if (!Number.isInteger(m.nFeatures) || m.nFeatures! < 1) fail(`field 'nFeatures' is invalid`);
  const flat = (v: unknown, field: string): number[] => {
    if (!Array.isArray(v)) fail(`field '${field}' is missing or not an array`);
    const out = (v as unknown[]).flat(2) as unknown[];
    for (const e of out)
      if (typeof e !== 'number' || !Number.isFinite(e)) fail(`field '${field}' holds a non-number`);
    return out as number[];
  };
  if (
    m.regCovar !== undefined &&
    !(typeof m.regCovar === 'number' && m.regCovar >= 0 && Number.isFinite(m.regCovar))
  )
    fail(`field 'regCovar' is not a non-negative number`);
  const common = {
    nComponents: m.nComponents!,
    covarianceType: m.covarianceType,
    regCovar: m.regCovar ?? 1e-6,
  };
  let model: GaussianMixture;
  try {
    if (m.bayesian !== undefined) {
      const b = m.bayesian as Partial<BayesianModelJson> | null;
      if (typeof b !== 'object' || b === null) fail(`field 'bayesian' is not an object`);
      if (!WEIGHT_PRIOR_TYPES.includes(b!.weightConcentrationPriorType!))
        fail(`field 'bayesian.weightConcentrationPriorType' is invalid`);
      const bayes = new BayesianGaussianMixture({
        ...common,
        weightConcentrationPriorType: b!.weightConcentrationPriorType,
      });
      bayes.setVariational(m.nFeatures!, {
        weightConcentration: Float64Array.from(flat(b!.weightConcentration, 'bayesian.weightConcentration')),
        meanPrecision: Float64Array.from(flat(b!.meanPrecision, 'bayesian.meanPrecision')),
        degreesOfFreedom: Float64Array.from(flat(b!.degreesOfFreedom, 'bayesian.degreesOfFreedom')),
        means: Float64Array.from(flat(m.means, 'means')),
        covariances: Float64Array.from(flat(m.covariances, 'covariances')),
      });
      model = bayes;
    } else {
      model = new GaussianMixture(common);
      model.setFitted(
        m.nFeatures!,
        flat(m.weights, 'weights'),
        flat(m.means, 'means'),
        flat(m.covariances, 'covariances'),
      );
    }
  } catch (error) {
    if (error instanceof GaussianModelError) throw error;
    return fail((error as Error).message);
  }
  model.nIter = m.nIter ?? 0;
  model.converged = m.converged ?? false;
  model.lowerBound = m.lowerBound ?? NaN;
  model.trace = m.trace ?? [];
  return { model, columns: m.columns };
}

const MAX_MODEL_BYTES = 64 * 1024 * 1024;

/** Reads a model written by `tailor gmm fit --out`; every failure is a GaussianModelError naming the file. */
export function readGaussianModel(file: string): { model: GaussianMixture; columns?: string[] } {
  let text: string;
  try {
    // Model files are kilobytes; a far larger one is not a model (and would be slow to parse).
    const size = statSync(file).size;
    if (size > MAX_MODEL_BYTES)
      throw new GaussianModelError(`${file}: ${size} bytes is far too large for a model file`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof GaussianModelError) throw error;
    throw new GaussianModelError(`cannot read model ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new GaussianModelError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  return gaussianModelFromJson(value, file);
}

/**
 * Reads the data a fitted model is to be applied to. Given `columns`, those; otherwise the
 * model's own columns by name when the file has them all, else every column in order (with a
 * note saying so when the count matches but the names do not). The column count must match the
 * model's (GaussianModelError otherwise).
 */
export function readDataForModel(
  file: string,
  model: GaussianMixture,
  modelColumns: readonly string[] | undefined,
  columns?: readonly string[],
): { x: CsvMatrix; note?: string } {
  let x: CsvMatrix;
  let note: string | undefined;
  if (columns) {
    x = readMatrixCsv(file, columns);
  } else {
    const all = readMatrixCsv(file);
    const byName = modelColumns !== undefined && modelColumns.every((c) => all.columns.includes(c));
    x = byName ? readMatrixCsv(file, modelColumns) : all;
    if (modelColumns && !byName && all.cols === modelColumns.length) {
      note = `${all.file} lacks the model's columns (${modelColumns.join(', ')}); using its columns in order`;
    }
  }
  if (x.cols !== model.nFeatures) {
    throw new GaussianModelError(
      `${x.file} has ${x.cols} columns (${x.columns.join(', ')}) but the model was fitted on ${model.nFeatures}` +
        (modelColumns ? ` (${modelColumns.join(', ')})` : '') +
        '; pick them with --columns',
    );
  }
  return { x, note };
}
