// The EM skeleton shared by the mixture models, in the shape of scikit-learn's BaseMixture:
// restarts (nInit) keeping the best lower bound, warm start, the convergence test on the change
// of the lower bound, the per-iteration trace, converged / nIter, and a warning when the best
// start did not converge. Subclasses supply the model: initialisation, E-step densities, M step.
//
// The data type is a parameter so that models whose samples are not rows of a matrix (the
// latent-subgroup model: one subject = several visits) can reuse the loop; a "sample" is whatever
// carries one row of responsibilities.
import { Rng } from '../util/rng.js';
import { logSumExp } from './linalg.js';
import { MixtureArgumentError, optionalNumber, requireObject } from './errors.js';

/** The EM options every mixture model takes (scikit-learn's names, in camelCase). */
export interface BaseMixtureOptions {
  /** Number of mixture components K. */
  nComponents: number;
  /** Convergence threshold on the change of the lower bound between iterations (default 1e-3). */
  tol?: number;
  /** EM iterations per start (default 100); 0 keeps the initial parameters. */
  maxIter?: number;
  /** Number of starts; the one with the largest final lower bound is kept (default 1). */
  nInit?: number;
  /** Seed of the generator used by the initialisations (default 0). */
  seed?: number;
  /** Continue from the fitted parameters on the next fit (one start, no re-initialisation). */
  warmStart?: boolean;
  /** Receives warnings (default: process.emitWarning with the type 'ConvergenceWarning'). */
  onWarning?: (message: string) => void;
}

/** The outcome of one start, kept for reports. */
export interface StartSummary {
  start: number;
  lowerBound: number;
  nIter: number;
  converged: boolean;
}

/** What one E step computes at the current parameters. */
export interface EStepResult {
  /** Mean over samples of log p(x_i) (the sum divided by n). */
  meanLogProbNorm: number;
  /** Responsibilities, n x K row-major. */
  resp: Float64Array;
  /** -sum_ik r_ik log r_ik, when the model asks for it (`tracksEntropy`). */
  entropy?: number;
}

/**
 * The EM loop of the mixture models, as scikit-learn's BaseMixture: `nInit` starts keeping the
 * one with the largest lower bound, convergence when the lower bound changes by less than `tol`,
 * a warning (to `onWarning`) when the kept start did not converge. `D` is the model's data type
 * (a {@link DenseMatrix} for {@link GaussianMixture}), `P` its parameters. Subclasses supply the
 * initialisation, the E-step densities and the M step.
 */
export abstract class BaseMixture<D, P> {
  readonly nComponents: number;
  tol: number;
  maxIter: number;
  nInit: number;
  seed: number;
  warmStart: boolean;
  /** Receives the warnings of a fit (see {@link BaseMixtureOptions.onWarning}). */
  protected readonly onWarning: (message: string) => void;

  /** Whether the kept start converged (scikit-learn reports whether any start did). */
  converged = false;
  /** EM iterations of the kept start. */
  nIter = 0;
  /** Final lower bound of the kept start. */
  lowerBound = -Infinity;
  /** Lower bound after each iteration of the kept start (trace[j] is evaluated at theta_j). */
  trace: number[] = [];
  /** One summary per start of the last fit. */
  starts: StartSummary[] = [];
  /** Warnings raised by the last fit. */
  warnings: string[] = [];
  protected fitted = false;
  protected rng: Rng;
  /** The E step also sums the entropy of the responsibilities (a variational lower bound needs it). */
  protected tracksEntropy = false;

  constructor(options: BaseMixtureOptions) {
    requireObject(options, 'options');
    optionalNumber(options.seed, 'seed');
    this.nComponents = options.nComponents;
    this.tol = options.tol ?? 1e-3;
    this.maxIter = options.maxIter ?? 100;
    this.nInit = options.nInit ?? 1;
    this.seed = options.seed ?? 0;
    this.warmStart = options.warmStart ?? false;
    this.onWarning = options.onWarning ?? ((m) => process.emitWarning(m, 'ConvergenceWarning'));
    this.rng = new Rng(this.seed);
    this.checkBaseOptions();
  }

  // ---- what a model supplies ----

