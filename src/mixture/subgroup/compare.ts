// Model comparison for the latent-subgroup model: the likelihood-ratio test for membership
// covariates (LR = 2 (l_full - l_reduced), df = (K - 1) x dropped covariates) and the choice of K
// by BIC (n = number of subjects). The full model is also started from the reduced model's
// estimates (dropped coefficients 0), so l_full >= l_reduced holds unless EM stops early.
import { chiSquareSurvival } from './chisq.js';
import { type SubgroupData, dropMembership } from './data.js';
import { type SubgroupFit, type SubgroupFitOptions, fitSubgroup } from './fit.js';
import type { SubgroupParams } from './model.js';
import { MixtureArgumentError, requireArray, requireObject } from '../errors.js';

/** A likelihood-ratio test of membership covariates: both fits, the statistic and its chi-square p-value. */
export interface LrtResult {
  drop: string[];
  full: SubgroupFit;
  reduced: SubgroupFit;
  lr: number;
  df: number;
  pValue: number;
  warnings: string[];
}

/** Reduced-model estimates as a start of the full model: dropped membership coefficients = 0. */
export function expandMembership(
  params: SubgroupParams,
  reduced: SubgroupData,
  full: SubgroupData,
  K: number,
): SubgroupParams {
  const gamma = new Float64Array(K * full.q);
  const columnOf = (name: string): number => full.membershipNames.indexOf(name) + 1;
  for (let k = 0; k < K; k++) {
    gamma[k * full.q] = params.gamma[k * reduced.q]!;
    reduced.membershipNames.forEach(
      (name, j) => (gamma[k * full.q + columnOf(name)] = params.gamma[k * reduced.q + j + 1]!),
    );
  }
  return { ...params, alpha: Float64Array.from(params.alpha), mu: Float64Array.from(params.mu), gamma };
}

/**
 * Tests whether the membership covariates `drop` matter: fits the model with and without them
 * (the reduced fit seeds the full one) and compares by a likelihood-ratio test with
 * (K - 1) x drop.length degrees of freedom. Warnings flag a non-monotone pair of fits and
 * separation (a doubtful chi-square approximation). Needs K >= 2 and at least one name.
 */
export function membershipLrt(data: SubgroupData, drop: string[], options: SubgroupFitOptions): LrtResult {
  requireArray(drop, 'drop');
  requireObject(options, 'options');
  if (drop.length === 0)
    throw new MixtureArgumentError('name at least one membership covariate to drop (--drop)');
  if (options.K < 2)
    throw new MixtureArgumentError(
      'a membership test needs K >= 2 classes (with K = 1 there is no membership model)',
    );
  const reducedData = dropMembership(data, drop);
  const reduced = fitSubgroup(reducedData, options);
  const full = fitSubgroup(data, {
    ...options,
    extraStarts: [
      ...(options.extraStarts ?? []),
      expandMembership(reduced.params, reducedData, data, options.K),
    ],
  });
  const warnings: string[] = [];
  let lr = 2 * (full.logLik - reduced.logLik);
  if (lr < 0) {
    if (lr < -1e-4) {
      warnings.push(
        `the full model's log-likelihood (${full.logLik}) is below the reduced model's (${reduced.logLik}): EM did ` +
          'not reach the maximum; raise --starts or --max-iter, or lower --tol',
      );
    }
    lr = 0;
  }
  if (full.separation || reduced.separation) {
    warnings.push(
      'separation in the membership model of the ' +
        (full.separation ? 'full' : 'reduced') +
        ' fit: the likelihood is flat in gamma and the chi-square approximation of the LR test is doubtful',
    );
  }
  const df = (options.K - 1) * drop.length;
  return { drop, full, reduced, lr, df, pValue: chiSquareSurvival(lr, df), warnings };
}

/** One K of a class-number selection. */
export interface SelectionRow {
  K: number;
  logLik: number;
  npm: number;
  bic: number;
  aic: number;
  converged: boolean;
  separation: boolean;
  classSizes: number[];
  warnings: string[];
}

/** The fits of a class-number selection and the K with the smallest BIC. */
export interface Selection {
  rows: SelectionRow[];
  /** K with the smallest BIC. */
  bestK: number;
  fits: SubgroupFit[];
}

/** Fits the model for every K in `ks` and tabulates log-likelihood, BIC and AIC. */
export function selectClasses(
  data: SubgroupData,
  ks: number[],
  options: Omit<SubgroupFitOptions, 'K'>,
): Selection {
  requireArray(ks, 'ks');
  if (ks.length === 0) throw new MixtureArgumentError('give at least one number of classes');
  const fits = ks.map((K) => fitSubgroup(data, { ...options, K }));
  const rows = fits.map((f) => ({
    K: f.K,
    logLik: f.logLik,
    npm: f.npm,
    bic: f.bic,
    aic: f.aic,
    converged: f.converged,
    separation: f.separation,
    classSizes: f.classSizes,
    warnings: f.warnings,
  }));
  let best = rows[0]!;
  for (const row of rows) if (row.bic < best.bic) best = row;
  return { rows, bestK: best.K, fits };
}
