// Vendor file -> processed real spectrum (what `tailor nmr process` writes as CSV): processed
// spectra are read as they are; FIDs (or one row of a pseudo-2D series) are Fourier transformed
// with the file's own parameters unless size, apodization or phase are given.
import { readNmr } from './io/load.js';
import { NmrFormatError } from './io/errors.js';
import { processFid, type Apodization } from './process.js';
import type { Spectrum } from './types.js';

export interface ConvertOptions {
  prefer?: 'raw' | 'processed';
  row?: number;
  size?: number;
  apodization?: Apodization;
  phase?: 'params' | 'auto' | 'none' | { p0: number; p1: number };
}

export interface Converted {
  spectrum: Spectrum;
  /** What the processing did (phase, group delay), for the user; null for processed input. */
  note: string | null;
}

export function toSpectrum(path: string, options: ConvertOptions = {}): Converted {
  const data = readNmr(path, { prefer: options.prefer ?? 'raw' });
  if (data.kind === 'spectrum') return { spectrum: data.spectrum, note: null };
  const row = options.row ?? 0;
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
    note: `phase p0 ${processed.phase.p0.toFixed(2)} p1 ${processed.phase.p1.toFixed(2)} deg, group delay ${fid.groupDelay.toFixed(3)} points`,
  };
}
