// Reader for Varian / Agilent VnmrJ experiment folders (name.fid/ with fid and procpar), written
// from the format description in the VnmrJ User Programming manual ("Parameters and data"):
//   a 32-byte file header (big-endian: nblocks, ntraces, np, ebytes, tbytes, bbytes as int32,
//   vers_id and status as int16, nbheaders as int32), then nblocks blocks, each nbheaders 28-byte
//   block headers followed by ntraces traces of np numbers (int16, int32 or float32 by the status
//   bits), real and imaginary parts interleaved.
// Arrayed 1D experiments (one FID per block or trace) become a series of FIDs, as a Bruker ser file.
// VnmrJ's own processing choices are taken as VnmrJ's ft and display apply them (OpenVnmrJ: the FID
// shift in df2d.c, the phasing in displayops.c): the FID shift lsfid when it is on, the phases rp and
// lp (converted to tailor's convention, see vnmrjPhase), the line broadening lb when it is on.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { NmrFormatError, readNmrFile } from './errors.js';
import { Procpar } from './procpar.js';
import type { Fid, NmrData } from '../types.js';

const FILE_HEADER_BYTES = 32;
const BLOCK_HEADER_BYTES = 28;
/** More complex points than any 1D acquisition. */
const MAX_POINTS = 1 << 26;
/** More FIDs than any arrayed experiment. */
const MAX_TRACES = 1 << 20;

/** Status bits of the file header (VnmrJ's data.h). */
const S_DATA = 0x1;
const S_SPEC = 0x2;
const S_32 = 0x4;
const S_FLOAT = 0x8;

/** The file header of a VnmrJ data file. */
export interface VarianFileHeader {
  nblocks: number;
  ntraces: number;
  np: number;
  ebytes: number;
  tbytes: number;
  bbytes: number;
  status: number;
  nbheaders: number;
  littleEndian: boolean;
}

function headerAt(buf: Buffer, littleEndian: boolean): VarianFileHeader {
  const v = new DataView(buf.buffer, buf.byteOffset, FILE_HEADER_BYTES);
  return {
    nblocks: v.getInt32(0, littleEndian),
    ntraces: v.getInt32(4, littleEndian),
    np: v.getInt32(8, littleEndian),
    ebytes: v.getInt32(12, littleEndian),
    tbytes: v.getInt32(16, littleEndian),
    bbytes: v.getInt32(20, littleEndian),
    status: v.getInt16(26, littleEndian),
    nbheaders: v.getInt32(28, littleEndian),
    littleEndian,
  };
}

/** What is wrong with a header read in one byte order, or undefined when it is consistent. */
function headerProblem(h: VarianFileHeader): string | undefined {
  if (h.nblocks < 1 || h.ntraces < 1 || h.nblocks * h.ntraces > MAX_TRACES)
    return `nblocks ${h.nblocks} x ntraces ${h.ntraces} is not a number of FIDs in 1..${MAX_TRACES}`;
  if (h.np < 4 || h.np % 2 !== 0 || h.np / 2 > MAX_POINTS)
    return `np ${h.np} is not an even number of values in 4..${2 * MAX_POINTS}`;
  if (h.ebytes !== 2 && h.ebytes !== 4) return `ebytes ${h.ebytes} is not 2 or 4`;
  if (h.tbytes !== h.np * h.ebytes) return `tbytes ${h.tbytes} is not np x ebytes = ${h.np * h.ebytes}`;
  if (h.nbheaders < 0 || h.nbheaders > 64) return `nbheaders ${h.nbheaders} is not in 0..64`;
  if (h.bbytes !== h.ntraces * h.tbytes + h.nbheaders * BLOCK_HEADER_BYTES)
    return `bbytes ${h.bbytes} is not ntraces x tbytes + nbheaders x ${BLOCK_HEADER_BYTES}`;
  return undefined;
}

