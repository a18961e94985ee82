// JCAMP-DX ASCII squeezed difference form (ASDF): decoding of AFFN/PAC, SQZ, DIF and DUP lines
// of an (X++(Y..Y)) table, with the DIF y-check (the last value of a DIF line is repeated as the
// first value of the next line), and an encoder that writes the DIFDUP form.
import { NmrFormatError } from './errors.js';

const SQZ_POS = '@ABCDEFGHI';
const SQZ_NEG = '@abcdefghi';
const DIF_POS = '%JKLMNOPQR';
const DIF_NEG = '%jklmnopqr';
const DUP = ' STUVWXYZs';

type Token = { kind: 'abs' | 'dif' | 'dup'; value: number };

function classify(c: string): 'sqz' | 'dif' | 'dup' | 'digit' | 'sign' | 'sep' | 'other' {
  if (c >= '0' && c <= '9') return 'digit';
  if (c === '.') return 'digit';
  if (c === '+' || c === '-') return 'sign';
  if (c === ' ' || c === '\t' || c === ',' || c === ';') return 'sep';
  if (SQZ_POS.includes(c) || SQZ_NEG.includes(c)) return 'sqz';
  if (DIF_POS.includes(c) || DIF_NEG.includes(c)) return 'dif';
  if (DUP.includes(c) && c !== ' ') return 'dup';
  return 'other';
}

/** Splits a line into its X token (returned) and the Y tokens. */
function tokenize(line: string, file: string, lineNo: number): { x: number; tokens: Token[] } {
  const xm = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]\d+)?)/.exec(line);
  if (!xm)
    throw new NmrFormatError(
      file,
      `line ${lineNo}`,
      `a data line must start with an X value, found '${line.slice(0, 30)}'`,
    );
  const tokens: Token[] = [];
  let i = xm[0].length;
  const n = line.length;
  while (i < n) {
    const c = line[i]!;
    const kind = classify(c);
    if (kind === 'sep') {
      i++;
      continue;
    }
    if (kind === 'other')
      throw new NmrFormatError(
        file,
        `line ${lineNo}`,
        `unexpected character '${c}' in ASDF data at column ${i + 1}`,
      );
    let sign = 1;
    let lead = '';
    let tkind: Token['kind'] = 'abs';
    if (kind === 'sqz') {
      const p = SQZ_POS.indexOf(c);
      if (p >= 0) lead = String(p);
      else {
        lead = String(SQZ_NEG.indexOf(c));
        sign = -1;
      }
    } else if (kind === 'dif') {
      tkind = 'dif';
      const p = DIF_POS.indexOf(c);
      if (p >= 0) lead = String(p);
      else {
        lead = String(DIF_NEG.indexOf(c));
        sign = -1;
      }
    } else if (kind === 'dup') {
      tkind = 'dup';
      lead = String(DUP.indexOf(c));
    } else if (kind === 'sign') {
      sign = c === '-' ? -1 : 1;
    } else {
      lead = c;
    }
    i++;
    let digits = lead;
    while (i < n && classify(line[i]!) === 'digit') digits += line[i++];
    // AFFN exponent (only after a plain number; E alone is an SQZ character).
    if (
      tkind === 'abs' &&
      (kind === 'digit' || kind === 'sign') &&
      i < n &&
      (line[i] === 'E' || line[i] === 'e')
    ) {
      const em = /^[eE][+-]?\d+/.exec(line.slice(i));
      if (em && (line[i + 1] === '+' || line[i + 1] === '-')) {
        digits += em[0];
        i += em[0].length;
      }
    }
    if (digits === '' || digits === '.')
      throw new NmrFormatError(file, `line ${lineNo}`, `incomplete number at column ${i}`);
    tokens.push({ kind: tkind, value: sign * Number(digits) });
  }
  return { x: Number(xm[1]), tokens };
}

export interface DecodedTable {
  /** Y values (not yet multiplied by the Y factor). */
  y: Float64Array;
  /** X value that starts each line, and the index of its first Y value. */
  lineStarts: { x: number; index: number }[];
}

/**
 * Decodes the data lines of an (X++(Y..Y)) table. `firstLine` is the file line number of lines[0]
 * (for messages). A DIF line's last value is repeated at the start of the next line as a check;
 * the repeat is verified and dropped.
 */
/** More points than any 1D NMR data (real spectra have at most a few million). */
export const MAX_TABLE_POINTS = 1 << 24;

