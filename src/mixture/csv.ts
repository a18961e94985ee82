// The CSV reader of the mixture models: a small RFC 4180 parser (quoted fields with "" escapes
// and embedded commas/newlines, CRLF or LF line ends, a header row), the numeric matrix of a
// Gaussian mixture, its label files, and the cells of the subgroup model's long table. Every cell
// keeps its 1-based file line so that errors about the data can name the file, line and column
// the user has to fix.
import { isAscii } from 'node:buffer';
import { readBoundedFile } from '../util/fs.js';
import type { DenseMatrix } from './linalg.js';
import { CsvError, PlainRowScanner, RecordReader } from './csv-scan.js';

export { CsvError, finiteNumberOf } from './csv-scan.js';

export interface CsvTable {
  file: string;
  header: string[];
  rows: string[][];
  /** The 1-based line in the file where each data row starts. */
  lines: number[];
}

/** CSV inputs far larger than any data set here (and below V8's 512 MB string limit). */
export const MAX_CSV_BYTES = 256 * 1024 * 1024;

/** Reads a CSV (or label) file as text (UTF-8), refusing implausible sizes; errors are CsvErrors. */
export function readCsvText(file: string): string {
  const bytes = readBoundedFile(file, MAX_CSV_BYTES, 'a CSV file', (m) => new CsvError(m));
  // Pure ASCII (the usual numeric file) is the same text in latin1, which is copied, not decoded.
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
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
