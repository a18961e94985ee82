// Run-time checks of what the public NMR functions take from JavaScript callers: spectra and FIDs
// as plain objects with typed arrays, lists of spectra, option objects. A failure is an
// ArgumentError naming the function and the field.
import { ArgumentChecks, checksOf } from '../util/arguments.js';
import type { Fid, Spectrum } from './types.js';

export { checksOf };

/** Spectra longer than this are not 1D NMR spectra (the readers' bound as well). */
const MAX_POINTS = 1 << 24;

function float64(c: ArgumentChecks, value: unknown, name: string): Float64Array {
  if (!(value instanceof Float64Array)) c.fail(name, 'a Float64Array', value);
  const a = value as Float64Array;
  if (a.length < 1 || a.length > MAX_POINTS) c.fail(`${name}.length`, `in 1..${MAX_POINTS}`, a.length);
  return a;
}

/** A {@link Spectrum}: `real` (and `imag`, if any, of the same length) as Float64Arrays, a ppm axis. */
export function checkSpectrum(c: ArgumentChecks, value: unknown, name = 'spectrum'): Spectrum {
  const s = c.object(value, name);
  const real = float64(c, s.real, `${name}.real`);
  if (s.imag !== undefined && float64(c, s.imag, `${name}.imag`).length !== real.length)
    c.fail(`${name}.imag`, `as long as ${name}.real (${real.length})`, s.imag);
  c.number(s.ppmFirst, `${name}.ppmFirst`);
  c.number(s.ppmLast, `${name}.ppmLast`);
  if (typeof s.refMHz !== 'number') c.fail(`${name}.refMHz`, 'a number (NaN when unknown)', s.refMHz);
  if (typeof s.source !== 'string') c.fail(`${name}.source`, 'a string (where it came from)', s.source);
  return value as Spectrum;
}

/** A {@link Fid}: `re` and `im` Float64Arrays of one length, spectral width and reference. */
export function checkFid(c: ArgumentChecks, value: unknown, name = 'fid'): Fid {
  const f = c.object(value, name);
  const re = float64(c, f.re, `${name}.re`);
  if (float64(c, f.im, `${name}.im`).length !== re.length)
    c.fail(`${name}.im`, `as long as ${name}.re (${re.length})`, f.im);
  c.number(f.swHz, `${name}.swHz`, { above: 0 });
  c.number(f.refMHz, `${name}.refMHz`, { above: 0 });
  c.number(f.carrierPpm, `${name}.carrierPpm`);
  c.number(f.groupDelay, `${name}.groupDelay`, { min: 0, max: re.length });
  if (typeof f.source !== 'string') c.fail(`${name}.source`, 'a string (where it came from)', f.source);
  return value as Fid;
}

/** A non-empty list of spectra as number arrays (every value finite), optionally of one length. */
export function checkSpectra(
  c: ArgumentChecks,
  value: unknown,
  name: string,
  o: { sameLength?: boolean } = {},
): ArrayLike<number>[] {
  const list = c.array(value, name, { minLength: 1 });
  list.forEach((x, i) => {
    const a = c.numbers(x, `${name}[${i}]`, { minLength: 1 });
    if (a.length > MAX_POINTS) c.fail(`${name}[${i}].length`, `at most ${MAX_POINTS}`, a.length);
    if (o.sameLength && a.length !== (list[0] as ArrayLike<number>).length)
      c.fail(`${name}[${i}]`, `as long as ${name}[0] (${(list[0] as ArrayLike<number>).length} points)`, x);
  });
  return list as ArrayLike<number>[];
}
