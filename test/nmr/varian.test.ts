// Varian / Agilent VnmrJ folders (fid + procpar), and rows of arrayed experiments (PATH#R) through
// the library and the commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir, runTailor } from '../helpers.js';
import { parseProcpar, Procpar } from '../../src/nmr/io/procpar.js';
import { readVarianFids } from '../../src/nmr/io/varian.js';
import { detectFormat, isExperimentDir, readNmr } from '../../src/nmr/io/load.js';
import { NmrFormatError } from '../../src/nmr/io/errors.js';
import { processFid } from '../../src/nmr/process.js';
import { toSpectrum } from '../../src/nmr/convert.js';
import { loadSpectra, realStack, splitRow } from '../../src/nmr/realstack.js';
import { formatStackReport, stackReport } from '../../src/report/nmr-stack.js';
import {
  CARRIER_PPM,
  REFFRQ,
  SFRQ,
  SW,
  assertNamedError,
  experiment,
  fidFile,
  line,
  param,
  tmp,
  type Trace,
} from './vendor-fixtures.js';

function peakPpm(dir: string): number {
  const data = readNmr(dir);
  assert.equal(data.kind, 'fid');
  const s = processFid(data.fid, { phase: 'none', size: 4096 });
  let best = 0;
  for (let i = 1; i < s.real.length; i++)
    if (Math.hypot(s.real[i]!, s.imag[i]!) > Math.hypot(s.real[best]!, s.imag[best]!)) best = i;
  return s.ppmFirst + ((s.ppmLast - s.ppmFirst) * best) / (s.real.length - 1);
}

test('procpar: reals, arrays over lines, quoted strings with escapes, enums and the active flag', () => {
  const text =
    'sw 1 1 1e+06 0 0 2 1 11 1 64\n1 6000.5 \n0 \n' +
    'nt 7 1 1e+09 1 1 2 1 2 1 64\n5 1 4\n16 64 256 \n0 \n' +
    'comment 2 2 256 0 0 2 1 0 1 64\n2 "a \\"quoted\\" word"\n"second line"\n0 \n' +
    'dmg 2 2 2 0 0 4 1 3 1 64\n1 "ph"\n3 "ph" "av" "pwr"\n' +
    'lb 1 1 1e+05 -1e+05 0 3 1 1 0 64\n1 2.5 \n0 \n';
  const map = parseProcpar('procpar', text);
  assert.deepEqual(map.get('sw')!.values, [6000.5]);
  assert.deepEqual(map.get('nt')!.values, [1, 4, 16, 64, 256]);
  assert.deepEqual(map.get('comment')!.values, ['a "quoted" word', 'second line']);
  assert.deepEqual(map.get('dmg')!.values, ['ph']);
  assert.equal(map.get('lb')!.active, false);
  const p = new Procpar('procpar', map);
  assert.equal(p.activeNumber('lb'), undefined);
  assert.equal(p.optionalNumber('lb'), 2.5);
  assert.equal(p.string('comment'), 'a "quoted" word');
});

