// Preference text ("a,b,c") from the command line and the dashboard: decimal non-negative numbers
// only; hexadecimal, binary, signs, gaps and infinities are named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PreferenceTextError, parsePreferenceText } from '../../src/longtail/index.js';

test('preference text: decimal weights are read, other number forms refused', () => {
  assert.deepEqual(parsePreferenceText('0.2,0.3,0.5'), [0.2, 0.3, 0.5]);
  assert.deepEqual(parsePreferenceText(' 1 , 2 ,3'), [1, 2, 3]);
  assert.deepEqual(parsePreferenceText('1e-3,.5,+1'), [0.001, 0.5, 1]);
  for (const bad of ['0x1,0,0', '0b1,0,0', '0o7,1,1', '-1,1,1', '1,,1', 'Infinity,1,1', '1,NaN,1', '', 'a,b'])
    assert.throws(
      () => parsePreferenceText(bad),
      (e: unknown) =>
        e instanceof PreferenceTextError &&
        /non-negative numbers separated by commas/.test((e as Error).message),
      bad,
    );
  assert.throws(() => parsePreferenceText('1,'.repeat(6000)), PreferenceTextError);
});
