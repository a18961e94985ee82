// Long-format longitudinal data for the latent-subgroup mixed model: one row per visit, grouped
// into subjects (possibly with different numbers of visits), visits sorted by time. Membership
// covariates describe the subject, so they must be constant within a subject.
import { CsvError, type CsvTable, columnIndex, numericCell, parseCsv, readCsvText } from '../csv.js';
import { MixtureArgumentError, requireObject } from '../errors.js';

/**
 * Longitudinal data of the latent-subgroup model: subjects with their visits (time, outcome y,
 * fixed-effect covariates W) and per-subject membership covariates U.
 */
export interface SubgroupData {
  /** Subject identifiers, in order of first appearance in the file. */
  ids: string[];
  nSubjects: number;
  nObs: number;
  /** Number of fixed-effect columns (no intercept: the class means play that role). */
  p: number;
  /** Number of membership columns including the leading intercept. */
  q: number;
  fixedNames: string[];
  /** Membership covariate names, without the intercept. */
  membershipNames: string[];
  /** Visits of subject i are offsets[i] .. offsets[i+1]-1, sorted by time. */
  offsets: Int32Array;
  time: Float64Array;
  y: Float64Array;
  /** nObs x p, row-major. */
  W: Float64Array;
  /** nSubjects x q, row-major, first column 1. */
  U: Float64Array;
}

/** Which CSV columns hold the subject id, the visit time, the outcome and the covariates. */
export interface LongColumns {
  id: string;
  time: string;
  y: string;
  fixed: string[];
  membership: string[];
}

/**
 * Reads long-format data (one row per visit) from a CSV file: rows are grouped by `columns.id`
 * and sorted by time; membership covariates must be constant within a subject. A bad file is a
 * CsvError naming the line and column.
 */
export function readSubgroupCsv(file: string, columns: LongColumns): SubgroupData {
  const text = readCsvText(file);
  return subgroupDataFromTable(parseCsv(text, file), columns);
}

/**
 * The same long-format data from records held in memory, one object per visit (as a data frame's
 * rows, or parsed JSON): `columns` names the fields, as for {@link readSubgroupCsv}. A missing or
 * non-numeric value is an error naming the record (1-based) and the field.
 *
 * @example
 * ```ts
 * import { fitSubgroup, subgroupDataFromRecords } from 'tailor/mixture';
 * const visits = [
 *   { id: 'a', time: 0, y: 1.2, dose: 0.5, group: 1 },
 *   { id: 'a', time: 1, y: 1.9, dose: 0.5, group: 1 },
 *   // ... one record per visit
 * ];
 * const data = subgroupDataFromRecords(visits, { id: 'id', time: 'time', y: 'y', fixed: ['dose'], membership: ['group'] });
 * const fit = fitSubgroup(data, { K: 2 });
 * ```
 */
export function subgroupDataFromRecords(
  records: readonly Record<string, number | string>[],
  columns: LongColumns,
): SubgroupData {
  if (!Array.isArray(records))
    throw new MixtureArgumentError(
      `subgroupDataFromRecords: records must be an array of objects, one per visit`,
    );
  requireObject(columns, 'columns');
  for (const key of ['id', 'time', 'y'] as const)
    if (typeof columns[key] !== 'string')
      throw new MixtureArgumentError(
        `subgroupDataFromRecords: columns.${key} must be a field name (a string)`,
      );
  for (const key of ['fixed', 'membership'] as const)
    if (!Array.isArray(columns[key]) || columns[key].some((n) => typeof n !== 'string'))
      throw new MixtureArgumentError(
        `subgroupDataFromRecords: columns.${key} must be an array of field names`,
      );
  const header = [columns.id, columns.time, columns.y, ...columns.fixed, ...columns.membership];
  const rows = records.map((record, r) => {
    if (record === null || typeof record !== 'object' || Array.isArray(record))
      throw new MixtureArgumentError(`subgroupDataFromRecords: record ${r + 1} is not an object`);
    return header.map((name) => {
      const v = record[name];
      if (v === undefined || v === null) return '';
      if (typeof v !== 'number' && typeof v !== 'string')
        throw new MixtureArgumentError(
          `subgroupDataFromRecords: record ${r + 1} field '${name}' must be a number or a string, got ${typeof v}`,
        );
      return String(v);
    });
  });
  // Error messages read 'records:N' for record N.
  return subgroupDataFromTable({ file: 'records', header, rows, lines: rows.map((_, r) => r + 1) }, columns);
}

