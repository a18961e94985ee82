// Reader for Bruker TopSpin experiment folders: raw fid/ser (with acqus) and processed 1r/1i (with
// procs). Written from the format description (int32 or float64 words, byte order from BYTORDA/
// BYTORDP, complex points interleaved, rows of a ser file padded to 1024-byte blocks).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NmrFormatError, readNmrFile } from './errors.js';
import { ParameterSet } from './labels.js';
import type { Fid, NmrData, Spectrum } from '../types.js';
import { brukerGroupDelay } from './dsp.js';

/** More points than any 1D acquisition (TopSpin's TD stops at a few million). */
const MAX_POINTS = 1 << 26;
/** More rows than any pseudo-2D series. */
const MAX_ROWS = 1 << 20;

export function readParameterFile(path: string): ParameterSet {
  if (!existsSync(path))
    throw new NmrFormatError(
      path,
      'file',
      'not found',
      'a Bruker experiment folder needs acqus (and pdata/1/procs for processed data)',
    );
  return ParameterSet.parse(path, readNmrFile(path).toString('latin1'));
}

function readWords(path: string, dtype: number, bigEndian: boolean, field: string): Float64Array {
  const buf = readNmrFile(path);
  const size = dtype === 2 ? 8 : dtype === 0 ? 4 : -1;
  if (size < 0)
    throw new NmrFormatError(
      path,
      field,
      `unsupported data type ${dtype}`,
      'only 0 (int32) and 2 (float64) exist in TopSpin data',
    );
  const n = Math.floor(buf.length / size);
  const out = new Float64Array(n);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let i = 0; i < n; i++) {
    out[i] = size === 4 ? view.getInt32(i * 4, !bigEndian) : view.getFloat64(i * 8, !bigEndian);
  }
  if (size === 8) {
    const bad = out.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0)
      throw new NmrFormatError(
        path,
        field,
        `word ${bad} is ${out[bad]}, not a finite number`,
        'the file is corrupt',
      );
  }
  return out;
}

/** True when procs says REVERSE= yes (TopSpin's ft flips the spectrum left to right). */
export function isReversed(procs: ParameterSet | undefined): boolean {
  return /^(yes|true|1)$/i.test(procs?.string('$REVERSE') ?? '');
}

/** Reads the procs of pdata/1 when present (reference frequency SF, phase, LB). */
function optionalProcs(dir: string): ParameterSet | undefined {
  const p = join(dir, 'pdata', '1', 'procs');
  return existsSync(p) ? readParameterFile(p) : undefined;
}

function fidFromWords(
  words: Float64Array,
  start: number,
  td: number,
  acqus: ParameterSet,
  procs: ParameterSet | undefined,
  source: string,
): Fid {
  const n = Math.floor(td / 2);
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  // REVERSE (procs) makes TopSpin's ft flip the spectrum: the conjugate FID gives the flipped
  // spectrum, as the JCAMP-DX reader does for $REVERSE.
  const reverse = isReversed(procs);
  const sign = reverse ? -1 : 1;
  for (let i = 0; i < n; i++) {
    re[i] = words[start + 2 * i]!;
    im[i] = sign * words[start + 2 * i + 1]!;
  }
  const swHz = acqus.positive('$SW_h');
  const sfo1 = acqus.positive('$SFO1');
  const refMHz = procs?.has('$SF') ? procs.positive('$SF') : acqus.positive('$BF1');
  const digmod = acqus.optionalNumber('$DIGMOD') ?? 1;
  const groupDelay =
    digmod === 0
      ? 0
      : brukerGroupDelay(
          acqus.optionalNumber('$GRPDLY'),
          acqus.optionalNumber('$DSPFVS'),
          acqus.optionalNumber('$DECIM'),
          acqus.file,
        );
  const fid: Fid = {
    re,
    im,
    swHz,
    refMHz,
    carrierPpm: ((sfo1 - refMHz) / refMHz) * 1e6,
    groupDelay,
    source,
  };
  const nucleus = acqus.string('$NUC1');
  if (nucleus) fid.nucleus = nucleus;
  const scans = acqus.optionalNumber('$NS');
  if (scans !== undefined && Number.isInteger(scans) && scans >= 1) fid.scans = scans;
  // TopSpin phases the flipped spectrum; with the conjugate FID that phase does not carry over
  // as it is, so a reversed FID is phased automatically (as JCAMP-DX FIDs with $REVERSE= yes).
  if (procs?.has('$PHC0') && !reverse) {
    fid.phase = { p0: procs.number('$PHC0'), p1: procs.optionalNumber('$PHC1') ?? 0 };
    fid.phaseSource = 'procs PHC0/PHC1';
  }
  const lb = procs?.optionalNumber('$LB');
  if (lb !== undefined) fid.lbHz = lb;
  return fid;
}

