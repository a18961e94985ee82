// The preprocessing of seed section 2 on real experiments of one sample: read every file,
// process FIDs identically (same size, apodization, phase source) onto one ppm axis, optionally
// crop a ppm window, and run the pipeline (alignment, rescaling, masks, noise, T, pseudo truth).
import { readNmr } from './io/load.js';
import { NmrFormatError } from './io/errors.js';
import { processFid, type Apodization } from './process.js';
import { nextPowerOfTwo } from './fft.js';
import { preprocessStack, type PreprocessOptions, type PreprocessResult } from './pipeline/preprocess.js';
import type { Spectrum } from './types.js';
import { shiftSignal } from './pipeline/shift.js';

export interface RealStackOptions {
  /** Spectrum size for FIDs (default: twice the largest FID length, rounded to a power of two). */
  size?: number;
  apodization?: Apodization;
  phase?: 'params' | 'auto';
  /** Keep only this ppm window (low, high). */
  ppmRange?: [number, number];
  /**
   * 'ppm' (default) resamples every spectrum onto the first one's ppm axis; 'index' keeps the
   * points as they are (when the referencing of the files disagrees but the carrier is the same).
   */
  axis?: 'ppm' | 'index';
  /** For pseudo-2D data, which row of each file (default 0). */
  row?: number;
  preprocess?: PreprocessOptions;
}

export interface RealStack {
  spectra: Float64Array[];
  ppmFirst: number;
  ppmLast: number;
  refMHz: number;
  sources: string[];
  result: PreprocessResult;
}

/** Reads and processes the experiments, ordered from the lowest to the highest SNR. */
export function loadSpectra(paths: string[], options: RealStackOptions = {}): Spectrum[] {
  const data = paths.map((p) => readNmr(p));
  const fidLength = Math.max(
    0,
    ...data.map((d) => (d.kind === 'fid' ? d.fid.re.length : d.kind === 'fids' ? d.fids[0]!.re.length : 0)),
  );
  const size = options.size ?? (fidLength > 0 ? 2 * nextPowerOfTwo(fidLength) : 0);
  return data.map((d, i) => {
    if (d.kind === 'spectrum') return d.spectrum;
    const fid = d.kind === 'fid' ? d.fid : d.fids[options.row ?? 0];
    if (!fid) throw new NmrFormatError(paths[i]!, 'row', `no row ${options.row} in this pseudo-2D data set`);
    const processOptions: Parameters<typeof processFid>[1] = { size, phase: options.phase ?? 'params' };
    if (options.apodization) processOptions.apodization = options.apodization;
    return processFid(fid, processOptions);
  });
}

export function realStack(paths: string[], options: RealStackOptions = {}): RealStack {
  if (paths.length < 2) throw new RangeError('a multi-SNR stack needs at least two experiments');
  const spectra = loadSpectra(paths, options);
  const first = spectra[0]!;
  const n = first.real.length;
  const step = (first.ppmFirst - first.ppmLast) / (n - 1);
  for (const s of spectra) {
    if (s.real.length !== n) {
      throw new NmrFormatError(
        s.source,
        'size',
        `${s.real.length} points, but ${first.source} has ${n}`,
        'process all experiments to the same size (--size)',
      );
    }
    const ownStep = (s.ppmFirst - s.ppmLast) / (n - 1);
    if (Math.abs(ownStep / step - 1) > 1e-3 || Math.abs(s.ppmFirst - first.ppmFirst) > 0.05 * n * step) {
      throw new NmrFormatError(
        s.source,
        'ppm axis',
        `${s.ppmFirst}..${s.ppmLast} ppm does not match ${first.source} (${first.ppmFirst}..${first.ppmLast})`,
        'the experiments need the same spectral window',
      );
    }
  }
  // Different carriers (O1) or referencing move the axis by some points: resample every spectrum
  // onto the first one's axis (a band-limited fractional shift) before the pipeline aligns them.
  const onAxis = spectra.map((s) =>
    options.axis === 'index'
      ? s.real
      : s === first
        ? s.real
        : shiftSignal(s.real, (first.ppmFirst - s.ppmFirst) / step),
  );
  let lo = 0;
  let hi = n - 1;
  if (options.ppmRange) {
    const [a, b] = options.ppmRange;
    lo = Math.max(0, Math.ceil((first.ppmFirst - Math.max(a, b)) / step));
    hi = Math.min(n - 1, Math.floor((first.ppmFirst - Math.min(a, b)) / step));
    if (hi - lo < 64)
      throw new RangeError(`ppm window ${a}..${b} keeps only ${Math.max(0, hi - lo + 1)} points`);
  }
  const cropped = onAxis.map((x) => Float64Array.from(x.subarray(lo, hi + 1)));
  return {
    spectra: cropped,
    ppmFirst: first.ppmFirst - lo * step,
    ppmLast: first.ppmFirst - hi * step,
    refMHz: first.refMHz,
    sources: spectra.map((s) => s.source),
    result: preprocessStack(cropped, options.preprocess ?? {}),
  };
}