/** Reads and checks the file header; VnmrJ writes big-endian files, converters sometimes little-endian ones. */
export function readVarianHeader(path: string, buf: Buffer): VarianFileHeader {
  if (buf.length < FILE_HEADER_BYTES)
    throw new NmrFormatError(path, 'file header', `${buf.length} bytes, shorter than the 32-byte header`);
  const big = headerAt(buf, false);
  const problem = headerProblem(big);
  const header = problem === undefined ? big : headerAt(buf, true);
  if (problem !== undefined && headerProblem(header) !== undefined)
    throw new NmrFormatError(path, 'file header', problem, 'not a VnmrJ fid file, or a corrupt one');
  if ((header.status & S_DATA) === 0)
    throw new NmrFormatError(path, 'status', 'the header says the file holds no data');
  if ((header.status & S_SPEC) !== 0)
    throw new NmrFormatError(
      path,
      'status',
      'a transformed spectrum, not a FID',
      'give the experiment folder with its raw fid file',
    );
  const expected = (header.status & (S_FLOAT | S_32)) !== 0 ? 4 : 2;
  if (header.ebytes !== expected)
    throw new NmrFormatError(
      path,
      'ebytes',
      `${header.ebytes} bytes per value, but the status bits say ${expected === 4 ? '32-bit' : '16-bit'} data`,
      'the file is corrupt',
    );
  const needed = FILE_HEADER_BYTES + header.nblocks * header.bbytes;
  if (buf.length < needed)
    throw new NmrFormatError(
      path,
      'size',
      `the header describes ${header.nblocks} blocks of ${header.bbytes} bytes (${needed} bytes) but the file holds ${buf.length}`,
      'the fid file is truncated: an acquisition stopped early, or an incomplete copy',
    );
  return header;
}

/** A VnmrJ nucleus name ('H1', 'C13', 'P31') in the mass-first form of the other readers ('1H'). */
function nucleusName(tn: string | undefined): string | undefined {
  const m = /^([A-Za-z]{1,2})(\d{1,3})$/.exec(tn?.trim() ?? '');
  return m ? `${m[2]}${m[1]}` : tn?.trim() || undefined;
}

/** The frequency (MHz) of 0 ppm: reffrq when referenced, else from rfl/rfp as VnmrJ defines them. */
function referenceMHz(procpar: Procpar, sfrqMHz: number, swHz: number): number {
  const reffrq = procpar.optionalNumber('reffrq');
  if (reffrq !== undefined && reffrq > 0) return reffrq;
  // rfl: where the reference line is, in Hz from the right edge of the spectrum; rfp: the shift it
  // is given (Hz). The carrier, at the centre, is then sw/2 - rfl + rfp Hz from 0 ppm.
  const rfl = procpar.optionalNumber('rfl') ?? 0;
  const rfp = procpar.optionalNumber('rfp') ?? 0;
  return sfrqMHz - (swHz / 2 - rfl + rfp) / 1e6;
}

/** An arrayed parameter's value for block b (its only value when it is not arrayed), if a whole number >= 1. */
function numberAt(values: (number | string)[], b: number): number | undefined {
  const v = values.length > 1 ? values[b] : values[0];
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;
}

/**
 * VnmrJ's phase (rp, lp in degrees) in tailor's convention (see applyPhase). VnmrJ multiplies point
 * i of its N-point spectrum (index 0 at the high-frequency edge, as in tailor) by
 * exp(-i (rp + lp (1 - i / (N - 1)))): the pivot of lp is the right (low-frequency) edge, where the
 * phase is rp, and the left edge gets rp + lp. VnmrJ transforms the FID as stored, tailor its
 * conjugate (see readVarianFids), so tailor's complex spectrum is the conjugate of VnmrJ's at every
 * frequency and the same real part needs the opposite rotation: p0 = -(rp + lp) at the left edge,
 * and p1 = lp N / (N - 1), which keeps VnmrJ's phase per Hz whatever size tailor transforms to.
 *
 * @param rp VnmrJ's zero-order phase (degrees).
 * @param lp VnmrJ's first-order phase (degrees).
 * @param points N: the complex points of VnmrJ's spectrum (fn / 2).
 * @returns The phase for processFid (degrees).
 */
