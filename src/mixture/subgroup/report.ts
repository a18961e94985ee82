// JSON and CSV views of a subgroup fit for the CLI and for other programs.
import type { SubgroupData } from './data.js';
import type { SubgroupFit } from './fit.js';
import type { LrtResult, Selection } from './compare.js';

/** A fit as JSON (what `tailor subgroup fit` writes), with `extra` fields added. */
export function fitToJson(fit: SubgroupFit, data: SubgroupData, extra: Record<string, unknown> = {}) {
  const { params, K } = fit;
  const q = data.q;
  const gammaRows = (values: ArrayLike<number>): number[][] =>
    Array.from({ length: K }, (_, k) => Array.from({ length: q }, (_, j) => values[k * q + j]!));
  const meanPosterior = new Array<number>(K).fill(0);
  for (let i = 0; i < data.nSubjects; i++)
    for (let k = 0; k < K; k++) meanPosterior[k]! += fit.posterior[i * K + k]!;
  return {
    model: 'latent-subgroup linear mixed model',
    K,
    correlation: fit.correlation,
    nSubjects: data.nSubjects,
    nObservations: data.nObs,
    fixed: data.fixedNames,
    membership: ['(intercept)', ...data.membershipNames],
    conventions:
      'classes ordered by mu ascending; gamma[0] (class 1) is the reference and is 0; variances, not SDs; ' +
      'logLik includes the 2 pi constant and is summed over subjects; phi is 0 under independence',
    alpha: Array.from(params.alpha),
    mu: Array.from(params.mu),
    sigmaB2: params.sigmaB2,
    sigmaEps2: params.sigmaEps2,
    phi: params.phi,
    gamma: gammaRows(params.gamma),
    standardErrors: fit.se
      ? {
          method: 'observed information (central-difference Hessian of the log-likelihood)',
          alpha: fit.se.alpha,
          mu: fit.se.mu,
          sigmaB2: fit.se.sigmaB2,
          sigmaEps2: fit.se.sigmaEps2,
          phi: fit.se.phi,
          gamma: fit.se.gamma,
        }
      : null,
    logLik: fit.logLik,
    npm: fit.npm,
    bic: fit.bic,
    aic: fit.aic,
    bicN: data.nSubjects,
    bicNote:
      'BIC = -2 logLik + npm log(n) with n = number of subjects (as lcmm hlme; flexmix uses observations)',
    nIter: fit.nIter,
    converged: fit.converged,
    tol: fit.tol,
    acceleration: fit.acceleration,
    separation: fit.separation,
    classSizes: fit.classSizes,
    meanPosterior: meanPosterior.map((s) => s / data.nSubjects),
    starts: { logLiks: fit.startLogLiks, continued: fit.continuedStarts, best: fit.bestStart },
    warnings: fit.warnings,
    trace: fit.trace,
    ...extra,
  };
}

/** id, class (1-based, ordered by mu), prob1..probK per subject. */
export function posteriorCsv(fit: SubgroupFit, data: SubgroupData): string {
  const K = fit.K;
  const quote = (s: string): string => (/[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [['id', 'class', ...Array.from({ length: K }, (_, k) => `prob${k + 1}`)].join(',')];
  for (let i = 0; i < data.nSubjects; i++) {
    const probs = Array.from({ length: K }, (_, k) => String(fit.posterior[i * K + k]!));
    lines.push([quote(data.ids[i]!), String(fit.classes[i]! + 1), ...probs].join(','));
  }
  return lines.join('\n') + '\n';
}

/** A likelihood-ratio test as JSON (what `tailor subgroup lrt --out` writes). */
export function lrtToJson(result: LrtResult, full: SubgroupData, reduced: SubgroupData) {
  return {
    test: 'likelihood ratio for membership covariates',
    drop: result.drop,
    LR: result.lr,
    df: result.df,
    pValue: result.pValue,
    logLikFull: result.full.logLik,
    logLikReduced: result.reduced.logLik,
    warnings: result.warnings,
    full: fitToJson(result.full, full),
    reduced: fitToJson(result.reduced, reduced),
  };
}

/** A class-number selection as a text table. */
export function selectionTable(selection: Selection): string {
  const header = ['K', 'logLik', 'npm', 'BIC', 'AIC', 'converged', 'class sizes', 'notes'];
  const rows = selection.rows.map((r) => [
    String(r.K) + (r.K === selection.bestK ? ' *' : ''),
    r.logLik.toFixed(4),
    String(r.npm),
    r.bic.toFixed(2),
    r.aic.toFixed(2),
    r.converged ? 'yes' : 'NO',
    r.classSizes.join('/'),
    [
      r.separation ? 'separation' : '',
      r.warnings.length > 0 && !r.separation ? `${r.warnings.length} warning(s)` : '',
    ]
      .filter(Boolean)
      .join(', '),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const fmt = (cells: string[]): string =>
    cells
      .map((s, c) => s.padEnd(widths[c]!))
      .join('  ')
      .trimEnd();
  return [
    fmt(header),
    ...rows.map(fmt),
    `* smallest BIC (n = number of subjects): K = ${selection.bestK}`,
  ].join('\n');
}
