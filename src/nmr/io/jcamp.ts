// JCAMP-DX reader for 1D NMR: spectra as (X++(Y..Y)) XYDATA, and FIDs or complex spectra as
// NTUPLES pages (real and imaginary), in AFFN/PAC or the compressed ASDF forms (SQZ, DIF, DUP).
// Bruker-exported files carry acqus/procs parameters as ##$ labels, which give the group delay,
// the carrier and the phase. Linked files (##BLOCKS) are searched for the block with the data.
import { decodeXyTable } from './asdf.js';
import { NmrFormatError, readNmrFile } from './errors.js';
import { ParameterSet, parseLabelledRecords, type LabelledRecord } from './labels.js';
import { brukerGroupDelay } from './dsp.js';
import type { Fid, NmrData, Spectrum } from '../types.js';

interface Block {
  records: LabelledRecord[];
}

/** Splits the records into blocks: nested ##TITLE ... ##END pairs (LINK files hold several). */
function splitBlocks(records: LabelledRecord[]): Block[] {
  const blocks: Block[] = [];
  const stack: Block[] = [];
  for (const r of records) {
    if (r.label === 'TITLE') {
      const b: Block = { records: [] };
      stack.push(b);
      blocks.push(b);
    }
    const top = stack[stack.length - 1];
    if (top) top.records.push(r);
    if (r.label === 'END') stack.pop();
  }
  return blocks.length ? blocks : [{ records }];
}

/** The data lines of a record whose first line is a format descriptor such as (X++(Y..Y)). */
function dataLines(r: LabelledRecord): { head: string; lines: string[]; firstLine: number } {
  const parts = r.value.split('\n');
  return { head: parts[0]!.trim(), lines: parts.slice(1), firstLine: r.line + 1 };
}

/** A comma-separated list, with or without its parentheses ('(INTERNAL, TMS, 1, 0)'). */
function listField(params: ParameterSet, label: string): string[] | undefined {
  const raw = params.raw(label);
  if (raw === undefined) return undefined;
  const t = raw.trim();
  const body = t.startsWith('(') && t.endsWith(')') ? t.slice(1, -1) : t;
  return body.split(',').map((s) => s.trim());
}

function numberAt(file: string, params: ParameterSet, label: string, index: number): number | undefined {
  const list = listField(params, label);
  if (!list || list[index] === undefined || list[index] === '') return undefined;
  const v = Number(list[index]);
  if (!Number.isFinite(v))
    throw new NmrFormatError(file, label, `entry ${index + 1} '${list[index]}' is not a number`);
  return v;
}

/** Observe frequency in MHz from .OBSERVE FREQUENCY or Bruker $SF/$BF1. */
function observeMHz(params: ParameterSet): number {
  return (
    params.optionalNumber('.OBSERVE FREQUENCY') ??
    params.optionalNumber('$SF') ??
    params.optionalNumber('$BF1') ??
    NaN
  );
}

function nucleusOf(params: ParameterSet): string | undefined {
  const n = params.string('.OBSERVE NUCLEUS');
  return n ? n.replace(/^\^/, '') : undefined;
}

function readXyData(file: string, params: ParameterSet, record: LabelledRecord): Spectrum {
  const { head, lines, firstLine } = dataLines(record);
  if (!/\(X\+\+\(Y\.\.Y\)\)/i.test(head.replace(/\s/g, ''))) {
    throw new NmrFormatError(
      file,
      'XYDATA',
      `unsupported table form '${head}'`,
      'only (X++(Y..Y)) is supported for XYDATA',
    );
  }
  const table = decodeXyTable(lines, file, firstLine);
  const npoints = params.optionalNumber('NPOINTS');
  if (npoints !== undefined && npoints !== table.y.length) {
    throw new NmrFormatError(
      file,
      'NPOINTS',
      `header says ${npoints} points but the table holds ${table.y.length}`,
    );
  }
  const yFactor = params.optionalNumber('YFACTOR') ?? 1;
  const real = table.y.map((v) => v * yFactor);
  const firstX = params.number('FIRSTX');
  const lastX = params.number('LASTX');
  const units = (params.string('XUNITS') ?? 'HZ').toUpperCase();
  const mhz = observeMHz(params);
  let ppmFirst = firstX;
  let ppmLast = lastX;
  if (units.startsWith('HZ')) {
    if (!(mhz > 0))
      throw new NmrFormatError(
        file,
        '.OBSERVE FREQUENCY',
        'missing, but needed to convert the Hz axis to ppm',
      );
    ppmFirst = firstX / mhz;
    ppmLast = lastX / mhz;
  } else if (!units.startsWith('PPM')) {
    throw new NmrFormatError(file, 'XUNITS', `unsupported unit '${units}'`, 'expected HZ or PPM');
  }
  if (ppmFirst < ppmLast) {
    real.reverse();
    [ppmFirst, ppmLast] = [ppmLast, ppmFirst];
  }
  const spectrum: Spectrum = { real, ppmFirst, ppmLast, refMHz: mhz, source: file };
  const nucleus = nucleusOf(params);
  if (nucleus) spectrum.nucleus = nucleus;
  return spectrum;
}

