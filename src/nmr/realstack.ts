// The multi-SNR preprocessing on real experiments of one sample: read every file,
// process FIDs identically (same size, apodization, phase source) onto one ppm axis, optionally
// crop a ppm window, and run the pipeline (alignment, rescaling, masks, noise, T, pseudo truth).
// An experiment may be several files co-added (repeated scans of the same sequence): their FIDs
// (or processed spectra) are summed before processing, which is what a longer acquisition gives.
// A path ending in #R names row R of a pseudo-2D data set (a Bruker ser file, an arrayed VnmrJ
// fid), so that the levels of one arrayed acquisition (say nt = 1, 4, 16, 64) are experiments.
import { existsSync } from 'node:fs';
import { readNmr } from './io/load.js';
import { NmrFormatError } from './io/errors.js';
import { processFid, type Apodization } from './process.js';
import { nextPowerOfTwo } from './fft.js';
import { preprocessStack, type PreprocessOptions, type PreprocessResult } from './pipeline/preprocess.js';
import type { Fid, NmrData, Spectrum } from './types.js';
import { shiftSignal } from './pipeline/shift.js';
import { checksOf } from './arguments.js';
import { ArgumentError } from '../util/arguments.js';

/** One experiment: a file or folder (PATH#R: row R of a pseudo-2D data set), or several to co-add. */
export type ExperimentPath = string | string[];

/**
 * How {@link realStack} reads and preprocesses the experiments (processing of FIDs, preprocessing
 * of the stack).
 */
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

/** Experiments of one sample on one ppm axis, before the pipeline. */
export interface ExperimentSpectra {
  spectra: Float64Array[];
  ppmFirst: number;
  ppmLast: number;
  refMHz: number;
  sources: string[];
  /** Each experiment's scans, where its files record them (co-added files summed). */
  scans: (number | undefined)[];
}

/** What {@link realStack} returns: the spectra as read and their preprocessed stack. */
export interface RealStack extends ExperimentSpectra {
  result: PreprocessResult;
}

export function experimentLabel(e: ExperimentPath): string {
  return typeof e === 'string' ? e : e.join('+');
}

/** A path and the row it names: 'ladder.fid#2' is row 2 of ladder.fid, unless a file has that very name. */
export function splitRow(path: string): { file: string; row: number | undefined } {
  const m = /^(.*)#(\d{1,7})$/.exec(path);
  if (!m || existsSync(path)) return { file: path, row: undefined };
  return { file: m[1]!, row: Number(m[2]) };
}

function pickFid(d: NmrData, path: string, row: number, named: boolean): Fid | null {
  if (d.kind === 'spectrum' || d.kind === 'fid') {
    if (named && row > 0)
      throw new NmrFormatError(
        path,
        'row',
        `row ${row} asked for, but this is one ${d.kind === 'fid' ? 'FID' : 'spectrum'}`,
        'drop the #row suffix',
      );
    return d.kind === 'fid' ? d.fid : null;
  }
  const fid = d.fids[row];
  if (!fid)
    throw new NmrFormatError(
      path,
      'row',
      `no row ${row} in this pseudo-2D data set of ${d.fids.length} rows`,
      `rows are 0..${d.fids.length - 1}`,
    );
  return fid;
}

/** The scans of co-added parts: their sum, or undefined when one of them does not say. */
function sumScans(scans: (number | undefined)[]): number | undefined {
  return scans.every((n) => n !== undefined) ? scans.reduce((a, b) => a + b, 0) : undefined;
}