/** Reads the fid (1D) of a Bruker experiment folder. */
export function readBrukerFid(dir: string): Fid {
  const acqus = readParameterFile(join(dir, 'acqus'));
  const path = join(dir, 'fid');
  if (!existsSync(path))
    throw new NmrFormatError(
      path,
      'file',
      'not found',
      'use readBrukerSer for pseudo-2D data, or read pdata/1/1r',
    );
  const td = acqus.integer('$TD', 4, MAX_POINTS);
  const words = readWords(
    path,
    acqus.optionalNumber('$DTYPA') ?? 0,
    acqus.optionalNumber('$BYTORDA') === 1,
    '$DTYPA',
  );
  if (words.length < td) {
    throw new NmrFormatError(
      path,
      '$TD',
      `acqus says ${td} words but the file holds ${words.length}`,
      'the fid is truncated',
    );
  }
  if (td < 4 || td % 2 !== 0)
    throw new NmrFormatError(acqus.file, '$TD', `expected an even number >= 4, found ${td}`);
  return fidFromWords(words, 0, td, acqus, optionalProcs(dir), path);
}

/** Reads every row of a pseudo-2D ser file (e.g. an inversion-recovery series) as separate FIDs. */
export function readBrukerSer(dir: string): Fid[] {
  const acqus = readParameterFile(join(dir, 'acqus'));
  const acqu2s = readParameterFile(join(dir, 'acqu2s'));
  const path = join(dir, 'ser');
  if (!existsSync(path)) throw new NmrFormatError(path, 'file', 'not found');
  const td = acqus.integer('$TD', 4, MAX_POINTS);
  const rows = acqu2s.integer('$TD', 1, MAX_ROWS);
  const dtype = acqus.optionalNumber('$DTYPA') ?? 0;
  const words = readWords(path, dtype, acqus.optionalNumber('$BYTORDA') === 1, '$DTYPA');
  // Rows start on 1024-byte boundaries.
  const perBlock = dtype === 2 ? 128 : 256;
  const stride = Math.ceil(td / perBlock) * perBlock;
  if (words.length < stride * (rows - 1) + td) {
    throw new NmrFormatError(
      path,
      'size',
      `${rows} rows of ${td} words (stride ${stride}) do not fit in ${words.length} words`,
    );
  }
  const procs = optionalProcs(dir);
  return Array.from({ length: rows }, (_, r) =>
    fidFromWords(words, r * stride, td, acqus, procs, `${path}[row ${r}]`),
  );
}

/** Reads the processed spectrum pdata/N/1r (and 1i when present). */
export function readBrukerProcessed(pdataDir: string): Spectrum {
  const procs = readParameterFile(join(pdataDir, 'procs'));
  const si = procs.integer('$SI', 2, MAX_POINTS);
  const dtype = procs.optionalNumber('$DTYPP') ?? 0;
  const bigEndian = procs.optionalNumber('$BYTORDP') === 1;
  const nc = dtype === 0 && procs.has('$NC_proc') ? procs.integer('$NC_proc', -64, 64) : 0;
  const scale = Math.pow(2, nc);
  const load = (name: string): Float64Array | undefined => {
    const p = join(pdataDir, name);
    if (!existsSync(p)) return undefined;
    const w = readWords(p, dtype, bigEndian, '$DTYPP');
    if (w.length < si)
      throw new NmrFormatError(p, '$SI', `procs says ${si} points but the file holds ${w.length}`);
    const out = w.subarray(0, si);
    for (let i = 0; i < si; i++) out[i]! *= scale;
    return Float64Array.from(out);
  };
  const real = load('1r');
  if (!real)
    throw new NmrFormatError(
      join(pdataDir, '1r'),
      'file',
      'not found',
      'process the data (ft) or read the raw fid',
    );
  // REVERSE= yes needs nothing here: TopSpin's ft flipped the spectrum before writing 1r, and its
  // axis (OFFSET, SW_p) describes the points as written, highest ppm first.
  const sf = procs.positive('$SF');
  const swPpm = procs.positive('$SW_p') / sf;
  const offset = procs.number('$OFFSET');
  const spectrum: Spectrum = {
    real,
    ppmFirst: offset,
    ppmLast: offset - (swPpm * (si - 1)) / si,
    refMHz: sf,
    source: join(pdataDir, '1r'),
  };
  const imag = load('1i');
  if (imag) spectrum.imag = imag;
  return spectrum;
}

/** True when dir looks like a Bruker experiment (acqus) or processing (procs) folder. */
export function isBrukerDir(dir: string): boolean {
  return (
    existsSync(dir) &&
    statSync(dir).isDirectory() &&
    (existsSync(join(dir, 'acqus')) || existsSync(join(dir, 'procs')))
  );
}

/** Reads a Bruker folder: the fid (or ser rows) of an expno folder, or 1r of a pdata folder. */
export function readBruker(dir: string, prefer: 'raw' | 'processed' = 'raw'): NmrData {
  if (existsSync(join(dir, 'procs')) && !existsSync(join(dir, 'acqus')))
    return { kind: 'spectrum', spectrum: readBrukerProcessed(dir) };
  const hasFid = existsSync(join(dir, 'fid'));
  const hasSer = existsSync(join(dir, 'ser'));
  const processed = join(dir, 'pdata', '1');
  if ((prefer === 'processed' || (!hasFid && !hasSer)) && existsSync(join(processed, '1r'))) {
    return { kind: 'spectrum', spectrum: readBrukerProcessed(processed) };
  }
  if (hasFid) return { kind: 'fid', fid: readBrukerFid(dir) };
  if (hasSer) return { kind: 'fids', fids: readBrukerSer(dir) };
  throw new NmrFormatError(
    dir,
    'fid',
    'no fid, ser or pdata/1/1r in this folder',
    'point at a Bruker expno folder',
  );
}