/** Reads the pages of an NTUPLES block: symbol ('R', 'I') -> values times their factor. */
function readPages(file: string, params: ParameterSet, records: LabelledRecord[]): Map<string, Float64Array> {
  const symbols = listField(params, 'SYMBOL') ?? [];
  const pages = new Map<string, Float64Array>();
  for (const r of records) {
    if (r.label !== 'DATATABLE') continue;
    const { head, lines, firstLine } = dataLines(r);
    const m = /\(\s*X\+\+\(\s*(\w+)\.\.\w+\)\)/i.exec(head.replace(/\s/g, ''));
    if (!m)
      throw new NmrFormatError(
        file,
        `DATA TABLE (line ${r.line})`,
        `unsupported table form '${head}'`,
        'expected (X++(R..R)) or (X++(I..I))',
      );
    const symbol = m[1]!.toUpperCase();
    const index = symbols.findIndex((s) => s.toUpperCase() === symbol);
    if (index < 0)
      throw new NmrFormatError(
        file,
        'SYMBOL',
        `no variable with symbol '${symbol}' used by the table at line ${r.line}`,
      );
    const factor = numberAt(file, params, 'FACTOR', index) ?? 1;
    const table = decodeXyTable(lines, file, firstLine);
    pages.set(
      symbol,
      table.y.map((v) => v * factor),
    );
  }
  return pages;
}

