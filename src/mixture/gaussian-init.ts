// How a Gaussian mixture fit starts, beyond the built-in initialisations: the names users write
// for them, and a warm start from a fitted model (its weights, means and precisions).
import type { GaussianMixture } from './gaussian.js';
import type { GaussianInit, GaussianMixtureOptions } from './gaussian-options.js';
import type { CovarianceType } from './gaussian-params.js';
import { GaussianModelError } from './gaussian-model.js';
import { MixtureArgumentError } from './errors.js';

const INIT_NAMES: Readonly<Record<string, GaussianInit>> = {
  kmeans: 'kmeans',
  'kmeans++': 'k-means++',
  'k-means++': 'k-means++',
  random: 'random',
  'random-from-data': 'random_from_data',
  random_from_data: 'random_from_data',
};

/** The initialisation a user-facing name stands for (kmeans++, random-from-data, ...), if any. */
export function gaussianInitByName(name: string): GaussianInit | undefined {
  return Object.hasOwn(INIT_NAMES, name) ? INIT_NAMES[name] : undefined;
}

/**
 * Precision matrices A A^T from their Cholesky factors A, in the layout of `precisionsCholesky`
 * for that covariance type: K d x d blocks (full), one d x d block (tied), K x d variances
 * (diag) or K values (spherical), whose precisions are the squares.
 */
export function precisionsFromCholesky(
  covarianceType: CovarianceType,
  nFeatures: number,
  precisionsCholesky: ArrayLike<number>,
): number[] {
  const a = precisionsCholesky;
  if (covarianceType === 'diag' || covarianceType === 'spherical') return Array.from(a, (v) => v * v);
  const d = nFeatures;
  if (a.length % (d * d) !== 0)
    throw new MixtureArgumentError(
      `precisionsCholesky has ${a.length} values, not a multiple of d x d = ${d * d}`,
    );
  const out = new Array<number>(a.length).fill(0);
  for (let off = 0; off < a.length; off += d * d) {
    for (let i = 0; i < d; i++) {
      for (let j = 0; j < d; j++) {
        let s = 0;
        for (let m = 0; m < d; m++) s += a[off + i * d + m]! * a[off + j * d + m]!;
        out[off + i * d + j] = s;
      }
    }
  }
  return out;
}

/** Starting weights, means and precisions, as {@link GaussianMixtureOptions} takes them. */
export type WarmStart = Required<
  Pick<GaussianMixtureOptions, 'weightsInit' | 'meansInit' | 'precisionsInit'>
>;

/**
 * The starting parameters of a fit with `target`'s shape taken from a fitted model, so EM
 * continues where that model stopped. A model of another K, d or covariance type is refused
 * (GaussianModelError) rather than reshaped.
 */
export function warmStartFrom(
  model: GaussianMixture,
  target: { nComponents: number; nFeatures: number; covarianceType: CovarianceType },
): WarmStart {
  if (model.nComponents !== target.nComponents || model.nFeatures !== target.nFeatures) {
    throw new GaussianModelError(
      `the model has K = ${model.nComponents}, d = ${model.nFeatures}; the fit has K = ${target.nComponents}, d = ${target.nFeatures}`,
    );
  }
  if (model.covarianceType !== target.covarianceType) {
    throw new GaussianModelError(
      `the model's covariance type is ${model.covarianceType}, not ${target.covarianceType}`,
    );
  }
  const p = model.parametersAsArrays();
  return {
    weightsInit: p.weights,
    meansInit: p.means,
    precisionsInit: precisionsFromCholesky(model.covarianceType, model.nFeatures, model.precisionsCholesky),
  };
}
