// The JSON form of a fitted Gaussian mixture (what `tailor gmm fit --out` writes and
// `tailor gmm predict --model` reads): parameters in scikit-learn's shapes plus the fit summary.
import { readFileSync } from 'node:fs';
import { InputError } from '../torch/errors.js';
import { GaussianMixture } from './gaussian.js';
import { COVARIANCE_TYPES, type CovarianceType } from './gaussianParams.js';
import type { DenseMatrix } from './linalg.js';

export const GMM_MODEL_FORMAT = 'tailor-gmm';

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
  /** The final lower bound (mean log-likelihood at the parameters before the last M step). */
  lowerBound: number;
  logLik: number;
  nSamples: number;
  nParameters: number;
  bic: number;
  aic: number;
  nIter: number;
  converged: boolean;
  trace: number[];
  starts: { start: number; lowerBound: number; nIter: number; converged: boolean }[];
  warnings: string[];
  options: Record<string, unknown>;
}

export function gaussianModelToJson(
  gm: GaussianMixture,
  x: DenseMatrix,
  extra: { columns?: string[]; options?: Record<string, unknown> } = {},
): GaussianModelJson {
  const score = gm.score(x);
  return {
    format: GMM_MODEL_FORMAT,
    version: 1,
    covarianceType: gm.covarianceType,
    nComponents: gm.nComponents,
    nFeatures: gm.nFeatures,
    ...(extra.columns ? { columns: extra.columns } : {}),
    regCovar: gm.regCovar,
    ...gm.parametersAsArrays(),
    score,
    lowerBound: gm.lowerBound,
    logLik: score * x.rows,
    nSamples: x.rows,
    nParameters: gm.nParameters(),
    bic: gm.bic(x),
    aic: gm.aic(x),
    nIter: gm.nIter,
    converged: gm.converged,
    trace: gm.trace,
    starts: gm.starts,
    warnings: gm.warnings,
    options: extra.options ?? {},
  };
}

/** Rebuilds a fitted mixture from its JSON; `source` names the file in errors. */
export function gaussianModelFromJson(
  value: unknown,
  source: string,
): { model: GaussianMixture; columns?: string[] } {
  const fail = (what: string): never => {
    throw new InputError(`${source}: ${what} (expected a model written by 'tailor gmm fit --out')`);
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
  const model = new GaussianMixture({
    nComponents: m.nComponents!,
    covarianceType: m.covarianceType,
    regCovar: typeof m.regCovar === 'number' ? m.regCovar : 1e-6,
  });
  try {
    model.setFitted(
      m.nFeatures!,
      flat(m.weights, 'weights'),
      flat(m.means, 'means'),
      flat(m.covariances, 'covariances'),
    );
  } catch (error) {
    fail((error as Error).message);
  }
  model.nIter = m.nIter ?? 0;
  model.converged = m.converged ?? false;
  model.lowerBound = m.lowerBound ?? NaN;
  model.trace = m.trace ?? [];
  return { model, columns: m.columns };
}

/** Model files are a few kilobytes; anything far larger is not one (and would be slow to parse). */
const MAX_MODEL_BYTES = 64 * 1024 * 1024;

/** Reads a model file written by `tailor gmm fit --out`; errors name the file and the field. */
export function readGaussianModel(file: string): { model: GaussianMixture; columns?: string[] } {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new InputError(`cannot read model ${file}: ${(error as Error).message}`, { cause: error });
  }
  if (bytes.length > MAX_MODEL_BYTES)
    throw new InputError(`${file}: ${bytes.length} bytes is far too large for a model file`);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new InputError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  return gaussianModelFromJson(value, file);
}
