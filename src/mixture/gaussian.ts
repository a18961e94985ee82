// Gaussian mixture fitted by EM, in the shape of scikit-learn 1.2's GaussianMixture: the same
// options, initialisations, convergence rule and outputs, on row-major Float64Array data.
import type { Rng } from '../util/rng.js';
import { BaseMixture } from './base.js';
import { choleskyLower, inverseSpd, toRows, type DenseMatrix } from './linalg.js';
import {
  computeTiedScatter,
  covarianceSize,
  estimateGaussianParameters,
  gaussianParameterCount,
  prepareKernels,
  COVARIANCE_TYPES,
  type CovarianceType,
  type TiedScatter,
} from './gaussian-params.js';
import { computePrecisionCholesky, estimateWeightedLogGaussianProb } from './gaussian-density.js';
import { kmeans, kmeansPlusPlus } from './kmeans.js';
import { MixtureArgumentError, requireDenseMatrix } from './errors.js';
import {
  flatten,
  GAUSSIAN_INITS,
  type GaussianInit,
  type GaussianMixtureOptions,
  type GaussianParameters,
} from './gaussian-options.js';

/**
 * A Gaussian mixture fitted by EM, as scikit-learn 1.2's `GaussianMixture` (the same options,
 * initialisations, convergence rule and results). Data are a {@link DenseMatrix}: n samples x d
 * features, row-major Float64Array ({@link fromRows} builds one from arrays). Needs no libtorch.
 *
 * Invalid options (covarianceType, initParams, K, tol, ...) throw MixtureArgumentError in the constructor;
 * non-finite or mis-shaped data throw MixtureArgumentError in fit/predict; a covariance that stays singular
 * throws {@link SingularCovarianceError} (raise `regCovar`).
 *
 * @example
 * ```ts
 * import { GaussianMixture, fromRows } from 'tailor/mixture';
 * const x = fromRows([[0, 0], [0.2, 0.1], [5, 5], [5.1, 4.9]]);
 * const gm = new GaussianMixture({ nComponents: 2, seed: 0 }).fit(x);
 * gm.predict(x); // Int32Array [1, 1, 0, 0]
 * gm.means;      // K x d, row-major
 * ```
 */
export class GaussianMixture extends BaseMixture<DenseMatrix, GaussianParameters> {
  readonly covarianceType: CovarianceType;
  regCovar: number;
  initParams: GaussianInit;
  initLabels?: Int32Array;
  nFeatures = 0;
  weights: Float64Array = new Float64Array(0);
  means: Float64Array = new Float64Array(0);
  covariances: Float64Array = new Float64Array(0);
  precisionsCholesky: Float64Array = new Float64Array(0);
  private readonly userInit: Pick<GaussianMixtureOptions, 'weightsInit' | 'meansInit' | 'precisionsInit'>;
  protected tiedScatter: TiedScatter | undefined;

  constructor(options: GaussianMixtureOptions) {
    super(options);
    this.covarianceType = options.covarianceType ?? 'full';
    this.regCovar = options.regCovar ?? 1e-6;
    this.initParams = options.initParams ?? 'kmeans';
    if (!COVARIANCE_TYPES.includes(this.covarianceType)) {
      throw new MixtureArgumentError(
        `covarianceType must be one of ${COVARIANCE_TYPES.join(', ')}, got '${this.covarianceType}'`,
      );
    }
    if (!GAUSSIAN_INITS.includes(this.initParams)) {
      throw new MixtureArgumentError(
        `initParams must be one of ${GAUSSIAN_INITS.join(', ')}, got '${this.initParams}'`,
      );
    }
    if (typeof this.regCovar !== 'number' || !(this.regCovar >= 0))
      throw new MixtureArgumentError(`regCovar must be >= 0, got ${this.regCovar}`);
    if (options.initLabels) this.initLabels = Int32Array.from(options.initLabels);
    this.userInit = {
      weightsInit: options.weightsInit,
      meansInit: options.meansInit,
      precisionsInit: options.precisionsInit,
    };
  }

  nParameters(): number {
    return gaussianParameterCount(this.covarianceType, this.nComponents, this.nFeatures);
  }