export function vnmrjPhase(rp: number, lp: number, points: number): { p0: number; p1: number } {
  return { p0: -(rp + lp), p1: (lp * points) / Math.max(1, points - 1) };
}

/**
 * The FID shifted by VnmrJ's lsfid: k > 0 drops the first k complex points, k < 0 puts -k zeros in
 * front (the FID grows by -k points: VnmrJ keeps every acquired point and zero-fills after them).
 */
export function shiftFid(
  re: Float64Array,
  im: Float64Array,
  k: number,
): { re: Float64Array; im: Float64Array } {
  if (k >= 0) return { re: re.slice(k), im: im.slice(k) };
  const outRe = new Float64Array(re.length - k);
  const outIm = new Float64Array(re.length - k);
  outRe.set(re, -k);
  outIm.set(im, -k);
  return { re: outRe, im: outIm };
}

/** The complex points of VnmrJ's spectrum: fn / 2 when fn is on, else np rounded up to a power of two, halved. */
function spectrumPoints(procpar: Procpar, np: number): number {
  const fn = procpar.activeNumber('fn');
  if (fn !== undefined && Number.isInteger(fn) && fn >= 4) return fn / 2;
  let p = 2;
  while (p < np) p *= 2;
  return p / 2;
}

/** The stored phase: rp and lp (active), converted; undefined when both are 0 (never phased). */
function storedPhase(procpar: Procpar, np: number): { p0: number; p1: number } | undefined {
  const rp = procpar.activeNumber('rp') ?? 0;
  const lp = procpar.activeNumber('lp') ?? 0;
  if (rp === 0 && lp === 0) return undefined;
  return vnmrjPhase(rp, lp, spectrumPoints(procpar, np));
}

/** lsfid when it is on and not 0; checked against the FID length. */
function leftShiftOf(procpar: Procpar, points: number): number | undefined {
  const k = procpar.activeNumber('lsfid');
  if (k === undefined || k === 0) return undefined;
  if (!Number.isInteger(k) || Math.abs(k) >= points)
    throw new NmrFormatError(
      procpar.file,
      'lsfid',
      `${k} is not a shift of a ${points}-point FID (a whole number of points, less than the FID length either way)`,
      'set lsfid to a valid shift, or turn it off (lsfid = n)',
    );
  return k;
}

/** Refuses multidimensional experiments: their traces are increments of an indirect dimension, not FIDs to denoise. */
function checkOneDimensional(procpar: Procpar): void {
  for (const name of ['ni', 'ni2', 'ni3']) {
    const n = procpar.activeNumber(name);
    if (n !== undefined && n > 1)
      throw new NmrFormatError(
        procpar.file,
        name,
        `a multidimensional experiment (${name} = ${n})`,
        'tailor reads 1D FIDs and arrayed 1D series',
      );
  }
}

