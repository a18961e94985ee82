// What a model was trained on, stored in its checkpoint, and the check of a new input against
// it: a denoiser trained on one noise level and ppm window has no business inventing or erasing
// peaks far outside them, so `tailor nmr denoise` warns when an input's relative noise or ppm
// range lies outside, and refuses (unless forced) when it lies far outside.
import { peakBaselineMasks } from '../pipeline/masks.js';
import { robustSigma } from '../pipeline/noise.js';
import { percentile } from '../stats.js';

/** How the training experiments were processed (FIDs), so that a new scan can be processed alike. */
export interface ProcessingDomain {
  size?: number;
  lbHz?: number;
  phase?: 'params' | 'auto';
  ppm?: [number, number];
}

/**
 * What a denoiser was trained on (processing, noise level relative to the signal, ppm range), stored with its checkpoint so that {@link checkDomain} can flag inputs outside it.
 */
export interface TrainingDomain {
  processing?: ProcessingDomain;
  /** Noise sigma of the input level over its largest |value|: 5th and 95th percentile, and extremes. */
  relSigma: { p5: number; p95: number; min: number; max: number };
  /** Union of the training spectra's ppm windows [low, high]. */
  ppm: [number, number];
  points: [number, number];
  samples: number;
  levels: number;
}

/** Relative noise of one spectrum: robust sigma in its own baseline mask over max |x|. */
export function relativeNoise(x: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < x.length; i++) max = Math.max(max, Math.abs(x[i]!));
  if (!(max > 0)) return NaN;
  try {
    const masks = peakBaselineMasks([x]);
    return robustSigma(x, masks.baseline) / max;
  } catch {
    return NaN;
  }
}

export function trainingDomain(
  records: { ppmFirst: number; ppmLast: number; spectra: ArrayLike<number>[] }[],
  prepared: { relSigma0: number; target: ArrayLike<number> }[],
  processing?: ProcessingDomain,
): TrainingDomain {
  const rel = prepared.map((p) => p.relSigma0).filter((v) => Number.isFinite(v) && v > 0);
  const lows = records.map((r) => Math.min(r.ppmFirst, r.ppmLast));
  const highs = records.map((r) => Math.max(r.ppmFirst, r.ppmLast));
  const lengths = prepared.map((p) => p.target.length);
  return {
    relSigma: rel.length
      ? {
          p5: percentile(rel, 5),
          p95: percentile(rel, 95),
          min: Math.min(...rel),
          max: Math.max(...rel),
        }
      : { p5: NaN, p95: NaN, min: NaN, max: NaN },
    ppm: [Math.min(...lows), Math.max(...highs)],
    points: [Math.min(...lengths), Math.max(...lengths)],
    samples: records.length,
    levels: records[0]?.spectra.length ?? 0,
    ...(processing ? { processing } : {}),
  };
}

/**
 * What {@link checkDomain} returns: the verdict ('inside', 'outside', 'far'), the input's relative
 * noise and the messages.
 */
export interface DomainCheck {
  /** 'far' = refuse unless forced. */
  verdict: 'inside' | 'outside' | 'far';
  relSigma: number;
  messages: string[];
}

/** Factor beyond the training range (in relative noise) that counts as outside, and as far outside. */
export const NOISE_OUTSIDE = 2;
/**
 * Factor beyond the training range of relative noise from which an input counts as far outside (NOISE_OUTSIDE = 2 counts as outside).
 */
export const NOISE_FAR = 8;
/**
 * Relative noise above which no line stands clearly above the noise (largest value < 5 sigma):
 * a pure-noise input's maximum is itself a few sigma, so the ratio to the training range
 * saturates on the noisy side and cannot flag such inputs by itself.
 */
export const NO_SIGNAL = 0.2;

/**
 * Compares an input spectrum with a model's {@link TrainingDomain}: its relative noise and its ppm
 * range. Never throws: returns a verdict ('inside', 'outside', or 'far': refuse unless forced) and
 * messages for the CLI and callers to print.
 */
export function checkDomain(
  domain: TrainingDomain,
  input: { real: ArrayLike<number>; ppmFirst: number; ppmLast: number },
): DomainCheck {
  const messages: string[] = [];
  let verdict: DomainCheck['verdict'] = 'inside';
  const worse = (v: DomainCheck['verdict']): void => {
    if (v === 'far' || (v === 'outside' && verdict === 'inside')) verdict = v;
  };
  const rel = relativeNoise(input.real);
  const { min, max } = domain.relSigma;
  if (Number.isFinite(rel) && Number.isFinite(min)) {
    const factor = rel < min ? min / rel : rel > max ? rel / max : 1;
    const side = rel < min ? 'cleaner' : 'noisier';
    if (rel > NO_SIGNAL && rel > max) {
      worse('far');
      messages.push(
        `estimated noise ${rel.toExponential(2)} of the maximum: no line stands 5 sigma above the noise (training inputs ${min.toExponential(2)}..${max.toExponential(2)})`,
      );
    } else if (factor > NOISE_FAR) {
      worse('far');
      messages.push(
        `estimated noise ${rel.toExponential(2)} of the maximum is ${factor.toFixed(1)}x ${side} than any training input (${min.toExponential(2)}..${max.toExponential(2)})`,
      );
    } else if (factor > NOISE_OUTSIDE) {
      worse('outside');
      messages.push(
        `estimated noise ${rel.toExponential(2)} of the maximum is ${factor.toFixed(1)}x ${side} than the training inputs (${min.toExponential(2)}..${max.toExponential(2)})`,
      );
    }
  }
  const lo = Math.min(input.ppmFirst, input.ppmLast);
  const hi = Math.max(input.ppmFirst, input.ppmLast);
  const [tlo, thi] = domain.ppm;
  const overlap = Math.max(0, Math.min(hi, thi) - Math.max(lo, tlo));
  const width = hi - lo;
  if (width > 0 && overlap / width < 0.5) {
    worse('far');
    messages.push(
      `ppm range ${lo.toFixed(2)}..${hi.toFixed(2)} lies mostly outside the training range ${tlo.toFixed(2)}..${thi.toFixed(2)}`,
    );
  } else if (width > 0 && overlap / width < 0.9) {
    worse('outside');
    messages.push(
      `ppm range ${lo.toFixed(2)}..${hi.toFixed(2)} extends beyond the training range ${tlo.toFixed(2)}..${thi.toFixed(2)}`,
    );
  }
  return { verdict, relSigma: rel, messages };
}
