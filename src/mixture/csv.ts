// The CSV reader of the mixture models: a small RFC 4180 parser (quoted fields with "" escapes
// and embedded commas/newlines, CRLF or LF line ends, a header row), the numeric matrix of a
// Gaussian mixture, its label files, and the cells of the subgroup model's long table. Every cell
// keeps its 1-based file line so that errors about the data can name the file, line and column
// the user has to fix.
import { isAscii } from 'node:buffer';
import { InputError } from '../util/errors.js';
import { readBoundedFile } from '../util/fs.js';
import type { DenseMatrix } from './linalg.js';

export interface CsvTable {
  file: string;
  header: string[];
  rows: string[][];
  /** The 1-based line in the file where each data row starts. */
  lines: number[];
}

export class CsvError extends InputError {}

/** CSV inputs far larger than any data set here (and below V8's 512 MB string limit). */
export const MAX_CSV_BYTES = 256 * 1024 * 1024;

/** Reads a CSV (or label) file as text (UTF-8), refusing implausible sizes; errors are CsvErrors. */
export function readCsvText(file: string): string {
  const bytes = readBoundedFile(file, MAX_CSV_BYTES, 'a CSV file', (m) => new CsvError(m));
  // Pure ASCII (the usual numeric file) is the same text in latin1, which is copied, not decoded.
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

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
class RecordReader {
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

/** The header (trimmed) and rows of CSV text; every row must have the header's number of fields. */
export function parseCsv(text: string, file: string): CsvTable {
  const reader = new RecordReader(text, file);
  const records: string[][] = [];
  const starts: number[] = [];
  for (let record = reader.next(); record; record = reader.next()) {
    records.push(record);
    starts.push(reader.recordLine);
  }
  if (records.length === 0)
    throw new CsvError(`${file}: the file is empty (expected a header row and data rows)`);
  const header = records[0]!.map((h) => h.trim());
  const rows = records.slice(1);
  const lines = starts.slice(1);
  for (let r = 0; r < rows.length; r++) {
    if (rows[r]!.length !== header.length) {
      throw new CsvError(
        `${file}:${lines[r]}: row has ${rows[r]!.length} fields but the header has ${header.length}` +
          ' (check for a missing or extra comma)',
      );
    }
  }
  return { file, header, rows, lines };
}

/** The index of a named column, or an error listing the columns the file has. */
export function columnIndex(table: CsvTable, name: string, role: string): number {
  const index = table.header.indexOf(name);
  if (index < 0) {
    throw new CsvError(
      `${table.file}: no column '${name}' (given as ${role}); the header has: ${table.header.join(', ')}`,
    );
  }
  return index;
}

/** A finite number from a cell, or an error naming the file, line and column. */
export function numericCell(table: CsvTable, row: number, column: number): number {
  const raw = table.rows[row]![column]!.trim();
  const value = raw === '' ? NaN : Number(raw);
  if (!Number.isFinite(value)) {
    const what = raw === '' ? 'an empty cell' : `'${raw}'`;
    throw new CsvError(
      `${table.file}:${table.lines[row]}: column '${table.header[column]}' has ${what}, expected a finite number` +
        ' (remove or impute the row)',
    );
  }
  return value;
}

// ---- the numeric matrix of a Gaussian mixture, and its labels

export interface CsvMatrix extends DenseMatrix {
  columns: string[];
  file: string;
}

/**
 * Parses CSV text into a matrix of the named columns (all columns when none are named). Plain
 * numeric files are read in one pass straight into the matrix; anything the fast reader does not
 * handle (quoted data rows, a cell that is not a finite number, a wrong field count, a missing
 * column) goes through the general table reader, which gives the same matrix or the error that
 * names the file, line and column.
 */
export function parseMatrixCsv(text: string, file: string, columns?: readonly string[]): CsvMatrix {
  return parsePlainMatrix(text, file, columns) ?? matrixFromTable(parseCsv(text, file), columns);
}

/** The named columns of a parsed table as a matrix (all columns when none are named). */
export function matrixFromTable(table: CsvTable, columns?: readonly string[]): CsvMatrix {
  const indices =
    columns && columns.length > 0
      ? columns.map((c) => columnIndex(table, c, '--columns'))
      : table.header.map((_, j) => j);
  const n = table.rows.length;
  const d = indices.length;
  if (n === 0) throw new CsvError(`${table.file}: no data rows after the header`);
  const data = new Float64Array(n * d);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) data[i * d + j] = numericCell(table, i, indices[j]!);
  return { rows: n, cols: d, data, columns: indices.map((j) => table.header[j]!), file: table.file };
}

/**
 * The fast reader of parseMatrixCsv: the header through RecordReader, then the data rows scanned
 * once, each wanted cell parsed where it stands straight into the matrix. Returns null whenever
 * the general reader has to decide (it then gives the same result or the located error).
 */
function parsePlainMatrix(text: string, file: string, columns?: readonly string[]): CsvMatrix | null {
  const reader = new RecordReader(text, file);
  let first: string[] | null;
  try {
    first = reader.next();
  } catch {
    return null;
  }
  if (!first) return null;
  const header = first.map((h) => h.trim());
  const indices =
    columns && columns.length > 0 ? columns.map((c) => header.indexOf(c)) : header.map((_, j) => j);
  const h = header.length;
  const d = indices.length;
  // slot[j]: where file column j goes in a matrix row (-1: not wanted).
  const slot = new Int32Array(h).fill(-1);
  for (let j = 0; j < d; j++) {
    if (indices[j]! < 0 || slot[indices[j]!] !== -1) return null;
    slot[indices[j]!] = j;
  }
  const start = reader.pos;
  const len = text.length;
  // Rows are at most the line ends left plus one, and each takes at least h - 1 characters.
  let lineEnds = 0;
  for (let p = text.indexOf('\n', start); p >= 0; p = text.indexOf('\n', p + 1)) lineEnds++;
  const bound = Math.floor((len - start) / Math.max(h - 1, 1)) + 1;
  let capacity = Math.min(lineEnds + 1, bound);
  let data = new Float64Array(capacity * d);
  const scanner = new PlainRowScanner(text, start, slot);
  let n = 0;
  while (scanner.pos < len) {
    if (scanner.blankLine()) continue;
    if (n === capacity) {
      // Lone CR line ends: more rows than LFs.
      if (capacity === bound) return null;
      capacity = Math.min(2 * capacity, bound);
      const grown = new Float64Array(capacity * d);
      grown.set(data);
      data = grown;
    }
    if (!scanner.row(data, n * d)) return null;
    n++;
  }
  if (n === 0) return null;
  return {
    rows: n,
    cols: d,
    data: n === capacity ? data : data.slice(0, n * d),
    columns: indices.map((j) => header[j]!),
    file,
  };
}

/** 10^0 .. 10^22: the powers of ten a double holds exactly. */
const EXACT_POWERS_OF_TEN = Array.from({ length: 23 }, (_, e) => Number(`1e${e}`));
const TWO_TO_53 = 9007199254740992;

/** Reads the unquoted data rows of a CSV text from `pos`, as RecordReader would, numbers in place. */
class PlainRowScanner {
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

/**
 * Reads a numeric CSV file (a header row, one sample per line) as a matrix, keeping `columns`
 * when given. A missing file, a non-numeric cell or a ragged row is a {@link CsvError} naming the
 * line and column.
 */
export function readMatrixCsv(file: string, columns?: readonly string[]): CsvMatrix {
  const text = readCsvText(file);
  return parseMatrixCsv(text, file, columns);
}

/**
 * Labels (0-based integers) from a CSV or plain list: one value per line (the text before its
 * first comma), an optional header; `k` bounds them and `n` is the expected count.
 */
export function readLabelsFile(file: string, n: number, k: number): Int32Array {
  return parseLabels(readCsvText(file), file, n, k);
}

/** The labels of readLabelsFile from the file's text. */
export function parseLabels(text: string, file: string, n: number, k: number): Int32Array {
  const labels = new Int32Array(n);
  let count = 0;
  // Lines end at LF (a CR before it is trimmed with the cell); the cell ends at the first comma.
  let comma = -1;
  for (let l = 0, start = 0; start <= text.length; l++) {
    const newline = text.indexOf('\n', start);
    const end = newline < 0 ? text.length : newline;
    if (comma < start) comma = text.indexOf(',', start);
    if (comma < 0) comma = Infinity;
    const cell = text.slice(start, Math.min(comma, end)).trim();
    start = end + 1;
    if (cell === '') continue;
    if (count === 0 && l === 0 && !/^[-+]?\d/.test(cell)) continue; // header
    const v = Number(cell);
    if (!Number.isInteger(v) || v < 0 || v >= k) {
      throw new CsvError(
        `${file}:${l + 1}: label '${cell}' is not an integer in 0..${k - 1} (labels are 0-based components)`,
      );
    }
    if (count < n) labels[count] = v;
    count++;
  }
  if (count !== n)
    throw new CsvError(`${file}: ${count} labels for ${n} data rows (one label per row expected)`);
  return labels;
}