/** Reads a VnmrJ experiment: every FID of the fid file, with the acquisition parameters of procpar. */
export function readVarianFids(dir: string): Fid[] {
  const procparPath = join(dir, 'procpar');
  const fidPath = join(dir, 'fid');
  for (const p of [procparPath, fidPath])
    if (!existsSync(p))
      throw new NmrFormatError(p, 'file', 'not found', 'a VnmrJ experiment folder holds fid and procpar');
  const procpar = Procpar.parse(procparPath, readNmrFile(procparPath).toString('latin1'));
  checkOneDimensional(procpar);
  const buf = readNmrFile(fidPath);
  const h = readVarianHeader(fidPath, buf);
  const swHz = procpar.positive('sw');
  const sfrq = procpar.positive('sfrq');
  const refMHz = referenceMHz(procpar, sfrq, swHz);
  if (!(refMHz > 0))
    throw new NmrFormatError(procparPath, 'reffrq', `the reference frequency ${refMHz} MHz is not positive`);
  const lbHz = procpar.activeNumber('lb');
  const nucleus = nucleusName(procpar.string('tn'));
  const phase = storedPhase(procpar, h.np);
  const shift = leftShiftOf(procpar, h.np / 2);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const le = h.littleEndian;
  const read =
    (h.status & S_FLOAT) !== 0
      ? (o: number) => view.getFloat32(o, le)
      : h.ebytes === 4
        ? (o: number) => view.getInt32(o, le)
        : (o: number) => view.getInt16(o, le);
  const n = h.np / 2;
  const total = h.nblocks * h.ntraces;
  const fids: Fid[] = [];
  for (let b = 0; b < h.nblocks; b++) {
    const blockStart = FILE_HEADER_BYTES + b * h.bbytes + h.nbheaders * BLOCK_HEADER_BYTES;
    // ctcount of the block header: the transients completed for this block's FIDs.
    const ct = h.nbheaders > 0 ? view.getInt32(FILE_HEADER_BYTES + b * h.bbytes + 8, le) : 0;
    const scans = ct >= 1 ? ct : numberAt(procpar.values('nt'), b);
    for (let t = 0; t < h.ntraces; t++) {
      const start = blockStart + t * h.tbytes;
      const re = new Float64Array(n);
      const im = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        re[i] = read(start + 2 * i * h.ebytes);
        // VnmrJ's quadrature pair has the opposite frequency sign to TopSpin's (nmrglue and NMRPy
        // reverse Bruker spectra, not VnmrJ ones): the conjugate puts the highest ppm first, as
        // for every other reader.
        im[i] = -read(start + (2 * i + 1) * h.ebytes);
      }
      const bad = re.findIndex((v, i) => !Number.isFinite(v) || !Number.isFinite(im[i]!));
      if (bad >= 0)
        throw new NmrFormatError(
          fidPath,
          `FID ${b * h.ntraces + t}`,
          `point ${bad} is not a finite number`,
          'the file is corrupt',
        );
      const shifted = shift === undefined ? { re, im } : shiftFid(re, im, shift);
      const fid: Fid = {
        re: shifted.re,
        im: shifted.im,
        swHz,
        refMHz,
        carrierPpm: ((sfrq - refMHz) / refMHz) * 1e6,
        groupDelay: 0,
        source: total === 1 ? fidPath : `${fidPath}[FID ${b * h.ntraces + t}]`,
      };
      if (nucleus) fid.nucleus = nucleus;
      if (lbHz !== undefined) fid.lbHz = lbHz;
      if (scans !== undefined) fid.scans = scans;
      if (phase) {
        fid.phase = phase;
        fid.phaseSource = 'procpar rp/lp';
      }
      if (shift !== undefined) fid.leftShift = shift;
      fids.push(fid);
    }
  }
  return fids;
}

/** True when dir is a VnmrJ experiment folder: a fid file beside a procpar file. */
export function isVarianDir(dir: string): boolean {
  return (
    existsSync(dir) &&
    statSync(dir).isDirectory() &&
    existsSync(join(dir, 'fid')) &&
    existsSync(join(dir, 'procpar')) &&
    !existsSync(join(dir, 'acqus'))
  );
}

/** The experiment folder of a path that names a VnmrJ fid file (a fid with a procpar beside it), or undefined. */
export function varianDirOfFile(path: string): string | undefined {
  if (basename(path) !== 'fid') return undefined;
  const dir = dirname(path);
  return existsSync(join(dir, 'procpar')) && !existsSync(join(dir, 'acqus')) ? dir : undefined;
}

/** Reads a VnmrJ experiment folder: one FID, or a series for an arrayed experiment. */
export function readVarian(dir: string): NmrData {
  const fids = readVarianFids(dir);
  return fids.length === 1 ? { kind: 'fid', fid: fids[0]! } : { kind: 'fids', fids };
}
