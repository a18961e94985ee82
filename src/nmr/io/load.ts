// Format detection: a Bruker folder, a JCAMP-DX file (.jdx/.dx/.jcamp or starting with ##),
// an NMRPipe file (header word 2 = 2.345) or a CSV spectrum.
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { NmrFormatError } from './errors.js';
import { isBrukerDir, readBruker } from './bruker.js';
import { readJcamp } from './jcamp.js';
import { readPipe } from './nmrpipe.js';
import { readCsvSpectrum } from './csv.js';
import type { NmrData } from '../types.js';
import { checksOf } from '../arguments.js';

export type NmrFormat = 'bruker' | 'jcamp' | 'nmrpipe' | 'csv';

export function detectFormat(path: string): NmrFormat {
  if (!existsSync(path)) throw new NmrFormatError(path, 'path', 'does not exist');
  if (statSync(path).isDirectory()) {
    if (isBrukerDir(path)) return 'bruker';
    throw new NmrFormatError(path, 'folder', 'not a Bruker experiment folder (no acqus or procs)');
  }
  const ext = extname(path).toLowerCase();
  if (['.jdx', '.dx', '.jcamp'].includes(ext)) return 'jcamp';
  if (['.csv', '.tsv', '.txt'].includes(ext)) return 'csv';
  const fd = openSync(path, 'r');
  const head = Buffer.alloc(16);
  readSync(fd, head, 0, 16, 0);
  closeSync(fd);
  if (head.toString('latin1').startsWith('##')) return 'jcamp';
  const le = head.readFloatLE(8);
  const be = head.readFloatBE(8);
  if (Math.abs(le - 2.345) < 1e-3 || Math.abs(be - 2.345) < 1e-3) return 'nmrpipe';
  throw new NmrFormatError(
    path,
    'format',
    'not recognised',
    'give a Bruker folder, a JCAMP-DX, NMRPipe or CSV file',
  );
}

/**
 * Reads NMR data of any supported format, chosen by its content: a Bruker experiment folder
 * (fid/ser and acqus, or pdata), JCAMP-DX (FID or spectrum), NMRPipe, or a two-column CSV.
 * Pure TypeScript: libtorch is not loaded.
 *
 * @param path The folder or file.
 * @param options.prefer For a Bruker folder with both: the raw FID (default) or the processed spectrum.
 * @returns A FID, a processed spectrum or a series of FIDs (see {@link NmrData}).
 * @throws {@link NmrFormatError} when the format is unknown or the file is malformed.
 *
 * @example
 * ```ts
 * import { readNmr, processFid } from 'tailor/nmr';
 * const data = readNmr('data/1/');
 * if (data.kind === 'fid') console.log(processFid(data.fid, { phase: 'auto' }).real.length);
 * ```
 */
export function readNmr(path: string, options: { prefer?: 'raw' | 'processed' } = {}): NmrData {
  const c = checksOf('readNmr');
  c.string(path, 'path');
  const o = c.object(options, 'options');
  if (o.prefer !== undefined) c.oneOf(o.prefer, 'options.prefer', ['raw', 'processed']);
  switch (detectFormat(path)) {
    case 'bruker':
      return readBruker(path, options.prefer);
    case 'jcamp':
      return readJcamp(path);
    case 'nmrpipe':
      return readPipe(path);
    case 'csv':
      return { kind: 'spectrum', spectrum: readCsvSpectrum(path) };
  }
}
