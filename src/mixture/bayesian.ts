// Variational Bayesian Gaussian mixture, in the shape of scikit-learn 1.2's
// BayesianGaussianMixture (sklearn/mixture/_bayesian_mixture.py): a Dirichlet-process
// (stick-breaking) or Dirichlet prior on the weights, a Gaussian prior on the means and a Wishart
// prior on the precisions, fitted by coordinate ascent on the evidence lower bound. The E step is
// the Gaussian mixture's with expected log weights and log determinants; the M step updates the
// posterior hyperparameters from the same sufficient statistics. Surplus components end with
// weights near zero, so K is an upper bound rather than a choice.
import type { Rng } from '../util/rng.js';
import { GaussianMixture } from './gaussian.js';
import type { GaussianParameters } from './gaussian-options.js';
import {
  WEIGHT_PRIOR_TYPES,
  type BayesianGaussianMixtureOptions,
  type ResolvedPriors,
  type VariationalParameters,
  type WeightConcentrationPriorType,
} from './bayesian-options.js';
import type { EStepResult } from './base.js';
import type { DenseMatrix } from './linalg.js';
import { estimateGaussianParameters, type GaussianEstimate } from './gaussian-params.js';
import { computePrecisionCholesky, estimateWeightedLogGaussianProb } from './gaussian-density.js';
import { digamma, logBeta, logGamma } from './special.js';
import { MixtureArgumentError } from './errors.js';
import { meansPrior, covariancePriorFromData, checkCovariancePrior } from './bayesian-priors.js';

/**
 * A Gaussian mixture fitted by variational inference, as scikit-learn 1.2's
 * `BayesianGaussianMixture`: the same priors, defaults, updates and lower bound. `nComponents` is
 * an upper bound: components the data do not support end with weights near zero. `lowerBound` is
 * the evidence lower bound of the whole data (up to constants), not a mean per sample; `bic` and
 * `aic` are not defined for it (scikit-learn has none either).
 *
 * @example
 * ```ts
 * import { BayesianGaussianMixture, fromRows } from 'tailor/mixture';
 * // two clusters of 20 points, around (0, 0) and (5, 5)
 * const rows = Array.from({ length: 40 }, (_, i) => {
 *   const c = i % 2 === 0 ? 0 : 5;
 *   return [c + 0.5 * Math.sin(i), c + 0.5 * Math.cos(3 * i)];
 * });
 * const x = fromRows(rows);
 * const bgm = new BayesianGaussianMixture({ nComponents: 4, weightConcentrationPrior: 0.01, seed: 0 }).fit(x);
 * console.log(bgm.weights); // about [0.51, 0.49, 0.0002, 0.000002]: two components used of four
 * ```
 */
export class BayesianGaussianMixture extends GaussianMixture {
  readonly weightConcentrationPriorType: WeightConcentrationPriorType;
  /** The priors of the last fit (undefined before one). */
  priors: ResolvedPriors | undefined;
  weightConcentration: Float64Array = new Float64Array(0);
  meanPrecision: Float64Array = new Float64Array(0);
  degreesOfFreedom: Float64Array = new Float64Array(0);
  private readonly priorOptions: BayesianGaussianMixtureOptions;

  constructor(options: BayesianGaussianMixtureOptions) {
    super(options);
    for (const key of ['weightsInit', 'meansInit', 'precisionsInit'])
      if ((options as unknown as Record<string, unknown>)[key] !== undefined)
        throw new MixtureArgumentError(
          `${key} is not an option of BayesianGaussianMixture (it starts from responsibilities: initParams or initLabels)`,
        );
    this.weightConcentrationPriorType = options.weightConcentrationPriorType ?? 'dirichlet_process';
    if (!WEIGHT_PRIOR_TYPES.includes(this.weightConcentrationPriorType))
      throw new MixtureArgumentError(
        `weightConcentrationPriorType must be one of ${WEIGHT_PRIOR_TYPES.join(', ')}, got '${String(this.weightConcentrationPriorType)}'`,
      );
    const positive = (v: unknown, name: string) => {
      if (v !== undefined && !(typeof v === 'number' && v > 0 && Number.isFinite(v)))
        throw new MixtureArgumentError(`${name} must be a finite number > 0, got ${String(v)}`);
    };
    positive(options.weightConcentrationPrior, 'weightConcentrationPrior');
    positive(options.meanPrecisionPrior, 'meanPrecisionPrior');
    positive(options.degreesOfFreedomPrior, 'degreesOfFreedomPrior');
    this.priorOptions = options;
    this.tracksEntropy = true;
  }

  private get dirichletProcess(): boolean {
    return this.weightConcentrationPriorType === 'dirichlet_process';
  }

