// Files in the layouts of VnmrJ (fid + procpar) and Magritek Spinsolve (.1d, acqu.par, JCAMP-DX
// FID exports), written from their format descriptions, for the reader tests and the fuzz seeds.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { NmrFormatError } from '../../src/nmr/io/errors.js';

/** One procpar parameter as VnmrJ writes it (basic type 1 real, 2 string; active flag). */
export function param(name: string, values: (number | string)[], active = true): string {
  const string = values.some((v) => typeof v === 'string');
  const header = `${name} ${string ? 2 : 1} ${string ? 2 : 1} 1e+18 -1e+18 0 2 1 0 ${active ? 1 : 0} 64`;
  const body = string
    ? `${values.length} ${values.map((v) => `"${String(v).replace(/"/g, '\\"')}"`).join('\n')}`
    : `${values.length} ${values.join(' ')} `;
  return `${header}\n${body}\n0 \n`;
}

export interface Trace {
  re: number[];
  im: number[];
}

export type DataType = 'float32' | 'int32' | 'int16';

/** A VnmrJ fid file: file header, then per block nbheaders 28-byte headers (with ctcounts[b], else 0) and ntraces traces. */
export function fidFile(
  blocks: Trace[][],
  type: DataType,
  littleEndian = false,
  status?: number,
  ctcounts: number[] = [],
): Buffer {
  const ebytes = type === 'int16' ? 2 : 4;
  const ntraces = blocks[0]!.length;
  const np = blocks[0]![0]!.re.length * 2;
  const nbheaders = 1;
  const tbytes = np * ebytes;
  const bbytes = ntraces * tbytes + nbheaders * 28;
  const buf = Buffer.alloc(32 + blocks.length * bbytes);
  const v = new DataView(buf.buffer);
  [blocks.length, ntraces, np, ebytes, tbytes, bbytes].forEach((x, i) => v.setInt32(4 * i, x, littleEndian));
  v.setInt16(24, 0, littleEndian);
  const bits = 0x1 | 0x10 | (type === 'float32' ? 0x8 : type === 'int32' ? 0x4 : 0) | 0x40;
  v.setInt16(26, status ?? bits, littleEndian);
  v.setInt32(28, nbheaders, littleEndian);
  blocks.forEach((traces, b) => {
    let o = 32 + b * bbytes;
    v.setInt16(o + 4, b + 1, littleEndian); // block index
    v.setInt32(o + 8, ctcounts[b] ?? 0, littleEndian); // ctcount: transients completed
    o += 28 * nbheaders;
    for (const t of traces)
      for (let i = 0; i < t.re.length; i++)
        for (const x of [t.re[i]!, t.im[i]!]) {
          if (type === 'float32') v.setFloat32(o, x, littleEndian);
          else if (type === 'int32') v.setInt32(o, x, littleEndian);
          else v.setInt16(o, x, littleEndian);
          o += ebytes;
        }
  });
  return buf;
}

export const SW = 6000;
export const SFRQ = 400.13;
export const CARRIER_PPM = 4.7;
/** reffrq that puts the carrier (the spectrum's centre) at CARRIER_PPM. */
export const REFFRQ = SFRQ / (1 + CARRIER_PPM * 1e-6);

/**
 * A decaying line `offsetHz` above the carrier, stored as VnmrJ stores it: a line at a higher
 * frequency than the carrier turns clockwise (exp(-i w t)), the opposite of TopSpin's sense.
 */
export function line(n: number, offsetHz: number, amplitude: number, round = false): Trace {
  const re: number[] = [];
  const im: number[] = [];
  for (let j = 0; j < n; j++) {
    const t = j / SW;
    const a = amplitude * Math.exp(-t * 8);
    const w = 2 * Math.PI * offsetHz * t;
    re.push(round ? Math.round(a * Math.cos(w)) : a * Math.cos(w));
    im.push(round ? Math.round(-a * Math.sin(w)) : -a * Math.sin(w));
  }
  return { re, im };
}

export function experiment(dir: string, fid: Buffer, extra = ''): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fid'), fid);
  writeFileSync(
    join(dir, 'procpar'),
    param('sw', [SW]) +
      param('sfrq', [SFRQ]) +
      param('reffrq', [REFFRQ]) +
      param('tn', ['H1']) +
      param('lb', [0.5]) +
      param('seqfil', ['s2pul']) +
      extra,
  );
  return dir;
}

