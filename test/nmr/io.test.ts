import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync, cpSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataDir, npmDataDir, assertClose } from '../helpers.js';
import { decodeXyTable, encodeDifDup } from '../../src/nmr/io/asdf.js';
import { ParameterSet } from '../../src/nmr/io/labels.js';
import { readBrukerFid, readBrukerProcessed, readBrukerSer } from '../../src/nmr/io/bruker.js';
import { parseJcamp, readJcamp } from '../../src/nmr/io/jcamp.js';
import { parsePipe, readPipe } from '../../src/nmr/io/nmrpipe.js';
import { formatCsvSpectrum, parseCsvSpectrum } from '../../src/nmr/io/csv.js';
import { detectFormat, readNmr } from '../../src/nmr/io/load.js';
import { brukerGroupDelay } from '../../src/nmr/io/dsp.js';
import { NmrFormatError } from '../../src/nmr/io/errors.js';

const nmr = join(dataDir, 'nmr');
const jcamp = join(npmDataDir('jcamp-data-test'), 'data');
const tmp = (): string => mkdtempSync(join(tmpdir(), 'tailor-nmr-io-'));

test('ASDF: SQZ, DIF, DUP and the DIF y-check decode to the right values', () => {
  // A=1 B=2 C=3 (SQZ), % = DIF 0 -> 3, V = DUP 4 (the DIF three more times); the next line
  // starts with the check value C=3 (dropped), then k = DIF -2 -> 1.
  const simple = decodeXyTable(['0A B C%V', '7C k'], 'mem.jdx', 1);
  assert.deepEqual(Array.from(simple.y), [1, 2, 3, 3, 3, 3, 3, 1]);
  assert.deepEqual(simple.lineStarts, [
    { x: 0, index: 0 },
    { x: 7, index: 6 },
  ]);
  // Multi-digit SQZ/DIF values, a DUP of a DIF (T = 2) and a DUP of an absolute value.
  assert.deepEqual(Array.from(decodeXyTable(['0A23J0nT'], 'mem.jdx', 1).y), [123, 133, 128, 123]);
  assert.deepEqual(Array.from(decodeXyTable(['0A23U'], 'mem.jdx', 1).y), [123, 123, 123]);
  const affn = decodeXyTable(['10 1.5 -2.5E+01 3', '13 4,5;6'], 'mem.jdx', 1);
  assert.deepEqual(Array.from(affn.y), [1.5, -25, 3, 4, 5, 6]);
  const pac = decodeXyTable(['1+10-20+30'], 'mem.jdx', 1);
  assert.deepEqual(Array.from(pac.y), [10, -20, 30]);
});

test('ASDF: the DIFDUP encoder round-trips through the decoder, y-checks included', () => {
  const y = Array.from(
    { length: 500 },
    (_, i) => Math.round(1000 * Math.sin(i / 7)) + (i % 50 === 0 ? 0 : i % 3),
  );
  for (let i = 100; i < 130; i++) y[i] = 42; // a run for DUP
  const lines = encodeDifDup(y, (i) => String(i));
  assert.ok(lines.length > 3);
  assert.ok(
    lines.some((l) => /[S-Zs]/.test(l.slice(1))),
    'a DUP character is used',
  );
  const back = decodeXyTable(lines, 'roundtrip.jdx', 1);
  assert.deepEqual(Array.from(back.y), y);
});

test('ASDF: a failed y-check and a bad character name the file and line', () => {
  assert.throws(
    () => decodeXyTable(['0A J', '2C J'], 'bad.jdx', 40),
    (e: unknown) => e instanceof NmrFormatError && /bad\.jdx: line 41: DIF y-check/.test(e.message),
  );
  assert.throws(() => decodeXyTable(['0A J#'], 'bad.jdx', 7), /bad\.jdx: line 7: unexpected character '#'/);
});

test('parameter files: numbers, strings, arrays; a missing field names file and field', () => {
  const p = ParameterSet.parse(
    'acqus',
    '##TITLE= x\n##$TD= 16384\n##$NUC1= <1H>\n##$D= (0..3)\n0 0.5 1\n2\n$$ comment\n##$SW_h= 4789.2\n##END=',
  );
  assert.equal(p.number('$TD'), 16384);
  assert.equal(p.string('$NUC1'), '1H');
  assert.deepEqual(p.array('$D'), [0, 0.5, 1, 2]);
  assert.equal(p.number('$sw_h'), 4789.2, 'labels are case-insensitive');
  assert.throws(() => p.number('$SFO1'), /acqus: \$SFO1: missing/);
});

