// Magritek Spinsolve (benchtop) data: the native folder (acqu.par, data.1d, spectrum_processed.1d)
// and the JCAMP-DX FID export with $REVERSE= yes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat, isExperimentDir, readNmr } from '../../src/nmr/io/load.js';
import { processFid } from '../../src/nmr/process.js';
import { ACQU_PAR, SW, assertNamedError, line, oneD, spinsolveJcamp, tmp } from './vendor-fixtures.js';

test('JCAMP-DX FID with $REVERSE= yes (Spinsolve): conjugated, carrier from $SF, no stored phase', () => {
  const root = tmp();
  const bf1 = 80.4875791072845;
  const sf = 80.4871976179812; // 0 ppm: the carrier is at 4.74 ppm
  const carrier = ((bf1 - sf) / sf) * 1e6;
  // A line 500 Hz above the carrier, turning the way a Spinsolve FID stores it (as VnmrJ does).
  const trace = line(1024, 500, 1000);
  for (const reverse of ['yes', 'no'] as const) {
    const file = join(root, `fid-${reverse}.dx`);
    writeFileSync(file, spinsolveJcamp(trace, reverse, SW, sf, bf1));
    const data = readNmr(file);
    assert.equal(data.kind, 'fid');
    if (data.kind !== 'fid') return;
    assert.ok(Math.abs(data.fid.carrierPpm - carrier) < 1e-9, `${data.fid.carrierPpm}`);
    assert.ok(Math.abs(carrier - 4.7397) < 1e-3);
    assert.equal(data.fid.refMHz, sf);
    const s = processFid(data.fid, { phase: 'none', size: 4096 });
    let best = 0;
    for (let i = 1; i < s.real.length; i++)
      if (Math.hypot(s.real[i]!, s.imag[i]!) > Math.hypot(s.real[best]!, s.imag[best]!)) best = i;
    const ppm = s.ppmFirst + ((s.ppmLast - s.ppmFirst) * best) / (s.real.length - 1);
    // Reversed: the line lands 500 Hz above the carrier; read as TopSpin data, it would mirror.
    const expected = carrier + (reverse === 'yes' ? 500 : -500) / sf;
    assert.ok(Math.abs(ppm - expected) < 0.01, `${reverse}: ${ppm} vs ${expected}`);
    if (reverse === 'yes') assert.equal(data.fid.phase, undefined);
    else assert.deepEqual(data.fid.phase, { p0: 4.5, p1: 0 });
  }
});

test('Spinsolve folder: data.1d with acqu.par reads as its own JCAMP-DX export does, conjugated and referenced', () => {
  const root = tmp();
  const bf1 = 80.4875791072845;
  const sf = 80.4871976179812;
  // The low edge, in Hz from 0 ppm: the carrier ((bf1 - sf) MHz above 0 ppm) less half the width.
  const lowest = (bf1 - sf) * 1e6 - SW / 2;
  const trace = line(512, 500, 1000);
  const x = trace.re.map((_, i) => i / SW);
  const dir = join(root, 'exp');
  mkdirSync(dir);
  writeFileSync(join(dir, 'acqu.par'), ACQU_PAR(SW / 1000, bf1, lowest));
  writeFileSync(join(dir, 'data.1d'), oneD(x, trace));
  writeFileSync(join(dir, 'nmr_fid.dx'), spinsolveJcamp(trace, 'yes', SW, sf, bf1));
  assert.equal(detectFormat(dir), 'spinsolve');
  assert.equal(detectFormat(join(dir, 'data.1d')), 'spinsolve');
  assert.ok(isExperimentDir(dir));
  const native = readNmr(dir);
  const jcamp = readNmr(join(dir, 'nmr_fid.dx'));
  assert.ok(native.kind === 'fid' && jcamp.kind === 'fid');
  if (native.kind !== 'fid' || jcamp.kind !== 'fid') return;
  assert.equal(native.fid.swHz, SW);
  assert.ok(Math.abs(native.fid.refMHz - sf) < 1e-9, `${native.fid.refMHz}`);
  assert.ok(Math.abs(native.fid.carrierPpm - jcamp.fid.carrierPpm) < 1e-6);
  assert.equal(native.fid.nucleus, '1H');
  assert.equal(native.fid.scans, 8, 'nrScans');
  assert.equal(jcamp.fid.scans, 8, '.AVERAGES');
  // float32 in data.1d, 10 significant digits in the JCAMP-DX text
  for (let i = 0; i < trace.re.length; i++) {
    assert.ok(Math.abs(native.fid.re[i]! - jcamp.fid.re[i]!) < 1e-3, `re ${i}`);
    assert.ok(Math.abs(native.fid.im[i]! - jcamp.fid.im[i]!) < 1e-3, `im ${i}`);
  }
  // The processed spectrum (x axis up in ppm in the file) when asked for, highest ppm first.
  const ppmUp = trace.re.map((_, i) => -2 + (12 * i) / (trace.re.length - 1));
  writeFileSync(
    join(dir, 'spectrum_processed.1d'),
    oneD(ppmUp, { re: ppmUp.map((p) => p * 10), im: ppmUp.map(() => 0) }),
  );
  const processed = readNmr(dir, { prefer: 'processed' });
  assert.equal(processed.kind, 'spectrum');
  if (processed.kind !== 'spectrum') return;
  assert.ok(
    Math.abs(processed.spectrum.ppmFirst - 10) < 1e-5 && Math.abs(processed.spectrum.ppmLast + 2) < 1e-5,
  );
  assert.ok(Math.abs(processed.spectrum.real[0]! - 100) < 1e-3, 'the 10 ppm point first');
  assert.equal(readNmr(dir).kind, 'fid', 'the raw FID by default');
});

test('Spinsolve: malformed files are named errors', () => {
  const root = tmp();
  const trace = line(64, 0, 1);
  const x = trace.re.map((_, i) => i / SW);
  const cases: [string, Buffer, string, RegExp][] = [
    ['magic', Buffer.alloc(64, 7), ACQU_PAR(5, 60, -2500), /data\.1d: header: not a Spinsolve \.1d file/],
    [
      'truncated',
      oneD(x, trace).subarray(0, 200),
      ACQU_PAR(5, 60, -2500),
      /data\.1d: size: .*\(the file is truncated\)/,
    ],
    [
      '2d',
      oneD(x, trace, [64, 4, 1, 1]),
      ACQU_PAR(5, 60, -2500),
      /data\.1d: dimensions: 64 x 4 x 1 x 1 is not a 1D data set/,
    ],
    [
      'type',
      oneD(x, trace, undefined, 500),
      ACQU_PAR(5, 60, -2500),
      /data\.1d: data type: 500 is not complex data/,
    ],
    ['no bandwidth', oneD(x, trace), 'b1Freq = 60\nlowestFrequency = 1\n', /acqu\.par: bandwidth: missing/],
    ['bad line', oneD(x, trace), 'b1Freq = 60\njust words\n', /acqu\.par:2: line: expected 'name = value'/],
    [
      'reference below zero',
      oneD(x, trace),
      ACQU_PAR(5, 60, 1e9),
      /acqu\.par: lowestFrequency: puts 0 ppm at -?[\d.e+]+ MHz, below zero .*\(the acqu\.par file is corrupt\)/,
    ],
  ];
  for (const [name, data, par, message] of cases) {
    const dir = join(root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'data.1d'), data);
    writeFileSync(join(dir, 'acqu.par'), par);
    assertNamedError(() => readNmr(dir), message, name);
  }
});
