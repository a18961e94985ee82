// Runs the classical baselines (and any extra method, e.g. a trained model) on a multi-SNR data
// set and reports the metrics per method and per input level. Every method sees the spectra after
// the multi-SNR preprocessing (alignment to level K and rescaling inside the peak mask); outputs
// are converted to truth units with level K's normalization before scoring. Savitzky-Golay, total
// variation and Cadzow are tuned per level on the first validationFraction of the samples (at most
// MAX_TUNING_SAMPLES of them), which are then left out of scoring.
import type { Dataset, SampleRecord } from '../data/dataset.js';
import { preprocessStack, type PreprocessOptions, type PreprocessResult } from '../pipeline/preprocess.js';
import { erode } from '../pipeline/masks.js';
import { inverseVarianceFusion } from '../pipeline/fusion.js';
import { averageMetrics, computeMetrics, peakSnr, type MetricContext, type Metrics } from './metrics.js';
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

export const BASELINES = [...SINGLE_BASELINES, 'fusion', 'pseudo_gt'] as const;
export type BaselineName = (typeof BASELINES)[number];

/** Validation samples the tuning holds in memory at once (the rest of the split is only held out). */
export const MAX_TUNING_SAMPLES = 64;

/** A denoiser applied to one input level of a preprocessed sample (output in the same units). */
export type Denoiser = (input: Float64Array, pre: PreprocessResult, level: number) => Float64Array;

export interface EvaluateOptions {
  methods?: BaselineName[];
  extraMethods?: Record<string, Denoiser>;
  /** Names of extra methods that denoise the whole stack (scored once, like fusion). */
  stackMethods?: string[];
  validationFraction?: number;
  maxSamples?: number;
  preprocess?: PreprocessOptions;
  wavelet?: WaveletOptions;
  onProgress?: (done: number, total: number) => void;
}

export type MethodMetrics = Metrics & { snr_gain_db: number };

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
  const baselineMask = erode(
    record.truthPeakMask.map((v) => (v ? 0 : 1)),
    2,
  );
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
  const regions: { from: number; to: number }[] = [];
  const mask = record.truthPeakMask;
  for (let i = 0; i < mask.length; i++) {
    if (!mask[i]) continue;
    let j = i;
    while (j + 1 < mask.length && mask[j + 1]) j++;
    regions.push({ from: i, to: j });
    i = j;
  }
  return regions;
}

