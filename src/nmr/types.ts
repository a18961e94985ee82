// Data shared by the readers, the processing and the pipeline.

/** A complex free induction decay (time-domain signal) with what is needed to process it. */
export interface Fid {
  re: Float64Array;
  im: Float64Array;
  /** Spectral width in Hz (= 1 / dwell time). */
  swHz: number;
  /** Frequency (MHz) that the ppm scale is referenced to (Bruker SF, or BF1 without processing). */
  refMHz: number;
  /** Chemical shift (ppm) at the carrier, i.e. at the centre of the spectrum. */
  carrierPpm: number;
  /** Digital-filter group delay in points (0 when the data have none or it was removed). */
  groupDelay: number;
  /**
   * Phase from the parameter files (degrees, in tailor's convention: TopSpin's, see applyPhase),
   * when the source gives one; a reader converts a vendor's own convention (VnmrJ's rp/lp).
   */
  phase?: { p0: number; p1: number };
  /** Where phase came from ('procs PHC0/PHC1', 'procpar rp/lp'), for reports. */
  phaseSource?: string;
  /**
   * Points the reader shifted the stored FID by before anything else (VnmrJ's lsfid): positive
   * drops that many leading points, negative puts that many zeros in front. Absent when unshifted.
   */
  leftShift?: number;
  /** Line broadening (Hz) the source's own processing used, if known. */
  lbHz?: number;
  nucleus?: string;
  /** Transients (scans) summed in this FID, when the source records them (Bruker NS, VnmrJ ct, Spinsolve nrScans). */
  scans?: number;
  /** Where the data came from (file path), for messages. */
  source: string;
}

/** A real 1D spectrum on a linear ppm axis; index 0 is the highest ppm (NMR convention). */
export interface Spectrum {
  real: Float64Array;
  imag?: Float64Array;
  /** ppm of the first and of the last point. */
  ppmFirst: number;
  ppmLast: number;
  /** Spectrometer frequency in MHz (to convert ppm to Hz); NaN when unknown. */
  refMHz: number;
  nucleus?: string;
  /** Transients (scans) behind the spectrum, when known (from its FID, summed over co-added files). */
  scans?: number;
  source: string;
}

/** What a reader returns: time-domain data, a processed spectrum, or a series of FIDs (pseudo-2D). */
export type NmrData =
  { kind: 'fid'; fid: Fid } | { kind: 'spectrum'; spectrum: Spectrum } | { kind: 'fids'; fids: Fid[] };

/** ppm value of every point. */
export function ppmAxis(s: Pick<Spectrum, 'ppmFirst' | 'ppmLast' | 'real'>): Float64Array {
  const n = s.real.length;
  const out = new Float64Array(n);
  const step = n > 1 ? (s.ppmLast - s.ppmFirst) / (n - 1) : 0;
  for (let i = 0; i < n; i++) out[i] = s.ppmFirst + i * step;
  return out;
}

/** Fractional index of a ppm value on the spectrum's axis. */
export function ppmToIndex(s: Pick<Spectrum, 'ppmFirst' | 'ppmLast' | 'real'>, ppm: number): number {
  const n = s.real.length;
  return ((ppm - s.ppmFirst) / (s.ppmLast - s.ppmFirst)) * (n - 1);
}

/** Hz per point of a spectrum (positive). */
export function hzPerPoint(s: Spectrum): number {
  return (Math.abs(s.ppmFirst - s.ppmLast) * s.refMHz) / Math.max(1, s.real.length - 1);
}
