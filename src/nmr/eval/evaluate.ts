// Runs the classical baselines (and any extra method, e.g. a trained model) on a multi-SNR data
// set and reports the metrics per method and per input level. Every method sees the spectra after
// the multi-SNR preprocessing (alignment to level K and rescaling inside the peak mask); outputs
// are converted to truth units with level K's normalization before scoring. Savitzky-Golay, total
// variation and Cadzow are tuned per level on the first validationFraction of the samples (at most
// MAX_TUNING_SAMPLES of them), which are then left out of scoring.
import type { Dataset, SampleRecord } from '../data/dataset.js';
import { preprocessStack, type PreprocessOptions, type PreprocessResult } from '../pipeline/preprocess.js';
import { baselineOfPeakMask, maskRegions } from '../pipeline/masks.js';
import { inverseVarianceFusion } from '../pipeline/fusion.js';
import {
  averageMetrics,
  computeMetrics,
  energySnrDb,
  peakSnr,
  type MetricContext,
  type Metrics,
} from './metrics.js';
import { waveletBaseline } from './baselines.js';
import type { WaveletOptions } from './wavelet.js';
import {
  applyBaseline,
  DEFAULT_TUNED,
  isSingleBaseline,
  SINGLE_BASELINES,
  tuneBaselines,
  TUNING_GRID,
  type SingleBaseline,
  type Tuned,
} from './single.js';

/**
 * The denoising baselines the evaluation compares a model with: the single-spectrum ones, inverse-variance fusion and the pseudo ground truth.
 */
export const BASELINES = [...SINGLE_BASELINES, 'fusion', 'pseudo_gt'] as const;
/** One of {@link BASELINES}. */
export type BaselineName = (typeof BASELINES)[number];

/** Validation samples the tuning holds in memory at once (the rest of the split is only held out). */
export const MAX_TUNING_SAMPLES = 64;

/** A denoiser applied to one input level of a preprocessed sample (output in the same units). */
export type Denoiser = (input: Float64Array, pre: PreprocessResult, level: number) => Float64Array;

/**
 * How {@link evaluateDataset} evaluates: at most how many samples, the validation share, a model
 * to score, baseline settings, progress.
 */
export interface EvaluateOptions {
  methods?: BaselineName[];
  extraMethods?: Record<string, Denoiser>;
  /** Names of extra methods that denoise the whole stack (scored once, like fusion). */
  stackMethods?: string[];
  validationFraction?: number;
  maxSamples?: number;
  preprocess?: PreprocessOptions;
  wavelet?: WaveletOptions;
  /** Called after each sample with the number done and the total. */
  onProgress?: (done: number, total: number) => void;
}

/** A method's averaged {@link Metrics} and its SNR gain over the raw input in dB. */
export type MethodMetrics = Metrics & { snr_gain_db: number };

/**
 * What {@link evaluateDataset} returns: the dataset, the number of samples scored and held out, and the metrics per method.
 */
export interface EvaluationReport {
  dataset: { dir: string; samples: number; levels: number; points: number; ratio: number };
  evaluatedSamples: number;
  validationSamples: number;
  /**
   * Summary per method at input level 0 (the one fast scan a single-input model denoises); stack
   * methods use all levels.
   */
  methods: Record<string, MethodMetrics>;
  /** Per method, per input level k (stack methods: one entry). */
  perLevel: Record<string, MethodMetrics[]>;
  inputPeakSnr: number[];
  /** The tuned parameters per input level (TV: lambda = factor * the input's robust noise). */
  tuned: {
    savgol: { window: number; order: number }[];
    tv: { factor: number }[];
    cadzow: { rank: number; window: number }[];
  };
  pipeline: {
    alignment_error_points: number[];
    scale_rel_error: number[];
    t_hat: number;
    t_abs_error: number;
    seconds: number;
  };
}

const STACK_METHODS = new Set(['fusion', 'pseudo_gt']);

interface Prepared {
  record: SampleRecord;
  pre: PreprocessResult;
  toTruth: number;
  contexts: MetricContext[];
}

