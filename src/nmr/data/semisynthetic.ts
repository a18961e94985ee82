// Semi-synthetic multi-SNR samples from real high-SNR FIDs: complex Gaussian noise is added in
// the time domain with sigma_k = sigma_K * T^(K-k) (so its colouring after apodization and zero
// filling is that of real data), each noisy FID is processed exactly like the clean one (same
// apodization, size, group delay and phase), and the clean processed spectrum is the reference.
// The clean spectrum still contains the original measurement noise; its level is recorded.
import { Rng } from '../../util/rng.js';
import { processFid, type Apodization } from '../process.js';
import { robustStd } from '../stats.js';
import type { Fid } from '../types.js';
import type { LevelTruth, SimulatedSample } from './simulate-types.js';

/**
 * How {@link writeSemiSyntheticDataset} makes samples from a measured reference spectrum: points,
 * levels, ratio between levels, SNR range.
 */
export interface SemiSyntheticOptions {
  points: number;
  levels: number;
  ratio: number;
  /** Peak SNR of level 0 (tallest point over sigma_0), drawn log-uniformly. */
  snrRange?: [number, number];
  apodization?: Apodization;
  /** Largest |global shift| (points) applied to levels k < K as a frequency offset (default 0). */
  maxShiftPoints?: number;
}

export interface CleanReference {
  fid: Fid;
  spectrum: Float64Array;
  phase: { p0: number; p1: number };
  ppmFirst: number;
  ppmLast: number;
  /** Spectrum noise of the clean data itself (robust, from the outer 10 % at both ends). */
  ownSigma: number;
  height: number;
}

/** Processes a clean FID once (phase from its parameters or automatic) to fix the processing. */
export function prepareReference(
  fid: Fid,
  options: Pick<SemiSyntheticOptions, 'points' | 'apodization'>,
): CleanReference {
  const apodization = options.apodization ?? { kind: 'exponential', lbHz: 0.3 };
  const s = processFid(fid, { size: options.points, apodization, phase: 'params' });
  const n = s.real.length;
  const edge = Math.max(16, Math.floor(n / 10));
  const ends = Float64Array.from([...s.real.subarray(0, edge), ...s.real.subarray(n - edge)]);
  let height = 0;
  for (const v of s.real) height = Math.max(height, v);
  return {
    fid,
    spectrum: s.real,
    phase: s.phase,
    ppmFirst: s.ppmFirst,
    ppmLast: s.ppmLast,
    ownSigma: robustStd(ends),
    height,
  };
}

export function semiSyntheticSample(
  rng: Rng,
  ref: CleanReference,
  options: SemiSyntheticOptions,
): SimulatedSample {
  const K1 = options.levels;
  const n = options.points;
  const apodization = options.apodization ?? { kind: 'exponential', lbHz: 0.3 };
  const [lo, hi] = options.snrRange ?? [5, 50];
  const snr0 = Math.exp(Math.log(lo) + (Math.log(hi) - Math.log(lo)) * rng.uniform());
  // Calibrate: spectral sigma per unit time-domain sigma, measured on pure processed noise.
  const unit = noiseGain(ref.fid, n, apodization, ref.phase, rng);
  const sigma0 = ref.height / snr0;
  const spectra: Float64Array[] = [];
  const levels: LevelTruth[] = [];
  const td = ref.fid.re.length;
  const hzPerPoint = ref.fid.swHz / n;
  for (let k = 0; k < K1; k++) {
    const sigma = sigma0 / Math.pow(options.ratio, k);
    const sigmaTime = sigma / unit;
    const shift = k === K1 - 1 ? 0 : (2 * rng.uniform() - 1) * (options.maxShiftPoints ?? 0);
    const re = new Float64Array(td);
    const im = new Float64Array(td);
    const w = (2 * Math.PI * -shift * hzPerPoint) / ref.fid.swHz;
    for (let j = 0; j < td; j++) {
      const c = Math.cos(w * (j - ref.fid.groupDelay));
      const s = Math.sin(w * (j - ref.fid.groupDelay));
      const r = ref.fid.re[j]!;
      const i = ref.fid.im[j]!;
      re[j] = r * c - i * s + sigmaTime * rng.normal();
      im[j] = r * s + i * c + sigmaTime * rng.normal();
    }
    const x = processFid({ ...ref.fid, re, im }, { size: n, apodization, phase: ref.phase }).real;
    const scale = Math.exp(Math.log(0.1) + Math.log(100) * rng.uniform());
    for (let i = 0; i < n; i++) x[i]! *= scale;
    spectra.push(x);
    levels.push({
      shift,
      localShiftsHz: {},
      phaseDeg: 0,
      linewidthFactor: 1,
      sigma,
      scale,
      normalization: 'random',
    });
  }
  const sigmaK = levels[K1 - 1]!.sigma;
  const thr = Math.max(3 * ref.ownSigma, sigmaK);
  const truthPeakMask = new Uint8Array(n);
  for (let i = 0; i < n; i++)
    if (ref.spectrum[i]! > thr)
      for (let d = -2; d <= 2; d++) if (i + d >= 0 && i + d < n) truthPeakMask[i + d] = 1;
  return {
    spectra,
    truth: Float64Array.from(ref.spectrum),
    truthPeakMask,
    levels,
    multiplets: [],
    lines: [],
    snr0,
  };
}

/** Spectral noise sigma produced by unit time-domain noise under this processing. */
function noiseGain(
  fid: Fid,
  n: number,
  apodization: Apodization,
  phase: { p0: number; p1: number },
  rng: Rng,
): number {
  const td = fid.re.length;
  const re = new Float64Array(td);
  const im = new Float64Array(td);
  const probe = rng.fork();
  for (let j = 0; j < td; j++) {
    re[j] = probe.normal();
    im[j] = probe.normal();
  }
  const x = processFid({ ...fid, re, im }, { size: n, apodization, phase }).real;
  return robustStd(x);
}
