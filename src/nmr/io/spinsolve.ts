// Reader for Magritek Spinsolve experiment folders (benchtop NMR): acqu.par (key = value lines)
// with the FID in data.1d (or fid.1d, Spinsolve Expert), else nmr_fid.dx (JCAMP-DX), else the
// phased spectrum spectrum_processed.1d. A .1d file is a 32-byte little-endian header (the tags
// 'PROS' 'DATA' 'V1.1', the data type, and four dimensions as int32), then float32 values: for
// data type 504 the x axis (seconds or ppm) and then the complex points, real and imaginary
// interleaved; for 501 the complex points alone.
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NmrFormatError, readNmrFile } from './errors.js';
import { readJcamp } from './jcamp.js';
import type { Fid, NmrData, Spectrum } from '../types.js';

const HEADER_BYTES = 32;
/** More points than any benchtop acquisition. */
const MAX_POINTS = 1 << 24;
const FID_FILES = ['data.1d', 'fid.1d'];

/** acqu.par: 'name = value' lines; quoted values are strings. */
export function parseAcquPar(file: string, text: string): Map<string, string> {
  const out = new Map<string, string>();
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    const eq = line.indexOf('=');
    if (eq < 0)
      throw new NmrFormatError(
        `${file}:${i + 1}`,
        'line',
        `expected 'name = value', found '${line.slice(0, 60)}'`,
      );
    const value = line.slice(eq + 1).trim();
    out.set(
      line.slice(0, eq).trim(),
      value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value,
    );
  });
  return out;
}

function positive(file: string, par: Map<string, string>, name: string): number {
  const v = Number(par.get(name));
  if (!par.has(name)) throw new NmrFormatError(file, name, 'missing', 'the acqu.par file is incomplete');
  if (!(v > 0 && Number.isFinite(v)))
    throw new NmrFormatError(file, name, `expected a positive number, found '${par.get(name)}'`);
  return v;
}

/** The complex points (and the x axis, for type 504) of a .1d file, checked against its header. */
function readOneD(path: string): { x: Float32Array | undefined; re: Float64Array; im: Float64Array } {
  const buf = readNmrFile(path);
  // The tags are little-endian int32s, so the file's first bytes read 'SORP' 'ATAD'.
  if (buf.length < HEADER_BYTES || buf.toString('latin1', 0, 8) !== 'SORPATAD')
    throw new NmrFormatError(path, 'header', "not a Spinsolve .1d file (no 'PROS' 'DATA' tags)");
  const type = buf.readInt32LE(12);
  const dims = [16, 20, 24, 28].map((o) => buf.readInt32LE(o));
  const n = dims[0]!;
  if (n < 2 || n > MAX_POINTS || dims.slice(1).some((d) => d !== 1))
    throw new NmrFormatError(
      path,
      'dimensions',
      `${dims.join(' x ')} is not a 1D data set of 2..${MAX_POINTS} points`,
    );
  if (type !== 504 && type !== 501)
    throw new NmrFormatError(path, 'data type', `${type} is not complex data (501, or 504 with its x axis)`);
  const axis = type === 504 ? n : 0;
  const needed = HEADER_BYTES + 4 * (axis + 2 * n);
  if (buf.length < needed)
    throw new NmrFormatError(
      path,
      'size',
      `the header describes ${needed} bytes but the file holds ${buf.length}`,
      'the file is truncated',
    );
  const at = (k: number): number => buf.readFloatLE(HEADER_BYTES + 4 * k);
  const x = axis ? Float32Array.from({ length: n }, (_, i) => at(i)) : undefined;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    re[i] = at(axis + 2 * i);
    // Spinsolve's FIDs turn the other way from TopSpin's (its JCAMP-DX export says $REVERSE= yes):
    // the conjugate puts the highest ppm first, as for every reader.
    im[i] = -at(axis + 2 * i + 1);
    if (!Number.isFinite(re[i]!) || !Number.isFinite(im[i]!))
      throw new NmrFormatError(path, `point ${i}`, 'not a finite number', 'the file is corrupt');
  }
  return { x, re, im };
}