function prepare(record: SampleRecord, hzPerPoint: number, options: EvaluateOptions): Prepared {
  const pre = preprocessStack(record.spectra, options.preprocess ?? {});
  const K = record.spectra.length - 1;
  const toTruth = 1 / record.meta.levels[K]!.scale;
  const baselineMask = baselineOfPeakMask(record.truthPeakMask);
  const contexts = record.meta.levels.map((lv) => ({
    truth: record.truth,
    sigmaIn: lv.sigma,
    hzPerPoint,
    peakMask: record.truthPeakMask,
    baselineMask,
    multiplets: integrationRegions(record),
  }));
  return { record, pre, toTruth, contexts };
}

/**
 * Integration ranges: the true multiplets when the generator knows them, else (semi-synthetic
 * data) the connected regions of the truth peak mask.
 */
export function integrationRegions(record: SampleRecord): { from: number; to: number }[] {
  const known = record.meta.multiplets.filter((m) => m.kind === 'multiplet');
  if (known.length > 0 || record.meta.multiplets.length > 0) return known;
  return maskRegions(record.truthPeakMask);
}

function scaled(x: Float64Array, f: number): Float64Array {
  return x.map((v) => v * f);
}

const mean = (v: number[]): number => {
  const f = v.filter(Number.isFinite);
  return f.length ? f.reduce((a, b) => a + b, 0) / f.length : NaN;
};

/** Per input level k, one entry per scored sample. */
interface Scores {
  /** Per method: the metrics and the SNR gain over the input (dB). */
  metrics: Record<string, Metrics[][]>;
  gains: Record<string, number[][]>;
  inputSnr: number[][];
  alignErr: number[][];
  scaleErr: number[][];
  /** Per sample: the pipeline's T estimate. */
  tHat: number[];
}

function emptyScores(names: string[], K1: number): Scores {
  const perLevel = <T>(): T[][] => Array.from({ length: K1 }, () => [] as T[]);
  return {
    metrics: Object.fromEntries(names.map((name) => [name, perLevel<Metrics>()])),
    gains: Object.fromEntries(names.map((name) => [name, perLevel<number>()])),
    inputSnr: perLevel<number>(),
    alignErr: perLevel<number>(),
    scaleErr: perLevel<number>(),
    tHat: [],
  };
}

/**
 * Scores the baselines ({@link BASELINES}) and, when given, a model (a {@link Denoiser}) on a
 * dataset's samples against its clean truth: SNR, NRMSE, peak recall and hallucinations, integral and
 * line-width errors. Baseline settings are tuned on a held-out validation part first.
 * @param ds An open dataset (see {@link Dataset}).
 * @returns The report, per method and averaged over the samples.
 */
export function evaluateDataset(ds: Dataset, options: EvaluateOptions = {}): EvaluationReport {
  const t0 = Date.now();
  const m = ds.manifest;
  const n = Math.min(ds.size, options.maxSamples ?? ds.size);
  const methods = options.methods ?? [...BASELINES];
  const tunable = methods.filter(
    (name): name is SingleBaseline => isSingleBaseline(name) && name in TUNING_GRID,
  );
  const nVal = Math.min(
    n - 1,
    Math.max(tunable.length > 0 ? 1 : 0, Math.round((options.validationFraction ?? 0.2) * n)),
  );
  const hzPerPoint = (Math.abs(m.axis.ppmFirst - m.axis.ppmLast) * m.axis.sfMHz) / (m.points - 1);
  const K1 = m.levels;
  const tuned = tuneOnValidation(ds, nVal, tunable, hzPerPoint, options);
  const names = [...methods, ...Object.keys(options.extraMethods ?? {})];
  const scores = emptyScores(names, K1);
  for (let i = nVal; i < n; i++) {
    scoreSample(prepare(ds.sample(i), hzPerPoint, options), names, tuned, options, scores);
    options.onProgress?.(i - nVal + 1, n - nVal);
  }
  const { perLevel, summary } = summarizeMethods(names, scores);
  return {
    dataset: { dir: ds.dir, samples: m.samples, levels: K1, points: m.points, ratio: m.ratio },
    evaluatedSamples: n - nVal,
    validationSamples: nVal,
    methods: summary,
    perLevel,
    inputPeakSnr: scores.inputSnr.map(mean),
    tuned: {
      savgol: tuned.map((t) => t.savgol),
      tv: tuned.map((t) => t.tv),
      cadzow: tuned.map((t) => t.cadzow),
    },
    pipeline: {
      alignment_error_points: scores.alignErr.map(mean),
      scale_rel_error: scores.scaleErr.map(mean),
      t_hat: mean(scores.tHat),
      t_abs_error: mean(scores.tHat.map((t) => Math.abs(t - m.ratio))),
      seconds: (Date.now() - t0) / 1000,
    },
  };
}