  /** Not defined for the variational fit: throws (compare `lowerBound`, or `score` on held-out data). */
  override bic(_data: DenseMatrix): number {
    return this.noCriteria('bic');
  }

  /** Not defined for the variational fit: throws (compare `lowerBound`, or `score` on held-out data). */
  override aic(_data: DenseMatrix): number {
    return this.noCriteria('aic');
  }

  /** Not defined for the variational fit: throws (see {@link BayesianGaussianMixture.bic}). */
  override criteria(_data: DenseMatrix): never {
    return this.noCriteria('criteria');
  }

  private noCriteria(name: string): never {
    throw new MixtureArgumentError(
      `${name}: BIC and AIC count the parameters of a maximum-likelihood fit; a BayesianGaussianMixture ` +
        `has none (as in scikit-learn): compare its lowerBound, or score() on held-out data`,
    );
  }

  // ---- BaseMixture hooks ----

  protected override beginFit(x: DenseMatrix): void {
    super.beginFit(x);
    const o = this.priorOptions;
    const d = x.cols;
    const dof = o.degreesOfFreedomPrior ?? d;
    if (!(dof > d - 1))
      throw new MixtureArgumentError(`degreesOfFreedomPrior must be > ${d - 1} (features - 1), got ${dof}`);
    this.priors = {
      weightConcentration: o.weightConcentrationPrior ?? 1 / this.nComponents,
      meanPrecision: o.meanPrecisionPrior ?? 1,
      mean: meansPrior(x, o.meanPrior),
      degreesOfFreedom: dof,
      covariance:
        o.covariancePrior === undefined
          ? covariancePriorFromData(x, this.covarianceType)
          : checkCovariancePrior(o.covariancePrior, this.covarianceType, d),
    };
  }

  protected override initialize(x: DenseMatrix, rng: Rng): void {
    const resp = this.initialResponsibilities(x, rng);
    this.update(
      estimateGaussianParameters(x, resp, this.nComponents, this.regCovar, this.covarianceType),
      x.cols,
    );
  }

  protected override mStep(x: DenseMatrix, resp: Float64Array): void {
    const est = estimateGaussianParameters(
      x,
      resp,
      this.nComponents,
      this.regCovar,
      this.covarianceType,
      this.tiedScatter,
    );
    this.update(est, x.cols);
  }

  /** The posterior hyperparameters from the sufficient statistics (scikit-learn's _estimate_weights, _means, _precisions). */
  private update({ nk, means: xk, covariances: sk }: GaussianEstimate, d: number): void {
    const k = this.nComponents;
    const p = this.priors!;
    // weights
    if (this.dirichletProcess) {
      const wc = new Float64Array(2 * k);
      let tail = 0; // sum of nk after component c
      for (let c = k - 1; c >= 0; c--) {
        wc[c] = 1 + nk[c]!;
        wc[k + c] = p.weightConcentration + tail;
        tail += nk[c]!;
      }
      this.weightConcentration = wc;
    } else this.weightConcentration = nk.map((v) => p.weightConcentration + v);
    // means
    const beta = nk.map((v) => p.meanPrecision + v);
    const means = new Float64Array(k * d);
    for (let c = 0; c < k; c++)
      for (let j = 0; j < d; j++)
        means[c * d + j] = (p.meanPrecision * p.mean[j]! + nk[c]! * xk[c * d + j]!) / beta[c]!;
    this.meanPrecision = beta;
    this.means = means;
    // precisions (Wishart); the scale is normalised by the degrees of freedom
    const type = this.covarianceType;
    const cov = new Float64Array(sk.length);
    if (type === 'tied') {
      let total = 0;
      for (let c = 0; c < k; c++) total += nk[c]!;
      const dof = p.degreesOfFreedom + total / k;
      for (let a = 0; a < d; a++)
        for (let b = 0; b < d; b++) {
          let s = 0;
          for (let c = 0; c < k; c++)
            s += (nk[c]! / beta[c]!) * (xk[c * d + a]! - p.mean[a]!) * (xk[c * d + b]! - p.mean[b]!);
          const v = p.covariance[a * d + b]! + (sk[a * d + b]! * total) / k + (p.meanPrecision / k) * s;
          cov[a * d + b] = v / dof;
        }
      this.degreesOfFreedom = Float64Array.of(dof);
    } else {
      const dof = nk.map((v) => p.degreesOfFreedom + v);
      for (let c = 0; c < k; c++) {
        const shrink = nk[c]! * (p.meanPrecision / beta[c]!);
        const diff = (j: number) => xk[c * d + j]! - p.mean[j]!;
        if (type === 'full') {
          const o = c * d * d;
          for (let a = 0; a < d; a++)
            for (let b = 0; b < d; b++)
              cov[o + a * d + b] =
                (p.covariance[a * d + b]! + nk[c]! * sk[o + a * d + b]! + shrink * diff(a) * diff(b)) /
                dof[c]!;
        } else if (type === 'diag') {
          for (let j = 0; j < d; j++)
            cov[c * d + j] =
              (p.covariance[j]! + nk[c]! * (sk[c * d + j]! + (p.meanPrecision / beta[c]!) * diff(j) ** 2)) /
              dof[c]!;
        } else {
          let sq = 0;
          for (let j = 0; j < d; j++) sq += diff(j) ** 2;
          cov[c] = (p.covariance[0]! + nk[c]! * (sk[c]! + ((p.meanPrecision / beta[c]!) * sq) / d)) / dof[c]!;
        }
      }
      this.degreesOfFreedom = dof;
    }
    this.covariances = cov;
    this.precisionsCholesky = computePrecisionCholesky(cov, type, k, d, this.regCovar, nk);
    this.weights = this.expectedWeights();
  }

