// VnmrJ's processing parameters: the phases rp/lp (VnmrJ's convention, converted to tailor's), the
// FID shift lsfid, and how 'params' and 'auto' choose between the stored and the automatic phase.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { dataDir, runTailor } from '../helpers.js';
import { readVarianFids, vnmrjPhase } from '../../src/nmr/io/varian.js';
import { applyPhase, processFid, type ProcessedSpectrum } from '../../src/nmr/process.js';
import { autoPhase } from '../../src/nmr/phase.js';
import { toSpectrum } from '../../src/nmr/convert.js';
import { SW, assertNamedError, experiment, fidFile, param, tmp, type Trace } from './vendor-fixtures.js';

const N_FID = 2048;
/** Line offsets from the carrier (Hz) and amplitudes: spread over the window, so lp matters. */
const LINES: [number, number][] = [
  [2400, 1000],
  [900, 600],
  [-300, 800],
  [-2100, 500],
];

/**
 * VnmrJ's phase at an offset of hz from the carrier: point i of its n-point spectrum (index 0 at
 * +sw/2) gets rp + lp (1 - i / (n - 1)), as VnmrJ's display applies it.
 */
function vnmrjPhaseAt(hz: number, rp: number, lp: number, n: number): number {
  const i = ((SW / 2 - hz) * n) / SW;
  return rp + lp * (1 - i / (n - 1));
}

/**
 * A FID stored as VnmrJ stores it (a line above the carrier turns clockwise) whose lines carry the
 * phase error that VnmrJ's own correction (rp, lp) on its n-point spectrum removes: VnmrJ
 * transforms the FID as stored and multiplies by exp(-i phase), so each line starts at exp(+i phase).
 */
function vnmrjFid(rp: number, lp: number, n: number): Trace {
  const re = new Array<number>(N_FID).fill(0);
  const im = new Array<number>(N_FID).fill(0);
  for (const [hz, amplitude] of LINES) {
    const phi = (vnmrjPhaseAt(hz, rp, lp, n) * Math.PI) / 180;
    for (let j = 0; j < N_FID; j++) {
      const t = j / SW;
      const a = amplitude * Math.exp(-t * 8);
      const w = -2 * Math.PI * hz * t + phi;
      re[j]! += a * Math.cos(w);
      im[j]! += a * Math.sin(w);
    }
  }
  return { re, im };
}

