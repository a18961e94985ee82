// Time-domain processing of a FID to a real spectrum: digital-filter (group delay) removal,
// apodization, zero filling, FFT, phase correction (from the parameter files or automatic) and
// the ppm axis. Index 0 of the result is the highest ppm, as in TopSpin's 1r.
import { fftInPlace, isPowerOfTwo, nextPowerOfTwo } from './fft.js';
import type { Fid, Spectrum } from './types.js';
import { autoPhase } from './phase.js';
import { checkFid, checksOf } from './arguments.js';

const APODIZATIONS = ['none', 'exponential', 'gaussian'] as const;

/** processFid's arguments from a JavaScript caller: a FID, a power-of-two size, a known window. */
function checkProcessArguments(fid: unknown, options: unknown): void {
  const c = checksOf('processFid');
  const f = checkFid(c, fid);
  const o = c.object(options, 'options');
  if (o.size !== undefined) {
    const size = c.integer(o.size, 'options.size', { min: f.re.length, max: 1 << 24 });
    if (!isPowerOfTwo(size)) c.fail('options.size', 'a power of two', size);
  }
  if (o.apodization !== undefined) {
    const a = c.object(o.apodization, 'options.apodization');
    const kind = c.oneOf(a.kind, 'options.apodization.kind', APODIZATIONS);
    if (kind === 'exponential') c.number(a.lbHz, 'options.apodization.lbHz');
    if (kind === 'gaussian') {
      c.number(a.gbHz, 'options.apodization.gbHz', { above: 0 });
      if (a.lbHz !== undefined) c.number(a.lbHz, 'options.apodization.lbHz');
    }
  }
  if (o.phase !== undefined && typeof o.phase !== 'string') {
    const p = c.object(o.phase, 'options.phase');
    c.number(p.p0, 'options.phase.p0');
    c.number(p.p1, 'options.phase.p1');
  } else if (o.phase !== undefined) c.oneOf(o.phase, 'options.phase', ['params', 'auto', 'none']);
}

/**
 * The window applied to a FID before the FFT: none, exponential (line broadening in Hz) or Gaussian.
 */
export type Apodization =
  | { kind: 'none' }
  | { kind: 'exponential'; lbHz: number }
  | { kind: 'gaussian'; gbHz: number; lbHz?: number };

/** How {@link processFid} turns a FID into a spectrum. */
export interface ProcessOptions {
  /** Number of spectrum points (a power of two >= the FID length); default: 2x the next power of two. */
  size?: number;
  apodization?: Apodization;
  /**
   * 'params' (default) uses the phase stored with the data (TopSpin's PHC0/PHC1, VnmrJ's rp/lp,
   * JCAMP-DX $PHC0/$PHC1) and falls back to 'auto' when there is none; 'auto' searches for one
   * (ACME); 'none' leaves the spectrum as transformed; {p0, p1} applies the given phase (degrees).
   */
  phase?: 'params' | 'auto' | 'none' | { p0: number; p1: number };
  /** Halve the first point (removes the baseline offset of non-filtered data); default true. */
  halveFirstPoint?: boolean;
}

/** A spectrum from {@link processFid}, with the phase and group delay it applied. */
export interface ProcessedSpectrum extends Spectrum {
  imag: Float64Array;
  /** The phase that was applied (degrees). */
  phase: { p0: number; p1: number };
  /**
   * Where that phase came from: 'file' (stored with the data; the FID's phaseSource says which
   * parameters), 'auto' (the ACME search, also when 'params' found none), 'given' or 'none'.
   */
  phaseFrom: PhaseFrom;
}

/** Where the phase of a {@link ProcessedSpectrum} came from. */
export type PhaseFrom = 'file' | 'auto' | 'given' | 'none';

/** A sentence for reports on the phase a spectrum was processed with, and where it came from. */
export function describePhase(spectrum: ProcessedSpectrum, fid: Pick<Fid, 'phaseSource'>): string {
  const from = {
    file: `stored with the data (${fid.phaseSource ?? 'parameter files'})`,
    auto: 'automatic (ACME)',
    given: 'given',
    none: 'none applied',
  }[spectrum.phaseFrom];
  return `phase p0 ${spectrum.phase.p0.toFixed(2)} p1 ${spectrum.phase.p1.toFixed(2)} deg, ${from}`;
}

/** Multiplies the FID by a window; time zero is at the group delay (the filter's echo top). */
export function apodize(fid: Fid, apodization: Apodization): Fid {
  if (apodization.kind === 'none') return fid;
  const n = fid.re.length;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  const g = fid.groupDelay;
  for (let j = 0; j < n; j++) {
    const t = Math.max(0, j - g) / fid.swHz;
    let w: number;
    if (apodization.kind === 'exponential') {
      w = Math.exp(-Math.PI * apodization.lbHz * t);
    } else {
      // Gaussian line of FWHM gbHz: exp(-(pi gb t)^2 / (4 ln 2)), optionally times an exponential.
      w = Math.exp(-((Math.PI * apodization.gbHz * t) ** 2) / (4 * Math.LN2));
      if (apodization.lbHz) w *= Math.exp(-Math.PI * apodization.lbHz * t);
    }
    re[j] = fid.re[j]! * w;
    im[j] = fid.im[j]! * w;
  }
  return { ...fid, re, im };
}