  /** Draws n samples: the points, and the component each came from (grouped by component, as scikit-learn). */
  sample(n: number, rng: Rng): { x: DenseMatrix; labels: Int32Array } {
    this.requireFitted();
    if (!Number.isInteger(n) || n < 1)
      throw new MixtureArgumentError(`sample needs a positive integer count, got ${n}`);
    const k = this.nComponents;
    const d = this.nFeatures;
    const counts = new Int32Array(k);
    for (let s = 0; s < n; s++) {
      let u = rng.uniform();
      let c = 0;
      while (c < k - 1 && u >= this.weights[c]!) u -= this.weights[c++]!;
      counts[c]!++;
    }
    const data = new Float64Array(n * d);
    const labels = new Int32Array(n);
    const factor = new Float64Array(d * d);
    const z = new Float64Array(d);
    let row = 0;
    for (let c = 0; c < k; c++) {
      const dense = this.covarianceType === 'full' || this.covarianceType === 'tied';
      if (dense) {
        const off = this.covarianceType === 'full' ? c * d * d : 0;
        if (choleskyLower(this.covariances, off, d, factor, 0) >= 0)
          throw new MixtureArgumentError(`component ${c}: covariance is not positive definite`);
      }
      for (let s = 0; s < counts[c]!; s++, row++) {
        labels[row] = c;
        for (let j = 0; j < d; j++) z[j] = rng.normal();
        for (let a = 0; a < d; a++) {
          let v = this.means[c * d + a]!;
          if (dense) for (let b = 0; b <= a; b++) v += factor[a * d + b]! * z[b]!;
          else v += Math.sqrt(this.covariances[this.covarianceType === 'diag' ? c * d + a : c]!) * z[a]!;
          data[row * d + a] = v;
        }
      }
    }
    return { x: { rows: n, cols: d, data }, labels };
  }

  // ---- BaseMixture hooks ----

  protected nSamples(x: DenseMatrix): number {
    return x.rows;
  }

  protected checkData(x: DenseMatrix, fitting: boolean): void {
    requireDenseMatrix(x);
    if (x.data.length !== x.rows * x.cols)
      throw new MixtureArgumentError(`data: ${x.data.length} values for ${x.rows}x${x.cols}`);
    if (x.cols < 1) throw new MixtureArgumentError('data have no columns');
    if (!fitting && x.cols !== this.nFeatures) {
      throw new MixtureArgumentError(
        `data have ${x.cols} columns but the model was fitted on ${this.nFeatures}`,
      );
    }
    for (let e = 0; e < x.data.length; e++) {
      if (!Number.isFinite(x.data[e]!)) {
        throw new MixtureArgumentError(
          `data row ${Math.floor(e / x.cols)}, column ${e % x.cols}: ${x.data[e]} is not a finite number`,
        );
      }
    }
  }

  protected override beginFit(x: DenseMatrix): void {
    if (this.fitted && this.warmStart && x.cols !== this.nFeatures) {
      throw new MixtureArgumentError(
        `warm start: data have ${x.cols} columns but the model has ${this.nFeatures}`,
      );
    }
    this.nFeatures = x.cols;
    prepareKernels(this.covarianceType, x.cols);
    this.tiedScatter = this.covarianceType === 'tied' ? computeTiedScatter(x) : undefined;
  }

  protected initialize(x: DenseMatrix, rng: Rng): void {
    const { weightsInit, meansInit, precisionsInit } = this.userInit;
    const everythingGiven = weightsInit && meansInit && precisionsInit;
    const k = this.nComponents;
    const n = x.rows;
    let nk: Float64Array | undefined;
    if (!everythingGiven) {
      const resp = this.initialResponsibilities(x, rng);
      const est = estimateGaussianParameters(x, resp, k, this.regCovar, this.covarianceType);
      nk = est.nk.slice();
      // scikit-learn divides by n here (by sum N_k in the M step); they differ by 10 K eps / n.
      for (let c = 0; c < k; c++) est.nk[c]! /= n;
      this.weights = est.nk;
      this.means = est.means;
      this.covariances = est.covariances;
    }
    if (weightsInit) this.weights = this.checkWeightsInit(weightsInit);
    if (meansInit) this.means = this.checkMeansInit(meansInit);
    if (precisionsInit) this.covariances = this.covariancesFromPrecisions(precisionsInit);
    this.precisionsCholesky = computePrecisionCholesky(
      this.covariances,
      this.covarianceType,
      k,
      x.cols,
      this.regCovar,
      precisionsInit ? undefined : nk,
    );
  }

