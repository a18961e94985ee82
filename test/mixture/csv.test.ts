// The CSV reader of the mixture models against the reader it replaced (kept here verbatim as the
// reference): on plain numeric files, mutated ones and random text, parseCsv, parseMatrixCsv and
// parseLabels give the same values to the bit, or the same error message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CsvError, parseCsv, parseLabels, parseMatrixCsv, readMatrixCsv } from '../../src/mixture/csv.js';
import { Rng } from '../../src/util/rng.js';

// ---- the reference: the reader before the one-pass matrix path

interface Table {
  file: string;
  header: string[];
  rows: string[][];
  lines: number[];
}

function referenceParseCsv(text: string, file: string): Table {
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

function referenceColumnIndex(table: Table, name: string, role: string): number {
  const index = table.header.indexOf(name);
  if (index < 0) {
    throw new CsvError(
      `${table.file}: no column '${name}' (given as ${role}); the header has: ${table.header.join(', ')}`,
    );
  }
  return index;
}

function referenceNumericCell(table: Table, row: number, column: number): number {
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

function referenceMatrix(text: string, file: string, columns?: readonly string[]) {
  const table = referenceParseCsv(text, file);
  const indices =
    columns && columns.length > 0
      ? columns.map((c) => referenceColumnIndex(table, c, '--columns'))
      : table.header.map((_, j) => j);
  const n = table.rows.length;
  const d = indices.length;
  if (n === 0) throw new CsvError(`${file}: no data rows after the header`);
  const data = new Float64Array(n * d);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < d; j++) data[i * d + j] = referenceNumericCell(table, i, indices[j]!);
  return { rows: n, cols: d, data, columns: indices.map((j) => table.header[j]!), file };
}

function referenceLabels(text: string, file: string, n: number, k: number): Int32Array {
  const lines = text.split(/\r?\n/);
  const labels: number[] = [];
  for (let l = 0; l < lines.length; l++) {
    const cell = lines[l]!.split(',')[0]!.trim();
    if (cell === '') continue;
    if (labels.length === 0 && l === 0 && !/^[-+]?\d/.test(cell)) continue;
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

// ---- comparing outcomes

type Outcome = { ok: unknown } | { error: string };

function outcome(f: () => unknown): Outcome {
  try {
    return { ok: f() };
  } catch (error) {
    assert.ok(error instanceof CsvError, `not a CsvError: ${String(error)}`);
    return { error: error.message };
  }
}

/** Same outcome; numbers compared bit for bit (Object.is tells -0 from 0). */
function assertSameOutcome(actual: Outcome, expected: Outcome, what: string): void {
  if ('error' in expected) {
    assert.deepEqual(actual, expected, what);
    return;
  }
  assert.ok('ok' in actual, `${what}: threw ${'error' in actual ? actual.error : ''}`);
  const flat = (v: unknown): unknown =>
    v instanceof Float64Array || v instanceof Int32Array
      ? Array.from(v, (x) => (Object.is(x, -0) ? '-0' : x))
      : v;
  const a = actual.ok as Record<string, unknown>;
  const e = expected.ok as Record<string, unknown>;
  if (a instanceof Int32Array) {
    assert.deepEqual(flat(a), flat(e), what);
    return;
  }
  assert.deepEqual(Object.keys(a).sort(), Object.keys(e).sort(), what);
  for (const key of Object.keys(e)) assert.deepEqual(flat(a[key]), flat(e[key]), `${what}: ${key}`);
}

// ---- inputs

const CELLS = [
  '1',
  '-2.5',
  '0',
  '-0',
  '+3',
  '.5',
  '5.',
  '1e5',
  '1E-7',
  '2.5e+300',
  '1e400',
  '-1e-400',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x1F',
  '-0x1F',
  '0b11',
  ' 4 ',
  '',
  ' ',
  'x',
  'a"b',
  '"1"',
  '"2,5"',
  '"a\nb"',
  '1_0',
  '1e',
  '-',
  '.',
  '1..2',
  '00.5',
  '9007199254740993',
  '0.1000000000000000055511151231257827',
  '123456789012345678e-30',
  '1.7976931348623157e308',
  '5e-324',
  '4.9406564584124654e-324',
  '\u00a01',
  '1\t',
];
const SEPARATORS = ['\n', '\r\n', '\r', '\n\n', '\r\n\r\n', '\n \n'];

function numericCsv(rng: Rng, rows: number, cols: number, eol: string): string {
  const lines = [Array.from({ length: cols }, (_, j) => `c${j}`).join(',')];
  for (let i = 0; i < rows; i++) {
    lines.push(
      Array.from({ length: cols }, () => {
        const r = rng.uniform();
        if (r < 0.6) return String(rng.normal() * 10 ** Math.floor(rng.uniform() * 40 - 20));
        if (r < 0.8) return String(Math.floor(rng.uniform() * 1000) - 500);
        return (rng.normal() * 100).toFixed(Math.floor(rng.uniform() * 8));
      }).join(','),
    );
  }
  return lines.join(eol) + (rng.uniform() < 0.5 ? eol : '');
}

function mutate(rng: Rng, text: string): string {
  let out = text;
  const edits = 1 + Math.floor(rng.uniform() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rng.uniform() * (out.length + 1));
    const r = rng.uniform();
    if (r < 0.4) out = out.slice(0, at) + CELLS[rng.int(CELLS.length)]! + out.slice(at);
    else if (r < 0.6) out = out.slice(0, at) + [',', '"', '\r', '\n', ' '][rng.int(5)]! + out.slice(at);
    else if (r < 0.8) out = out.slice(0, at) + out.slice(at + 1 + rng.int(4));
    else out = out.slice(0, at) + SEPARATORS[rng.int(SEPARATORS.length)]! + out.slice(at);
  }
  return out;
}

function randomText(rng: Rng): string {
  const pieces = ['a', 'b', '1', '2.5', '-', 'e', '"', '""', ',', ',', '\n', '\r', '\r\n', ' ', ''];
  return Array.from({ length: rng.int(40) }, () => pieces[rng.int(pieces.length)]!).join('');
}

function* cases(rng: Rng, count: number): Generator<string> {
  for (let t = 0; t < count; t++) {
    const eol = SEPARATORS[rng.int(3)]!;
    const plain = numericCsv(rng, 1 + rng.int(6), 1 + rng.int(4), eol);
    yield plain;
    yield mutate(rng, plain);
    yield randomText(rng);
  }
}

test('parseCsv and parseMatrixCsv agree with the reference reader, values and errors', () => {
  const rng = new Rng(20260527);
  let fast = 0;
  for (const text of cases(rng, 1500)) {
    assertSameOutcome(
      outcome(() => parseCsv(text, 'f.csv')),
      outcome(() => referenceParseCsv(text, 'f.csv')),
      JSON.stringify(text),
    );
    const expected = outcome(() => referenceMatrix(text, 'f.csv'));
    if ('ok' in expected) fast++;
    assertSameOutcome(
      outcome(() => parseMatrixCsv(text, 'f.csv')),
      expected,
      JSON.stringify(text),
    );
    const columns = rng.uniform() < 0.5 ? ['c1', 'c0'] : ['c0', 'nope'];
    assertSameOutcome(
      outcome(() => parseMatrixCsv(text, 'f.csv', columns)),
      outcome(() => referenceMatrix(text, 'f.csv', columns)),
      `${JSON.stringify(text)} with ${columns.join(',')}`,
    );
  }
  assert.ok(fast > 1000, `enough inputs parse (${fast})`);
});

test('parseLabels agrees with the reference reader', () => {
  const rng = new Rng(7);
  for (let t = 0; t < 2000; t++) {
    const n = rng.int(6);
    const eol = SEPARATORS[rng.int(SEPARATORS.length)]!;
    const lines = Array.from({ length: n }, () => String(rng.int(4)) + (rng.uniform() < 0.2 ? ',x' : ''));
    let text = (rng.uniform() < 0.5 ? ['label', ...lines] : lines).join(eol);
    if (rng.uniform() < 0.5) text = mutate(rng, text);
    for (const [nn, k] of [
      [n, 3],
      [n, 4],
      [n + 1, 4],
    ] as const) {
      assertSameOutcome(
        outcome(() => parseLabels(text, 'l.csv', nn, k)),
        outcome(() => referenceLabels(text, 'l.csv', nn, k)),
        JSON.stringify(text),
      );
    }
  }
});

test('numeric cells read as Number() of their trimmed text, to the bit', () => {
  const rng = new Rng(11);
  const same = (cell: string): void => {
    for (const text of [`x\n${cell}\n`, `w,x,y\n9,${cell},9`, `x,y\r\n${cell},${cell}\r\n`]) {
      assertSameOutcome(
        outcome(() => parseMatrixCsv(text, 'n.csv')),
        outcome(() => referenceMatrix(text, 'n.csv')),
        JSON.stringify(text),
      );
    }
  };
  for (const cell of CELLS) same(cell);
  const buffer = new Float64Array(1);
  const bits = new Uint32Array(buffer.buffer);
  for (let t = 0; t < 5000; t++) {
    // Doubles of every magnitude, printed as JavaScript, numpy and fixed-point writers do.
    bits[0] = Math.floor(rng.uniform() * 2 ** 32);
    bits[1] = Math.floor(rng.uniform() * 2 ** 32);
    same(String(buffer[0]!));
    const small = rng.normal() * 10 ** (rng.int(30) - 15);
    same(String(small));
    same(small.toExponential(rng.int(18)));
    same(small.toFixed(rng.int(20)));
    same(small.toPrecision(1 + rng.int(21)));
    // random digit strings, with a point and an exponent
    const digits = Array.from({ length: 1 + rng.int(22) }, () => rng.int(10)).join('');
    const point = rng.int(digits.length + 1);
    const exponent = rng.uniform() < 0.5 ? '' : `e${rng.int(60) - 30}`;
    same(`${rng.uniform() < 0.3 ? '-' : ''}${digits.slice(0, point)}.${digits.slice(point)}${exponent}`);
  }
});

test('readMatrixCsv decodes UTF-8 (a byte-order mark, accented names) and plain ASCII alike', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-csv-'));
  try {
    const utf8 = join(dir, 'utf8.csv');
    writeFileSync(utf8, '\ufeffdurée,x\u00a0\n1.5,2\n3,4\n');
    const m = readMatrixCsv(utf8);
    assert.deepEqual(m.columns, ['durée', 'x']);
    assert.deepEqual(Array.from(m.data), [1.5, 2, 3, 4]);
    const ascii = join(dir, 'ascii.csv');
    writeFileSync(ascii, 'a,b\r\n1,2\r\n');
    assert.deepEqual(Array.from(readMatrixCsv(ascii).data), [1, 2]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
