// Vendor file -> processed real spectrum (what `tailor nmr process` writes as CSV): processed
// spectra are read as they are; FIDs (or one row of a pseudo-2D series) are Fourier transformed
// with the file's own parameters unless size, apodization or phase are given.
import { readNmr } from './io/load.js';
import { splitRow } from './realstack.js';
import { NmrFormatError } from './io/errors.js';
import { describePhase, processFid, type Apodization } from './process.js';
import type { Spectrum } from './types.js';
import { checksOf } from './arguments.js';

/** How {@link toSpectrum} reads and processes its input. */
export interface ConvertOptions {
  /** For a Bruker folder with both: the raw FID (default 'raw', processed here) or the vendor's processed spectrum. */
  prefer?: 'raw' | 'processed';
  /** For a pseudo-2D series of FIDs: the row to convert (0-based, default 0). */
  row?: number;
  /** Points of the spectrum after zero filling (a power of two; default twice the next power of two of the FID length). */
  size?: number;
  /** Window applied to the FID before the FFT (default none). */
  apodization?: Apodization;
  /**
   * Phase correction: 'params' (default) the phase stored with the data (TopSpin PHC0/PHC1, VnmrJ
   * rp/lp) or, without one, automatic; 'auto' always automatic; 'none'; or given (degrees).
   */
  phase?: 'params' | 'auto' | 'none' | { p0: number; p1: number };
}

/** What {@link toSpectrum} returns. */
export interface Converted {
  spectrum: Spectrum;
  /**
   * What the processing did, for the user: the phase and where it came from (stored with the data,
   * automatic, given, none), the group delay, a VnmrJ FID shift; null for processed input.
   */
  note: string | null;
}

/**
 * Reads an NMR data set and returns it as a real 1D spectrum: a processed spectrum as it is, a
 * FID (or one row of a series) processed by {@link processFid} (zero filling, apodization, FFT,
 * group-delay removal, phasing).
 *
 * @param path A Bruker, VnmrJ or Spinsolve experiment folder, a JCAMP-DX, NMRPipe or CSV file; PATH#R names row R of a pseudo-2D one.
 * @param options See {@link ConvertOptions}.
 * @returns The spectrum (index 0 at the highest ppm), and a note on the processing (null for processed input).
 * @throws {@link NmrFormatError} when the file cannot be read or the row does not exist.
 *
 * @example
 * ```ts
 * import { toSpectrum, writeCsvSpectrum } from 'tailor/nmr';
 * const { spectrum } = toSpectrum('data/1/', { apodization: { kind: 'exponential', lbHz: 0.3 } });
 * writeCsvSpectrum('spectrum.csv', spectrum);
 * ```
 */
export function toSpectrum(path: string, options: ConvertOptions = {}): Converted {
  const c = checksOf('toSpectrum');
  c.string(path, 'path');
  const o = c.object(options, 'options');
  if (o.row !== undefined) c.integer(o.row, 'options.row', { min: 0 });
  const named = splitRow(path);
  if (named.row !== undefined && o.row !== undefined && named.row !== o.row)
    throw new NmrFormatError(
      path,
      'row',
      `names row ${named.row}, but row ${String(o.row)} is also given`,
      'give the row once, as PATH#R or as --row',
    );
  const data = readNmr(named.file, { prefer: options.prefer ?? 'raw' });
  if (data.kind === 'spectrum') return { spectrum: data.spectrum, note: null };
  const row = named.row ?? options.row ?? 0;
  const fid = data.kind === 'fid' ? (row === 0 ? data.fid : undefined) : data.fids[row];
  if (!fid)
    throw new NmrFormatError(
      path,
      'row',
      `no row ${row}: the data have ${data.kind === 'fids' ? data.fids.length : 1} row(s)`,
    );
  const processOptions: Parameters<typeof processFid>[1] = { phase: options.phase ?? 'params' };
  if (options.size !== undefined) processOptions.size = options.size;
  if (options.apodization) processOptions.apodization = options.apodization;
  const processed = processFid(fid, processOptions);
  // The CSV holds the real (absorption) part only.
  return {
    spectrum: {
      real: processed.real,
      ppmFirst: processed.ppmFirst,
      ppmLast: processed.ppmLast,
      refMHz: processed.refMHz,
      source: processed.source,
    },
    note: [
      describePhase(processed, fid),
      `group delay ${fid.groupDelay.toFixed(3)} points`,
      ...(fid.leftShift !== undefined
        ? [`FID shifted by lsfid = ${fid.leftShift} points (${fid.leftShift > 0 ? 'left' : 'right'})`]
        : []),
    ].join('; '),
  };
}
