// A JCAMP-DX 5.01 writer for real 1D spectra (##XYDATA=(X++(Y..Y)), AFFN, ppm axis), readable by
// src/nmr/io/jcamp.ts and by common NMR software. Y values are stored as integers times YFACTOR
// (nine significant digits of the largest value), ten per line after the line's X.
import { writeFileAtomic } from '../../util/fs.js';
import type { Spectrum } from '../types.js';
import { checkSpectrum, checksOf } from '../arguments.js';

export function formatJcampSpectrum(s: Spectrum, title: string): string {
  const n = s.real.length;
  if (n < 2) throw new RangeError('formatJcampSpectrum: need at least two points');
  let maxAbs = 0;
  for (const v of s.real) {
    if (!Number.isFinite(v)) throw new RangeError(`formatJcampSpectrum: non-finite intensity in ${title}`);
    maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  const yFactor = maxAbs > 0 ? maxAbs / 1e9 : 1;
  const deltaX = (s.ppmLast - s.ppmFirst) / (n - 1);
  const header = [
    `##TITLE=${title.replace(/[\r\n]+/g, ' ')}`,
    '##JCAMP-DX=5.01',
    '##DATA TYPE=NMR SPECTRUM',
    '##DATA CLASS=XYDATA',
    '##ORIGIN=tailor nmr denoise',
    '##OWNER=',
  ];
  if (Number.isFinite(s.refMHz)) header.push(`##.OBSERVE FREQUENCY=${s.refMHz}`);
  if (s.nucleus) header.push(`##.OBSERVE NUCLEUS=^${s.nucleus.replace(/^\^/, '')}`);
  header.push(
    '##XUNITS=PPM',
    '##YUNITS=ARBITRARY UNITS',
    `##XFACTOR=1`,
    `##YFACTOR=${yFactor.toPrecision(12)}`,
    `##FIRSTX=${s.ppmFirst.toPrecision(12)}`,
    `##LASTX=${s.ppmLast.toPrecision(12)}`,
    `##DELTAX=${deltaX.toPrecision(12)}`,
    `##NPOINTS=${n}`,
    `##FIRSTY=${(Math.round(s.real[0]! / yFactor) * yFactor).toPrecision(12)}`,
    '##XYDATA=(X++(Y..Y))',
  );
  const lines: string[] = [];
  for (let i = 0; i < n; i += 10) {
    const ys: string[] = [];
    for (let j = i; j < Math.min(n, i + 10); j++) ys.push(String(Math.round(s.real[j]! / yFactor)));
    lines.push(`${(s.ppmFirst + i * deltaX).toPrecision(12)} ${ys.join(' ')}`);
  }
  return [...header, ...lines, '##END='].join('\n') + '\n';
}

/**
 * Writes a spectrum as JCAMP-DX (XYDATA, readable by MestReNova, TopSpin and the JCAMP readers), atomically.
 * @param title The ##TITLE= of the file.
 * @throws `OutputError` (from `tailor`) when the file cannot be written.
 */
export function writeJcampSpectrum(path: string, s: Spectrum, title: string): void {
  const c = checksOf('writeJcampSpectrum');
  c.string(path, 'path');
  checkSpectrum(c, s);
  if (typeof title !== 'string') c.fail('title', 'a string', title);
  writeFileAtomic(path, formatJcampSpectrum(s, title));
}
