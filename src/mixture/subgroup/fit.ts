// Fitting the latent-subgroup model: several starts (the deterministic quantile start, random
// starts, and any given ones) ranked by short EM runs, the best few run to convergence; classes
// reordered by mu ascending with class 1 the gamma reference; diagnostics turned into warnings;
// standard errors from the observed information; BIC with n = number of subjects (as lcmm's hlme).
import type { SubgroupData } from './data.js';
import { type EmOptions, defaultEmOptions } from './em.js';
import type { StartSpec } from './mixture.js';
import { runStarts } from './starts.js';
import { type SubgroupParams, eStep, membershipLogits, parameterCount } from './model.js';
import { defaultMembershipOptions } from './membership.js';
import { type StandardErrors, standardErrors } from './se.js';
import { type Correlation, checkAr1Times, computeStats } from './stats.js';
import { MixtureArgumentError, requireObject } from '../errors.js';

/** Options of {@link fitSubgroup}. */
export interface SubgroupFitOptions {
  /** Number of latent classes. */
  K: number;
  /** Residual correlation within a subject (default 'independent'). */
  correlation?: Correlation;
  /** Total number of starts (the first is the deterministic quantile start). */
  starts?: number;
  seed?: number;
  tol?: number;
  maxIter?: number;
  /** Extra starting values tried besides the generated ones (e.g. a nested model's estimates). */
  extraStarts?: SubgroupParams[];
  /** Only these starts (no generated ones). */
  onlyStarts?: SubgroupParams[];
  standardErrors?: boolean;
  gammaBound?: number;
  gammaRidge?: number;
  acceleration?: 'none' | 'squarem';
  /** EM iterations of the short runs that rank the starts (default 50). */
  shortIter?: number;
  /** How many of the best short runs continue to convergence (default 3). */
  keep?: number;
}

/** A fitted latent-subgroup model. */
export interface SubgroupFit {
  K: number;
  correlation: Correlation;
  /** Estimates with classes ordered by mu ascending and gamma_1 = 0. */
  params: SubgroupParams;
  logLik: number;
  npm: number;
  /** -2 logLik + npm log(nSubjects). */
  bic: number;
  aic: number;
  /** EM iterations (M steps) of the kept start, short run included. */
  nIter: number;
  converged: boolean;
  /** 'squarem': trace has one entry per SQUAREM cycle; 'none': one per EM iteration. */
  acceleration: 'none' | 'squarem';
  tol: number;
  separation: boolean;
  trace: number[];
  /** Posterior class probabilities (nSubjects x K), in the ordered classes. */
  posterior: Float64Array;
  /** 0-based class of highest posterior probability. */
  classes: Int32Array;
  classSizes: number[];
  /** Final log-likelihood of every start (after its short run if it was not continued). */
  startLogLiks: number[];
  /** The starts continued to convergence after the short runs. */
  continuedStarts: number[];
  bestStart: number;
  se: StandardErrors | null;
  warnings: string[];
}

/** Largest |U_i gamma_k - U_i gamma_l| over subjects and classes: the spread of the logits. */
function logitSpread(data: SubgroupData, gamma: Float64Array, K: number): number {
  const eta = new Float64Array(K);
  let worst = 0;
  for (let i = 0; i < data.nSubjects; i++) {
    membershipLogits(data, i, gamma, K, eta);
    let lo = Infinity;
    let hi = -Infinity;
    for (let k = 0; k < K; k++) {
      lo = Math.min(lo, eta[k]!);
      hi = Math.max(hi, eta[k]!);
    }
    worst = Math.max(worst, hi - lo);
  }
  return worst;
}

/** Reorders classes by mu ascending and re-references gamma to the new class 1. */
export function orderClasses(
  params: SubgroupParams,
  K: number,
  q: number,
): { params: SubgroupParams; order: number[] } {
  const order = Array.from({ length: K }, (_, k) => k).sort((a, b) => params.mu[a]! - params.mu[b]! || a - b);
  const mu = Float64Array.from(order, (k) => params.mu[k]!);
  const gamma = new Float64Array(K * q);
  const ref = order[0]!;
  for (let k = 0; k < K; k++) {
    for (let j = 0; j < q; j++)
      gamma[k * q + j] = params.gamma[order[k]! * q + j]! - params.gamma[ref * q + j]!;
  }
  return { params: { ...params, alpha: Float64Array.from(params.alpha), mu, gamma }, order };
}

/**
 * Fits the latent-subgroup linear mixed model with K classes by EM from several starts (short
 * runs rank them, the best `keep` continue to convergence) and returns the best fit, classes
 * ordered by their mean. Throws CollinearityError when the fixed effects are collinear.
 */