function scaled(x: Float64Array, f: number): Float64Array {
  return x.map((v) => v * f);
}

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

  // Tune the parametrized baselines per input level on the validation samples (energy SNR
  // against the truth); the scored samples never steer a parameter.
  const tuned: Tuned[] = Array.from({ length: K1 }, () => structuredClone(DEFAULT_TUNED));
  if (tunable.length > 0 && nVal > 0) {
    const validation = Array.from({ length: Math.min(nVal, MAX_TUNING_SAMPLES) }, (_, i) =>
      prepare(ds.sample(i), hzPerPoint, options),
    );
    for (let k = 0; k < K1; k++) {
      tuned[k] = tuneBaselines(
        validation.map((p) => ({ x: p.pre.spectra[k]!, sigma: p.pre.sigmas[k]! })),
        (y, i) => computeEnergySnr(scaled(y, validation[i]!.toTruth), validation[i]!.record.truth),
        tunable,
      );
    }
  }

  const names = [...methods, ...Object.keys(options.extraMethods ?? {})];
  const collected: Record<string, Metrics[][]> = Object.fromEntries(
    names.map((name) => [name, Array.from({ length: K1 }, () => [] as Metrics[])]),
  );
  const gains: Record<string, number[][]> = Object.fromEntries(
    names.map((name) => [name, Array.from({ length: K1 }, () => [] as number[])]),
  );
  const inputSnr: number[][] = Array.from({ length: K1 }, () => []);
  const alignErr: number[][] = Array.from({ length: K1 }, () => []);
  const scaleErr: number[][] = Array.from({ length: K1 }, () => []);
  const tHat: number[] = [];
  for (let i = nVal; i < n; i++) {
    const p = prepare(ds.sample(i), hzPerPoint, options);
    const { pre, record, toTruth } = p;
    const levels = record.meta.levels;
    const cK = levels[K1 - 1]!.scale;
    for (let k = 0; k < K1; k++) {
      alignErr[k]!.push(Math.abs(pre.shifts[k]! - levels[k]!.shift));
      const trueScale = cK / levels[k]!.scale;
      scaleErr[k]!.push(Math.abs(pre.scales[k]! - trueScale) / trueScale);
      inputSnr[k]!.push(
        peakSnr(scaled(pre.spectra[k]!, toTruth), p.contexts[k]!.peakMask, p.contexts[k]!.baselineMask),
      );
    }
    tHat.push(pre.tHat);
    for (const name of names) {
      for (let k = 0; k < K1; k++) {
        if ((STACK_METHODS.has(name) || options.stackMethods?.includes(name)) && k > 0) break;
        const input = pre.spectra[k]!;
        let out: Float64Array;
        switch (name) {
          case 'wavelet':
            out = waveletBaseline(input, options.wavelet ?? {});
            break;
          case 'raw':
          case 'savgol':
          case 'matched':
          case 'tv':
          case 'cadzow':
            out = applyBaseline(name, input, pre.sigmas[k]!, tuned[k]!);
            break;
          case 'fusion':
            out = inverseVarianceFusion(pre.spectra, pre.sigmas);
            break;
          case 'pseudo_gt':
            out = pre.pseudoTruth;
            break;
          default:
            out = options.extraMethods![name]!(input, pre, k);
        }
        const y = scaled(out, toTruth);
        const metrics = computeMetrics(y, p.contexts[k]!);
        collected[name]![k]!.push(metrics);
        gains[name]![k]!.push(20 * Math.log10(metrics.peak_snr / inputSnr[k]![inputSnr[k]!.length - 1]!));
      }
    }
    options.onProgress?.(i - nVal + 1, n - nVal);
  }
  const mean = (v: number[]): number => {
    const f = v.filter(Number.isFinite);
    return f.length ? f.reduce((a, b) => a + b, 0) / f.length : NaN;
  };
  const perLevel: Record<string, MethodMetrics[]> = {};
  const summary: Record<string, MethodMetrics> = {};
  for (const name of names) {
    perLevel[name] = collected[name]!.filter((l) => l.length > 0).map((list, k) => ({
      ...averageMetrics(list),
      snr_gain_db: mean(gains[name]![k]!),
    }));
    summary[name] = perLevel[name]![0]!;
  }
  const tMean = mean(tHat);
  return {
    dataset: { dir: ds.dir, samples: m.samples, levels: K1, points: m.points, ratio: m.ratio },
    evaluatedSamples: n - nVal,
    validationSamples: nVal,
    methods: summary,
    perLevel,
    inputPeakSnr: inputSnr.map(mean),
    tuned: {
      savgol: tuned.map((t) => t.savgol),
      tv: tuned.map((t) => t.tv),
      cadzow: tuned.map((t) => t.cadzow),
    },
    pipeline: {
      alignment_error_points: alignErr.map(mean),
      scale_rel_error: scaleErr.map(mean),
      t_hat: tMean,
      t_abs_error: mean(tHat.map((t) => Math.abs(t - m.ratio))),
      seconds: (Date.now() - t0) / 1000,
    },
  };
}

function computeEnergySnr(y: ArrayLike<number>, s: ArrayLike<number>): number {
  let es = 0;
  let ee = 0;
  for (let i = 0; i < s.length; i++) {
    es += s[i]! * s[i]!;
    ee += (y[i]! - s[i]!) ** 2;
  }
  return 10 * Math.log10(es / ee);
}
