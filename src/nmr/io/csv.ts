// CSV spectra: two columns (ppm, intensity) or three (ppm, real, imaginary), an optional header
// line, comma/semicolon/tab separated. Written with a '# ' comment header giving the source.
import { writeFileAtomic } from '../../util/fs.js';
import { NmrFormatError, readNmrFile } from './errors.js';
import type { Spectrum } from '../types.js';
import { checkSpectrum, checksOf } from '../arguments.js';

export function parseCsvSpectrum(text: string, file: string): Spectrum {
  const ppm: number[] = [];
  const re: number[] = [];
  const im: number[] = [];
  const lines = text.split(/\r\n|\r|\n/);
  let columns = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const cells = line.split(/[,;\t]|\s+/).filter((c) => c !== '');
    const nums = cells.map(Number);
    if (nums.some((v) => !Number.isFinite(v))) {
      if (ppm.length === 0 && columns === 0) {
        columns = -1; // a header line
        continue;
      }
      throw new NmrFormatError(file, `line ${i + 1}`, `not a number in '${line.slice(0, 40)}'`);
    }
    if (nums.length < 2)
      throw new NmrFormatError(file, `line ${i + 1}`, 'expected at least two columns (ppm, intensity)');
    if (columns > 0 && nums.length !== columns)
      throw new NmrFormatError(file, `line ${i + 1}`, `expected ${columns} columns, found ${nums.length}`);
    columns = nums.length;
    ppm.push(nums[0]!);
    re.push(nums[1]!);
    if (nums.length > 2) im.push(nums[2]!);
  }
  if (ppm.length < 2) throw new NmrFormatError(file, 'rows', 'fewer than two data rows');
  const n = ppm.length;
  const step = (ppm[n - 1]! - ppm[0]!) / (n - 1);
  for (let i = 1; i < n; i++) {
    if (Math.abs(ppm[i]! - ppm[0]! - i * step) > 1e-3 * Math.abs(step) + 1e-9) {
      throw new NmrFormatError(
        file,
        `line of point ${i + 1}`,
        'the ppm axis is not evenly spaced',
        'resample the spectrum to a uniform axis',
      );
    }
  }
  let real = Float64Array.from(re);
  let imag = im.length ? Float64Array.from(im) : undefined;
  let first = ppm[0]!;
  let last = ppm[n - 1]!;
  if (first < last) {
    real = real.reverse();
    imag = imag?.reverse();
    [first, last] = [last, first];
  }
  const spectrum: Spectrum = { real, ppmFirst: first, ppmLast: last, refMHz: NaN, source: file };
  const mhz = commentFrequency(lines);
  if (mhz !== undefined) spectrum.refMHz = mhz;
  if (imag) spectrum.imag = imag;
  return spectrum;
}

/**
 * The spectrometer frequency from a comment line such as '# frequency MHz 400.13': the first
 * number after the first 'frequency' or 'MHz' of the first comment that has one. Scanned with
 * indexOf and one anchored match per line, so a long comment costs linear time.
 */
function commentFrequency(lines: string[]): number | undefined {
  for (const raw of lines) {
    const line = raw.trimStart();
    if (!line.startsWith('#')) continue;
    const lower = line.toLowerCase();
    const hits = [lower.indexOf('frequency'), lower.indexOf('mhz')].filter((i) => i >= 0);
    if (hits.length === 0) continue;
    const from = Math.min(...hits);
    const m = /\d[\d.]*/.exec(line.slice(from));
    if (!m) continue;
    const v = Number(m[0]);
    return Number.isFinite(v) ? v : undefined;
  }
  return undefined;
}

export function readCsvSpectrum(path: string): Spectrum {
  return parseCsvSpectrum(readNmrFile(path).toString('utf8'), path);
}

export function formatCsvSpectrum(s: Spectrum, comment?: string): string {
  const n = s.real.length;
  const step = n > 1 ? (s.ppmLast - s.ppmFirst) / (n - 1) : 0;
  const out: string[] = [];
  if (comment) out.push(`# ${comment}`);
  if (Number.isFinite(s.refMHz)) out.push(`# frequency MHz ${s.refMHz}`);
  out.push(s.imag ? 'ppm,real,imag' : 'ppm,intensity');
  for (let i = 0; i < n; i++) {
    const p = (s.ppmFirst + i * step).toPrecision(10);
    out.push(
      s.imag
        ? `${p},${s.real[i]!.toPrecision(8)},${s.imag[i]!.toPrecision(8)}`
        : `${p},${s.real[i]!.toPrecision(8)}`,
    );
  }
  return out.join('\n') + '\n';
}

/**
 * Writes a spectrum as CSV (`ppm,intensity` rows, or `ppm,real,imag` with an imaginary part, from the first point), atomically.
 * @param comment A `#` line at the top (the source, the processing).
 * @throws `OutputError` (from `tailor`) when the file cannot be written.
 */
export function writeCsvSpectrum(path: string, s: Spectrum, comment?: string): void {
  const c = checksOf('writeCsvSpectrum');
  c.string(path, 'path');
  checkSpectrum(c, s);
  if (comment !== undefined && typeof comment !== 'string') c.fail('comment', 'a string', comment);
  writeFileAtomic(path, formatCsvSpectrum(s, comment));
}
