// The scanners under the CSV reader: RecordReader splits text into RFC 4180 records (any field),
// PlainRowScanner reads unquoted numeric rows straight into a matrix (the fast path of large
// files; finiteNumberOf is its rule for a cell), and the CsvError they throw. Apart from csv.ts,
// which gives the cells their meaning (header, columns, numbers, labels) and names the file,
// line and column in its errors.
import { InputError } from '../util/errors.js';

export class CsvError extends InputError {}

const COMMA = 44;
const QUOTE = 34;
const LF = 10;
const CR = 13;

/**
 * Reads the records of CSV text one at a time. Unquoted fields are sliced out of the text in one
 * piece; a field that starts with '"' is quoted ('""' inside is one '"', and commas and line ends
 * are data) and may go on unquoted after its closing quote; a '"' elsewhere is an ordinary
 * character. Records end at LF, CR or CRLF; a blank line (a record of one empty field) is skipped.
 */
export class RecordReader {
  /** Where the next record starts. */
  pos = 0;
  /** The 1-based line the next record starts on. */
  line = 1;
  /** The line the record last returned started on. */
  recordLine = 1;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {}

  /** The next record that is not blank, or null at the end of the text. */
  next(): string[] | null {
    while (this.pos < this.text.length) {
      this.recordLine = this.line;
      const record = this.readRecord();
      if (!(record.length === 1 && record[0] === '')) return record;
    }
    return null;
  }

  private readRecord(): string[] {
    const text = this.text;
    const len = text.length;
    const record: string[] = [];
    let i = this.pos;
    for (;;) {
      let field: string;
      if (text.charCodeAt(i) === QUOTE) {
        ({ field, end: i } = this.quotedField(i));
      } else {
        const start = i;
        for (let c = text.charCodeAt(i); i < len && c !== COMMA && c !== LF && c !== CR;)
          c = text.charCodeAt(++i);
        field = text.slice(start, i);
      }
      record.push(field);
      if (i >= len) {
        this.pos = len;
        return record;
      }
      const c = text.charCodeAt(i++);
      if (c === COMMA) continue;
      if (c === CR && text.charCodeAt(i) === LF) i++;
      this.pos = i;
      this.line++;
      return record;
    }
  }

  /** A field opening with '"' at `open`: its value and where it ends (at a separator or the end). */
  private quotedField(open: number): { field: string; end: number } {
    const text = this.text;
    const len = text.length;
    let field = '';
    let i = open + 1;
    let start = i;
    for (;;) {
      if (i >= len)
        throw new CsvError(
          `${this.file}:${this.recordLine}: unterminated quoted field (a '"' is never closed)`,
        );
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        if (text.charCodeAt(i + 1) === QUOTE) {
          field += text.slice(start, i + 1);
          i += 2;
          start = i;
          continue;
        }
        field += text.slice(start, i);
        break;
      }
      if (c === LF) this.line++;
      i++;
    }
    // After the closing quote the field goes on, unquoted, up to the next separator.
    start = ++i;
    for (let c = text.charCodeAt(i); i < len && c !== COMMA && c !== LF && c !== CR;)
      c = text.charCodeAt(++i);
    return { field: field + text.slice(start, i), end: i };
  }
}

/** 10^0 .. 10^22: the powers of ten a double holds exactly. */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, e) => Number(`1e${e}`));
const TWO_TO_53 = 9007199254740992;

/** Reads the unquoted data rows of a CSV text from `pos`, as RecordReader would, numbers in place. */
export class PlainRowScanner {
  constructor(
    private readonly text: string,
    public pos: number,
    /** Where each field of a row goes in the matrix row (-1: skipped); its length is the field count. */
    private readonly slot: Int32Array,
  ) {}

  /** Steps over a blank line at pos (true) or does nothing (false). */
  blankLine(): boolean {
    const c = this.text.charCodeAt(this.pos);
    if (c !== LF && c !== CR) return false;
    this.pos += c === CR && this.text.charCodeAt(this.pos + 1) === LF ? 2 : 1;
    return true;
  }

