// The public long-tail functions from a JavaScript caller: wrong types and out-of-range values are
// an ArgumentError naming the function and the argument, before any work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArgumentError } from '../../src/util/arguments.js';
import {
  buildSession,
  evaluatePreference,
  loadRun,
  longTailCounts,
  parseConfig,
  readPredictInput,
  testDistributionCounts,
} from '../../src/longtail/index.js';

const loose = <T extends (...a: never[]) => unknown>(f: T) => f as unknown as (...a: unknown[]) => unknown;

function named(error: unknown, pattern: RegExp): true {
  assert.ok(error instanceof ArgumentError, `${String(error)}`);
  assert.match((error as Error).message, pattern);
  assert.equal((error as ArgumentError).exitCode, 2);
  return true;
}

test('long-tail functions name the bad argument', async () => {
  assert.throws(
    () => loose(loadRun)(42),
    (e) => named(e, /^loadRun: path must be a non-empty string, got 42/),
  );
  assert.throws(
    () => loose(loadRun)('runs/x', { root: 3 }),
    (e) => named(e, /loadRun: options\.root must be a non-empty string/),
  );
  assert.throws(
    () => loose(parseConfig)({ name: 'x' }, 'c.json'),
    (e) => named(e, /parseConfig: text must be the JSON text of a config/),
  );
  assert.throws(
    () => loose(buildSession)(null, 'c.json'),
    (e) => named(e, /buildSession: config must be an object, got null/),
  );
  assert.throws(
    () => loose(buildSession)({}, 'c.json', { testPerClass: 2.5 }),
    (e) => named(e, /buildSession: overrides\.testPerClass must be an integer >= 1, got 2\.5/),
  );
  assert.throws(
    () => longTailCounts(10, 500, 0.5),
    (e) => named(e, /imbalance ratio must be >= 1/),
  );
  assert.throws(
    () => loose(testDistributionCounts)('uniform', 10, [5, '3']),
    (e) => named(e, /testDistributionCounts: trainCounts\[1\] must be a finite number, got '3'/),
  );
  await assert.rejects(loose(evaluatePreference)('runs/x', [1, 0, 0]) as Promise<unknown>, (e) =>
    named(e, /evaluatePreference: preference must be a Preference/),
  );
  await assert.rejects(readPredictInput('photos', { shape: [1, 28], classes: 10 } as never), (e) =>
    named(e, /readPredictInput: options\.shape must be \[channels, height, width\]/),
  );
  await assert.rejects(readPredictInput('photos', { shape: [1, 28, 28], classes: 0 }), (e) =>
    named(e, /readPredictInput: options\.classes must be an integer >= 1, got 0/),
  );
});
