// A small RFC 4180 CSV reader: quoted fields (with "" escapes and embedded commas/newlines),
// CRLF or LF line ends, a header row. Every cell keeps its 1-based file line so that errors about
// the data can name the file, line and column the user has to fix.
import { InputError } from '../../util/errors.js';
import { readBoundedFile } from '../../util/fs.js';

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
