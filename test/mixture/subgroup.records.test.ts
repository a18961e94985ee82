// Subgroup data from in-memory records equal the same data read from a CSV file, and a bad
// record is an error naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import {
  MixtureArgumentError,
  readSubgroupCsv,
  subgroupDataFromRecords,
  type LongColumns,
} from '../../src/mixture/index.js';

const file = join(repoRoot, 'examples', 'subgroup_s1.csv');
const columns: LongColumns = {
  id: 'id',
  time: 'time',
  y: 'y',
  fixed: ['W1', 'W2', 'W3'],
  membership: ['U1', 'U2'],
};

function records(): Record<string, number | string>[] {
  const [head, ...lines] = readFileSync(file, 'utf8').trim().split(/\r?\n/);
  const names = head!.split(',').map((n) => n.replace(/"/g, ''));
  return lines.map((line) => {
    const cells = line.split(',');
    return Object.fromEntries(names.map((n, j) => [n, n === 'id' ? cells[j]! : Number(cells[j])]));
  });
}

test('subgroup data from records equal the CSV reader', () => {
  const fromCsv = readSubgroupCsv(file, columns);
  const fromRecords = subgroupDataFromRecords(records(), columns);
  assert.deepEqual(fromRecords, fromCsv);
});

test('bad records are named', () => {
  const rs = records();
  rs[4] = { ...rs[4]!, y: 'high' };
  assert.throws(
    () => subgroupDataFromRecords(rs, columns),
    /records:5: column 'y' has 'high', expected a finite number/,
  );
  const missing = records();
  delete missing[2]!.W2;
  assert.throws(() => subgroupDataFromRecords(missing, columns), /records:3: column 'W2' has an empty cell/);
  assert.throws(
    () => subgroupDataFromRecords('x' as never, columns),
    (e: unknown) =>
      e instanceof MixtureArgumentError && /records must be an array/.test((e as Error).message),
  );
  assert.throws(
    () => subgroupDataFromRecords(records(), { ...columns, fixed: 'W1' as never }),
    /columns\.fixed must be an array of field names/,
  );
});
