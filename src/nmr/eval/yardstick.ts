// The yardstick of the single-scan denoiser: one fast low-SNR scan x0 in, its denoised version
// scored against
//   (a) the true spectrum, where one exists (synthetic and semi-synthetic data), and
//   (b) a held-out high-SNR measurement of the same sample, level K, that no method is given;
// next to the raw spectra of the levels k the instrument would have to record instead. The
// level k* whose raw spectrum the denoised x0 matches (in energy SNR and in peak F1) gives the
// measurement time saved, T^(2 k*): level k costs T^(2k) times the time of level 0.
// Single-input methods see x0 only (after registration to the sample's axis and units); stack
// methods (fusion, a stack model) see every level 0..K, so they are scored against the truth only
// and their measurement time is the sum of all levels'. Peaks are picked at one absolute
// threshold for every candidate, 3 sigma of x0, so that peak F1 (and the weak-peak recall, peaks
// of 3-5 sigma_0) compare like with like along the raw ladder: with each level's own 3 sigma_k,
// the cleaner raw levels would be charged for picking noise on line tails that x0 cannot show.
// That one threshold suits no candidate best and lets each pick at its own false-peak rate, so
// every candidate's picks are also swept over thresholds in sigma_0 (operating.ts): the
// precision-recall curve, F1 at the threshold tuned on the tuning samples, and recall at matched
// false-peak rates.
import { preprocessStack, type PreprocessOptions, type PreprocessResult } from '../pipeline/preprocess.js';
import { inverseVarianceFusion } from '../pipeline/fusion.js';
import { averageMetrics, type Metrics } from './metrics.js';
import {
  factorFor90,
  newScaleStats,
  scoreScale,
  summarizeScale,
  tuneScale,
  type Coverage,
  type ScaleStats,
} from './coverage.js';
import type { ConfidenceRule } from './confidence.js';
import { energySnrCorrected, heldOutContexts, score, truthContexts, type Context } from './yard-context.js';

import { matchLevel, type Matched } from './matched.js';

export { energySnrCorrected, matchLevel, type Matched };
export type { Coverage };
import { applyBaseline, SINGLE_BASELINES, tuneBaselines, type SingleBaseline, type Tuned } from './single.js';
import {
  addCounts,
  emptyCounts,
  operatingPoints,
  sweepSpectrum,
  type OperatingPoints,
  type SweepCounts,
} from './operating.js';

/** One multi-SNR sample of the yardstick: its levels, its truth when simulated, its axis. */
export interface YardSample {
  name: string;
  /** Levels 0..K as measured (not aligned), lowest SNR first. */
  spectra: Float64Array[];
  /** Clean spectrum in truth units, and what goes with it (simulated data only). */
  truth: Float64Array | null;
  truthPeakMask: Uint8Array | null;
  regions: { from: number; to: number }[] | null;
  /** Noise sigma of each level in truth units. */
  trueSigmas: number[] | null;
  /** Normalization of level K: truth units -> level-K units. */
  scaleK: number;
  hzPerPoint: number;
}

/** A denoising method the yardstick scores besides the baselines (a model, for example). */
export interface YardMethod {
  name: string;
  /** Denoised output in the units of the preprocessed stack (level K). */
  run: (pre: PreprocessResult) => Float64Array;
  /** Uses all levels (stack) or only level 0. */
  stack: boolean;
  /**
   * The per-point Laplace scale of the output's error (a model with a scale head), after run on
   * the same input: its central 90 % interval, +- scale x ln 10, is checked against the truth.
   */
  scale?: (pre: PreprocessResult) => Float64Array;
  /** The calibration stored with the model (`tailor nmr calibrate`): its coverage is reported too. */
  calibration?: { factor: number; confidence: ConfidenceRule };
}

/**
 * How {@link runYardstick} runs: extra methods, the validation fraction (default 0.2), the ratio
 * between levels, progress.
 */