test('procpar: a malformed file names the file, the line and the parameter', () => {
  const cases: [string, RegExp][] = [
    ['not a procpar file\n', /procpar:1: parameter: expected 'name subtype/],
    ['sw 1 1 1e+06 0 0 2 1 11 1 64\n1 six \n0 \n', /procpar:2: sw: value 1 is 'six', not a number/],
    ['tn 2 2 4 0 0 2 1 8 1 64\n1 "H1\n', /procpar:2: tn: value 1: a string is not closed/],
    [
      'sw 1 1 1e+06 0 0 2 1 11 1 64\n99999999999 1\n',
      /sw: number of values: expected a count in 0\.\.1048576/,
    ],
    ['sw 1 1 1e+06 0 0 2 1 11 1 64\n2 6000 \n', /sw: value 2: the file ends here/],
  ];
  for (const [text, message] of cases)
    assert.throws(
      () => parseProcpar('procpar', text),
      (e: unknown) => e instanceof NmrFormatError && message.test(e.message),
      text,
    );
});

test('VnmrJ fid: every data type and byte order reads the stored values exactly, conjugated', () => {
  const root = tmp();
  const trace = line(256, 500, 20000, true);
  for (const type of ['float32', 'int32', 'int16'] as const)
    for (const le of [false, true]) {
      const dir = experiment(join(root, `${type}-${le}.fid`), fidFile([[trace]], type, le));
      const [fid] = readVarianFids(dir);
      assert.ok(
        fid!.re.every((v, i) => v === trace.re[i]!),
        `${type} ${le}: the real part is the stored one`,
      );
      assert.ok(
        fid!.im.every((v, i) => v === -trace.im[i]!),
        `${type} ${le}: the imaginary part is the stored one negated`,
      );
      assert.equal(fid!.swHz, SW);
      assert.equal(fid!.refMHz, REFFRQ);
      assert.ok(Math.abs(fid!.carrierPpm - CARRIER_PPM) < 1e-9);
      assert.equal(fid!.nucleus, '1H');
      assert.equal(fid!.lbHz, 0.5);
      assert.equal(fid!.groupDelay, 0);
    }
});

test('VnmrJ fid: a line above the carrier lands at its ppm, highest ppm first as for Bruker', () => {
  const root = tmp();
  for (const offset of [1000, -1500]) {
    const dir = experiment(join(root, `line${offset}.fid`), fidFile([[line(1024, offset, 1)]], 'float32'));
    const expected = CARRIER_PPM + offset / REFFRQ;
    // One point of the 4096-point spectrum is SW / 4096 / REFFRQ = 0.0037 ppm.
    assert.ok(Math.abs(peakPpm(dir) - expected) < 0.004, `offset ${offset}: ${peakPpm(dir)} vs ${expected}`);
  }
});

test('VnmrJ: referencing from rfl/rfp when reffrq is absent agrees with reffrq', () => {
  const dir = join(tmp(), 'ref.fid');
  mkdirSync(dir);
  writeFileSync(join(dir, 'fid'), fidFile([[line(64, 0, 1)]], 'float32'));
  // The reference line (0 ppm) at rfl Hz from the right edge, given the shift rfp = 0.
  const rfl = SW / 2 - CARRIER_PPM * REFFRQ;
  writeFileSync(
    join(dir, 'procpar'),
    param('sw', [SW]) + param('sfrq', [SFRQ]) + param('rfl', [rfl]) + param('rfp', [0]),
  );
  const [fid] = readVarianFids(dir);
  assert.ok(Math.abs(fid!.carrierPpm - CARRIER_PPM) < 1e-6, String(fid!.carrierPpm));
  assert.equal(fid!.lbHz, undefined);
});

test('VnmrJ: an arrayed experiment is a series of FIDs, across blocks and traces', () => {
  const root = tmp();
  const traces = [line(32, 100, 1), line(32, 200, 2), line(32, 300, 3), line(32, 400, 4)];
  const blocks = experiment(
    join(root, 'blocks.fid'),
    fidFile([[traces[0]!], [traces[1]!], [traces[2]!]], 'float32'),
  );
  const byBlock = readNmr(blocks);
  assert.equal(byBlock.kind, 'fids');
  if (byBlock.kind !== 'fids') return;
  assert.equal(byBlock.fids.length, 3);
  byBlock.fids.forEach((f, i) => assert.ok(Math.abs(f.re[0]! - (i + 1)) < 1e-6));
  assert.match(byBlock.fids[2]!.source, /fid\[FID 2\]$/);
  const inBlocks = experiment(
    join(root, 'traces.fid'),
    fidFile([traces.slice(0, 2), traces.slice(2)], 'float32'),
  );
  const series = readVarianFids(inBlocks);
  assert.deepEqual(
    series.map((f) => Math.round(f.re[0]!)),
    [1, 2, 3, 4],
  );
});

test('VnmrJ: format detection by folder and by fid file; CLI process writes the spectrum', () => {
  const root = tmp();
  const dir = experiment(join(root, 'proton.fid'), fidFile([[line(512, 800, 1)]], 'float32'));
  assert.equal(detectFormat(dir), 'varian');
  assert.equal(detectFormat(join(dir, 'fid')), 'varian');
  assert.ok(isExperimentDir(dir));
  assert.equal(readNmr(join(dir, 'fid')).kind, 'fid');
  const out = join(root, 'out.csv');
  const r = runTailor(['nmr', 'process', '--input', dir, '--out', out, '--phase', 'none']);
  assert.equal(r.code, 0, r.err);
  const rows = readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#') && !/[a-z]/i.test(l));
  assert.equal(rows.length, 1024);
  const first = Number(rows[0]!.split(',')[0]);
  assert.ok(Math.abs(first - (CARRIER_PPM + SW / 2 / REFFRQ)) < 1e-6, String(first));
});

test('VnmrJ: malformed data are named errors with the file and the remedy', () => {
  const root = tmp();
  const good = fidFile([[line(64, 0, 1)]], 'float32');
  const cases: [string, (dir: string) => void, RegExp][] = [
    [
      'truncated',
      (d) => experiment(d, good.subarray(0, good.length - 10)),
      /fid: size: .*the fid file is truncated/,
    ],
    ['garbage', (d) => experiment(d, Buffer.alloc(64, 0x41)), /fid: file header: .*not a VnmrJ fid file/],
    ['short', (d) => experiment(d, Buffer.alloc(8)), /fid: file header: 8 bytes/],
    [
      'spectrum',
      (d) => experiment(d, fidFile([[line(64, 0, 1)]], 'float32', false, 0x1 | 0x2 | 0x8)),
      /status: a transformed spectrum/,
    ],
    [
      'ebytes',
      (d) => experiment(d, fidFile([[line(64, 0, 1)]], 'float32', false, 0x1)),
      /ebytes: 4 bytes per value, but the status bits say 16-bit/,
    ],
    [
      '2d',
      (d) => experiment(d, good, param('ni', [128])),
      /procpar: ni: a multidimensional experiment \(ni = 128\)/,
    ],
    [
      'no sw',
      (d) => {
        experiment(d, good);
        writeFileSync(join(d, 'procpar'), param('sfrq', [SFRQ]));
      },
      /procpar: sw: missing/,
    ],
  ];
  for (const [name, make, message] of cases) {
    const dir = join(root, `${name}.fid`);
    make(dir);
    assertNamedError(() => readNmr(dir), message, name);
  }
  // An inactive ni (a 1D experiment set up from a 2D one) is not a 2D experiment.
  const oneD = experiment(join(root, 'ni-off.fid'), good, param('ni', [128], false));
  assert.equal(readNmr(oneD).kind, 'fid');
  // A folder with a fid but no procpar is not an experiment folder.
  const bare = join(root, 'bare');
  mkdirSync(bare);
  writeFileSync(join(bare, 'fid'), good);
  assert.throws(
    () => detectFormat(bare),
    /not an experiment folder \(a Bruker folder has acqus or procs, a VnmrJ/,
  );
});

test('VnmrJ: 600 seeded mutations of fid and procpar end in a result or a named error, quickly', () => {
  const root = tmp();
  const fid = fidFile([[line(64, 300, 1000, true)], [line(64, 600, 1000, true)]], 'int32');
  const procpar =
    param('sw', [SW]) +
    param('sfrq', [SFRQ]) +
    param('reffrq', [REFFRQ]) +
    param('tn', ['H1']) +
    param('lb', [1]);
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const dir = join(root, 'm.fid');
  mkdirSync(dir);
  const outcomes = { read: 0, named: 0 };
  const t = performance.now();
  for (let k = 0; k < 600; k++) {
    const f = Buffer.from(fid);
    let p = procpar;
    const kind = rand(4);
    if (kind === 0)
      for (let j = rand(4) + 1; j > 0; j--) f[rand(32)] = rand(256); // header bytes
    else if (kind === 1) f.writeInt32BE([2 ** 31 - 1, -1, 0, 3][rand(4)]!, 4 * rand(8));
    else if (kind === 2) {
      const cut = rand(p.length);
      p = p.slice(0, cut) + ['"', '\n', ' 99999 ', 'x', '1e999', ''][rand(6)] + p.slice(cut + rand(8));
    } else writeFileSync(join(dir, 'fid'), f.subarray(0, rand(f.length)));
    if (kind !== 3) writeFileSync(join(dir, 'fid'), f);
    writeFileSync(join(dir, 'procpar'), p);
    try {
      const d = readNmr(dir);
      const first = d.kind === 'fid' ? d.fid : d.kind === 'fids' ? d.fids[0]! : undefined;
      if (first) assert.ok(first.re.every(Number.isFinite) && first.im.every(Number.isFinite));
      outcomes.read++;
    } catch (e) {
      assert.ok(e instanceof NmrFormatError, `mutation ${k} (kind ${kind}): ${String(e)}`);
      outcomes.named++;
    }
  }
  assert.ok(outcomes.read > 0 && outcomes.named > 100, JSON.stringify(outcomes));
  assert.ok(performance.now() - t < 20_000, `${performance.now() - t} ms`);
});

test('experiments: PATH#R names a row of an arrayed experiment; rows co-add; a bad row is a named error', () => {
  const root = tmp();
  const rows = [line(256, 400, 1), line(256, 400, 2), line(256, 400, 3)];
  const dir = experiment(join(root, 'ladder.fid'), fidFile([[rows[0]!], [rows[1]!], [rows[2]!]], 'float32'));
  const [one, two] = loadSpectra([`${dir}#1`, [`${dir}#0`, `${dir}#2`]], { size: 1024 });
  const peak = (s: { real: Float64Array }): number => Math.max(...s.real);
  // Row 1 has amplitude 2; rows 0 + 2 co-added have 1 + 3 = 4.
  assert.ok(Math.abs(peak(two!) / peak(one!) - 2) < 0.01, `${peak(two!) / peak(one!)}`);
  assert.deepEqual(splitRow(`${dir}#12`), { file: dir, row: 12 });
  assert.deepEqual(splitRow(dir), { file: dir, row: undefined });
  // A file whose name ends in #N is that file, not a row.
  const literal = join(root, 'take#2');
  writeFileSync(literal, 'ppm,intensity\n1,2\n0,3\n');
  assert.deepEqual(splitRow(literal), { file: literal, row: undefined });
  const single = experiment(join(root, 'single.fid'), fidFile([[rows[0]!]], 'float32'));
  const cases: [string[], RegExp][] = [
    [
      [`${dir}#3`, `${dir}#0`],
      /ladder\.fid: row: no row 3 in this pseudo-2D data set of 3 rows \(rows are 0\.\.2\)/,
    ],
    [
      [`${single}#1`, `${dir}#0`],
      /single\.fid: row: row 1 asked for, but this is one FID \(drop the #row suffix\)/,
    ],
  ];
  for (const [paths, message] of cases)
    assert.throws(
      () => loadSpectra(paths, { size: 1024 }),
      (e: unknown) => e instanceof NmrFormatError && message.test(e.message),
    );
  assert.equal(loadSpectra([`${single}#0`, single], { size: 1024 }).length, 2);
});

test('CLI: nmr train on the rows of an arrayed VnmrJ experiment, then nmr denoise of a row and of a folder', () => {
  const root = tmp();
  let seed = 7;
  const gauss = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const u = (seed + 1) / 2147483649;
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const v = (seed + 1) / 2147483649;
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  // Three lines, the noise halving from row to row: a T = 2 ladder recorded as one array.
  const noisy = (sigma: number): Trace => {
    const lines = [line(1024, 900, 1), line(1024, -400, 0.6), line(1024, 1700, 0.3)];
    return {
      re: lines[0]!.re.map((_, j) => lines.reduce((s, l) => s + l.re[j]!, 0) + sigma * gauss()),
      im: lines[0]!.im.map((_, j) => lines.reduce((s, l) => s + l.im[j]!, 0) + sigma * gauss()),
    };
  };
  const ladder = experiment(
    join(root, 'ladder.fid'),
    fidFile([[noisy(0.4)], [noisy(0.2)], [noisy(0.1)]], 'float32'),
  );
  const run = join(root, 'run');
  const trained = runTailor([
    'nmr',
    'train',
    '--experiments',
    `${ladder}#0,${ladder}#1,${ladder}#2`,
    '--epochs',
    '1,1',
    '--quiet',
    '--out',
    run,
  ]);
  assert.equal(trained.code, 0, trained.err);
  assert.match(trained.out, /K\+1 = 3 levels/);
  const folder = join(root, 'new');
  experiment(join(folder, 'scan.fid'), fidFile([[noisy(0.4)]], 'float32'));
  const out = join(root, 'out');
  const args = (to: string) => [
    'nmr',
    'denoise',
    '--model',
    join(run, 'best.json'),
    '--out',
    to,
    '--force',
    '--quiet',
  ];
  const denoised = runTailor([...args(out), '--input', `${ladder}#0`, '--input', folder]);
  assert.equal(denoised.code, 0, denoised.err);
  for (const name of ['ladder-row0', 'scan'])
    assert.ok(readFileSync(join(out, `${name}.denoised.csv`), 'utf8').length > 1000, name);
  // The whole series: one output per row.
  const whole = runTailor([...args(join(root, 'rows')), '--input', ladder]);
  assert.equal(whole.code, 0, whole.err);
  for (const r of [0, 1, 2])
    assert.ok(readFileSync(join(root, 'rows', `ladder-row${r}.denoised.csv`), 'utf8').length > 1000);
  const past = runTailor([...args(out), '--input', `${ladder}#3`]);
  assert.equal(past.code, 2);
  assert.match(past.err, /ladder\.fid: row: no row 3: the series has rows 0\.\.2/);
});

test('toSpectrum (nmr process): PATH#R is the same row as options.row; both at odds is a named error', () => {
  const root = tmp();
  const rows = [line(128, 400, 1), line(128, 400, 2), line(128, 400, 3)];
  const dir = experiment(join(root, 'arr.fid'), fidFile([[rows[0]!], [rows[1]!], [rows[2]!]], 'float32'));
  const byName = toSpectrum(`${dir}#2`, { phase: 'none' }).spectrum;
  const byOption = toSpectrum(dir, { row: 2, phase: 'none' }).spectrum;
  assert.deepEqual(byName.real, byOption.real);
  assert.notDeepEqual(byName.real, toSpectrum(dir, { phase: 'none' }).spectrum.real);
  assert.throws(
    () => toSpectrum(`${dir}#2`, { row: 1 }),
    /arr\.fid#2: row: names row 2, but row 1 is also given \(give the row once, as PATH#R or as --row\)/,
  );
});

test('scans: VnmrJ ctcount (else the arrayed nt), Bruker NS; co-added experiments sum them; the stack report gives T from them', () => {
  const root = tmp();
  const rows = [line(256, 400, 1), line(256, 400, 2), line(256, 400, 4)];
  const blocks = [[rows[0]!], [rows[1]!], [rows[2]!]];
  const counted = experiment(join(root, 'ct.fid'), fidFile(blocks, 'float32', false, undefined, [1, 4, 16]));
  const arrayed = experiment(join(root, 'nt.fid'), fidFile(blocks, 'float32'), param('nt', [2, 8, 32]));
  const scans = (dir: string) => readVarianFids(dir).map((f) => f.scans);
  assert.deepEqual(scans(counted), [1, 4, 16]);
  assert.deepEqual(scans(arrayed), [2, 8, 32]);
  assert.deepEqual(scans(experiment(join(root, 'none.fid'), fidFile(blocks, 'float32'))), [
    undefined,
    undefined,
    undefined,
  ]);
  const aspirin = readNmr(join(dataDir, 'nmr/single/bruker/aspirin-1h/1'));
  assert.equal(aspirin.kind === 'fid' && aspirin.fid.scans, 32);
  // Rows 0 and 1 co-added: 1 + 4 scans; then 16.
  const stack = realStack([`${counted}#0`, [`${counted}#0`, `${counted}#1`], `${counted}#2`], { size: 1024 });
  assert.deepEqual(stack.scans, [1, 5, 16]);
  const report = stackReport(stack);
  assert.deepEqual(report.scans, [1, 5, 16]);
  assert.ok(Math.abs(report.t_from_scans! - 2) < 1e-12);
  assert.match(formatStackReport(report), /\(the scans give 2\.000\)/);
  assert.deepEqual(stackReport(realStack([`${arrayed}#0`, `${counted}#1`], { size: 1024 })).scans, [2, 4]);
  const noScans = experiment(join(root, 'none2.fid'), fidFile([[rows[0]!]], 'float32'));
  const partial = stackReport(realStack([noScans, `${counted}#2`], { size: 1024 }));
  assert.deepEqual(partial.scans, [null, 16]);
  assert.equal(partial.t_from_scans, null);
  assert.doesNotMatch(formatStackReport(partial), /the scans give/);
});

test('nmr train warns when the files say the levels are not in rising scans', () => {
  const root = tmp();
  const rows = [line(512, 400, 1), line(512, -300, 1), line(512, 900, 1)];
  const blocks = [[rows[0]!], [rows[1]!], [rows[2]!]];
  const dir = experiment(join(root, 'x.fid'), fidFile(blocks, 'float32', false, undefined, [16, 4, 64]));
  const r = runTailor([
    'nmr',
    'train',
    '--experiments',
    `${dir}#0,${dir}#1,${dir}#2`,
    '--epochs',
    '1,0',
    '--quiet',
    '--out',
    join(root, 'run'),
  ]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out + r.err, /warning: .*: the levels' scans are 16, 4, 64, not rising from level 0 to K/);
  const rising = runTailor([
    'nmr',
    'train',
    '--experiments',
    `${dir}#1,${dir}#0,${dir}#2`,
    '--epochs',
    '1,0',
    '--quiet',
    '--out',
    join(root, 'run2'),
  ]);
  assert.equal(rising.code, 0, rising.err);
  assert.doesNotMatch(rising.out + rising.err, /not rising/);
});
