import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_LIST,
  choiceListArg,
  listArg,
  numberArg,
  numberListArg,
  numberOr,
  rangeListArg,
  requiredNumber,
} from '../../src/cli/args.js';
import { CliError } from '../../src/cli/errors.js';
import { preferenceArg } from '../../src/cli/commands/longtail-common.js';

const fails = (fn: () => unknown, re: RegExp) =>
  assert.throws(fn, (e: Error) => e instanceof CliError && re.test(e.message), re.source);

test('numbers: absent, default, required, and one message shape for every rule', () => {
  assert.equal(numberArg('--n', undefined), undefined);
  assert.equal(numberArg('--n', ' 2.5 '), 2.5);
  assert.equal(numberOr('--n', undefined, 7), 7);
  assert.equal(numberOr('--n', '3', 7, { integer: true, min: 1 }), 3);
  fails(() => requiredNumber('--k', undefined, {}, 'HELP'), /^--k is required\n\nHELP$/);
  fails(
    () => numberArg('--seed', '-1', { integer: true, min: 0 }),
    /^--seed needs a non-negative integer, got '-1'$/,
  );
  fails(
    () => numberArg('--epochs', '2.5', { integer: true, min: 1 }),
    /--epochs needs a positive integer, got '2.5'/,
  );
  fails(() => numberArg('--tol', '0', { positive: true }), /--tol needs a positive number/);
  fails(
    () => numberArg('--port', '70000', { integer: true, min: 0, max: 65535 }),
    /an integer in \[0, 65535\]/,
  );
  for (const bad of ['', ' ', 'abc', 'Infinity', 'NaN', '1e400', '0x', '9007199254740993'])
    fails(() => numberArg('--n', bad, { integer: true }), /--n needs an integer/);
  fails(() => numberArg('--n', 'x'.repeat(10_000)), /got 'x{100}…'$/);
  // an open upper end (fractions) and powers of two (FFT sizes)
  assert.equal(numberArg('--f', '0', { min: 0, below: 1 }), 0);
  assert.equal(numberArg('--f', '0.999', { min: 0, below: 1 }), 0.999);
  for (const bad of ['1', '-0.1', 'NaN'])
    fails(() => numberArg('--f', bad, { min: 0, below: 1 }), /^--f needs a number in \[0, 1\), got /);
  fails(() => numberArg('--f', '2', { below: 2 }), /^--f needs a number < 2, got '2'$/);
  for (const ok of [64, 1024, 2 ** 52])
    assert.equal(numberArg('--size', String(ok), { min: 64, powerOfTwo: true }), ok);
  for (const bad of ['32', '96', '64.5', '0', '-64', String(2 ** 52 + 2), '1e400'])
    fails(
      () => numberArg('--size', bad, { integer: true, min: 64, powerOfTwo: true }),
      /^--size needs a power of two >= 64, got /,
    );
});

test('lists: trimmed entries, a fixed length, bounded size', () => {
  assert.deepEqual(listArg('--c', ' a, b ,,c '), ['a', 'b', 'c']);
  assert.equal(listArg('--c', undefined), undefined);
  assert.deepEqual(numberListArg('--ppm', '0.5, 9', {}, 2), [0.5, 9]);
  fails(
    () => numberListArg('--ppm', '1', {}, 2),
    /--ppm needs 2 comma-separated values, each a number, got '1'/,
  );
  fails(
    () => numberListArg('--epochs', '1,-2', { integer: true, min: 0 }, 2),
    /each a non-negative integer, got '-2'/,
  );
  fails(() => listArg('--c', 'a,'.repeat(MAX_LIST + 5)), /at most 10000 entries/);
  assert.deepEqual(choiceListArg('--cov', 'all', ['full', 'diag'], true), ['full', 'diag']);
  assert.deepEqual(choiceListArg('--cov', 'diag', ['full', 'diag'], true), ['diag']);
  fails(
    () => choiceListArg('--cov', 'blocky', ['full', 'diag'], true),
    /'blocky' is not one of all, full, diag/,
  );
});

test('ranges: one value, a list or low..high, bounded', () => {
  assert.deepEqual(rangeListArg('--k', '3'), [3]);
  assert.deepEqual(rangeListArg('--k', '1,2,4'), [1, 2, 4]);
  assert.deepEqual(rangeListArg('--k', ' 2..5 '), [2, 3, 4, 5]);
  fails(() => rangeListArg('--k', '5..2'), /--k range '5..2' is empty/);
  fails(() => rangeListArg('--k', '0..3'), /--k needs a positive integer/);
  fails(() => rangeListArg('--k', '1..100000000'), /more than 10000 values/);
  fails(() => rangeListArg('--k', '0'), /--k needs/);
});

test('preferences: one weight per expert, normalised; the dashboard parses the same way', () => {
  assert.deepEqual(preferenceArg('--preference', '1,1,2', 3)?.weights, [0.25, 0.25, 0.5]);
  assert.equal(preferenceArg('--preference', undefined, 3), undefined);
  fails(
    () => preferenceArg('--preference', '1,1', 3),
    /--preference has 2 weights but the run has 3 experts/,
  );
  fails(() => preferenceArg('--preference', '1,-1,1', 3), /--preference must be non-negative numbers/);
  fails(() => preferenceArg('--preference', '0,0,0', 3), /--preference has weights that sum to 0/);
  fails(() => preferenceArg('--preference', '1,,1', 3), /non-negative numbers/);
});
