// Training samples: every sample of a multi-SNR data set is run once through the multi-SNR
// preprocessing (alignment to level K, rescaling in the peak mask, masks, sigmas, T, pseudo ground
// truth) and kept in memory as float32; batches are windows of B samples with level 0 and the drawn
// levels k > 0 of each sample side by side (each batch holds the same samples at several SNRs, for
// the consistency and T terms).
import { Tensor, tensor } from '../../torch/index.js';
import type { Rng } from '../../util/rng.js';
import { Dataset } from '../data/dataset.js';
import { preprocessStack, type PreprocessOptions } from '../pipeline/preprocess.js';
import { fusionWeights, weightedFusion } from '../pipeline/fusion.js';
import { baselineOfPeakMask } from '../pipeline/masks.js';
import type { DataConfig } from './config.js';
import { datasetRecord, type StackRecord } from './sources.js';

export interface PreparedSample {
  index: number;
  name: string;
  /** Aligned and rescaled spectra, [K+1][L], in level-K units divided by max |target|. */
  levels: Float32Array[];
  /** Supervised target of level 0 (pseudo ground truth: the fusion of the other levels). */
  target: Float32Array;
  /**
   * Target of each level k (index k): for the pseudo ground truth, the fusion of the other levels
   * (no experiment is ever fused into its own target); 'last' and 'truth' targets are shared.
   */
  targets: Float32Array[];
  peak: Float32Array;
  base: Float32Array;
  /** The simulator's clean spectrum in the same units (for validation scores). */
  truth: Float32Array | null;
  T: number;
  /** Noise sigma of level 0 relative to its largest |value| (the model's input domain). */
  relSigma0: number;
}

export function preprocessOptions(cfg: DataConfig): PreprocessOptions {
  return {
    rescale: cfg.rescale === 'none' ? false : cfg.rescale,
    align: cfg.localAlign ? { local: true } : {},
    fusion: { scheme: cfg.fusion.scheme, gamma: cfg.fusion.gamma, wMax: cfg.fusion.wMax },
  };
}

/** Preprocesses the given samples of a data set (the expensive step: done once per run). */
export function prepareSamples(ds: Dataset, indices: number[], cfg: DataConfig): PreparedSample[] {
  return prepareRecords(
    indices.map((i) => datasetRecord(ds, i)),
    cfg,
    indices,
  );
}

/** Runs the multi-SNR preprocessing on each record and builds its targets and masks. */
export function prepareRecords(
  records: StackRecord[],
  cfg: DataConfig,
  indices?: number[],
): PreparedSample[] {
  const options = preprocessOptions(cfg);
  return records.map((record, n) => {
    const pre = preprocessStack(record.spectra, options);
    const K = pre.spectra.length - 1;
    let targets: ArrayLike<number>[];
    if (cfg.target === 'last') targets = pre.spectra.map(() => pre.spectra[K]!);
    else if (cfg.target === 'truth') {
      if (!record.truth)
        throw new Error(`${record.name}: data.target "truth" needs simulated data with a ground truth`);
      const t = record.truth.map((v) => v * record.scaleK);
      targets = pre.spectra.map(() => t);
    } else {
      // Leave one out: level k is never part of its own target (it would teach the network a
      // share of the identity). With K = 0 there is nothing else to fuse.
      targets = pre.spectra.map((_, k) =>
        K > 0
          ? weightedFusion(pre.spectra, fusionWeights(pre.snrs, { ...options.fusion, exclude: [k] }))
          : pre.pseudoTruth,
      );
    }
    const target = targets[0]!;
    let T: number;
    if (typeof cfg.T === 'number') T = cfg.T;
    else if (cfg.T === 'estimate' && Number.isFinite(pre.tHat) && pre.tHat > 1) T = pre.tHat;
    else if (record.ratio !== null) T = record.ratio;
    else
      throw new Error(
        `${record.name}: T could not be estimated from the noise (${pre.tHat}); set data.T to a number > 1`,
      );
    // One factor per sample puts the target's largest value at 1, so that loss values (and the
    // balance between the terms) do not depend on each spectrum's arbitrary normalization.
    let max = 0;
    for (let j = 0; j < target.length; j++) max = Math.max(max, Math.abs(target[j]!));
    const unit = max > 0 ? 1 / max : 1;
    const f32 = (x: ArrayLike<number>, factor = unit): Float32Array =>
      Float32Array.from(x, (v) => v * factor);
    let max0 = 0;
    for (const v of pre.spectra[0]!) max0 = Math.max(max0, Math.abs(v));
    return {
      index: indices?.[n] ?? n,
      name: record.name,
      levels: pre.spectra.map((x) => f32(x)),
      target: f32(target),
      targets: targets.map((t) => f32(t)),
      ...masks(record.truthPeakMask, pre.masks, cfg.peakMask),
      truth: record.truth ? f32(record.truth, record.scaleK * unit) : null,
      T,
      relSigma0: max0 > 0 ? pre.sigmas[0]! / max0 : NaN,
    };
  });
}