export interface YardstickOptions {
  baselines?: SingleBaseline[];
  /** Fusion of all levels as a stack reference (default true). */
  fusion?: boolean;
  methods?: YardMethod[];
  /** First fraction of the samples tunes the baselines and is not scored (default 0.2). */
  validationFraction?: number;
  preprocess?: PreprocessOptions;
  /** T of the time factor (default: the estimate from the noise levels). */
  ratio?: number;
  /** Called after each sample with the number done and the total. */
  onProgress?: (done: number, total: number) => void;
}

/**
 * One method's score in the yardstick: its metrics, the measurement time it needs, and the raw
 * level it matches.
 */
export interface MethodScore {
  name: string;
  stack: boolean;
  /** Measurement time the method needs, in units of level 0 (single input: 1). */
  timeUnits: number;
  metrics: Metrics;
  matchedEnergy: Matched;
  matchedF1: Matched;
  /** Peak picking over a sweep of thresholds: PR curve, tuned F1, recall at matched false rates. */
  operating: OperatingPoints;
  /** Against the truth, for a method with a scale: the coverage of its central 90 % interval. */
  coverage90?: Coverage;
}

/** The yardstick against one reference: the raw ladder and each method. */
export interface ReferenceReport {
  reference: 'truth' | 'held-out level K';
  /** Raw levels k = 0..M scored the same way (M = K against the truth, K - 1 against level K). */
  ladder: Metrics[];
  /** The operating points of each raw level, as {@link MethodScore.operating}. */
  ladderOperating: OperatingPoints[];
  methods: MethodScore[];
}

/** What {@link runYardstick} returns. */
export interface YardstickReport {
  samples: number;
  validationSamples: number;
  levels: number;
  ratio: number;
  tuned: Tuned;
  references: ReferenceReport[];
  seconds: number;
}

type ReferenceKind = ReferenceReport['reference'];
const REFERENCE_KINDS: readonly ReferenceKind[] = ['truth', 'held-out level K'];

/** Per reference: the raw ladder of each scored sample, and each method's scores. */
interface Scored {
  ladders: Record<ReferenceKind, Metrics[][]>;
  perMethod: Record<ReferenceKind, Record<string, Metrics[]>>;
  /** Per method with a scale: its tuning and scored statistics against the truth. */
  coverage: Record<string, ScaleStats>;
  /** The pipeline's T estimate of each scored sample. */
  tHats: number[];
  sweeps: Sweeps;
}

/** Threshold-sweep counts pooled over samples, per reference: each raw level and each method. */
type Sweeps = Record<ReferenceKind, { ladder: SweepCounts[]; methods: Record<string, SweepCounts> }>;

const emptySweeps = (): Sweeps => ({
  truth: { ladder: [], methods: {} },
  'held-out level K': { ladder: [], methods: {} },
});

/** Adds one sample's sweeps (raw levels, then methods' outputs) against one reference. */
function addSweeps(
  into: Sweeps[ReferenceKind],
  ctx: Context[],
  pre: PreprocessResult,
  methods: YardMethod[],
  outputs: Float64Array[],
  kind: ReferenceKind,
): void {
  ctx.forEach((c, k) => {
    into.ladder[k] = addCounts(into.ladder[k] ?? emptyCounts(), sweepSpectrum(pre.spectra[k]!, c));
  });
  methods.forEach((m, j) => {
    if (m.stack && kind !== 'truth') return;
    into.methods[m.name] = addCounts(
      into.methods[m.name] ?? emptyCounts(),
      sweepSpectrum(outputs[j]!, ctx[0]!),
    );
  });
}

/**
 * The sweeps of every method on the tuning samples (which choose each one's picking threshold),
 * and for methods with a scale, the factor on it that covers 90 % of the truth there and their
 * peaks, labelled true or false, that choose the confidence rule.
 */
