import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { dataDir, npmDataDir } from '../helpers.js';
import { readBrukerFid, readBrukerProcessed } from '../../src/nmr/io/bruker.js';
import { readJcamp } from '../../src/nmr/io/jcamp.js';
import { applyPhase, processFid, ppmLimits } from '../../src/nmr/process.js';
import { autoPhase } from '../../src/nmr/phase.js';
import { fftInPlace } from '../../src/nmr/fft.js';
import { estimateShift } from '../../src/nmr/pipeline/align.js';
import { correlation, maxIndex } from '../../src/nmr/stats.js';
import { fwhmAt } from '../../src/nmr/eval/peaks.js';
import { ppmToIndex, type Fid } from '../../src/nmr/types.js';

const nmr = join(dataDir, 'nmr');

function lineFid(n: number, swHz: number, lines: { hz: number; lw: number; amp?: number }[]): Fid {
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (const l of lines) {
    for (let j = 0; j < n; j++) {
      const t = j / swHz;
      const a = (l.amp ?? 1) * Math.exp(-Math.PI * l.lw * t);
      re[j]! += a * Math.cos(2 * Math.PI * l.hz * t);
      im[j]! += a * Math.sin(2 * Math.PI * l.hz * t);
    }
  }
  return { re, im, swHz, refMHz: 400, carrierPpm: 4.7, groupDelay: 0, source: 'test' };
}

test('FFT: forward then inverse is the identity, and a single tone lands in its bin', () => {
  const n = 64;
  const re = Float64Array.from({ length: n }, (_, j) => Math.cos((2 * Math.PI * 5 * j) / n));
  const im = Float64Array.from({ length: n }, (_, j) => Math.sin((2 * Math.PI * 5 * j) / n));
  const r0 = Float64Array.from(re);
  fftInPlace(re, im);
  assert.ok(Math.abs(re[5]! - n) < 1e-9);
  assert.ok(Math.abs(re[6]!) < 1e-9);
  fftInPlace(re, im, true);
  for (let i = 0; i < n; i++) assert.ok(Math.abs(re[i]! - r0[i]!) < 1e-12);
  assert.throws(() => fftInPlace(new Float64Array(6), new Float64Array(6)), /power of two/);
});

test('a line at a known frequency appears at its ppm, absorptive, index 0 = highest ppm', () => {
  // Frequencies on exact bins of the 8192-point spectrum (0.5 Hz apart).
  const sw = 4096;
  const fid = lineFid(4096, sw, [
    { hz: 512, lw: 2 },
    { hz: -1024, lw: 2, amp: 0.5 },
  ]);
  const s = processFid(fid, { size: 8192, phase: 'none', apodization: { kind: 'none' } });
  const { ppmFirst, ppmLast } = ppmLimits(fid, 8192);
  assert.equal(s.ppmFirst, ppmFirst);
  assert.ok(Math.abs(ppmFirst - (4.7 + sw / 400 / 2)) < 1e-12);
  assert.ok(Math.abs(ppmFirst - ppmLast - (10.24 * 8191) / 8192) < 1e-12);
  const top = maxIndex(s.real);
  assert.ok(Math.abs(top - ppmToIndex(s, 4.7 + 512 / 400)) < 1e-6, `tall line at ${top}`);
  const small = maxIndex(s.real.map((v, i) => (Math.abs(i - top) > 50 ? v : 0)));
  assert.ok(Math.abs(small - ppmToIndex(s, 4.7 - 1024 / 400)) < 1e-6);
  // Absorption: the imaginary part crosses zero at the top, the real part is positive.
  assert.ok(Math.abs(s.imag[top]!) < 0.05 * s.real[top]!);
  let negative = 0;
  for (const v of s.real) if (v < -0.01 * s.real[top]!) negative++;
  assert.equal(negative, 0);
});

test('apodization: exponential adds LB to the width, Gaussian gives its FWHM', () => {
  const sw = 2000;
  const fid = lineFid(8192, sw, [{ hz: 100, lw: 1 }]);
  const width = (s: { real: Float64Array }): number =>
    (fwhmAt(s.real, maxIndex(s.real)) * sw) / s.real.length;
  const plain = processFid(fid, { size: 32768, phase: 'none', apodization: { kind: 'none' } });
  const lb = processFid(fid, { size: 32768, phase: 'none', apodization: { kind: 'exponential', lbHz: 3 } });
  assert.ok(Math.abs(width(plain) - 1) < 0.05, `plain ${width(plain)}`);
  assert.ok(Math.abs(width(lb) - 4) < 0.05, `lb ${width(lb)}`);
  const narrow = lineFid(8192, sw, [{ hz: 100, lw: 0 }]);
  const gauss = processFid(narrow, {
    size: 32768,
    phase: 'none',
    apodization: { kind: 'gaussian', gbHz: 5 },
  });
  assert.ok(Math.abs(width(gauss) - 5) < 0.1, `gauss ${width(gauss)}`);
});

