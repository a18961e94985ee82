// The vocabulary of the multi-SNR simulator: its options and the named line families, the
// spectrum axis they define, and the ground-truth records a simulated sample carries. Apart from
// simulate.ts (drawing and synthesizing the signals) so that the data set code reads the truth
// records without the simulator; simulate.ts re-exports them.

/**
 * How {@link writeSyntheticDataset} simulates samples: points, number of levels, ratio between
 * levels, spectrometer frequency, the line families.
 */
export interface SimulationOptions {
  points: number;
  /** Number of experiments K + 1 (>= 2). */
  levels: number;
  ratio: number;
  sfMHz?: number;
  /** Spectral width in ppm (default 12, from -1 to 11 ppm). */
  swPpm?: number;
  carrierPpm?: number;
  /** Peak SNR (tallest true line over sigma_0) of the lowest level is drawn log-uniformly here. */
  snrRange?: [number, number];
  multiplets?: [number, number];
  /** Largest |global shift| of an experiment, in points (default 1.5). */
  maxShiftPoints?: number;
  /** Fraction of multiplets with a local shift per experiment, and the largest such shift in Hz. */
  localShiftFraction?: number;
  maxLocalShiftHz?: number;
  linewidthJitter?: number;
  phaseJitterDeg?: number;
  amplitudeJitter?: number;
  /** FWHM range of the multiplet lines in Hz (default 0.5..2). */
  fwhmHz?: [number, number];
  /** Gaussian share of the Voigt lines (default 0..0.3). */
  gaussFraction?: [number, number];
  /** Number of broad peaks (default 0..2) and their FWHM in Hz (default 15..50). */
  broadPeaks?: [number, number];
  broadFwhmHz?: [number, number];
  /** Number of impurity singlets (default 1..4) and their area relative to a typical multiplet (0.005..0.05). */
  impurities?: [number, number];
  impurityLevel?: [number, number];
  /** Multiplies the baseline drift (default 1). */
  driftScale?: number;
}

/**
 * Families of spectra for robustness checks: a model trained on 'default' is scored on the others
 * (other line shapes, broad lines, strong baseline drift, phase jitter, many impurities).
 */
export const FAMILIES: Record<string, Partial<SimulationOptions>> = {
  default: {},
  voigt: { gaussFraction: [0.6, 1] },
  broad: { fwhmHz: [3, 8], broadPeaks: [2, 5] },
  drift: { driftScale: 10 },
  phase: { phaseJitterDeg: 8 },
  impurities: { impurities: [6, 12], impurityLevel: [0.01, 0.1] },
};

export interface TrueLine {
  multiplet: number;
  ppm: number;
  /** Fractional index on the spectrum axis. */
  index: number;
  /** Integral over the spectrum (sum of points) of the line in the clean spectrum. */
  area: number;
  fwhmHz: number;
}

export interface TrueMultiplet {
  id: number;
  kind: 'multiplet' | 'broad' | 'impurity' | 'reference';
  ppm: number;
  index: number;
  couplingsHz: { j: number; spins: number }[];
  area: number;
  fwhmHz: number;
  /** Index range (inclusive) used for its integral. */
  from: number;
  to: number;
}

export interface LevelTruth {
  /** Global shift of this experiment relative to the ground truth frame (points). */
  shift: number;
  /** Multiplet id -> local shift in Hz. */
  localShiftsHz: Record<number, number>;
  phaseDeg: number;
  linewidthFactor: number;
  /** Noise sigma of the spectrum before normalization (truth units). */
  sigma: number;
  /** Normalization: the stored spectrum is scale * (signal + noise). */
  scale: number;
  normalization: 'max' | 'area' | 'random';
}

export interface SimulatedSample {
  /** Spectra of the experiments, k = 0 (lowest SNR) .. K. */
  spectra: Float64Array[];
  truth: Float64Array;
  /** Points where the clean signal (without drift) exceeds sigma_K, dilated by 2 points. */
  truthPeakMask: Uint8Array;
  levels: LevelTruth[];
  multiplets: TrueMultiplet[];
  lines: TrueLine[];
  snr0: number;
}

export interface Axis {
  ppmFirst: number;
  ppmLast: number;
  sfMHz: number;
  swHz: number;
  carrierPpm: number;
}

export function simulationAxis(options: SimulationOptions): Axis {
  const sfMHz = options.sfMHz ?? 400;
  const swPpm = options.swPpm ?? 12;
  const carrierPpm = options.carrierPpm ?? 5;
  const n = options.points;
  const ppmFirst = carrierPpm + swPpm / 2;
  return { sfMHz, swHz: swPpm * sfMHz, carrierPpm, ppmFirst, ppmLast: ppmFirst - (swPpm * (n - 1)) / n };
}