test('Bruker group delay: GRPDLY when given, else the DSPFVS/DECIM table', () => {
  assert.equal(brukerGroupDelay(76, 21, 3640, 'a'), 76);
  assert.equal(brukerGroupDelay(-1, 10, 24, 'a'), 61.020833333333336);
  assert.equal(brukerGroupDelay(undefined, 12, 8, 'a'), 53.25);
  assert.equal(brukerGroupDelay(undefined, 20, 8, 'a'), 0);
  assert.throws(() => brukerGroupDelay(undefined, 10, 5, 'acqus'), /acqus: \$DECIM: no group delay known/);
});

test('Bruker fid: cyclosporin header values and data', () => {
  const fid = readBrukerFid(join(nmr, 'single/bruker/cyclosporin-1h/1'));
  assert.equal(fid.re.length, 32768);
  assert.equal(fid.groupDelay, 76);
  assert.equal(fid.swHz, 5494.50549450549);
  assert.deepEqual(fid.phase, { p0: 56.56087, p1: 18.74915 });
  assert.ok(Math.abs(fid.carrierPpm - 4.497) < 0.01);
  // The filter's echo top sits at the group delay.
  let top = 0;
  for (let i = 0; i < 200; i++)
    if (Math.hypot(fid.re[i]!, fid.im[i]!) > Math.hypot(fid.re[top]!, fid.im[top]!)) top = i;
  assert.ok(Math.abs(top - 76) <= 2, `echo top at ${top}`);
});

test('Bruker processed 1r/1i: size, NC_proc scaling and ppm axis from OFFSET/SW_p', () => {
  const s = readBrukerProcessed(join(nmr, 'single/bruker/cyclosporin-1h/1/pdata/1'));
  assert.equal(s.real.length, 32768);
  assert.equal(s.imag?.length, 32768);
  assert.equal(s.ppmFirst, 9.99032);
  assert.ok(Math.abs(s.ppmFirst - s.ppmLast - (5494.5054945055 / 500.13) * (32767 / 32768)) < 1e-9);
  let max = 0;
  for (const v of s.real) max = Math.max(max, v);
  assert.ok(max > 1e6, 'NC_proc = -8 leaves large integers');
});

test('Bruker ser: the 10 rows of the inversion-recovery series, blocks padded', () => {
  const rows = readBrukerSer(join(nmr, 'multi_snr/inversion_recovery_600MHz/1'));
  assert.equal(rows.length, 10);
  assert.equal(rows[0]!.re.length, 4096);
  // Longest recovery delay first (10 s): fully relaxed, so its FID is the largest.
  const energy = (i: number): number => rows[i]!.re.reduce((a, v) => a + v * v, 0);
  assert.ok(energy(0) > energy(9) * 0.5);
  assert.notDeepEqual(Array.from(rows[0]!.re.subarray(0, 200)), Array.from(rows[5]!.re.subarray(0, 200)));
});