  /**
   * Reads the row at pos into data[offset..] and moves past its line end; false when the row is
   * not plain: a quoted field, a wanted cell that is not a finite number, the wrong field count.
   */
  row(data: Float64Array, offset: number): boolean {
    const text = this.text;
    const slot = this.slot;
    const h = slot.length;
    let f = 0;
    for (;;) {
      if (text.charCodeAt(this.pos) === QUOTE) return false;
      if (f < h && slot[f]! >= 0) {
        const v = this.number();
        if (v !== v) return false; // NaN: not a finite number
        data[offset + slot[f]!] = v;
      } else {
        this.skip();
      }
      f++;
      const c = text.charCodeAt(this.pos);
      if (c !== c) break; // the end of the text
      this.pos++;
      if (c === COMMA) continue;
      if (c === CR && text.charCodeAt(this.pos) === LF) this.pos++;
      break;
    }
    return f === h;
  }

  /** Moves pos to the separator (comma, CR, LF) that ends the field at pos, or to the end. */
  private skip(): void {
    const text = this.text;
    let i = this.pos;
    for (let c = text.charCodeAt(i); c !== COMMA && c !== LF && c !== CR && c === c;)
      c = text.charCodeAt(++i);
    this.pos = i;
  }

  /**
   * The cell at pos as numericCell reads it (Number() of the trimmed text), or NaN when that is not
   * a finite number or the cell is empty; pos moves to the end of the cell. Plain decimals whose
   * digits fit in 53 bits and whose power of ten is at most 22 in size are computed here as one
   * correctly rounded product or quotient of two exact doubles (Clinger's fast path), which is the
   * value Number() gives; every other cell goes through Number().
   */
  private number(): number {
    const text = this.text;
    const start = this.pos;
    let i = start;
    let c = text.charCodeAt(i);
    const negative = c === 45; // '-'
    if (negative || c === 43) c = text.charCodeAt(++i); // '+'
    // The digits are gathered nine at a time in an integer (short dependency chains), then into
    // `mantissa`, exact while it stays below 2^53 (and at least 2^53 once the digits reach it).
    let mantissa = 0;
    let chunk = 0;
    let inChunk = 0;
    let digits = 0;
    let exponent = 0;
    // (charCodeAt past the end is NaN, which fails every comparison.)
    for (; c >= 48 && c <= 57; c = text.charCodeAt(++i)) {
      chunk = chunk * 10 + (c - 48);
      digits++;
      if (++inChunk === 9) {
        mantissa = mantissa * 1e9 + chunk;
        chunk = inChunk = 0;
      }
    }
    if (c === 46) {
      // '.'
      for (c = text.charCodeAt(++i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) {
        chunk = chunk * 10 + (c - 48);
        digits++;
        exponent--;
        if (++inChunk === 9) {
          mantissa = mantissa * 1e9 + chunk;
          chunk = inChunk = 0;
        }
      }
    }
    mantissa = mantissa * EXACT_POWERS_OF_TEN[inChunk]! + chunk;
    let plain = digits > 0;
    if (plain && (c === 101 || c === 69)) {
      // 'e' or 'E', then an optionally signed integer of at most 4 digits
      c = text.charCodeAt(++i);
      const negativeExponent = c === 45;
      if (negativeExponent || c === 43) c = text.charCodeAt(++i);
      let value = 0;
      let count = 0;
      for (; c >= 48 && c <= 57 && count < 5; c = text.charCodeAt(++i), count++)
        value = value * 10 + (c - 48);
      plain = count > 0 && count < 5;
      exponent += negativeExponent ? -value : value;
    }
    if (plain && (c === COMMA || c === LF || c === CR || c !== c)) {
      this.pos = i;
      if (mantissa < TWO_TO_53 && exponent >= -22 && exponent <= 22) {
        const magnitude =
          exponent < 0
            ? mantissa / EXACT_POWERS_OF_TEN[-exponent]!
            : mantissa * EXACT_POWERS_OF_TEN[exponent]!;
        return negative ? -magnitude : magnitude;
      }
      const value = Number(text.slice(start, i));
      return Number.isFinite(value) ? value : NaN;
    }
    this.skip();
    return finiteNumberOf(text.slice(start, this.pos));
  }
}

/** Number() of the trimmed cell when that is finite and the cell not empty, else NaN (as numericCell). */
export function finiteNumberOf(cell: string): number {
  const raw = cell.trim();
  const value = raw === '' ? NaN : Number(raw);
  return Number.isFinite(value) ? value : NaN;
}