export function decodeXyTable(
  lines: string[],
  file: string,
  firstLine: number,
  maxPoints = MAX_TABLE_POINTS,
): DecodedTable {
  const y: number[] = [];
  const lineStarts: { x: number; index: number }[] = [];
  let lastEndedInDif = false;
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li]!;
    if (line.trim() === '') continue;
    const lineNo = firstLine + li;
    const { x, tokens } = tokenize(line, file, lineNo);
    const values: number[] = [];
    let lastDif: number | undefined;
    let endsInDif = false;
    for (const t of tokens) {
      if (t.kind === 'abs') {
        values.push(t.value);
        lastDif = undefined;
        endsInDif = false;
      } else if (t.kind === 'dif') {
        const prev = values.length ? values[values.length - 1]! : y.length ? y[y.length - 1]! : NaN;
        if (Number.isNaN(prev))
          throw new NmrFormatError(file, `line ${lineNo}`, 'a DIF value needs a preceding value');
        values.push(prev + t.value);
        lastDif = t.value;
        endsInDif = true;
      } else {
        if (values.length === 0)
          throw new NmrFormatError(file, `line ${lineNo}`, 'a DUP count needs a preceding value');
        // Bound the count before expanding it: 13 bytes can ask for 10^12 values.
        if (
          !Number.isSafeInteger(t.value) ||
          t.value < 1 ||
          y.length + values.length + t.value > maxPoints + 1
        )
          throw new NmrFormatError(
            file,
            `line ${lineNo}`,
            `DUP count ${t.value} is not a whole number that fits the table (at most ${maxPoints} points)`,
            'the file is corrupt',
          );
        for (let r = 1; r < t.value; r++) {
          const prev = values[values.length - 1]!;
          values.push(lastDif !== undefined ? prev + lastDif : prev);
        }
      }
    }
    if (lastEndedInDif && values.length > 0 && y.length > 0) {
      const check = values.shift()!;
      if (Math.abs(check - y[y.length - 1]!) > 1e-6 * Math.max(1, Math.abs(check))) {
        throw new NmrFormatError(
          file,
          `line ${lineNo}`,
          `DIF y-check failed: line starts with ${check}, previous line ended with ${y[y.length - 1]}`,
          'the file is corrupt',
        );
      }
      lineStarts.push({ x, index: y.length - 1 });
    } else {
      lineStarts.push({ x, index: y.length });
    }
    for (const v of values) {
      if (!Number.isFinite(v))
        throw new NmrFormatError(
          file,
          `line ${lineNo}`,
          `value ${v} is not a finite number`,
          'the file is corrupt',
        );
      y.push(v);
    }
    if (y.length > maxPoints)
      throw new NmrFormatError(
        file,
        `line ${lineNo}`,
        `more than ${maxPoints} points`,
        'the file is corrupt',
      );
    lastEndedInDif = endsInDif;
  }
  return { y: Float64Array.from(y), lineStarts };
}

const MAX_LINE = 78;

function sqz(v: number): string {
  const s = Math.abs(v).toString();
  return (v < 0 ? SQZ_NEG : SQZ_POS)[Number(s[0])]! + s.slice(1);
}

function dif(v: number): string {
  const s = Math.abs(v).toString();
  return (v < 0 ? DIF_NEG : DIF_POS)[Number(s[0])]! + s.slice(1);
}

function dup(count: number): string {
  const s = count.toString();
  return DUP[Number(s[0])]! + s.slice(1);
}

/**
 * Encodes integer Y values in DIFDUP form with a y-check value at the start of each line after the
 * first. xOf(i) gives the X value written at the start of the line whose first value is y[i].
 */
export function encodeDifDup(y: ArrayLike<number>, xOf: (i: number) => string): string[] {
  const lines: string[] = [];
  let i = 0;
  const n = y.length;
  while (i < n) {
    let line = xOf(i) + sqz(Math.round(y[i]!));
    let j = i + 1;
    while (j < n && line.length < MAX_LINE) {
      const d = Math.round(y[j]!) - Math.round(y[j - 1]!);
      let run = 1;
      while (j + run < n && Math.round(y[j + run]!) - Math.round(y[j + run - 1]!) === d && run < 9999) run++;
      line += dif(d) + (run > 1 ? dup(run) : '');
      j += run;
    }
    lines.push(line);
    if (j >= n) break;
    // The next line repeats y[j-1] as its check value.
    i = j - 1;
    if (j === n) break;
  }
  return lines;
}