test('Bruker: a malformed acqus or truncated fid names the file and the field', () => {
  const dir = tmp();
  const src = join(nmr, 'single/bruker/aspirin-1h/1');
  cpSync(join(src, 'fid'), join(dir, 'fid'));
  const acqus = readFileSync(join(src, 'acqus'), 'latin1');
  writeFileSync(join(dir, 'acqus'), acqus.replace(/##\$SW_h=.*\n/, ''));
  assert.throws(
    () => readBrukerFid(dir),
    (e: unknown) =>
      e instanceof NmrFormatError && e.message.includes(join(dir, 'acqus')) && e.message.includes('$SW_h'),
  );
  writeFileSync(join(dir, 'acqus'), acqus.replace(/##\$TD= \d+/, '##$TD= 99999'));
  assert.throws(() => readBrukerFid(dir), /fid: \$TD: acqus says 99999 words/);
  writeFileSync(join(dir, 'acqus'), acqus.replace(/##\$SW_h=.*\n/, '##$SW_h= abc\n'));
  assert.throws(() => readBrukerFid(dir), /\$SW_h: expected a number, found 'abc'/);
});

test('JCAMP-DX FID (DIFDUP, Bruker export) decodes to exactly the Bruker fid', () => {
  const j = readJcamp(join(jcamp, 'aspirin-1h.fid.dx'));
  assert.equal(j.kind, 'fid');
  const b = readBrukerFid(join(nmr, 'single/bruker/aspirin-1h/1'));
  if (j.kind !== 'fid') return;
  assert.equal(j.fid.re.length, 8192);
  assertClose(j.fid.re, b.re, 0, 0, 'real');
  assertClose(j.fid.im, b.im, 0, 0, 'imag');
  assert.equal(j.fid.groupDelay, b.groupDelay);
  assert.deepEqual(j.fid.phase, b.phase);
  assert.ok(Math.abs(j.fid.carrierPpm - b.carrierPpm) < 1e-9);
});

test('JCAMP-DX spectrum (SQZ/DIF, LINK blocks, Hz axis): Rutin 1H', () => {
  const d = readJcamp(join(jcamp, 'Rutin_3080ug200uL_DMSOd6_qHNMR_400MHz_JDX.jdx'));
  assert.equal(d.kind, 'spectrum');
  if (d.kind !== 'spectrum') return;
  const s = d.spectrum;
  assert.equal(s.real.length, 52430);
  assert.ok(Math.abs(s.ppmFirst - 7604.450041814471 / 399.78219837825) < 1e-9);
  assert.ok(s.ppmFirst > s.ppmLast);
  assert.ok(Math.abs(Math.max(...s.real.subarray(0, 1000)) - 0) < 0.01);
  let top = 0;
  for (let i = 0; i < s.real.length; i++) if (s.real[i]! > s.real[top]!) top = i;
  // The tallest signal is the DMSO-d5 residual near 2.5 ppm.
  const ppm = s.ppmFirst + (top * (s.ppmLast - s.ppmFirst)) / (s.real.length - 1);
  assert.ok(Math.abs(ppm - 2.5) < 0.1, `tallest at ${ppm}`);
  assert.ok(Math.abs(s.real[top]! - 0.12090309709310532) < 1e-6, 'MAXY matches the decoded maximum');
});

test('JCAMP-DX: benchtop FID with SQZ pages and no DIF', () => {
  const d = readJcamp(join(jcamp, 'qmagnetics/ibuprofen_j_ave_qmagnetics.jdx'));
  assert.equal(d.kind, 'fid');
  if (d.kind !== 'fid') return;
  assert.equal(d.fid.re.length, 40000);
  assert.ok(Math.abs(d.fid.swHz - 10000) < 1);
  // The ASDF values are rounded to integers; FIRST/LAST hold the unrounded ends.
  assert.ok(Math.abs(d.fid.re[0]! - -1973.0809823166692) < 1, 'FIRST of the real page');
  assert.ok(Math.abs(d.fid.im[0]! - 394.2546185805657) < 1, 'FIRST of the imaginary page');
  assert.ok(Math.abs(d.fid.re[39999]! - 0.22209643210343316) < 1, 'LAST of the real page');
});

test('JCAMP-DX: malformed files name the file and the field', () => {
  assert.throws(
    () => parseJcamp('##TITLE= t\n##JCAMP-DX= 5\n##END=', 'empty.jdx'),
    /empty\.jdx: XYDATA: no ##XYDATA or ##NTUPLES/,
  );
  const bad =
    '##TITLE= t\n##JCAMP-DX= 5\n##XUNITS= HZ\n##FIRSTX= 10\n##LASTX= 0\n##YFACTOR= 1\n##NPOINTS= 5\n##XYDATA= (X++(Y..Y))\n10 1 2 3\n';
  assert.throws(
    () => parseJcamp(bad, 'short.jdx'),
    /short\.jdx: NPOINTS: header says 5 points but the table holds 3/,
  );
  const noFreq = bad.replace('##NPOINTS= 5', '##NPOINTS= 3');
  assert.throws(() => parseJcamp(noFreq, 'nofreq.jdx'), /nofreq\.jdx: \.OBSERVE FREQUENCY: missing/);
  // Blank and comment lines inside the table keep the reported line number exact.
  const badChar =
    '##TITLE= t\n##XUNITS= PPM\n##FIRSTX= 10\n##LASTX= 0\n##XYDATA= (X++(Y..Y))\n\n$$ c\n10 1 2 3\n7 4 # 5\n##END=';
  assert.throws(() => parseJcamp(badChar, 'char.jdx'), /char\.jdx: line 9: unexpected character '#'/);
  const ok = parseJcamp(noFreq.replace('##XUNITS= HZ', '##XUNITS= PPM'), 'ok.jdx');
  assert.equal(ok.kind, 'spectrum');
  if (ok.kind === 'spectrum') assert.deepEqual(Array.from(ok.spectrum.real), [1, 2, 3]);
});

function pipeFile(re: number[], im: number[] | undefined, littleEndian: boolean, ft = false): Uint8Array {
  const n = re.length;
  const buf = new ArrayBuffer(2048 + 4 * n * (im ? 2 : 1));
  const v = new DataView(buf);
  const set = (w: number, x: number): void => v.setFloat32(w * 4, x, littleEndian);
  set(2, 2.345);
  set(9, 1);
  set(99, n);
  set(100, 5000);
  set(101, -1000);
  set(106, im ? 0 : 1);
  set(119, 100);
  set(220, ft ? 1 : 0);
  re.forEach((x, i) => v.setFloat32(2048 + 4 * i, x, littleEndian));
  im?.forEach((x, i) => v.setFloat32(2048 + 4 * (n + i), x, littleEndian));
  return new Uint8Array(buf);
}

test('NMRPipe: both byte orders, complex time data and real spectra', () => {
  for (const le of [true, false]) {
    const d = parsePipe(pipeFile([1, 2, 3, 4], [5, 6, 7, 8], le), 'x.fid');
    assert.equal(d.kind, 'fid');
    if (d.kind !== 'fid') continue;
    assert.deepEqual(Array.from(d.fid.re), [1, 2, 3, 4]);
    assert.deepEqual(Array.from(d.fid.im), [5, 6, 7, 8]);
    assert.equal(d.fid.swHz, 5000);
    // ORIG is the last point: carrier = (orig + sw/2 - sw/n) / obs.
    assert.ok(Math.abs(d.fid.carrierPpm - (-1000 + 2500 - 1250) / 100) < 1e-9);
  }
  const s = parsePipe(pipeFile([1, 2, 3, 4], undefined, true, true), 'x.ft');
  assert.equal(s.kind, 'spectrum');
  if (s.kind === 'spectrum') assert.ok(Math.abs(s.spectrum.ppmLast - -10) < 1e-9);
  assert.throws(() => parsePipe(new Uint8Array(100), 'tiny.fid'), /tiny\.fid: header: file is 100 bytes/);
  const wrong = pipeFile([1, 2], [3, 4], true);
  new DataView(wrong.buffer).setFloat32(99 * 4, 50, true);
  assert.throws(() => parsePipe(wrong, 'cut.fid'), /cut\.fid: FDSIZE: header says 50 complex points/);
});

test('NMRPipe: the nmrglue co-add runs', () => {
  const d = readPipe(join(nmr, 'multi_snr/nmrglue_coadd_13C/test-run01.fid'));
  assert.equal(d.kind, 'fid');
  if (d.kind !== 'fid') return;
  assert.equal(d.fid.re.length, 1500);
  assert.equal(d.fid.swHz, 50000);
  assert.ok(Math.abs(d.fid.refMHz - 125.681) < 1e-3);
  assert.ok(Math.abs(d.fid.carrierPpm - 101.274) < 0.01, `carrier ${d.fid.carrierPpm}`);
});

test('CSV: round trip, header line, reversed axis and errors with line numbers', () => {
  const text = formatCsvSpectrum(
    { real: Float64Array.from([1, 2, 3]), ppmFirst: 10, ppmLast: 8, refMHz: 400, source: 'x' },
    'test',
  );
  const s = parseCsvSpectrum(text, 'a.csv');
  assert.deepEqual(Array.from(s.real), [1, 2, 3]);
  assert.equal(s.refMHz, 400);
  const rev = parseCsvSpectrum('ppm,y\n8,3\n9,2\n10,1\n', 'b.csv');
  assert.deepEqual(Array.from(rev.real), [1, 2, 3]);
  assert.equal(rev.ppmFirst, 10);
  assert.throws(() => parseCsvSpectrum('ppm,y\n1,2\n2,x\n', 'c.csv'), /c\.csv: line 3: not a number/);
  assert.throws(() => parseCsvSpectrum('1,2\n2,3\n4,4\n', 'd.csv'), /d\.csv: .*not evenly spaced/);
});

test('format detection and a bad path', () => {
  assert.equal(detectFormat(join(nmr, 'single/bruker/aspirin-1h/1')), 'bruker');
  assert.equal(detectFormat(join(jcamp, 'aspirin-1h.fid.dx')), 'jcamp');
  assert.equal(detectFormat(join(nmr, 'multi_snr/nmrglue_coadd_13C/test-run02.fid')), 'nmrpipe');
  const dir = tmp();
  mkdirSync(join(dir, 'empty'));
  assert.throws(
    () => readNmr(join(dir, 'empty')),
    /not an experiment folder \(a Bruker folder has acqus or procs/,
  );
  assert.throws(() => readNmr(join(dir, 'none')), /does not exist/);
  const processed = readNmr(join(nmr, 'single/bruker/strychnine-1h/10'), { prefer: 'processed' });
  assert.equal(processed.kind, 'spectrum');
});