/** The FID of data.1d / fid.1d with the frequencies of acqu.par. */
function readSpinsolveFid(dir: string, file: string, par: Map<string, string>): Fid {
  const parFile = join(dir, 'acqu.par');
  const swHz = positive(parFile, par, 'bandwidth') * 1000;
  const observe = positive(parFile, par, 'b1Freq');
  // lowestFrequency: the low edge of the spectrum in Hz from 0 ppm; the carrier sits sw/2 above it.
  const lowest = Number(par.get('lowestFrequency'));
  if (!Number.isFinite(lowest))
    throw new NmrFormatError(
      parFile,
      'lowestFrequency',
      `expected a number, found '${par.get('lowestFrequency') ?? ''}'`,
    );
  const refMHz = observe - (lowest + swHz / 2) / 1e6;
  if (!(refMHz > 0))
    throw new NmrFormatError(
      parFile,
      'lowestFrequency',
      `puts 0 ppm at ${refMHz} MHz, below zero for b1Freq ${observe} MHz`,
      'the acqu.par file is corrupt',
    );
  const { re, im } = readOneD(join(dir, file));
  const fid: Fid = {
    re,
    im,
    swHz,
    refMHz,
    carrierPpm: ((observe - refMHz) / refMHz) * 1e6,
    groupDelay: 0,
    source: join(dir, file),
  };
  const nucleus = par.get('rxChannel');
  if (nucleus) fid.nucleus = nucleus;
  const scans = Number(par.get('nrScans'));
  if (Number.isInteger(scans) && scans >= 1) fid.scans = scans;
  return fid;
}

/** spectrum_processed.1d: the phased spectrum on its ppm axis (ascending in the file). */
function readSpinsolveSpectrum(dir: string, par: Map<string, string>): Spectrum {
  const path = join(dir, 'spectrum_processed.1d');
  const { x, re } = readOneD(path);
  if (!x) throw new NmrFormatError(path, 'data type', 'a spectrum without its ppm axis (type 501)');
  const n = re.length;
  // The file's points run up in ppm; only the (phased) real part is kept.
  const spectrum: Spectrum = {
    real: Float64Array.from(re).reverse(),
    ppmFirst: x[n - 1]!,
    ppmLast: x[0]!,
    refMHz: Number(par.get('b1Freq')) || NaN,
    source: path,
  };
  const nucleus = par.get('rxChannel');
  if (nucleus) spectrum.nucleus = nucleus;
  return spectrum;
}

/** True when dir is a Spinsolve experiment folder: acqu.par with data.1d, fid.1d, nmr_fid.dx or spectrum_processed.1d. */
export function isSpinsolveDir(dir: string): boolean {
  return (
    existsSync(dir) &&
    statSync(dir).isDirectory() &&
    existsSync(join(dir, 'acqu.par')) &&
    [...FID_FILES, 'nmr_fid.dx', 'spectrum_processed.1d'].some((f) => existsSync(join(dir, f)))
  );
}

/** Reads a Spinsolve folder: the raw FID (default), or with prefer 'processed' the phased spectrum when there is one. */
export function readSpinsolve(dir: string, prefer: 'raw' | 'processed' = 'raw'): NmrData {
  const parFile = join(dir, 'acqu.par');
  const par = parseAcquPar(parFile, readNmrFile(parFile).toString('utf8'));
  const processed = existsSync(join(dir, 'spectrum_processed.1d'));
  const fidFile = FID_FILES.find((f) => existsSync(join(dir, f)));
  if (prefer === 'processed' && processed)
    return { kind: 'spectrum', spectrum: readSpinsolveSpectrum(dir, par) };
  if (fidFile) return { kind: 'fid', fid: readSpinsolveFid(dir, fidFile, par) };
  if (existsSync(join(dir, 'nmr_fid.dx'))) return readJcamp(join(dir, 'nmr_fid.dx'));
  if (processed) return { kind: 'spectrum', spectrum: readSpinsolveSpectrum(dir, par) };
  throw new NmrFormatError(
    dir,
    'data',
    'no data.1d, fid.1d, nmr_fid.dx or spectrum_processed.1d',
    'point at a Spinsolve experiment folder',
  );
}