function readNtuples(file: string, params: ParameterSet, records: LabelledRecord[]): NmrData {
  const pages = readPages(file, params, records);
  const re = pages.get('R');
  const im = pages.get('I');
  if (!re) throw new NmrFormatError(file, 'DATA TABLE', 'no real page (symbol R)');
  if (im && im.length !== re.length)
    throw new NmrFormatError(
      file,
      'DATA TABLE',
      `real (${re.length}) and imaginary (${im.length}) pages differ in length`,
    );
  const symbols = listField(params, 'SYMBOL') ?? [];
  const xIndex = Math.max(
    0,
    symbols.findIndex((s) => s.toUpperCase() === 'X'),
  );
  const dim = numberAt(file, params, 'VAR DIM', 1);
  if (dim !== undefined && dim !== re.length)
    throw new NmrFormatError(
      file,
      'VAR_DIM',
      `header says ${dim} points but the real page holds ${re.length}`,
    );
  const firstX = numberAt(file, params, 'FIRST', xIndex) ?? 0;
  const lastX = numberAt(file, params, 'LAST', xIndex);
  const n = re.length;
  if (n < 2)
    throw new NmrFormatError(file, 'DATA TABLE', `${n} points; a spectrum or FID needs at least two`);
  const dataType = (params.string('NTUPLES') ?? params.string('DATA TYPE') ?? '').toUpperCase();
  const mhz = observeMHz(params);
  if (dataType.includes('FID')) {
    const swHz = params.optionalNumber('$SW_h') ?? (lastX !== undefined ? (n - 1) / (lastX - firstX) : NaN);
    if (!Number.isFinite(swHz) || swHz <= 0)
      throw new NmrFormatError(file, 'LAST', 'cannot derive the dwell time (no $SW_h and no X range)');
    if (!(mhz > 0)) throw new NmrFormatError(file, '.OBSERVE FREQUENCY', 'missing or not positive');
    const refMHz = params.optionalNumber('$SF') ?? params.optionalNumber('$BF1') ?? mhz;
    if (!(refMHz > 0)) throw new NmrFormatError(file, '$SF', `reference frequency ${refMHz} is not positive`);
    // The carrier: $SFO1 (Bruker), else the observe frequency when $SF says where 0 ppm is
    // (Spinsolve writes both), else the shift reference below.
    const sfo1 = params.optionalNumber('$SFO1') ?? (params.has('$SF') ? mhz : undefined);
    let carrierPpm = sfo1 !== undefined ? ((sfo1 - refMHz) / refMHz) * 1e6 : 0;
    const shiftRef = listField(params, '.SHIFT REFERENCE');
    if (sfo1 === undefined && shiftRef && shiftRef.length >= 4) {
      // (INTERNAL|EXTERNAL, compound, point number, shift): point p (1-based, from the high-ppm end)
      // of the spectrum has the given shift.
      const p = Number(shiftRef[2]);
      const value = Number(shiftRef[3]);
      const swPpm = swHz / refMHz;
      if (Number.isFinite(p) && Number.isFinite(value))
        carrierPpm = value - swPpm / 2 + ((p - 1) * swPpm) / n;
    }
    const grp =
      params.has('$GRPDLY') || params.has('$DSPFVS')
        ? brukerGroupDelay(
            params.optionalNumber('$GRPDLY'),
            params.optionalNumber('$DSPFVS'),
            params.optionalNumber('$DECIM'),
            file,
          )
        : 0;
    // $REVERSE= yes (Spinsolve) says the spectrum runs the other way round from TopSpin's FT of
    // this FID: the conjugate FID gives the reversed spectrum, highest ppm first as for every reader.
    const reverse = /^(yes|true|1)$/i.test(params.string('$REVERSE') ?? '');
    const imag = im ?? new Float64Array(n);
    if (reverse) for (let i = 0; i < n; i++) imag[i] = -imag[i]!;
    const fid: Fid = {
      re,
      im: imag,
      swHz,
      refMHz,
      carrierPpm,
      groupDelay: grp,
      source: file,
    };
    const nucleus = nucleusOf(params);
    if (nucleus) fid.nucleus = nucleus;
    // A reversed FID's stored phase belongs to the vendor's own processing (on a Spinsolve file it
    // leaves the spectrum half dispersive): it is phased automatically instead.
    if (params.has('$PHC0') && !reverse) {
      fid.phase = { p0: params.number('$PHC0'), p1: params.optionalNumber('$PHC1') ?? 0 };
      fid.phaseSource = '$PHC0/$PHC1';
    }
    const lb = params.optionalNumber('$LB');
    if (lb !== undefined) fid.lbHz = lb;
    const scans = params.optionalNumber('$NS') ?? params.optionalNumber('.AVERAGES');
    if (scans !== undefined && Number.isInteger(scans) && scans >= 1) fid.scans = scans;
    return { kind: 'fid', fid };
  }
  // A complex spectrum: X in Hz (or ppm) from FIRST to LAST.
  if (lastX === undefined) throw new NmrFormatError(file, 'LAST', 'missing the X range of the spectrum');
  const units = (listField(params, 'UNITS')?.[xIndex] ?? 'HZ').toUpperCase();
  if (!units.startsWith('PPM') && !(mhz > 0))
    throw new NmrFormatError(file, '.OBSERVE FREQUENCY', 'missing, but needed to convert the Hz axis to ppm');
  const toPpm = units.startsWith('PPM') ? 1 : 1 / mhz;
  let real = re;
  let imag = im;
  let ppmFirst = firstX * toPpm;
  let ppmLast = lastX * toPpm;
  if (ppmFirst < ppmLast) {
    real = re.slice().reverse();
    imag = im?.slice().reverse();
    [ppmFirst, ppmLast] = [ppmLast, ppmFirst];
  }
  const spectrum: Spectrum = { real, ppmFirst, ppmLast, refMHz: mhz, source: file };
  if (imag) spectrum.imag = imag;
  return { kind: 'spectrum', spectrum };
}

/** Parses JCAMP-DX text (file is used in messages). */
export function parseJcamp(text: string, file: string): NmrData {
  // Blank lines are kept, so that data line numbers stay exact.
  const records = parseLabelledRecords(text, true);
  const blocks = splitBlocks(records);
  for (const block of blocks) {
    const params = new ParameterSet(file, block.records);
    if (params.has('NTUPLES')) return readNtuples(file, params, block.records);
    const xy = block.records.find((r) => r.label === 'XYDATA');
    if (xy) return { kind: 'spectrum', spectrum: readXyData(file, params, xy) };
    const peaks = block.records.find((r) => r.label === 'PEAKTABLE' || r.label === 'XYPOINTS');
    if (peaks && blocks.length === 1) {
      throw new NmrFormatError(
        file,
        peaks.label,
        'peak tables and XYPOINTS are not spectra',
        'export the spectrum as XYDATA',
      );
    }
  }
  throw new NmrFormatError(
    file,
    'XYDATA',
    'no ##XYDATA or ##NTUPLES block found',
    'is this a JCAMP-DX spectrum or FID?',
  );
}

export function readJcamp(path: string): NmrData {
  return parseJcamp(readNmrFile(path).toString('latin1'), path);
}