/**
 * Tunes the parametrized baselines per input level on the validation samples (energy SNR against
 * the truth); the scored samples never steer a parameter. Defaults where nothing is tuned.
 */
function tuneOnValidation(
  ds: Dataset,
  nVal: number,
  tunable: SingleBaseline[],
  hzPerPoint: number,
  options: EvaluateOptions,
): Tuned[] {
  const K1 = ds.manifest.levels;
  const tuned: Tuned[] = Array.from({ length: K1 }, () => structuredClone(DEFAULT_TUNED));
  if (tunable.length === 0 || nVal <= 0) return tuned;
  const validation = Array.from({ length: Math.min(nVal, MAX_TUNING_SAMPLES) }, (_, i) =>
    prepare(ds.sample(i), hzPerPoint, options),
  );
  for (let k = 0; k < K1; k++) {
    tuned[k] = tuneBaselines(
      validation.map((p) => ({ x: p.pre.spectra[k]!, sigma: p.pre.sigmas[k]! })),
      (y, i) => energySnrDb(scaled(y, validation[i]!.toTruth), validation[i]!.record.truth),
      tunable,
    );
  }
  return tuned;
}

/** Scores the pipeline and every method on one sample, adding to `scores`. */
function scoreSample(
  p: Prepared,
  names: string[],
  tuned: Tuned[],
  options: EvaluateOptions,
  scores: Scores,
): void {
  const { pre, record, toTruth } = p;
  const levels = record.meta.levels;
  const K1 = scores.inputSnr.length; // the manifest's K + 1
  const cK = levels[K1 - 1]!.scale;
  for (let k = 0; k < K1; k++) {
    scores.alignErr[k]!.push(Math.abs(pre.shifts[k]! - levels[k]!.shift));
    const trueScale = cK / levels[k]!.scale;
    scores.scaleErr[k]!.push(Math.abs(pre.scales[k]! - trueScale) / trueScale);
    scores.inputSnr[k]!.push(
      peakSnr(scaled(pre.spectra[k]!, toTruth), p.contexts[k]!.peakMask, p.contexts[k]!.baselineMask),
    );
  }
  scores.tHat.push(pre.tHat);
  for (const name of names) {
    for (let k = 0; k < K1; k++) {
      if ((STACK_METHODS.has(name) || options.stackMethods?.includes(name)) && k > 0) break;
      const y = scaled(runMethod(name, pre, k, tuned[k]!, options), toTruth);
      const metrics = computeMetrics(y, p.contexts[k]!);
      const inputSnr = scores.inputSnr[k]!;
      scores.metrics[name]![k]!.push(metrics);
      scores.gains[name]![k]!.push(20 * Math.log10(metrics.peak_snr / inputSnr[inputSnr.length - 1]!));
    }
  }
}

/** A method's output for input level k of a preprocessed sample (stack methods use every level). */
function runMethod(
  name: string,
  pre: PreprocessResult,
  k: number,
  tuned: Tuned,
  options: EvaluateOptions,
): Float64Array {
  const input = pre.spectra[k]!;
  switch (name) {
    case 'wavelet':
      return waveletBaseline(input, options.wavelet ?? {});
    case 'raw':
    case 'savgol':
    case 'matched':
    case 'tv':
    case 'cadzow':
      return applyBaseline(name, input, pre.sigmas[k]!, tuned);
    case 'fusion':
      return inverseVarianceFusion(pre.spectra, pre.sigmas);
    case 'pseudo_gt':
      return pre.pseudoTruth;
    default:
      return options.extraMethods![name]!(input, pre, k);
  }
}

/** Mean metrics per method and input level; the summary is level 0's. */
function summarizeMethods(
  names: string[],
  scores: Scores,
): { perLevel: Record<string, MethodMetrics[]>; summary: Record<string, MethodMetrics> } {
  const perLevel: Record<string, MethodMetrics[]> = {};
  const summary: Record<string, MethodMetrics> = {};
  for (const name of names) {
    perLevel[name] = scores.metrics[name]!.filter((l) => l.length > 0).map((list, k) => ({
      ...averageMetrics(list),
      snr_gain_db: mean(scores.gains[name]![k]!),
    }));
    summary[name] = perLevel[name]![0]!;
  }
  return { perLevel, summary };
}