test('automatic phasing recovers a known zero- and first-order phase error', () => {
  const fid = lineFid(4096, 4000, [
    { hz: 1200, lw: 3 },
    { hz: 300, lw: 3, amp: 0.7 },
    { hz: -600, lw: 3, amp: 0.9 },
    { hz: -1500, lw: 3, amp: 0.5 },
  ]);
  const good = processFid(fid, { size: 8192, phase: 'none', apodization: { kind: 'none' } });
  // Mis-phase by the inverse of (p0, p1), then ask autoPhase to find (p0, p1) again.
  const bad = applyPhase(good.real, good.imag, -35, -50);
  const found = autoPhase(bad.re, bad.im);
  const fixed = applyPhase(bad.re, bad.im, found.p0, found.p1);
  assert.ok(correlation(fixed.re, good.real) > 0.995, `p0 ${found.p0} p1 ${found.p1}`);
  assert.ok(Math.abs(found.p0 - 35) < 5 && Math.abs(found.p1 - 50) < 10, `p0 ${found.p0} p1 ${found.p1}`);
});

test('real Bruker data: our processing of the fid reproduces TopSpin 1r (group delay, phase, axis)', () => {
  for (const [name, minCorr] of [
    ['single/bruker/cyclosporin-1h/1', 0.99],
    ['single/bruker/strychnine-1h/10', 0.99],
    ['multi_snr/coffee_UV1009/21', 0.99],
  ] as const) {
    const dir = join(nmr, name);
    const ref = readBrukerProcessed(join(dir, 'pdata', '1'));
    const s = processFid(readBrukerFid(dir), { size: ref.real.length });
    assert.ok(Math.abs(s.ppmFirst - ref.ppmFirst) < 1e-4, `${name}: axis ${s.ppmFirst} vs ${ref.ppmFirst}`);
    const c = correlation(s.real, ref.real);
    assert.ok(c > minCorr, `${name}: correlation ${c}`);
    const { shift } = estimateShift(ref.real, s.real, { maxShift: 20 });
    assert.ok(Math.abs(shift) < 0.05, `${name}: shifted by ${shift} points against 1r`);
  }
});

test('real data, table group delay (DSPFVS 10): aspirin peaks at the ppm of its TopSpin peak list', () => {
  for (const spectrum of [
    processFid(readBrukerFid(join(nmr, 'single/bruker/aspirin-1h/1'))),
    (() => {
      const d = readJcamp(join(npmDataDir('jcamp-data-test'), 'data/aspirin-1h.fid.dx'));
      if (d.kind !== 'fid') throw new Error('expected a FID');
      return processFid(d.fid);
    })(),
  ]) {
    const top = maxIndex(spectrum.real);
    const ppmAt = (i: number): number =>
      spectrum.ppmFirst + (i * (spectrum.ppmLast - spectrum.ppmFirst)) / (spectrum.real.length - 1);
    assert.ok(ppmAt(top) > 2.21 && ppmAt(top) < 2.35, `CH3 at ${ppmAt(top)}`);
    for (const ppm of [8.0532, 7.28, 7.0817]) {
      const i = Math.round(ppmToIndex(spectrum, ppm));
      const local = maxIndex(spectrum.real.subarray(i - 3, i + 4)) + i - 3;
      assert.ok(Math.abs(ppmAt(local) - ppm) < 0.004, `peak near ${ppm} found at ${ppmAt(local)}`);
      assert.ok(
        spectrum.real[local]! > 0.05 * spectrum.real[top]!,
        `peak at ${ppm} is positive and sizeable`,
      );
    }
    // Correct phase: almost no negative intensity.
    let pos = 0;
    let neg = 0;
    for (const v of spectrum.real) {
      if (v > 0) pos += v;
      else neg -= v;
    }
    assert.ok(pos > 10 * neg, `positive/negative area ${pos / neg}`);
  }
});
