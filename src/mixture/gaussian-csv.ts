// Reading the numeric matrix of a Gaussian mixture from CSV (header row, one sample per row),
// with errors that name the file, line and column to fix. Parsing is the shared RFC 4180 reader
// of the mixture package.
import { CsvError, columnIndex, numericCell, parseCsv, readCsvText } from './subgroup/csv.js';
import type { DenseMatrix } from './linalg.js';

export { CsvError };

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