  /** E[log pi_k] + E[log N(x | mu_k, Lambda_k)] (scikit-learn's _estimate_log_weights + _estimate_log_prob). */
  protected override estimateWeightedLogProb(x: DenseMatrix, out?: Float64Array): Float64Array {
    const k = this.nComponents;
    const d = x.cols;
    const logWeights = this.expectedLogWeights();
    // Per component: - d/2 log nu_k (the precision is normalised) + (log Lambda_k - d / beta_k) / 2
    const constant = new Float64Array(k);
    for (let c = 0; c < k; c++) {
      const dof = this.degreesOfFreedom[this.covarianceType === 'tied' ? 0 : c]!;
      let logLambda = d * Math.LN2;
      for (let j = 0; j < d; j++) logLambda += digamma(0.5 * (dof - j));
      constant[c] = logWeights[c]! - 0.5 * d * Math.log(dof) + 0.5 * (logLambda - d / this.meanPrecision[c]!);
    }
    return estimateWeightedLogGaussianProb(
      x,
      this.means,
      this.precisionsCholesky,
      constant,
      this.covarianceType,
      out,
    );
  }

  /** The evidence lower bound (up to constants) of the whole data, as scikit-learn's _compute_lower_bound. */
  protected override computeLowerBound(e: EStepResult, _nSamples: number): number {
    const k = this.nComponents;
    const d = this.nFeatures;
    const type = this.covarianceType;
    const entropy = e.entropy!;
    // log |Lambda_k|^(1/2) of the normalised precision, less d/2 log nu_k
    const wishartNorm = (c: number): number => {
      const dof = this.degreesOfFreedom[type === 'tied' ? 0 : c]!;
      const chol = this.precisionsCholesky;
      let logDet = 0;
      if (type === 'full') for (let j = 0; j < d; j++) logDet += Math.log(chol[c * d * d + j * d + j]!);
      else if (type === 'tied') for (let j = 0; j < d; j++) logDet += Math.log(chol[j * d + j]!);
      else if (type === 'diag') for (let j = 0; j < d; j++) logDet += Math.log(chol[c * d + j]!);
      else logDet = d * Math.log(chol[c]!);
      logDet -= 0.5 * d * Math.log(dof);
      let gammas = 0;
      for (let j = 0; j < d; j++) gammas += logGamma(0.5 * (dof - j));
      return -(dof * logDet + dof * d * 0.5 * Math.LN2 + gammas);
    };
    let logWishart = 0;
    if (type === 'tied') logWishart = k * wishartNorm(0);
    else for (let c = 0; c < k; c++) logWishart += wishartNorm(c);
    let logNormWeight: number;
    const wc = this.weightConcentration;
    if (this.dirichletProcess) {
      logNormWeight = 0;
      for (let c = 0; c < k; c++) logNormWeight -= logBeta(wc[c]!, wc[k + c]!);
    } else {
      let sum = 0;
      let gammas = 0;
      for (let c = 0; c < k; c++) {
        sum += wc[c]!;
        gammas += logGamma(wc[c]!);
      }
      logNormWeight = logGamma(sum) - gammas;
    }
    let logBeta0 = 0;
    for (let c = 0; c < k; c++) logBeta0 += Math.log(this.meanPrecision[c]!);
    return entropy - logWishart - logNormWeight - 0.5 * d * logBeta0;
  }

