// The public NMR functions from a JavaScript caller: wrong types and out-of-range values are an
// ArgumentError naming the function and the argument, before any work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ArgumentError } from '../../src/util/arguments.js';
import {
  denoiseSpectra,
  inverseVarianceFusion,
  preprocessStack,
  processFid,
  readNmr,
  realStack,
  toSpectrum,
  writeCsvSpectrum,
  writeJcampSpectrum,
} from '../../src/nmr/index.js';

// Calls as a JavaScript program would make them, past the compiler's types.
const loose = <T extends (...a: never[]) => unknown>(f: T) => f as unknown as (...a: unknown[]) => unknown;

function throwsNamed(call: () => unknown, pattern: RegExp): void {
  assert.throws(call, (error: unknown) => {
    assert.ok(error instanceof ArgumentError, `${String(error)}`);
    assert.match((error as Error).message, pattern);
    assert.equal((error as ArgumentError).exitCode, 2);
    return true;
  });
}

const fid = () => ({
  re: new Float64Array(64),
  im: new Float64Array(64),
  swHz: 5000,
  refMHz: 400,
  carrierPpm: 4.7,
  groupDelay: 0,
  source: 'memory',
});

test('processFid checks the FID and its options', () => {
  const f = loose(processFid);
  throwsNamed(() => f(null), /^processFid: fid must be an object, got null/);
  throwsNamed(
    () => f({ ...fid(), re: [1, 2] }),
    /processFid: fid\.re must be a Float64Array, got an array of 2/,
  );
  throwsNamed(() => f({ ...fid(), im: new Float64Array(3) }), /fid\.im must be as long as fid\.re \(64\)/);
  throwsNamed(() => f({ ...fid(), swHz: '5000' }), /fid\.swHz must be a finite number > 0, got '5000'/);
  throwsNamed(() => f(fid(), { size: 100 }), /options\.size must be a power of two, got 100/);
  throwsNamed(() => f(fid(), { size: 32 }), /options\.size must be an integer >= 64/);
  throwsNamed(
    () => f(fid(), { apodization: { kind: 'sine' } }),
    /options\.apodization\.kind must be one of 'none', 'exponential', 'gaussian'/,
  );
  throwsNamed(() => f(fid(), { phase: 'best' }), /options\.phase must be one of 'params', 'auto', 'none'/);
  // A valid call still works.
  assert.equal(processFid(fid(), { size: 128, phase: 'none' }).real.length, 128);
});

test('the other public functions name what is wrong', () => {
  throwsNamed(
    () => loose(inverseVarianceFusion)([new Float64Array(4)], [0]),
    /inverseVarianceFusion: sigmas\[0\] must be a finite number > 0, got 0/,
  );
  throwsNamed(
    () => loose(inverseVarianceFusion)([new Float64Array(4), new Float64Array(5)], [1, 1]),
    /stack\[1\] must be as long as stack\[0\] \(4 points\)/,
  );
  throwsNamed(
    () => loose(inverseVarianceFusion)([[1, NaN]], [1]),
    /stack\[0\]\[1\] must be a finite number, got NaN/,
  );
  throwsNamed(() => loose(preprocessStack)([]), /preprocessStack: stack must be an array of at least 1/);
  throwsNamed(
    () => loose(preprocessStack)([[1, 2, 3]]),
    /stack\[0\] must be a Float64Array, got an array of 3/,
  );
  throwsNamed(
    () => loose(denoiseSpectra)({}, [new Float64Array(8)]),
    /denoiseSpectra: model must be a UNet1d/,
  );
  throwsNamed(() => loose(realStack)(['one.jdx']), /realStack: paths must be an array of at least 2/);
  throwsNamed(() => loose(realStack)(['a', 7]), /realStack: paths\[1\] must be a non-empty string, got 7/);
  throwsNamed(() => loose(readNmr)(42), /readNmr: path must be a non-empty string, got 42/);
  throwsNamed(
    () => loose(readNmr)('x.jdx', { prefer: 'best' }),
    /options\.prefer must be one of 'raw', 'processed'/,
  );
  throwsNamed(
    () => loose(toSpectrum)('x.jdx', { row: -1 }),
    /toSpectrum: options\.row must be an integer >= 0, got -1/,
  );
  const spectrum = { real: new Float64Array(4), ppmFirst: 10, ppmLast: 0, refMHz: NaN, source: 'memory' };
  throwsNamed(
    () => loose(writeCsvSpectrum)('out.csv', { ...spectrum, real: [1, 2] }),
    /writeCsvSpectrum: spectrum\.real must be a Float64Array/,
  );
  throwsNamed(
    () => loose(writeJcampSpectrum)('out.jdx', { ...spectrum, ppmFirst: null }, 't'),
    /spectrum\.ppmFirst must be a finite number, got null/,
  );
  throwsNamed(
    () => loose(writeJcampSpectrum)('out.jdx', spectrum, 5),
    /writeJcampSpectrum: title must be a string, got 5/,
  );
});