function tuningSweeps(
  validation: YardSample[],
  methods: YardMethod[],
  prep: (s: YardSample) => PreprocessResult,
): { sweeps: Sweeps; scaleStats: Record<string, ScaleStats> } {
  const sweeps = emptySweeps();
  const stats: Record<string, ScaleStats> = {};
  for (const m of methods) if (m.scale) stats[m.name] = newScaleStats(m.calibration ?? null);
  for (const s of validation) {
    const pre = prep(s);
    const outputs = methods.map((m) => m.run(pre));
    const contexts = { truth: truthContexts(s, pre), 'held-out level K': heldOutContexts(s, pre) };
    for (const kind of REFERENCE_KINDS) {
      const ctx = contexts[kind];
      if (ctx) addSweeps(sweeps[kind], ctx, pre, methods, outputs, kind);
    }
    methods.forEach((m, j) => {
      if (m.scale && contexts.truth)
        tuneScale(stats[m.name]!, pre.spectra[0]!, outputs[j]!, m.scale(pre), contexts.truth[0]!);
    });
  }
  for (const st of Object.values(stats)) st.factor = factorFor90(st.ratios);
  return { sweeps, scaleStats: stats };
}

/**
 * The yardstick: scores the baselines and the given methods on multi-SNR samples, against the truth
 * when samples have one and against the held-out highest level otherwise, and states each method's
 * result as the matched raw level (how many more scans it is worth).
 * @param samples From {@link datasetYardSamples} or {@link experimentYardSamples}.
 * @param options Extra methods, the validation fraction (default 0.2), the level ratio, progress.
 */
export function runYardstick(samples: YardSample[], options: YardstickOptions = {}): YardstickReport {
  const t0 = Date.now();
  const fraction = options.validationFraction ?? 0.2;
  // With a fraction of 0 nothing is tuned (the baselines keep their defaults) and all samples count.
  const nVal =
    fraction <= 0 ? 0 : Math.min(samples.length - 1, Math.max(1, Math.round(fraction * samples.length)));
  if (samples.length - nVal < 1 || samples.length === 0)
    throw new RangeError(
      'the yardstick needs at least 2 samples (one tunes the baselines), or a validation fraction of 0',
    );
  const K1 = samples[0]!.spectra.length;
  if (K1 < 2) throw new RangeError('the yardstick needs at least 2 levels per sample');
  const baselines = options.baselines ?? [...SINGLE_BASELINES];
  const prep = (s: YardSample): PreprocessResult => preprocessStack(s.spectra, options.preprocess ?? {});
  const tuned = tuneOn(samples.slice(0, nVal), baselines, prep);
  const methods = yardMethods(baselines, tuned, options);
  const scored = samples.slice(nVal);
  const { sweeps: tuning, scaleStats } = tuningSweeps(samples.slice(0, nVal), methods, prep);
  const results = scoreSamples(scored, methods, prep, scaleStats, options.onProgress);
  const finite = results.tHats.filter((t) => Number.isFinite(t) && t > 1).sort((a, b) => a - b);
  const T = options.ratio ?? (finite.length ? finite[Math.floor(finite.length / 2)]! : NaN);
  return {
    samples: scored.length,
    validationSamples: nVal,
    levels: K1,
    ratio: T,
    tuned,
    references: referenceReports(results, tuning, methods, T, K1),
    seconds: (Date.now() - t0) / 1000,
  };
}

/** Tunes the baselines on x0: against the truth where there is one, else the held-out level K. */
function tuneOn(
  validation: YardSample[],
  baselines: SingleBaseline[],
  prep: (s: YardSample) => PreprocessResult,
): Tuned {
  const valInputs: { x: Float64Array; sigma: number }[] = [];
  const valScore: ((y: Float64Array) => number)[] = [];
  for (const s of validation) {
    const pre = prep(s);
    const ctx = truthContexts(s, pre)?.[0] ?? heldOutContexts(s, pre)[0]!;
    valInputs.push({ x: pre.spectra[0]!, sigma: pre.sigmas[0]! });
    valScore.push((y) =>
      ctx.refSigma !== undefined
        ? energySnrCorrected(y, ctx.truth, ctx.refSigma)
        : energySnrCorrected(y, ctx.truth, 0),
    );
  }
  return tuneBaselines(valInputs, (y, i) => valScore[i]!(y), baselines);
}

