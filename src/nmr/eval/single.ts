// The single-input baselines of the yardstick: each sees only the one spectrum it denoises (the
// deployment situation: one fast scan x0 in, nothing else). Savitzky-Golay, total variation and
// Cadzow have a parameter that is tuned on validation samples (never on the scored ones); the
// matched filter reads its width from the spectrum and the wavelet shrinkage its threshold from the
// noise.
import { matchedFilter, SAVGOL_GRID, savgolBaseline, waveletBaseline } from './baselines.js';
import { tvDenoise } from './tv.js';
import { cadzowDenoise } from './cadzow.js';

/**
 * The baselines that denoise one spectrum on its own: 'raw' (none), Savitzky-Golay, matched filter, wavelet, total variation, Cadzow.
 */
export const SINGLE_BASELINES = ['raw', 'savgol', 'matched', 'wavelet', 'tv', 'cadzow'] as const;
export type SingleBaseline = (typeof SINGLE_BASELINES)[number];

/** Whether `name` is one of {@link SINGLE_BASELINES}. */
export function isSingleBaseline(name: string): name is SingleBaseline {
  return (SINGLE_BASELINES as readonly string[]).includes(name);
}

/** The parameter grid searched on validation data, per tunable baseline. */
export const TUNING_GRID = {
  savgol: SAVGOL_GRID.map((g) => ({ window: g.window, order: g.order })),
  /** lambda = factor * sigma of the input (its robust noise). */
  tv: [0.5, 1, 1.5, 2, 3, 4, 6].map((factor) => ({ factor })),
  cadzow: [2, 4, 6, 8].map((rank) => ({ rank, window: 64 })),
} as const;

/** The tunable settings of the single-spectrum baselines (chosen on validation samples). */
export type Tuned = {
  savgol: { window: number; order: number };
  tv: { factor: number };
  cadzow: { rank: number; window: number };
};

/** The baseline settings used when nothing is tuned. */
export const DEFAULT_TUNED: Tuned = {
  savgol: { window: 11, order: 2 },
  tv: { factor: 2 },
  cadzow: { rank: 4, window: 64 },
};

/** Applies one baseline; sigma is the input's robust noise (for TV's lambda). */
export function applyBaseline(
  name: SingleBaseline,
  x: Float64Array,
  sigma: number,
  tuned: Tuned,
): Float64Array {
  switch (name) {
    case 'raw':
      return x;
    case 'savgol':
      return savgolBaseline(x, tuned.savgol.window, tuned.savgol.order);
    case 'matched':
      return matchedFilter(x).output;
    case 'wavelet':
      return waveletBaseline(x);
    case 'tv':
      return tvDenoise(x, tuned.tv.factor * sigma);
    case 'cadzow':
      return cadzowDenoise(x, { rank: tuned.cadzow.rank, window: tuned.cadzow.window });
  }
}

/**
 * Picks each tunable baseline's parameter that maximizes the mean score over the validation
 * inputs. score(y, i) rates the output y for validation input i (higher is better).
 */
export function tuneBaselines(
  inputs: { x: Float64Array; sigma: number }[],
  score: (y: Float64Array, i: number) => number,
  which: SingleBaseline[] = [...SINGLE_BASELINES],
): Tuned {
  const tuned: Tuned = structuredClone(DEFAULT_TUNED);
  if (inputs.length === 0) return tuned;
  const pick = <T>(grid: readonly T[], run: (p: T, x: Float64Array, sigma: number) => Float64Array): T => {
    let best = grid[0] as T;
    let bestScore = -Infinity;
    for (const p of grid) {
      let total = 0;
      inputs.forEach((inp, i) => (total += score(run(p, inp.x, inp.sigma), i)));
      if (total > bestScore) {
        bestScore = total;
        best = p;
      }
    }
    return best;
  };
  if (which.includes('savgol'))
    tuned.savgol = pick(TUNING_GRID.savgol, (p, x) => savgolBaseline(x, p.window, p.order));
  if (which.includes('tv')) tuned.tv = pick(TUNING_GRID.tv, (p, x, s) => tvDenoise(x, p.factor * s));
  if (which.includes('cadzow')) tuned.cadzow = pick(TUNING_GRID.cadzow, (p, x) => cadzowDenoise(x, p));
  return tuned;
}
