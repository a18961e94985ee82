// Format detection: a Bruker folder, a VnmrJ folder (fid and procpar, or its fid file), a Spinsolve
// folder (acqu.par and data.1d, or its data.1d), a JCAMP-DX
// file (.jdx/.dx/.jcamp or starting with ##), an NMRPipe file (header word 2 = 2.345) or a CSV spectrum.
import { existsSync, openSync, readSync, closeSync, statSync } from 'node:fs';
import { basename, dirname, extname } from 'node:path';
import { NmrFormatError } from './errors.js';
import { isBrukerDir, readBruker } from './bruker.js';
import { readJcamp } from './jcamp.js';
import { readPipe } from './nmrpipe.js';
import { readCsvSpectrum } from './csv.js';
import { isVarianDir, readVarian, varianDirOfFile } from './varian.js';
import { isSpinsolveDir, readSpinsolve } from './spinsolve.js';
import type { NmrData } from '../types.js';
import { checksOf } from '../arguments.js';

/** The formats {@link readNmr} tells apart: vendor experiment folders (Bruker, Varian / Agilent VnmrJ, Magritek Spinsolve) and files. */
export type NmrFormat = 'bruker' | 'varian' | 'spinsolve' | 'jcamp' | 'nmrpipe' | 'csv';

/** True when dir is an experiment folder of a supported vendor (Bruker, Varian / Agilent VnmrJ, Magritek Spinsolve). */
export function isExperimentDir(dir: string): boolean {
  return isBrukerDir(dir) || isVarianDir(dir) || isSpinsolveDir(dir);
}

/** The Spinsolve folder of a path that names its data.1d or fid.1d, or undefined. */
function spinsolveDirOfFile(path: string): string | undefined {
  return ['data.1d', 'fid.1d'].includes(basename(path)) && isSpinsolveDir(dirname(path))
    ? dirname(path)
    : undefined;
}

export function detectFormat(path: string): NmrFormat {
  if (!existsSync(path)) throw new NmrFormatError(path, 'path', 'does not exist');
  if (statSync(path).isDirectory()) {
    if (isBrukerDir(path)) return 'bruker';
    if (isVarianDir(path)) return 'varian';
    if (isSpinsolveDir(path)) return 'spinsolve';
    throw new NmrFormatError(
      path,
      'folder',
      'not an experiment folder',
      'a Bruker folder has acqus or procs, a VnmrJ (.fid) folder has fid and procpar, a Spinsolve folder has acqu.par and data.1d',
    );
  }
  if (varianDirOfFile(path) !== undefined) return 'varian';
  if (spinsolveDirOfFile(path) !== undefined) return 'spinsolve';
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
    'give a Bruker, VnmrJ or Spinsolve experiment folder, or a JCAMP-DX, NMRPipe or CSV file',
  );
}

/**
 * Reads NMR data of any supported format, chosen by its content: a Bruker experiment folder
 * (fid/ser and acqus, or pdata), a Varian / Agilent VnmrJ experiment folder (fid and procpar; an
 * arrayed experiment is a series of FIDs), a Magritek Spinsolve folder (acqu.par with data.1d or
 * nmr_fid.dx), JCAMP-DX (FID or spectrum), NMRPipe, or a two-column CSV.
 * Pure TypeScript: libtorch is not loaded.
 *
 * @param path The folder or file.
 * @param options.prefer For a Bruker or Spinsolve folder with both: the raw FID (default) or the processed spectrum.
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
    case 'varian':
      return readVarian(varianDirOfFile(path) ?? path);
    case 'spinsolve':
      return readSpinsolve(spinsolveDirOfFile(path) ?? path, options.prefer);
    case 'jcamp':
      return readJcamp(path);
    case 'nmrpipe':
      return readPipe(path);
    case 'csv':
      return { kind: 'spectrum', spectrum: readCsvSpectrum(path) };
  }
}
