// Several EM starts, in the manner of lcmm's gridsearch: every start runs a short EM (shortIter
// iterations), the best `keep` of them continue to convergence, the best of those is kept. EM is
// memoryless, so continuing a start gives exactly the sequence of one long run. Each run is plain
// EM in the shared BaseMixture loop (SubgroupMixture) or SQUAREM-accelerated EM.
import { Rng } from '../../util/rng.js';
import type { SubgroupData } from './data.js';
import type { EmOptions } from './em.js';
import { quantileStart, randomStart } from './init.js';
import { type StartSpec, SubgroupMixture } from './mixture.js';
import { type SubgroupParams, eStep } from './model.js';
import { runSquarem } from './squarem.js';
import { computeStats } from './stats.js';

export interface RunResult {
  params: SubgroupParams;
  logLik: number;
  nIter: number;
  converged: boolean;
  /** Total log-likelihood from the start to the final parameters, both included. */
  trace: number[];
}

export interface MultiStartResult extends RunResult {
  /** Final log-likelihood of every start (after its short run if it was not continued). */
  startLogLiks: number[];
  /** The starts that were continued to convergence. */
  continued: number[];
  bestStart: number;
}

export interface MultiStartOptions {
  seed: number;
  /** EM iterations of the short runs that rank the starts. */
  shortIter: number;
  /** How many of the best short runs continue to convergence. */
  keep: number;
}

export function runFromStart(
  data: SubgroupData,
  start: SubgroupParams,
  K: number,
  em: EmOptions,
  maxIter: number,
): RunResult {
  const options = { ...em, maxIter };
  if (em.acceleration === 'squarem') {
    const r = runSquarem(data, start, K, options);
    return { params: r.params, logLik: r.logLik, nIter: r.nIter, converged: r.converged, trace: r.trace };
  }
  const mixture = new SubgroupMixture({
    nComponents: K,
    em: options,
    startPlan: [start],
    onWarning: () => {},
  });
  mixture.fit(data);
  const params = mixture.parameters;
  // The base loop's trace stops at the parameters of the last E step; add the final ones.
  const logLik = eStep(data, computeStats(data, em.correlation, params.phi), params, K).logLik;
  return {
    params,
    logLik,
    nIter: mixture.nIter,
    converged: mixture.converged,
    trace: [...mixture.trace, logLik],
  };
}

export function runStarts(
  data: SubgroupData,
  K: number,
  plan: StartSpec[],
  em: EmOptions,
  options: MultiStartOptions,
): MultiStartResult {
  const rng = new Rng(options.seed);
  const starts = plan.map((spec) =>
    spec === 'quantile'
      ? quantileStart(data, K, em.correlation)
      : spec === 'random'
        ? randomStart(data, K, em.correlation, rng)
        : spec,
  );
  const twoPhase = starts.length > options.keep && options.shortIter < em.maxIter;
  const first = starts.map((s) => runFromStart(data, s, K, em, twoPhase ? options.shortIter : em.maxIter));
  const finite = (r: RunResult): number => (Number.isFinite(r.logLik) ? r.logLik : -Infinity);
  const ranked = first.map((_, s) => s).sort((a, b) => finite(first[b]!) - finite(first[a]!));
  const continued = twoPhase ? ranked.slice(0, options.keep) : ranked;
  const results = [...first];
  if (twoPhase) {
    for (const s of continued) {
      const short = first[s]!;
      if (short.converged) continue;
      const rest = runFromStart(data, short.params, K, em, em.maxIter - short.nIter);
      results[s] = {
        params: rest.params,
        logLik: rest.logLik,
        nIter: short.nIter + rest.nIter,
        converged: rest.converged,
        trace: [...short.trace, ...rest.trace.slice(1)],
      };
    }
  }
  let bestStart = -1;
  for (const s of continued)
    if (bestStart < 0 || finite(results[s]!) > finite(results[bestStart]!)) bestStart = s;
  if (bestStart < 0 || !Number.isFinite(results[bestStart]!.logLik)) {
    throw new Error('every EM start ended with a non-finite log-likelihood: check the data scale');
  }
  return {
    ...results[bestStart]!,
    startLogLiks: results.map((r) => r.logLik),
    continued: [...continued].sort((a, b) => a - b),
    bestStart,
  };
}
