// The CSV reader of the mixture models: a small RFC 4180 parser (quoted fields with "" escapes
// and embedded commas/newlines, CRLF or LF line ends, a header row), the numeric matrix of a
// Gaussian mixture, its label files, and the cells of the subgroup model's long table. Every cell
// keeps its 1-based file line so that errors about the data can name the file, line and column
// the user has to fix.
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

export class CsvError extends InputError {
  constructor(message: string) {
    super(message);
    this.name = 'CsvError';
  }
}

/** CSV inputs far larger than any data set here (and below V8's 512 MB string limit). */
export const MAX_CSV_BYTES = 256 * 1024 * 1024;

/** Reads a CSV (or label) file as text, refusing implausible sizes; errors are CsvErrors. */
export function readCsvText(file: string): string {
  return readBoundedFile(file, MAX_CSV_BYTES, 'a CSV file', (m) => new CsvError(m)).toString('utf8');
}

export function parseCsv(text: string, file: string): CsvTable {
  const records: string[][] = [];
  const starts: number[] = [];
  let field = '';
  let record: string[] = [];
  let inQuotes = false;
  let line = 1;
  let recordLine = 1;
  let fieldStarted = false;
  const pushField = (): void => {
    record.push(field);
    field = '';
    fieldStarted = false;
  };
  const pushRecord = (): void => {
    pushField();
    // Skip blank lines (a record with one empty field).
    if (!(record.length === 1 && record[0] === '')) {
      records.push(record);
      starts.push(recordLine);
    }
    record = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          inQuotes = false;
        }
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
      continue;
    }
    if (ch === '"' && !fieldStarted) {
      inQuotes = true;
      fieldStarted = true;
    } else if (ch === ',') {
      pushField();
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      pushRecord();
      line++;
      recordLine = line;
    } else {
      field += ch;
      fieldStarted = true;
    }
  }
  if (inQuotes)
    throw new CsvError(`${file}:${recordLine}: unterminated quoted field (a '"' is never closed)`);
  if (field !== '' || record.length > 0) pushRecord();
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

/** Parses CSV text into a matrix of the named columns (all columns when none are named). */
export function parseMatrixCsv(text: string, file: string, columns?: readonly string[]): CsvMatrix {
  const table = parseCsv(text, file);
  const indices =
    columns && columns.length > 0
      ? columns.map((c) => columnIndex(table, c, '--columns'))
      : table.header.map((_, j) => j);
  const n = table.rows.length;
  const d = indices.length;
  if (n === 0) throw new CsvError(`${file}: no data rows after the header`);
  const data = new Float64Array(n * d);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) data[i * d + j] = numericCell(table, i, indices[j]!);
  return { rows: n, cols: d, data, columns: indices.map((j) => table.header[j]!), file };
}

export function readMatrixCsv(file: string, columns?: readonly string[]): CsvMatrix {
  const text = readCsvText(file);
  return parseMatrixCsv(text, file, columns);
}

/**
 * Labels (0-based integers) from a CSV or plain list: one value per line, an optional header;
 * `k` bounds them and `n` is the expected count.
 */
export function readLabelsFile(file: string, n: number, k: number): Int32Array {
  const text = readCsvText(file);
  const lines = text.split(/\r?\n/);
  const labels: number[] = [];
  for (let l = 0; l < lines.length; l++) {
    const cell = lines[l]!.split(',')[0]!.trim();
    if (cell === '') continue;
    if (labels.length === 0 && l === 0 && !/^[-+]?\d/.test(cell)) continue; // header
    const v = Number(cell);
    if (!Number.isInteger(v) || v < 0 || v >= k) {
      throw new CsvError(
        `${file}:${l + 1}: label '${cell}' is not an integer in 0..${k - 1} (labels are 0-based components)`,
      );
    }
    labels.push(v);
  }
  if (labels.length !== n)
    throw new CsvError(`${file}: ${labels.length} labels for ${n} data rows (one label per row expected)`);
  return Int32Array.from(labels);
}
