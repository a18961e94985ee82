// What a training loop needs per sample: the aligned and rescaled stack x_list [K+1, L], the peak
// and baseline masks, the pseudo ground truth s_hat (the SNR-weighted fusion of the levels; without
// the low-SNR input x^(0) when excludeInput is set), and, for synthetic data, the true spectrum in
// the same units. Everything is divided by one factor so that the network sees O(1) values; the
// factor is returned to map outputs back.
import { preprocessStack, type PreprocessOptions } from '../pipeline/preprocess.js';
import type { SampleRecord } from './dataset.js';

export interface TrainingExample {
  /** Aligned, rescaled, normalized spectra, level 0 (lowest SNR) first: [K+1][L]. */
  spectra: Float32Array[];
  peakMask: Float32Array;
  baselineMask: Float32Array;
  pseudoTruth: Float32Array;
  /** Ground truth in the same units (synthetic and semi-synthetic data). */
  truth?: Float32Array;
  /** Estimated noise sigma per level (same units), and the T estimate. */
  sigmas: number[];
  tHat: number;
  /** Multiply network outputs by this to return to the units of the stored level K spectrum. */
  scale: number;
}

export interface TrainingExampleOptions {
  preprocess?: PreprocessOptions;
  /** Leave the input level 0 out of the pseudo ground truth (default true). */
  excludeInput?: boolean;
}

export function trainingExample(record: SampleRecord, options: TrainingExampleOptions = {}): TrainingExample {
  const preprocess: PreprocessOptions = { ...options.preprocess };
  if (options.excludeInput ?? true) {
    preprocess.fusion = { ...preprocess.fusion, exclude: [...(preprocess.fusion?.exclude ?? []), 0] };
  }
  const pre = preprocessStack(record.spectra, preprocess);
  let max = 0;
  for (const v of pre.pseudoTruth) max = Math.max(max, Math.abs(v));
  const scale = max > 0 ? max : 1;
  const f32 = (x: ArrayLike<number>): Float32Array => Float32Array.from(x, (v) => v / scale);
  const K = record.spectra.length - 1;
  const example: TrainingExample = {
    spectra: pre.spectra.map(f32),
    peakMask: Float32Array.from(pre.masks.peak),
    baselineMask: Float32Array.from(pre.masks.baseline),
    pseudoTruth: f32(pre.pseudoTruth),
    sigmas: pre.sigmas.map((s) => s / scale),
    tHat: pre.tHat,
    scale,
  };
  // The stored truth is in truth units; level K (the reference of the rescaling) is scale_K * truth.
  const cK = record.meta.levels[K]?.scale;
  if (cK !== undefined) example.truth = f32(record.truth.map((v) => v * cK));
  return example;
}