  /** E[log pi_k]: digamma terms of the stick-breaking Beta posteriors, or of the Dirichlet posterior. */
  private expectedLogWeights(): Float64Array {
    const k = this.nComponents;
    const wc = this.weightConcentration;
    const out = new Float64Array(k);
    if (this.dirichletProcess) {
      let stick = 0; // sum over earlier components of E[log(1 - v_j)]
      for (let c = 0; c < k; c++) {
        const digammaSum = digamma(wc[c]! + wc[k + c]!);
        out[c] = digamma(wc[c]!) - digammaSum + stick;
        stick += digamma(wc[k + c]!) - digammaSum;
      }
      return out;
    }
    let total = 0;
    for (let c = 0; c < k; c++) total += wc[c]!;
    const digammaTotal = digamma(total);
    for (let c = 0; c < k; c++) out[c] = digamma(wc[c]!) - digammaTotal;
    return out;
  }

  /** The posterior mean weights (scikit-learn's weights_). */
  private expectedWeights(): Float64Array {
    const k = this.nComponents;
    const wc = this.weightConcentration;
    const w = new Float64Array(k);
    let total = 0;
    if (this.dirichletProcess) {
      let remaining = 1;
      for (let c = 0; c < k; c++) {
        const sum = wc[c]! + wc[k + c]!;
        w[c] = (wc[c]! / sum) * remaining;
        remaining *= wc[k + c]! / sum;
        total += w[c]!;
      }
    } else for (let c = 0; c < k; c++) total += w[c] = wc[c]!;
    for (let c = 0; c < k; c++) w[c]! /= total;
    return w;
  }

  protected override getParameters(): VariationalParameters & { weights: Float64Array } {
    return {
      weights: this.weights.slice(),
      weightConcentration: this.weightConcentration.slice(),
      meanPrecision: this.meanPrecision.slice(),
      means: this.means.slice(),
      degreesOfFreedom: this.degreesOfFreedom.slice(),
      covariances: this.covariances.slice(),
      precisionsCholesky: this.precisionsCholesky.slice(),
    };
  }

  protected override setParameters(params: GaussianParameters): void {
    // what getParameters returned: the variational parameters
    const p = params as VariationalParameters & GaussianParameters;
    this.weightConcentration = p.weightConcentration.slice();
    this.meanPrecision = p.meanPrecision.slice();
    this.means = p.means.slice();
    this.degreesOfFreedom = p.degreesOfFreedom.slice();
    this.covariances = p.covariances.slice();
    this.precisionsCholesky = p.precisionsCholesky.slice();
    this.weights = this.expectedWeights();
  }

  /**
   * Not for a variational model, whose predictions need its posterior hyperparameters: throws
   * (use {@link BayesianGaussianMixture.setVariational}).
   */
  override setFitted(
    _nFeatures: number,
    _weights: ArrayLike<number>,
    _means: ArrayLike<number>,
    _covariances: ArrayLike<number>,
  ): never {
    throw new MixtureArgumentError(
      'setFitted: a BayesianGaussianMixture needs its posterior hyperparameters (weight concentration, ' +
        'mean precision, degrees of freedom): use setVariational',
    );
  }

  /** Installs the posterior hyperparameters of a saved model; the precision factors are recomputed. */
  setVariational(nFeatures: number, p: Omit<VariationalParameters, 'precisionsCholesky'>): void {
    const k = this.nComponents;
    const expect = (v: ArrayLike<number>, n: number, name: string) => {
      if (v.length !== n) throw new MixtureArgumentError(`${name}: ${v.length} values, expected ${n}`);
      for (let i = 0; i < n; i++)
        if (!(v[i]! > 0)) throw new MixtureArgumentError(`${name}[${i}] = ${v[i]} must be positive`);
    };
    expect(p.weightConcentration, this.dirichletProcess ? 2 * k : k, 'weightConcentration');
    expect(p.meanPrecision, k, 'meanPrecision');
    expect(p.degreesOfFreedom, this.covarianceType === 'tied' ? 1 : k, 'degreesOfFreedom');
    for (let i = 0; i < p.degreesOfFreedom.length; i++)
      if (!(p.degreesOfFreedom[i]! > nFeatures - 1))
        throw new MixtureArgumentError(`degreesOfFreedom[${i}] must be > ${nFeatures - 1}`);
    // weights, means and covariances are checked (and the factors computed) as a Gaussian mixture's
    super.setFitted(nFeatures, new Float64Array(k).fill(1 / k), p.means, p.covariances);
    this.weightConcentration = Float64Array.from(p.weightConcentration);
    this.meanPrecision = Float64Array.from(p.meanPrecision);
    this.degreesOfFreedom = Float64Array.from(p.degreesOfFreedom);
    this.weights = this.expectedWeights();
  }
}