export function fitSubgroup(data: SubgroupData, options: SubgroupFitOptions): SubgroupFit {
  requireObject(data, 'data');
  requireObject(options, 'options');
  const K = options.K;
  const correlation = options.correlation ?? 'independent';
  const npm = checkFitSize(data, K, correlation);
  const emOptions = emOptionsFor(options, correlation);
  const em = runStarts(data, K, startPlan(options), emOptions, {
    seed: options.seed ?? 0,
    shortIter: options.shortIter ?? 50,
    keep: Math.max(1, options.keep ?? 3),
  });
  const { params } = orderClasses(em.params, K, data.q);
  const estep = eStep(data, computeStats(data, correlation, params.phi), params, K);
  const posterior = estep.resp;
  const { classes, classSizes } = assignClasses(posterior, data.nSubjects, K);
  const { warnings, separation } = fitWarnings(
    data,
    params,
    posterior,
    classSizes,
    K,
    em.converged,
    emOptions,
  );
  const se =
    options.standardErrors === false ? null : standardErrors(data, params, K, correlation, separation);
  if (se) warnings.push(...se.warnings);

  return {
    K,
    correlation,
    params,
    logLik: estep.logLik,
    npm,
    bic: -2 * estep.logLik + npm * Math.log(data.nSubjects),
    aic: -2 * estep.logLik + 2 * npm,
    nIter: em.nIter,
    converged: em.converged,
    acceleration: emOptions.acceleration,
    tol: emOptions.tol,
    separation,
    trace: em.trace,
    posterior,
    classes,
    classSizes,
    startLogLiks: em.startLogLiks,
    continuedStarts: em.continued,
    bestStart: em.bestStart,
    se,
    warnings,
  };
}

/** Refuses a K or a model too large for the data; returns the number of free parameters. */
function checkFitSize(data: SubgroupData, K: number, correlation: Correlation): number {
  if (!(Number.isInteger(K) && K >= 1))
    throw new MixtureArgumentError(`the number of classes must be a positive integer, got ${K}`);
  if (data.nSubjects < K) {
    throw new MixtureArgumentError(
      `${data.nSubjects} subjects cannot be split into ${K} classes: lower --k or add subjects`,
    );
  }
  const npm = parameterCount(data.p, data.q, K, correlation === 'ar1');
  if (data.nSubjects <= npm) {
    throw new MixtureArgumentError(
      `the model has ${npm} parameters but only ${data.nSubjects} subjects: lower --k or use fewer covariates`,
    );
  }
  if (correlation === 'ar1') checkAr1Times(data);
  return npm;
}

function emOptionsFor(options: SubgroupFitOptions, correlation: Correlation): EmOptions {
  return {
    correlation,
    tol: options.tol ?? defaultEmOptions.tol,
    maxIter: options.maxIter ?? defaultEmOptions.maxIter,
    membership: {
      ...defaultMembershipOptions,
      bound: options.gammaBound ?? defaultMembershipOptions.bound,
      ridge: options.gammaRidge ?? defaultMembershipOptions.ridge,
    },
    acceleration: options.acceleration ?? defaultEmOptions.acceleration,
  };
}

/** The starts to try: the given ones only, or the quantile start, random ones and any extra ones. */
function startPlan(options: SubgroupFitOptions): StartSpec[] {
  if (options.onlyStarts) return [...options.onlyStarts];
  const plan: StartSpec[] = ['quantile'];
  for (let s = 1; s < Math.max(1, options.starts ?? 20); s++) plan.push('random');
  plan.push(...(options.extraStarts ?? []));
  return plan;
}

/** Each subject's class of highest posterior probability (0-based) and the class sizes. */
function assignClasses(
  posterior: Float64Array,
  nSubjects: number,
  K: number,
): { classes: Int32Array; classSizes: number[] } {
  const classes = new Int32Array(nSubjects);
  const classSizes = new Array<number>(K).fill(0);
  for (let i = 0; i < nSubjects; i++) {
    let arg = 0;
    for (let k = 1; k < K; k++) if (posterior[i * K + k]! > posterior[i * K + arg]!) arg = k;
    classes[i] = arg;
    classSizes[arg]!++;
  }
  return { classes, classSizes };
}

/**
 * What a user must know about a fit: EM stopped by the iteration limit, separation in the
 * membership model (which also withholds the gamma standard errors), empty or tiny classes.
 */
function fitWarnings(
  data: SubgroupData,
  params: SubgroupParams,
  posterior: Float64Array,
  classSizes: number[],
  K: number,
  converged: boolean,
  emOptions: EmOptions,
): { warnings: string[]; separation: boolean } {
  const warnings: string[] = [];
  if (!converged) {
    warnings.push(
      `EM stopped at the iteration limit (${emOptions.maxIter}) before |change in log-likelihood| < ${emOptions.tol}: ` +
        'raise --max-iter; the estimates are not at a maximum',
    );
  }
  const spread = logitSpread(data, params.gamma, K);
  const gammaAtBound = params.gamma.some((g) => Math.abs(g) >= emOptions.membership.bound - 1e-9);
  const separation = gammaAtBound || spread > 10;
  if (separation) {
    warnings.push(
      `separation in the membership model: the class-membership logits differ by up to ${spread.toFixed(1)} ` +
        `(gamma bound ${emOptions.membership.bound}${gammaAtBound ? ' reached' : ''}), so some covariate patterns ` +
        'are assigned to a class with probability ~1; the likelihood has no finite maximiser in gamma, the gamma ' +
        'estimates are arbitrary and their standard errors are not reported. Use fewer membership covariates or classes.',
    );
  }
  for (let k = 0; k < K; k++) {
    let weight = 0;
    for (let i = 0; i < data.nSubjects; i++) weight += posterior[i * K + k]!;
    if (weight < 1e-6) warnings.push(`class ${k + 1} is empty (posterior weight ~0): use fewer classes`);
  }
  classSizes.forEach((size, k) => {
    if (size > 0 && size < Math.max(5, 0.05 * data.nSubjects)) {
      warnings.push(
        `class ${k + 1} holds only ${size} subject(s) by posterior assignment: a spurious class is likely`,
      );
    }
  });
  return { warnings, separation };
}