  /** Number of samples (rows of responsibilities) in the data. */
  protected abstract nSamples(data: D): number;
  /** Throws a descriptive error if the data cannot be fitted (shape, non-finite values). */
  protected abstract checkData(data: D, fitting: boolean): void;
  /** Sets the initial parameters for one start (may draw from `rng`). */
  protected abstract initialize(data: D, rng: Rng): void;
  /**
   * log p(x_i, z_i = k) for every sample and component, n x K row-major; written into `out` when
   * it is given and has that size (a model may ignore it and allocate).
   */
  protected abstract estimateWeightedLogProb(data: D, out?: Float64Array): Float64Array;
  /** The M step from the responsibilities (n x K row-major). */
  protected abstract mStep(data: D, resp: Float64Array): void;
  protected abstract getParameters(): P;
  protected abstract setParameters(params: P): void;
  /** Number of free parameters (for BIC / AIC). */
  abstract nParameters(): number;
  /** Called once at the start of each fit, before any start (caches that depend on the data). */
  protected beginFit(_data: D): void {}

  /**
   * The quantity whose change decides convergence; for EM it is the mean log-likelihood at the
   * parameters of the E step. Models that test the total log-likelihood override this.
   */
  protected computeLowerBound(eStep: EStepResult, _nSamples: number): number {
    return eStep.meanLogProbNorm;
  }

  // ---- the EM loop ----

  /**
   * Fits the model by EM (`nInit` starts, or one continuing from the fitted parameters with
   * `warmStart`) and returns it. Throws MixtureArgumentError when there are fewer samples than components,
   * and the model's own errors for data it cannot fit (wrong width, non-finite values, a singular
   * covariance).
   */
  fit(data: D): this {
    this.runEm(data);
    return this;
  }

  /** Fits and returns the labels of a final E step (consistent with fit(X).predict(X)). */
  fitPredict(data: D): Int32Array {
    const n = this.runEm(data);
    return this.argmaxRows(this.eStep(data).resp, n);
  }

  /** The starts and EM iterations of a fit, keeping the best start; returns the number of samples. */
  private runEm(data: D): number {
    this.checkData(data, true);
    const n = this.nSamples(data);
    if (n < this.nComponents) {
      throw new MixtureArgumentError(
        `the data have ${n} samples, fewer than the ${this.nComponents} components`,
      );
    }
    if (n < 2) throw new MixtureArgumentError('at least 2 samples are needed to fit a mixture');
    this.beginFit(data);
    const doInit = !(this.warmStart && this.fitted);
    const nInit = doInit ? this.nInit : 1;
    // Every fit draws its starts from the seed, so fitting the same data twice (or fitPredict
    // after fit) gives the same model, as scikit-learn does with an integer random_state.
    this.rng = new Rng(this.seed);
    this.warnings = [];
    this.starts = [];
    let best:
      { params: P; nIter: number; lowerBound: number; converged: boolean; trace: number[] } | undefined;
    let buffer: Float64Array | undefined;
    for (let start = 0; start < nInit; start++) {
      if (doInit) this.initialize(data, this.rng);
      let lowerBound = doInit ? -Infinity : this.lowerBound;
      let converged = false;
      let nIter = 0;
      const trace: number[] = [];
      for (let iter = 1; iter <= this.maxIter; iter++) {
        const previous = lowerBound;
        // The responsibilities live until the M step: every E step of the fit reuses one array.
        const e = this.eStep(data, buffer);
        buffer = e.resp;
        this.mStep(data, e.resp);
        lowerBound = this.computeLowerBound(e, n);
        trace.push(lowerBound);
        nIter = iter;
        if (Math.abs(lowerBound - previous) < this.tol) {
          converged = true;
          break;
        }
      }
      if (this.maxIter === 0) lowerBound = this.computeLowerBound(this.eStep(data), n);
      this.starts.push({ start, lowerBound, nIter, converged });
      if (best === undefined || lowerBound > best.lowerBound || Number.isNaN(best.lowerBound)) {
        best = { params: this.getParameters(), nIter, lowerBound, converged, trace };
      }
    }
    if (!best!.converged && this.maxIter > 0) {
      this.warn(
        `the best of ${nInit} start(s) did not converge in ${this.maxIter} iterations ` +
          `(last change of the lower bound above tol ${this.tol}); increase maxIter (--max-iter) or tol (--tol), ` +
          `or check the initialisation`,
      );
    }
    this.setParameters(best!.params);
    this.nIter = best!.nIter;
    this.lowerBound = best!.lowerBound;
    this.converged = best!.converged;
    this.trace = best!.trace;
    this.fitted = true;
    return n;
  }

