// What `tailor gmm predict | score | sample` print, as text and JSON built from a fitted model.
import type { Rng } from '../util/rng.js';
import type { GaussianMixture } from './gaussian.js';
import { BayesianGaussianMixture } from './bayesian.js';
import type { DenseMatrix } from './linalg.js';

/**
 * One CSV row per sample: the most probable component, then (on request) the probability of each
 * component p0..p{K-1} and the log density of the sample under the mixture.
 */
export function predictionsCsv(
  model: GaussianMixture,
  x: DenseMatrix,
  options: { proba?: boolean; logDensity?: boolean } = {},
): string {
  const k = model.nComponents;
  const labels = model.predict(x);
  const proba = options.proba ? model.predictProba(x) : undefined;
  const density = options.logDensity ? model.scoreSamples(x) : undefined;
  const header = ['label'];
  if (proba) for (let c = 0; c < k; c++) header.push(`p${c}`);
  if (density) header.push('log_density');
  const lines = [header.join(',')];
  for (let i = 0; i < x.rows; i++) {
    const cells: (number | string)[] = [labels[i]!];
    if (proba) for (let c = 0; c < k; c++) cells.push(proba[i * k + c]!);
    if (density) cells.push(density[i]!);
    lines.push(cells.join(','));
  }
  return lines.join('\n') + '\n';
}

/**
 * The fit of a model to data: mean and total log-likelihood, BIC, AIC and parameter count (null
 * for a {@link BayesianGaussianMixture}, which has no parameter count).
 */
export function scoreSummary(
  model: GaussianMixture,
  x: DenseMatrix,
): {
  n: number;
  score: number;
  logLik: number;
  bic: number | null;
  aic: number | null;
  nParameters: number | null;
} {
  if (!(model instanceof BayesianGaussianMixture)) return model.criteria(x);
  const score = model.score(x);
  return { n: x.rows, score, logLik: score * x.rows, bic: null, aic: null, nParameters: null };
}

/** n draws from the model as CSV: the feature columns (named, or x1..xd) and the component. */
export function samplesCsv(model: GaussianMixture, n: number, rng: Rng, columns?: readonly string[]): string {
  const { x, labels } = model.sample(n, rng);
  const names = columns ?? Array.from({ length: x.cols }, (_, j) => `x${j + 1}`);
  const lines = [[...names, 'component'].join(',')];
  for (let i = 0; i < n; i++)
    lines.push([...x.data.subarray(i * x.cols, (i + 1) * x.cols), labels[i]].join(','));
  return lines.join('\n') + '\n';
}
