// Training samples: every sample of a multi-SNR data set is run once through the seed's
// preprocessing (alignment to level K, rescaling in the peak mask, masks, sigmas, T, pseudo ground
// truth) and kept in memory as float32; batches are windows of B samples with level 0 and the
// drawn levels k > 0 of each sample side by side (the seed's "same sample, several SNRs" batches).
import { Tensor, tensor } from '../../torch/index.js';
import type { Rng } from '../../torch/rng.js';
import { Dataset } from '../data/dataset.js';
import { preprocessStack, type PreprocessOptions } from '../pipeline/preprocess.js';
import { fusionWeights, weightedFusion } from '../pipeline/fusion.js';
import { erode } from '../pipeline/masks.js';
import type { DataConfig } from './config.js';

export interface PreparedSample {
  index: number;
  /** Aligned and rescaled spectra, [K+1][L], in level-K units divided by max |target|. */
  levels: Float32Array[];
  target: Float32Array;
  peak: Float32Array;
  base: Float32Array;
  /** The simulator's clean spectrum in the same units (for validation scores). */
  truth: Float32Array | null;
  T: number;
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
  const options = preprocessOptions(cfg);
  return indices.map((i) => {
    const record = ds.sample(i);
    const pre = preprocessStack(record.spectra, options);
    const K = pre.spectra.length - 1;
    let target: ArrayLike<number>;
    if (cfg.target === 'last') target = pre.spectra[K]!;
    else if (cfg.target === 'truth') {
      const s = record.meta.levels[K]!.scale;
      target = record.truth.map((v) => v * s);
    } else {
      // Level 0 is the input under training: leave it out of its own target (it would teach the
      // network a share of the identity). With K = 0 there is nothing else to fuse.
      const weights = K > 0 ? fusionWeights(pre.snrs, { ...options.fusion, exclude: [0] }) : pre.weights;
      target = weightedFusion(pre.spectra, weights);
    }
    let T: number;
    if (typeof cfg.T === 'number') T = cfg.T;
    else if (cfg.T === 'estimate' && Number.isFinite(pre.tHat) && pre.tHat > 1) T = pre.tHat;
    else T = ds.manifest.ratio;
    const scaleK = record.meta.levels[K]?.scale ?? 1;
    // One factor per sample puts the target's largest value at 1, so that loss values (and the
    // balance between the terms) do not depend on each spectrum's arbitrary normalization.
    let max = 0;
    for (let j = 0; j < target.length; j++) max = Math.max(max, Math.abs(target[j]!));
    const unit = max > 0 ? 1 / max : 1;
    const f32 = (x: ArrayLike<number>, factor = unit): Float32Array =>
      Float32Array.from(x, (v) => v * factor);
    return {
      index: i,
      levels: pre.spectra.map((x) => f32(x)),
      target: f32(target),
      ...masks(record.truthPeakMask, pre.masks, cfg.peakMask),
      truth: record.truth.length ? f32(record.truth, scaleK * unit) : null,
      T,
    };
  });
}

/** The loss masks: the pipeline's estimate, or the true peak mask and its eroded complement. */
function masks(
  truthPeak: Uint8Array,
  estimate: { peak: ArrayLike<number>; baseline: ArrayLike<number> },
  kind: DataConfig['peakMask'],
): { peak: Float32Array; base: Float32Array } {
  if (kind === 'estimate')
    return { peak: Float32Array.from(estimate.peak), base: Float32Array.from(estimate.baseline) };
  if (truthPeak.length === 0) throw new Error('data.peakMask "truth": the data set has no true peak mask');
  return {
    peak: Float32Array.from(truthPeak),
    base: Float32Array.from(
      erode(
        truthPeak.map((v) => (v ? 0 : 1)),
        2,
      ),
    ),
  };
}

export interface Batch {
  /** Inputs [B, G, L]: group 0 is level 0, then the drawn levels in increasing k. */
  x: Tensor;
  target: Tensor;
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
  const peak = new Float32Array(B * length);
  const base = new Float32Array(B * length);
  samples.forEach((s, b) => {
    const from = starts[b]!;
    const to = from + length;
    levels.forEach((k, g) => x.set(s.levels[k]!.subarray(from, to), (b * G + g) * length));
    target.set(s.target.subarray(from, to), b * length);
    peak.set(s.peak.subarray(from, to), b * length);
    base.set(s.base.subarray(from, to), b * length);
  });
  return {
    x: tensor(x, { shape: [B, G, length] }),
    target: tensor(target, { shape: [B, length] }),
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