  /**
   * Responsibilities and the mean log-likelihood at the current parameters; the responsibilities
   * may be written into `out` (an n x K array whose contents are not needed any more).
   */
  eStep(data: D, out?: Float64Array): EStepResult {
    const n = this.nSamples(data);
    const k = this.nComponents;
    const w = this.estimateWeightedLogProb(data, out);
    const withEntropy = this.tracksEntropy;
    let total = 0;
    let entropy = 0;
    for (let i = 0; i < n; i++) {
      const off = i * k;
      let max = -Infinity;
      for (let c = 0; c < k; c++) if (w[off + c]! > max) max = w[off + c]!;
      if (!Number.isFinite(max)) {
        // Every component has zero (or NaN) density here: keep scikit-learn's NaN/-inf semantics.
        const norm = logSumExp(w, off, k);
        total += norm;
        for (let c = 0; c < k; c++) {
          const logR = w[off + c]! - norm;
          w[off + c] = Math.exp(logR);
          if (withEntropy) entropy -= w[off + c]! * logR;
        }
        continue;
      }
      // One exp per entry (it dominates the E step); below -745 exp underflows to 0 anyway.
      let sum = 0;
      let dot = 0;
      for (let c = 0; c < k; c++) {
        const t = w[off + c]! - max;
        const e = t < -746 ? 0 : Math.exp(t);
        w[off + c] = e;
        sum += e;
        if (withEntropy) dot += e * t;
      }
      const logSum = Math.log(sum);
      total += max + logSum;
      // with log r_c = t_c - log(sum): -sum_c r_c log r_c = log(sum) - sum_c e_c t_c / sum
      if (withEntropy) entropy += logSum - dot / sum;
      const inv = 1 / sum;
      for (let c = 0; c < k; c++) w[off + c]! *= inv;
    }
    return { meanLogProbNorm: total / n, resp: w, ...(withEntropy ? { entropy } : {}) };
  }

  // ---- using a fitted model ----

  /** log p(x_i) per sample. */
  scoreSamples(data: D): Float64Array {
    this.requireFitted();
    this.checkData(data, false);
    const n = this.nSamples(data);
    const k = this.nComponents;
    const w = this.estimateWeightedLogProb(data);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = logSumExp(w, i * k, k);
    return out;
  }

  /** Mean log-likelihood per sample. */
  score(data: D): number {
    const s = this.scoreSamples(data);
    let total = 0;
    for (let i = 0; i < s.length; i++) total += s[i]!;
    return total / s.length;
  }

  /** Posterior component probabilities, n x K row-major. */
  predictProba(data: D): Float64Array {
    this.requireFitted();
    this.checkData(data, false);
    return this.eStep(data).resp;
  }

  /** The most probable component of each sample. */
  predict(data: D): Int32Array {
    this.requireFitted();
    this.checkData(data, false);
    return this.argmaxRows(this.estimateWeightedLogProb(data), this.nSamples(data));
  }

  /** Bayesian information criterion: -2 log L + p log n (lower is better). */
  bic(data: D): number {
    return this.criteria(data).bic;
  }

  /** Akaike information criterion: -2 log L + 2 p (lower is better). */
  aic(data: D): number {
    return this.criteria(data).aic;
  }

  /**
   * The fit to data from one pass over it: the number of samples, the mean (score) and total
   * log-likelihood, BIC, AIC, and the number of free parameters.
   */
  criteria(data: D): {
    n: number;
    score: number;
    logLik: number;
    bic: number;
    aic: number;
    nParameters: number;
  } {
    const n = this.nSamples(data);
    const score = this.score(data);
    const p = this.nParameters();
    return {
      n,
      score,
      logLik: score * n,
      bic: -2 * score * n + p * Math.log(n),
      aic: -2 * score * n + 2 * p,
      nParameters: p,
    };
  }

  /** Whether fit() has run (or fitted parameters were loaded). */
  get isFitted(): boolean {
    return this.fitted;
  }

  protected requireFitted(): void {
    if (!this.fitted)
      throw new MixtureArgumentError(
        'the mixture is not fitted yet: call fit() first (or load a fitted model)',
      );
  }

  protected markFitted(): void {
    this.fitted = true;
  }

  protected warn(message: string): void {
    this.warnings.push(message);
    this.onWarning(message);
  }

  private argmaxRows(values: Float64Array, n: number): Int32Array {
    const k = this.nComponents;
    const labels = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let best = 0;
      for (let c = 1; c < k; c++) if (values[i * k + c]! > values[i * k + best]!) best = c;
      labels[i] = best;
    }
    return labels;
  }

  private checkBaseOptions(): void {
    const positiveInt = (v: number, name: string, min: number) => {
      if (!Number.isInteger(v) || v < min)
        throw new MixtureArgumentError(`${name} must be an integer >= ${min}, got ${v}`);
    };
    positiveInt(this.nComponents, 'nComponents', 1);
    positiveInt(this.nInit, 'nInit', 1);
    positiveInt(this.maxIter, 'maxIter', 0);
    if (typeof this.tol !== 'number' || !(this.tol >= 0))
      throw new MixtureArgumentError(`tol must be >= 0, got ${this.tol}`);
  }
}