  protected estimateWeightedLogProb(x: DenseMatrix, out?: Float64Array): Float64Array {
    const logWeights = this.weights.map(Math.log);
    return estimateWeightedLogGaussianProb(
      x,
      this.means,
      this.precisionsCholesky,
      logWeights,
      this.covarianceType,
      out,
    );
  }

  protected mStep(x: DenseMatrix, resp: Float64Array): void {
    const k = this.nComponents;
    const est = estimateGaussianParameters(x, resp, k, this.regCovar, this.covarianceType, this.tiedScatter);
    let total = 0;
    for (let c = 0; c < k; c++) total += est.nk[c]!;
    this.weights = est.nk.map((v) => v / total);
    this.means = est.means;
    this.covariances = est.covariances;
    this.precisionsCholesky = computePrecisionCholesky(
      est.covariances,
      this.covarianceType,
      k,
      x.cols,
      this.regCovar,
      est.nk,
    );
  }

  protected getParameters(): GaussianParameters {
    return {
      weights: this.weights.slice(),
      means: this.means.slice(),
      covariances: this.covariances.slice(),
      precisionsCholesky: this.precisionsCholesky.slice(),
    };
  }

  protected setParameters(p: GaussianParameters): void {
    this.weights = p.weights.slice();
    this.means = p.means.slice();
    this.covariances = p.covariances.slice();
    this.precisionsCholesky = p.precisionsCholesky.slice();
  }

  /** Installs parameters (from a saved model); the precision factors are recomputed. */
  setFitted(
    nFeatures: number,
    weights: ArrayLike<number>,
    means: ArrayLike<number>,
    covariances: ArrayLike<number>,
  ): void {
    const k = this.nComponents;
    const d = nFeatures;
    if (weights.length !== k)
      throw new MixtureArgumentError(`weights: ${weights.length} values, expected ${k}`);
    if (means.length !== k * d)
      throw new MixtureArgumentError(`means: ${means.length} values, expected ${k}x${d}`);
    const size = covarianceSize(this.covarianceType, k, d);
    if (covariances.length !== size)
      throw new MixtureArgumentError(`covariances: ${covariances.length} values, expected ${size}`);
    this.nFeatures = d;
    this.weights = Float64Array.from(weights);
    this.means = Float64Array.from(means);
    this.covariances = Float64Array.from(covariances);
    this.precisionsCholesky = computePrecisionCholesky(
      this.covariances,
      this.covarianceType,
      k,
      d,
      this.regCovar,
    );
    this.markFitted();
  }

  /** Parameters as nested arrays in scikit-learn's shapes. */
  parametersAsArrays(): {
    weights: number[];
    means: number[][];
    covariances: number[] | number[][] | number[][][];
    precisionsCholesky: number[] | number[][] | number[][][];
  } {
    const k = this.nComponents;
    const d = this.nFeatures;
    const shape = (v: Float64Array): number[] | number[][] | number[][][] => {
      if (this.covarianceType === 'full')
        return Array.from({ length: k }, (_, c) => toRows(v, d, d, c * d * d));
      if (this.covarianceType === 'tied') return toRows(v, d, d);
      if (this.covarianceType === 'diag') return toRows(v, k, d);
      return Array.from(v);
    };
    return {
      weights: Array.from(this.weights),
      means: toRows(this.means, k, d),
      covariances: shape(this.covariances),
      precisionsCholesky: shape(this.precisionsCholesky),
    };
  }