export function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'tailor-varian-'));
}

/** A JCAMP-DX NTUPLES FID as Magritek Spinsolve writes it ($SF, $BF1, a parenthesised shift reference, $REVERSE). */
export function spinsolveJcamp(
  trace: Trace,
  reverse: 'yes' | 'no',
  sw: number,
  sf: number,
  bf1: number,
): string {
  const n = trace.re.length;
  const table = (values: number[]): string => values.map((v, i) => `${i} ${v.toPrecision(10)}`).join('\n');
  return [
    '##TITLE= synthetic benchtop FID',
    '##JCAMP-DX= 5.01 $$ Magritek Spinsolve',
    '##DATA TYPE= NMR FID',
    '##DATA CLASS= NTUPLES',
    `##.OBSERVE FREQUENCY= ${bf1}`,
    '##.OBSERVE NUCLEUS= ^1H',
    '##.AVERAGES= 8',
    `##.SHIFT REFERENCE= (INTERNAL, Water, ${n + 1}, 4.74)`,
    `##$SW= ${sw / bf1}`,
    `##$BF1= ${bf1}`,
    `##$SF= ${sf}`,
    '##$PHC0= 4.5',
    '##$PHC1= 0.0',
    `##$REVERSE= ${reverse}`,
    '##NTUPLES= NMR FID',
    '##VAR_NAME= TIME, FID/REAL, FID/IMAG, PAGE NUMBER',
    '##SYMBOL= X, R, I, N',
    '##VAR_TYPE= INDEPENDENT, DEPENDENT, DEPENDENT, PAGE',
    '##VAR_FORM= AFFN, AFFN, AFFN, AFFN',
    `##VAR_DIM= ${n}, ${n}, ${n}, 2`,
    '##UNITS= SECONDS, ARBITRARY UNITS, ARBITRARY UNITS,',
    `##FIRST= 0, ${trace.re[0]}, ${trace.im[0]}, 1`,
    `##LAST= ${(n - 1) / sw}, ${trace.re[n - 1]}, ${trace.im[n - 1]}, 2`,
    '##FACTOR= 1, 1, 1, 1',
    '##PAGE= N=1',
    `##NPOINTS= ${n}`,
    '##DATA TABLE= (X++(R..R)), XYDATA',
    table(trace.re),
    '##PAGE= N=2',
    `##NPOINTS= ${n}`,
    '##DATA TABLE= (X++(I..I)), XYDATA',
    table(trace.im),
    '##END NTUPLES= NMR FID',
    '##END=',
    '',
  ].join('\n');
}

/** A Spinsolve .1d file: the 32-byte header, then (type 504) the x axis and the complex points. */
export function oneD(x: number[], trace: Trace, dims = [x.length, 1, 1, 1], type = 504): Buffer {
  const n = trace.re.length;
  const buf = Buffer.alloc(32 + 4 * (x.length + 2 * n));
  buf.write('SORPATAD1.1V', 0, 'latin1');
  buf.writeInt32LE(type, 12);
  dims.forEach((d, i) => buf.writeInt32LE(d, 16 + 4 * i));
  x.forEach((v, i) => buf.writeFloatLE(v, 32 + 4 * i));
  for (let i = 0; i < n; i++) {
    buf.writeFloatLE(trace.re[i]!, 32 + 4 * (x.length + 2 * i));
    buf.writeFloatLE(trace.im[i]!, 32 + 4 * (x.length + 2 * i + 1));
  }
  return buf;
}

export const ACQU_PAR = (bandwidthKHz: number, b1: number, lowest: number): string =>
  [
    'Solvent                             = "Water"',
    `b1Freq                              = ${b1}`,
    `bandwidth                           = ${bandwidthKHz}`,
    `lowestFrequency                     = ${lowest}`,
    'nrScans                             = 8',
    'rxChannel                           = "1H"',
    'graphTitle                          = "1D-1H-"Auto"-20--10"',
    '',
  ].join('\n');

/** Asserts that fn throws an NmrFormatError whose message matches; name labels the case. */
export function assertNamedError(fn: () => unknown, message: RegExp, name: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof NmrFormatError, `${name}: ${String(e)}`);
    assert.match(e.message, message, name);
    return true;
  });
}