/** The loss masks: the pipeline's estimate, or the true peak mask and its eroded complement. */
function masks(
  truthPeak: Uint8Array | null,
  estimate: { peak: ArrayLike<number>; baseline: ArrayLike<number> },
  kind: DataConfig['peakMask'],
): { peak: Float32Array; base: Float32Array } {
  if (kind === 'estimate')
    return { peak: Float32Array.from(estimate.peak), base: Float32Array.from(estimate.baseline) };
  if (!truthPeak || truthPeak.length === 0)
    throw new Error('data.peakMask "truth": the data set has no true peak mask');
  return {
    peak: Float32Array.from(truthPeak),
    base: Float32Array.from(baselineOfPeakMask(truthPeak)),
  };
}

export interface Batch {
  /** Inputs [B, G, L]: group 0 is level 0, then the drawn levels in increasing k. */
  x: Tensor;
  target: Tensor;
  /** Targets of the groups 1..G-1 [B, G-1, L] (each level's own leave-one-out target). */
  targetOthers: Tensor | null;
  peak: Tensor;
  base: Tensor;
  T: Tensor;
  levels: number[];
}

/**
 * Draws which levels k > 0 join level 0 in a batch: 'all' = every level >= minLevel, or a count
 * in [lo, hi] drawn uniformly, the levels drawn without replacement from [max(1, minLevel), K].
 */
export function drawLevels(K: number, extra: [number, number] | 'all', minLevel: number, rng: Rng): number[] {
  const pool: number[] = [];
  for (let k = Math.max(1, minLevel); k <= K; k++) pool.push(k);
  if (extra === 'all') return [0, ...pool];
  const count = Math.min(pool.length, extra[0] + rng.int(extra[1] - extra[0] + 1));
  const chosen = rng.shuffle(pool.slice()).slice(0, count);
  return [0, ...chosen.sort((a, b) => a - b)];
}

/** Builds a batch tensor set from samples, one window [start, start + length) per sample. */
export function makeBatch(
  samples: PreparedSample[],
  levels: number[],
  starts: number[],
  length: number,
): Batch {
  const B = samples.length;
  const G = levels.length;
  const x = new Float32Array(B * G * length);
  const target = new Float32Array(B * length);
  const others = G > 1 ? new Float32Array(B * (G - 1) * length) : null;
  const peak = new Float32Array(B * length);
  const base = new Float32Array(B * length);
  samples.forEach((s, b) => {
    const from = starts[b]!;
    const to = from + length;
    levels.forEach((k, g) => x.set(s.levels[k]!.subarray(from, to), (b * G + g) * length));
    target.set(s.target.subarray(from, to), b * length);
    if (others)
      levels
        .slice(1)
        .forEach((k, g) => others.set(s.targets[k]!.subarray(from, to), (b * (G - 1) + g) * length));
    peak.set(s.peak.subarray(from, to), b * length);
    base.set(s.base.subarray(from, to), b * length);
  });
  return {
    x: tensor(x, { shape: [B, G, length] }),
    target: tensor(target, { shape: [B, length] }),
    targetOthers: others ? tensor(others, { shape: [B, G - 1, length] }) : null,
    peak: tensor(peak, { shape: [B, length] }),
    base: tensor(base, { shape: [B, length] }),
    T: tensor(Float32Array.from(samples, (s) => s.T)),
    levels,
  };
}

/** Opens a data set with an error that says how to make one. */
export function openDataset(dir: string): Dataset {
  return new Dataset(dir);
}