function maxAbsDiff(a: Float64Array, b: Float64Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

function maxAbs(a: Float64Array): number {
  return a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
}

test('VnmrJ rp/lp: the stored phase reproduces the ideal spectrum; the other conventions do not', () => {
  const dir = tmp();
  const rp = 37;
  const lp = -124;
  const ideal = experiment(join(dir, 'ideal.fid'), fidFile([[vnmrjFid(0, 0, 2048)]], 'float32'));
  const stored = experiment(
    join(dir, 'phased.fid'),
    fidFile([[vnmrjFid(rp, lp, 2048)]], 'float32'),
    // fn = 4096 values: VnmrJ's spectrum has 2048 points; tailor transforms to its own size.
    param('rp', [rp]) + param('lp', [lp]) + param('fn', [4096]),
  );
  const reference = processFid(readVarianFids(ideal)[0]!, { phase: 'none', size: 8192 });
  const fid = readVarianFids(stored)[0]!;
  assert.equal(fid.phaseSource, 'procpar rp/lp');
  assert.deepEqual(fid.phase, vnmrjPhase(rp, lp, 2048));
  const phased = processFid(fid, { size: 8192 });
  assert.equal(phased.phaseFrom, 'file');
  const scale = maxAbs(reference.real);
  // Lines spread over the window carry different phase errors; only the right conversion undoes all.
  const err = maxAbsDiff(phased.real, reference.real) / scale;
  assert.ok(err < 0.01, `rp/lp as converted: ${err}`);
  const unphased = processFid(fid, { phase: 'none', size: 8192 });
  const wrong: [string, number, number][] = [
    ['rp/lp taken as TopSpin phases', rp, lp],
    ['without the conjugation', rp + lp, -lp],
    ['pivot at the other edge', -rp, -lp],
  ];
  for (const [name, p0, p1] of wrong) {
    const x = applyPhase(unphased.real, unphased.imag, p0, p1).re;
    const e = maxAbsDiff(x, reference.real) / scale;
    assert.ok(e > 0.2, `${name}: ${e}`);
  }
  // 'auto' ignores the stored phase, and says so.
  const auto = processFid(fid, { phase: 'auto', size: 8192 });
  assert.equal(auto.phaseFrom, 'auto');
  assert.notDeepEqual(auto.phase, fid.phase);
});

test('VnmrJ rp/lp: the size of VnmrJ spectrum comes from fn, else np rounded up; rp = lp = 0 is no phase', () => {
  const dir = tmp();
  const trace = vnmrjFid(0, 0, 2048);
  const fidOf = (name: string, extra: string) =>
    readVarianFids(experiment(join(dir, name), fidFile([[trace]], 'float32'), extra))[0]!;
  // np = 4096 values; fn off: VnmrJ transforms 4096 values, 2048 complex points.
  const a = fidOf('a.fid', param('rp', [10]) + param('lp', [-90]) + param('fn', [65536], false));
  assert.deepEqual(a.phase, { p0: 80, p1: (-90 * 2048) / 2047 });
  const b = fidOf('b.fid', param('rp', [10]) + param('lp', [-90]) + param('fn', [32768]));
  assert.deepEqual(b.phase, { p0: 80, p1: (-90 * 16384) / 16383 });
  const none = fidOf('c.fid', param('rp', [0]) + param('lp', [0]));
  assert.equal(none.phase, undefined);
  const s = processFid(none, { size: 4096 });
  assert.equal(s.phaseFrom, 'auto');
  // An inactive rp/lp is not used, as VnmrJ ignores an inactive parameter.
  assert.equal(fidOf('d.fid', param('rp', [30], false) + param('lp', [5], false)).phase, undefined);
});

test('VnmrJ lsfid: positive drops leading points, negative puts zeros in front, exactly', () => {
  const dir = tmp();
  const trace: Trace = {
    re: Array.from({ length: 16 }, (_, i) => i + 1),
    im: Array.from({ length: 16 }, (_, i) => -(i + 1) * 10),
  };
  const fidOf = (name: string, extra: string) =>
    readVarianFids(experiment(join(dir, name), fidFile([[trace]], 'int32'), extra))[0]!;
  const plain = fidOf('plain.fid', '');
  assert.equal(plain.leftShift, undefined);
  assert.deepEqual(Array.from(plain.re), trace.re);
  assert.deepEqual(
    Array.from(plain.im),
    trace.im.map((v) => -v),
  );
  const left = fidOf('left.fid', param('lsfid', [3]));
  assert.equal(left.leftShift, 3);
  assert.deepEqual(Array.from(left.re), trace.re.slice(3));
  assert.deepEqual(
    Array.from(left.im),
    trace.im.slice(3).map((v) => -v),
  );
  const right = fidOf('right.fid', param('lsfid', [-2]));
  assert.equal(right.leftShift, -2);
  assert.deepEqual(Array.from(right.re), [0, 0, ...trace.re]);
  assert.deepEqual(Array.from(right.im), [0, 0, ...trace.im.map((v) => -v)]);
  assert.equal(fidOf('off.fid', param('lsfid', [3], false)).leftShift, undefined);
  for (const [name, value] of [
    ['half', 1.5],
    ['long', 16],
    ['longer', -20],
  ] as const)
    assertNamedError(
      () => fidOf(`${name}.fid`, param('lsfid', [value])),
      /procpar: lsfid: .* is not a shift of a 16-point FID.*turn it off/,
      name,
    );
});

/** Negative share of the real part where the spectrum has signal (within 30 points of 10 % of its largest value). */
function peakNegativeFraction(real: Float64Array): number {
  const m = maxAbs(real);
  let neg = 0;
  let total = 0;
  for (let i = 0; i < real.length; i++) {
    let near = false;
    for (let j = Math.max(0, i - 30); j <= Math.min(real.length - 1, i + 30) && !near; j++)
      near = Math.abs(real[j]!) > 0.1 * m;
    if (!near) continue;
    total += Math.abs(real[i]!);
    if (real[i]! < 0) neg -= real[i]!;
  }
  return neg / total;
}

test('VnmrJ 31P experiment: rp/lp with lsfid give absorptive positive lines, as the automatic phase does', () => {
  const dir = join(dataDir, 'nmr/single/varian/phosphorus-31p.fid');
  const fid = readVarianFids(dir)[0]!;
  assert.equal(fid.leftShift, -3);
  const s: ProcessedSpectrum = processFid(fid);
  assert.equal(s.phaseFrom, 'file');
  const stored = peakNegativeFraction(s.real);
  const unphased = processFid(fid, { phase: 'none' });
  const auto = autoPhase(unphased.real, unphased.imag);
  const acme = peakNegativeFraction(applyPhase(unphased.real, unphased.imag, auto.p0, auto.p1).re);
  assert.ok(stored < 0.02 && acme < 0.02, `negative fraction: stored ${stored}, ACME ${acme}`);
  // The same check fails for rp/lp read in TopSpin's convention and for the FID left unshifted.
  const rp = -171.394357079;
  const lp = 749.300507521;
  const naive = peakNegativeFraction(applyPhase(unphased.real, unphased.imag, rp, lp).re);
  assert.ok(naive > 0.1, `rp/lp as TopSpin phases: ${naive}`);
  const raw = processFid({ ...fid, re: fid.re.subarray(3), im: fid.im.subarray(3) }, { size: s.real.length });
  const unshifted = peakNegativeFraction(raw.real);
  assert.ok(unshifted > 0.1, `without lsfid the stored lp does not fit: ${unshifted}`);
  const { note } = toSpectrum(dir);
  assert.match(note!, /stored with the data \(procpar rp\/lp\).*lsfid = -3 points \(right\)/);
});

test('nmr process prints the phase it used and where it came from', () => {
  const dir = join(dataDir, 'nmr/single/varian/phosphorus-31p.fid');
  const out = join(tmp(), 'p.csv');
  const file = runTailor(['nmr', 'process', '--input', dir, '--out', out]);
  assert.equal(file.code, 0, file.err);
  assert.match(file.err, /phase p0 -577\.91 p1 749\.35 deg, stored with the data \(procpar rp\/lp\)/);
  const auto = runTailor(['nmr', 'process', '--input', dir, '--out', out, '--phase', 'auto']);
  assert.equal(auto.code, 0, auto.err);
  assert.match(auto.err, /deg, automatic \(ACME\)/);
});