/** Zero-fills (or truncates) the FID to n complex points. */
export function zeroFill(fid: Fid, n: number): Fid {
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  re.set(fid.re.subarray(0, Math.min(n, fid.re.length)));
  im.set(fid.im.subarray(0, Math.min(n, fid.im.length)));
  return { ...fid, re, im };
}

/**
 * Fourier transform to the frequency domain, with the group delay removed as a linear phase
 * (a circular time shift by groupDelay points, exact for fractional delays). The output runs from
 * the highest to the lowest frequency.
 */
export function fourierTransform(fid: Fid, halveFirstPoint = true): { re: Float64Array; im: Float64Array } {
  const n = fid.re.length;
  const re = Float64Array.from(fid.re);
  const im = Float64Array.from(fid.im);
  if (halveFirstPoint && fid.groupDelay === 0) {
    re[0]! *= 0.5;
    im[0]! *= 0.5;
  }
  fftInPlace(re, im);
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  const g = fid.groupDelay;
  for (let k = 0; k < n; k++) {
    const f = k < n / 2 ? k : k - n; // signed frequency bin
    let r = re[k]!;
    let i = im[k]!;
    if (g !== 0) {
      // The constant -pi*g puts the zero of the ramp at the high-frequency edge, which is where
      // TopSpin's stored PHC0 refers to (checked on five real data sets: residual p0 < 3 deg).
      const a = (2 * Math.PI * g * f) / n - Math.PI * g;
      const c = Math.cos(a);
      const s = Math.sin(a);
      const r2 = r * c - i * s;
      i = r * s + i * c;
      r = r2;
    }
    // Highest frequency first, as TopSpin: bin f goes to index n/2 - f, and the Nyquist bin
    // (f = -n/2, equal to +n/2) to index 0 (checked against 1r files: shift 0.000 points).
    const idx = (n / 2 - f) % n;
    outRe[idx] = r;
    outIm[idx] = i;
  }
  return { re: outRe, im: outIm };
}

/**
 * Zero- and first-order phase correction in degrees (TopSpin convention: the first-order term
 * runs from 0 at the left edge to p1 at the right edge).
 */
export function applyPhase(
  re: Float64Array,
  im: Float64Array,
  p0: number,
  p1: number,
): { re: Float64Array; im: Float64Array } {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = (-(p0 + (p1 * i) / n) * Math.PI) / 180;
    const c = Math.cos(a);
    const s = Math.sin(a);
    outRe[i] = re[i]! * c - im[i]! * s;
    outIm[i] = re[i]! * s + im[i]! * c;
  }
  return { re: outRe, im: outIm };
}

/** ppm of the first and last point of an n-point spectrum of the FID (TopSpin's OFFSET rule). */
export function ppmLimits(fid: Fid, n: number): { ppmFirst: number; ppmLast: number } {
  const swPpm = fid.swHz / fid.refMHz;
  const ppmFirst = fid.carrierPpm + swPpm / 2;
  return { ppmFirst, ppmLast: ppmFirst - (swPpm * (n - 1)) / n };
}

/** The whole chain: apodize, zero-fill, FFT with group-delay removal, phase. */
export function processFid(fid: Fid, options: ProcessOptions = {}): ProcessedSpectrum {
  checkProcessArguments(fid, options);
  const size = options.size ?? 2 * nextPowerOfTwo(fid.re.length);
  const apod =
    options.apodization ??
    (fid.lbHz !== undefined ? { kind: 'exponential', lbHz: fid.lbHz } : { kind: 'none' });
  const filled = zeroFill(apodize(fid, apod), size);
  const ft = fourierTransform(filled, options.halveFirstPoint ?? true);
  const mode = options.phase ?? 'params';
  let phase: { p0: number; p1: number };
  let phaseFrom: PhaseFrom;
  if (typeof mode === 'object') [phase, phaseFrom] = [mode, 'given'];
  else if (mode === 'none') [phase, phaseFrom] = [{ p0: 0, p1: 0 }, 'none'];
  else if (mode === 'params' && fid.phase) [phase, phaseFrom] = [fid.phase, 'file'];
  else [phase, phaseFrom] = [autoPhase(ft.re, ft.im), 'auto'];
  const phased = applyPhase(ft.re, ft.im, phase.p0, phase.p1);
  const spectrum: ProcessedSpectrum = {
    real: phased.re,
    imag: phased.im,
    ...ppmLimits(fid, size),
    refMHz: fid.refMHz,
    source: fid.source,
    phase,
    phaseFrom,
  };
  if (fid.nucleus) spectrum.nucleus = fid.nucleus;
  if (fid.scans !== undefined) spectrum.scans = fid.scans;
  return spectrum;
}