export function subgroupDataFromTable(table: CsvTable, columns: LongColumns): SubgroupData {
  const seen = new Set<string>();
  for (const name of [columns.id, columns.time, columns.y, ...columns.fixed, ...columns.membership]) {
    if (seen.has(name)) throw new CsvError(`column '${name}' is named twice in the options`);
    seen.add(name);
  }
  const idCol = columnIndex(table, columns.id, '--id');
  const timeCol = columnIndex(table, columns.time, '--time');
  const yCol = columnIndex(table, columns.y, '--y');
  const wCols = columns.fixed.map((n) => columnIndex(table, n, '--fixed'));
  const uCols = columns.membership.map((n) => columnIndex(table, n, '--membership'));
  if (table.rows.length === 0) throw new CsvError(`${table.file}: no data rows after the header`);

  const rowsBySubject = new Map<string, number[]>();
  for (let r = 0; r < table.rows.length; r++) {
    const id = table.rows[r]![idCol]!.trim();
    if (id === '') {
      throw new CsvError(
        `${table.file}:${table.lines[r]}: column '${columns.id}' is empty (every row needs a subject id)`,
      );
    }
    let list = rowsBySubject.get(id);
    if (!list) rowsBySubject.set(id, (list = []));
    list.push(r);
  }
  const ids = [...rowsBySubject.keys()];
  const nSubjects = ids.length;
  const nObs = table.rows.length;
  const p = wCols.length;
  const q = uCols.length + 1;
  const offsets = new Int32Array(nSubjects + 1);
  const time = new Float64Array(nObs);
  const y = new Float64Array(nObs);
  const W = new Float64Array(nObs * p);
  const U = new Float64Array(nSubjects * q);
  let o = 0;
  for (let i = 0; i < nSubjects; i++) {
    const rows = rowsBySubject.get(ids[i]!)!;
    const times = rows.map((r) => numericCell(table, r, timeCol));
    const order = rows.map((_, j) => j).sort((a, b) => times[a]! - times[b]! || a - b);
    offsets[i] = o;
    for (const j of order) {
      const r = rows[j]!;
      time[o] = times[j]!;
      y[o] = numericCell(table, r, yCol);
      for (let c = 0; c < p; c++) W[o * p + c] = numericCell(table, r, wCols[c]!);
      o++;
    }
    U[i * q] = 1;
    const first = rows[0]!;
    for (let c = 0; c < uCols.length; c++) {
      const value = numericCell(table, first, uCols[c]!);
      U[i * q + c + 1] = value;
      for (const r of rows) {
        if (numericCell(table, r, uCols[c]!) !== value) {
          throw new CsvError(
            `${table.file}:${table.lines[r]}: membership column '${columns.membership[c]}' changes within subject ` +
              `'${ids[i]}' (${value} on line ${table.lines[first]}); membership covariates must be constant per subject`,
          );
        }
      }
    }
  }
  offsets[nSubjects] = o;
  return {
    ids,
    nSubjects,
    nObs,
    p,
    q,
    fixedNames: [...columns.fixed],
    membershipNames: [...columns.membership],
    offsets,
    time,
    y,
    W,
    U,
  };
}

/** The same data with some membership covariates removed (the reduced model of a LR test). */
export function dropMembership(data: SubgroupData, drop: string[]): SubgroupData {
  for (const name of drop) {
    if (!data.membershipNames.includes(name)) {
      throw new CsvError(
        `cannot drop '${name}': it is not a membership covariate (they are: ${data.membershipNames.join(', ') || 'none'})`,
      );
    }
  }
  const keep = data.membershipNames.map((n, j) => (drop.includes(n) ? -1 : j + 1)).filter((j) => j >= 0);
  const q = keep.length + 1;
  const U = new Float64Array(data.nSubjects * q);
  for (let i = 0; i < data.nSubjects; i++) {
    U[i * q] = 1;
    keep.forEach((j, c) => (U[i * q + c + 1] = data.U[i * data.q + j]!));
  }
  return { ...data, q, U, membershipNames: keep.map((j) => data.membershipNames[j - 1]!) };
}
