// What a GaussianMixture is given and gives back: its options (the initialisations, the user's
// starting weights, means and precisions) and its flat fitted parameters, with flatten for the
// nested arrays those options may hold. Apart from gaussian.ts (the EM model itself) so that the
// option types can be read and reused (bayesian.ts, gaussian-init.ts) without the class.
import type { BaseMixtureOptions } from './base.js';
import type { CovarianceType } from './gaussian-params.js';
import { MixtureArgumentError } from './errors.js';

/** How the responsibilities of a start are chosen (scikit-learn's init_params). */
export type GaussianInit = 'kmeans' | 'k-means++' | 'random' | 'random_from_data';
/** Every {@link GaussianInit}, for validation and help texts. */
export const GAUSSIAN_INITS: readonly GaussianInit[] = ['kmeans', 'k-means++', 'random', 'random_from_data'];

/** Options of {@link GaussianMixture}: the EM options and the Gaussian model's (scikit-learn's defaults). */
export interface GaussianMixtureOptions extends BaseMixtureOptions {
  /** The shape of the component covariances (default 'full'). */
  covarianceType?: CovarianceType;
  /** Added to the covariance diagonal in every M step (default 1e-6). */
  regCovar?: number;
  /** How each start's responsibilities are initialised (default 'kmeans'). */
  initParams?: GaussianInit;
  /** 0-based labels: one-hot responsibilities for every start (overrides initParams). */
  initLabels?: ArrayLike<number>;
  /** Initial weights (K), means (K x d) and precisions (full: K x d x d, tied: d x d, diag: K x d, spherical: K). */
  weightsInit?: ArrayLike<number>;
  meansInit?: ArrayLike<ArrayLike<number>>;
  precisionsInit?: ArrayLike<number> | ArrayLike<ArrayLike<number>> | ArrayLike<ArrayLike<ArrayLike<number>>>;
}

/** The fitted parameters, flat row-major (shapes as in gaussian-params.ts). */
export interface GaussianParameters {
  weights: Float64Array;
  means: Float64Array;
  covariances: Float64Array;
  precisionsCholesky: Float64Array;
}

export function flatten(v: unknown): Float64Array {
  const out: number[] = [];
  const walk = (x: unknown) => {
    if (typeof x === 'number') out.push(x);
    else if (x !== null && typeof x === 'object' && 'length' in x)
      for (const e of Array.from(x as ArrayLike<unknown>)) walk(e);
    else throw new MixtureArgumentError(`expected numbers, found ${String(x)}`);
  };
  walk(v);
  return Float64Array.from(out);
}