  protected initialResponsibilities(x: DenseMatrix, rng: Rng): Float64Array {
    const n = x.rows;
    const k = this.nComponents;
    const resp = new Float64Array(n * k);
    if (this.initLabels) {
      if (this.initLabels.length !== n)
        throw new MixtureArgumentError(`initLabels: ${this.initLabels.length} labels for ${n} samples`);
      for (let i = 0; i < n; i++) {
        const label = this.initLabels[i]!;
        if (!(label >= 0 && label < k))
          throw new MixtureArgumentError(`initLabels[${i}] = ${label} is not a component in 0..${k - 1}`);
        resp[i * k + label] = 1;
      }
      return resp;
    }
    switch (this.initParams) {
      case 'kmeans': {
        const labels = kmeans(x, k, rng).labels;
        for (let i = 0; i < n; i++) resp[i * k + labels[i]!] = 1;
        break;
      }
      case 'k-means++': {
        const { indices } = kmeansPlusPlus(x, k, rng);
        for (let c = 0; c < k; c++) resp[indices[c]! * k + c] = 1;
        break;
      }
      case 'random': {
        for (let i = 0; i < n; i++) {
          let s = 0;
          for (let c = 0; c < k; c++) s += resp[i * k + c] = rng.uniform();
          for (let c = 0; c < k; c++) resp[i * k + c]! /= s;
        }
        break;
      }
      case 'random_from_data': {
        const chosen = rng.permutation(n).slice(0, k);
        for (let c = 0; c < k; c++) resp[chosen[c]! * k + c] = 1;
        break;
      }
    }
    return resp;
  }

  private checkWeightsInit(w: ArrayLike<number>): Float64Array {
    const k = this.nComponents;
    if (w.length !== k) throw new MixtureArgumentError(`weightsInit: ${w.length} values, expected ${k}`);
    const out = Float64Array.from(w);
    let s = 0;
    for (const v of out) {
      if (!(v >= 0 && v <= 1)) throw new MixtureArgumentError(`weightsInit must lie in [0, 1], got ${v}`);
      s += v;
    }
    if (Math.abs(s - 1) > 1e-6) throw new MixtureArgumentError(`weightsInit must sum to 1, got ${s}`);
    return out;
  }

  private checkMeansInit(m: ArrayLike<ArrayLike<number>>): Float64Array {
    const k = this.nComponents;
    const d = this.nFeatures;
    if (m.length !== k) throw new MixtureArgumentError(`meansInit: ${m.length} rows, expected ${k}`);
    const out = new Float64Array(k * d);
    for (let c = 0; c < k; c++) {
      const row = m[c]!;
      if (row.length !== d)
        throw new MixtureArgumentError(`meansInit row ${c}: ${row.length} values, expected ${d}`);
      for (let j = 0; j < d; j++) out[c * d + j] = row[j]!;
    }
    return out;
  }

  /** Covariances from user precisions (checked symmetric positive definite). */
  private covariancesFromPrecisions(
    p: ArrayLike<number> | ArrayLike<ArrayLike<number>> | ArrayLike<ArrayLike<ArrayLike<number>>>,
  ): Float64Array {
    const k = this.nComponents;
    const d = this.nFeatures;
    const flat = flatten(p);
    const size = covarianceSize(this.covarianceType, k, d);
    if (flat.length !== size)
      throw new MixtureArgumentError(
        `precisionsInit: ${flat.length} values, expected ${size} for ${this.covarianceType}`,
      );
    if (this.covarianceType === 'diag' || this.covarianceType === 'spherical') {
      return flat.map((v, e) => {
        if (!(v > 0)) throw new MixtureArgumentError(`precisionsInit[${e}] = ${v} must be positive`);
        return 1 / v;
      });
    }
    const count = this.covarianceType === 'full' ? k : 1;
    const out = new Float64Array(size);
    for (let c = 0; c < count; c++) {
      const off = c * d * d;
      for (let a = 0; a < d; a++) {
        for (let b = 0; b < a; b++) {
          const x = flat[off + a * d + b]!;
          const y = flat[off + b * d + a]!;
          if (Math.abs(x - y) > 1e-10 * Math.max(1, Math.abs(x)))
            throw new MixtureArgumentError(`precisionsInit ${c} is not symmetric`);
        }
      }
      const inv = inverseSpd(flat, off, d);
      if (!inv)
        throw new MixtureArgumentError(
          `precisionsInit ${this.covarianceType === 'full' ? c : '(tied)'} is not positive definite`,
        );
      out.set(inv, off);
    }
    return out;
  }
}