/** The tuned baselines, the given methods, and fusion as a stack reference. */
function yardMethods(baselines: SingleBaseline[], tuned: Tuned, options: YardstickOptions): YardMethod[] {
  return [
    ...baselines.map((b) => ({
      name: b,
      stack: false,
      run: (pre: PreprocessResult) => applyBaseline(b, pre.spectra[0]!, pre.sigmas[0]!, tuned),
    })),
    ...(options.methods ?? []),
    ...(options.fusion === false
      ? []
      : [
          {
            name: 'fusion',
            stack: true,
            run: (pre: PreprocessResult) => inverseVarianceFusion(pre.spectra, pre.sigmas),
          },
        ]),
  ];
}

/** Scores the raw ladder and every method on each sample, against each reference it has. */
function scoreSamples(
  scored: YardSample[],
  methods: YardMethod[],
  prep: (s: YardSample) => PreprocessResult,
  coverage: Record<string, ScaleStats>,
  onProgress: YardstickOptions['onProgress'],
): Scored {
  const ladders: Scored['ladders'] = { truth: [], 'held-out level K': [] };
  const perMethod: Scored['perMethod'] = { truth: {}, 'held-out level K': {} };
  const tHats: number[] = [];
  const sweeps = emptySweeps();
  scored.forEach((s, i) => {
    const pre = prep(s);
    tHats.push(pre.tHat);
    const outputs = methods.map((m) => m.run(pre));
    const contexts = { truth: truthContexts(s, pre), 'held-out level K': heldOutContexts(s, pre) };
    for (const kind of REFERENCE_KINDS) {
      const ctx = contexts[kind];
      if (!ctx) continue;
      ladders[kind].push(ctx.map((c, k) => score(pre.spectra[k]!, c)));
      methods.forEach((m, j) => {
        // Stack methods see level K, so only the truth can score them.
        if (m.stack && kind !== 'truth') return;
        (perMethod[kind][m.name] ??= []).push(score(outputs[j]!, ctx[0]!));
        if (m.scale && kind === 'truth')
          scoreScale(coverage[m.name]!, pre.spectra[0]!, outputs[j]!, m.scale(pre), ctx[0]!);
      });
      addSweeps(sweeps[kind], ctx, pre, methods, outputs, kind);
    }
    onProgress?.(i + 1, scored.length);
  });
  return { ladders, perMethod, coverage, tHats, sweeps };
}

/** Per reference: the mean ladder, and each method's mean metrics with the level it matches. */
function referenceReports(
  results: Scored,
  tuning: Sweeps,
  methods: YardMethod[],
  T: number,
  K1: number,
): ReferenceReport[] {
  const stackUnits = Array.from({ length: K1 }, (_, k) => Math.pow(T, 2 * k)).reduce((a, b) => a + b, 0);
  const references: ReferenceReport[] = [];
  for (const kind of REFERENCE_KINDS) {
    const rows = results.ladders[kind];
    if (rows.length === 0) continue;
    const perMethod = results.perMethod[kind];
    const ladder = rows[0]!.map((_, k) => averageMetrics(rows.map((r) => r[k]!)));
    const energy = ladder.map((m) => m.energy_snr_db);
    const f1 = ladder.map((m) => m.peak_f1);
    const sweeps = results.sweeps[kind];
    const tune = tuning[kind];
    references.push({
      reference: kind,
      ladder,
      ladderOperating: sweeps.ladder.map((c, k) => operatingPoints(c, tune.ladder[k] ?? null)),
      methods: methods
        .filter((m) => perMethod[m.name])
        .map((m) => {
          const metrics = averageMetrics(perMethod[m.name]!);
          return {
            name: m.name,
            stack: m.stack,
            timeUnits: m.stack ? stackUnits : 1,
            metrics,
            matchedEnergy: matchLevel(metrics.energy_snr_db, energy, T, 'energy'),
            matchedF1: matchLevel(metrics.peak_f1, f1, T, 'f1'),
            operating: operatingPoints(sweeps.methods[m.name]!, tune.methods[m.name] ?? null),
            ...(kind === 'truth' && results.coverage[m.name]?.scored.length
              ? { coverage90: summarizeScale(results.coverage[m.name]!) }
              : {}),
          };
        }),
    });
  }
  return references;
}