/** Reads one experiment; co-added files are summed (FIDs point by point, spectra likewise). */
function readExperiment(e: ExperimentPath, row: number): { fid: Fid | null; spectrum: Spectrum | null } {
  const paths = typeof e === 'string' ? [e] : e;
  if (paths.length === 0) throw new ArgumentError('an experiment needs at least one file');
  const parts = paths.map((p) => {
    const { file, row: named } = splitRow(p);
    return { p: file, d: readNmr(file), row: named ?? row, named: named !== undefined };
  });
  const fids = parts.map(({ p, d, row, named }) => pickFid(d, p, row, named));
  if (fids.every((f) => f !== null)) {
    const first = fids[0]!;
    const re = Float64Array.from(first.re);
    const im = Float64Array.from(first.im);
    fids.slice(1).forEach((f, i) => {
      if (f.re.length !== re.length || Math.abs(f.swHz / first.swHz - 1) > 1e-6)
        throw new NmrFormatError(
          paths[i + 1]!,
          'co-add',
          `${f.re.length} points at ${f.swHz} Hz, but ${paths[0]} has ${re.length} at ${first.swHz} Hz`,
          'co-add only repeated scans of the same experiment',
        );
      for (let j = 0; j < re.length; j++) {
        re[j]! += f.re[j]!;
        im[j]! += f.im[j]!;
      }
    });
    const fid: Fid = { ...first, re, im, source: experimentLabel(e) };
    const scans = sumScans(fids.map((f) => f.scans));
    if (scans === undefined) delete fid.scans;
    else fid.scans = scans;
    return { fid, spectrum: null };
  }
  if (fids.some((f) => f !== null) && paths.length > 1)
    throw new NmrFormatError(experimentLabel(e), 'co-add', 'mixes FIDs and processed spectra');
  const spectra = parts.map(({ p, d }) => {
    if (d.kind !== 'spectrum') throw new NmrFormatError(p, 'data', 'expected a processed spectrum');
    return d.spectrum;
  });
  const first = spectra[0]!;
  const real = Float64Array.from(first.real);
  spectra.slice(1).forEach((s, i) => {
    if (s.real.length !== real.length)
      throw new NmrFormatError(
        paths[i + 1]!,
        'co-add',
        `${s.real.length} points, ${paths[0]} has ${real.length}`,
      );
    for (let j = 0; j < real.length; j++) real[j]! += s.real[j]!;
  });
  const spectrum: Spectrum = { ...first, real, source: experimentLabel(e) };
  const scans = sumScans(spectra.map((x) => x.scans));
  if (scans === undefined) delete spectrum.scans;
  else spectrum.scans = scans;
  return { fid: null, spectrum };
}

/** Reads and processes the experiments, ordered from the lowest to the highest SNR. */
export function loadSpectra(paths: ExperimentPath[], options: RealStackOptions = {}): Spectrum[] {
  const data = paths.map((p) => readExperiment(p, options.row ?? 0));
  const fidLength = Math.max(0, ...data.map((d) => (d.fid ? d.fid.re.length : 0)));
  const size = options.size ?? (fidLength > 0 ? 2 * nextPowerOfTwo(fidLength) : 0);
  return data.map((d) => {
    if (d.spectrum) return d.spectrum;
    const processOptions: Parameters<typeof processFid>[1] = { size, phase: options.phase ?? 'params' };
    if (options.apodization) processOptions.apodization = options.apodization;
    return processFid(d.fid!, processOptions);
  });
}

/** The experiments on the first one's ppm axis, cropped to the ppm window (no pipeline yet). */
export function experimentSpectra(
  paths: ExperimentPath[],
  options: RealStackOptions = {},
): ExperimentSpectra {
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
  return {
    spectra: onAxis.map((x) => Float64Array.from(x.subarray(lo, hi + 1))),
    ppmFirst: first.ppmFirst - lo * step,
    ppmLast: first.ppmFirst - hi * step,
    refMHz: first.refMHz,
    sources: spectra.map((s) => s.source),
    scans: spectra.map((s) => s.scans),
  };
}

/**
 * Reads two or more real experiments of one sample (low to high SNR), brings them onto one ppm
 * axis and preprocesses them into a stack (alignment, rescaling, noise estimates) for the denoiser.
 * @throws RangeError with fewer than two experiments; {@link NmrFormatError} for unreadable data.
 */
export function realStack(paths: ExperimentPath[], options: RealStackOptions = {}): RealStack {
  const c = checksOf('realStack');
  c.array(paths, 'paths', { minLength: 2 }).forEach((p, i) => {
    if (Array.isArray(p))
      c.array(p, `paths[${i}]`, { minLength: 1 }).forEach((q, k) => c.string(q, `paths[${i}][${k}]`));
    else c.string(p, `paths[${i}]`);
  });
  c.object(options, 'options');
  const e = experimentSpectra(paths, options);
  return { ...e, result: preprocessStack(e.spectra, options.preprocess ?? {}) };
}
