// Vendor formats beyond TopSpin: Varian / Agilent VnmrJ folders (fid + procpar), rows of arrayed
// experiments (PATH#R) through the commands, and reversed JCAMP-DX FIDs as Magritek Spinsolve writes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTailor } from '../helpers.js';
import { parseProcpar, Procpar } from '../../src/nmr/io/procpar.js';
import { readVarianFids } from '../../src/nmr/io/varian.js';
import { detectFormat, isExperimentDir, readNmr } from '../../src/nmr/io/load.js';
import { NmrFormatError } from '../../src/nmr/io/errors.js';
import { processFid } from '../../src/nmr/process.js';
import { toSpectrum } from '../../src/nmr/convert.js';
import { loadSpectra, splitRow } from '../../src/nmr/realstack.js';

/** One procpar parameter as VnmrJ writes it (basic type 1 real, 2 string; active flag). */
function param(name: string, values: (number | string)[], active = true): string {
  const string = values.some((v) => typeof v === 'string');
  const header = `${name} ${string ? 2 : 1} ${string ? 2 : 1} 1e+18 -1e+18 0 2 1 0 ${active ? 1 : 0} 64`;
  const body = string
    ? `${values.length} ${values.map((v) => `"${String(v).replace(/"/g, '\\"')}"`).join('\n')}`
    : `${values.length} ${values.join(' ')} `;
  return `${header}\n${body}\n0 \n`;
}

interface Trace {
  re: number[];
  im: number[];
}

type DataType = 'float32' | 'int32' | 'int16';

/** A VnmrJ fid file: file header, then per block nbheaders 28-byte headers and ntraces traces. */
function fidFile(blocks: Trace[][], type: DataType, littleEndian = false, status?: number): Buffer {
  const ebytes = type === 'int16' ? 2 : 4;
  const ntraces = blocks[0]!.length;
  const np = blocks[0]![0]!.re.length * 2;
  const nbheaders = 1;
  const tbytes = np * ebytes;
  const bbytes = ntraces * tbytes + nbheaders * 28;
  const buf = Buffer.alloc(32 + blocks.length * bbytes);
  const v = new DataView(buf.buffer);
  [blocks.length, ntraces, np, ebytes, tbytes, bbytes].forEach((x, i) => v.setInt32(4 * i, x, littleEndian));
  v.setInt16(24, 0, littleEndian);
  const bits = 0x1 | 0x10 | (type === 'float32' ? 0x8 : type === 'int32' ? 0x4 : 0) | 0x40;
  v.setInt16(26, status ?? bits, littleEndian);
  v.setInt32(28, nbheaders, littleEndian);
  blocks.forEach((traces, b) => {
    let o = 32 + b * bbytes;
    v.setInt16(o + 4, b + 1, littleEndian); // block index
    o += 28 * nbheaders;
    for (const t of traces)
      for (let i = 0; i < t.re.length; i++)
        for (const x of [t.re[i]!, t.im[i]!]) {
          if (type === 'float32') v.setFloat32(o, x, littleEndian);
          else if (type === 'int32') v.setInt32(o, x, littleEndian);
          else v.setInt16(o, x, littleEndian);
          o += ebytes;
        }
  });
  return buf;
}

const SW = 6000;
const SFRQ = 400.13;
const CARRIER_PPM = 4.7;
/** reffrq that puts the carrier (the spectrum's centre) at CARRIER_PPM. */
const REFFRQ = SFRQ / (1 + CARRIER_PPM * 1e-6);

/**
 * A decaying line `offsetHz` above the carrier, stored as VnmrJ stores it: a line at a higher
 * frequency than the carrier turns clockwise (exp(-i w t)), the opposite of TopSpin's sense.
 */
function line(n: number, offsetHz: number, amplitude: number, round = false): Trace {
  const re: number[] = [];
  const im: number[] = [];
  for (let j = 0; j < n; j++) {
    const t = j / SW;
    const a = amplitude * Math.exp(-t * 8);
    const w = 2 * Math.PI * offsetHz * t;
    re.push(round ? Math.round(a * Math.cos(w)) : a * Math.cos(w));
    im.push(round ? Math.round(-a * Math.sin(w)) : -a * Math.sin(w));
  }
  return { re, im };
}

function experiment(dir: string, fid: Buffer, extra = ''): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'fid'), fid);
  writeFileSync(
    join(dir, 'procpar'),
    param('sw', [SW]) +
      param('sfrq', [SFRQ]) +
      param('reffrq', [REFFRQ]) +
      param('tn', ['H1']) +
      param('lb', [0.5]) +
      param('seqfil', ['s2pul']) +
      extra,
  );
  return dir;
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'tailor-varian-'));
}

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
    assert.throws(
      () => readNmr(dir),
      (e: unknown) => {
        assert.ok(e instanceof NmrFormatError, `${name}: ${String(e)}`);
        assert.match(e.message, message, name);
        return true;
      },
    );
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
  const args = ['nmr', 'denoise', '--model', join(run, 'best.json'), '--out', out, '--force', '--quiet'];
  const denoised = runTailor([...args, '--input', `${ladder}#0`, '--input', folder]);
  assert.equal(denoised.code, 0, denoised.err);
  for (const name of ['ladder-row0', 'scan'])
    assert.ok(readFileSync(join(out, `${name}.denoised.csv`), 'utf8').length > 1000, name);
  const whole = runTailor([...args, '--input', ladder]);
  assert.equal(whole.code, 2);
  assert.match(
    whole.err,
    /ladder\.fid: data: a series of 3 FIDs \(pseudo-2D\) \(name one row as .*ladder\.fid#R, R in 0\.\.2\)/,
  );
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

/** A JCAMP-DX NTUPLES FID as Magritek Spinsolve writes it ($SF, $BF1, a parenthesised shift reference, $REVERSE). */
function spinsolveJcamp(trace: Trace, reverse: 'yes' | 'no', sw: number, sf: number, bf1: number): string {
  const n = trace.re.length;
  const table = (values: number[]): string => values.map((v, i) => `${i} ${v.toPrecision(10)}`).join('\n');
  return [
    '##TITLE= synthetic benchtop FID',
    '##JCAMP-DX= 5.01 $$ Magritek Spinsolve',
    '##DATA TYPE= NMR FID',
    '##DATA CLASS= NTUPLES',
    `##.OBSERVE FREQUENCY= ${bf1}`,
    '##.OBSERVE NUCLEUS= ^1H',
    `##.SHIFT REFERENCE= (INTERNAL, Water, ${n + 1}, 4.74)`,
    `##$SW= ${sw / bf1}`,
    `##$BF1= ${bf1}`,
    `##$SF= ${sf}`,
    '##$PHC0= 4.5',
    '##$PHC1= 0.0',
    `##$REVERSE= ${reverse}`,
    '##NTUPLES= NMR FID',
    '##VAR_NAME= TIME, FID/REAL, FID/IMAG, PAGE NUMBER',
    '##SYMBOL= X, R, I, N',
    '##VAR_TYPE= INDEPENDENT, DEPENDENT, DEPENDENT, PAGE',
    '##VAR_FORM= AFFN, AFFN, AFFN, AFFN',
    `##VAR_DIM= ${n}, ${n}, ${n}, 2`,
    '##UNITS= SECONDS, ARBITRARY UNITS, ARBITRARY UNITS,',
    `##FIRST= 0, ${trace.re[0]}, ${trace.im[0]}, 1`,
    `##LAST= ${(n - 1) / sw}, ${trace.re[n - 1]}, ${trace.im[n - 1]}, 2`,
    '##FACTOR= 1, 1, 1, 1',
    '##PAGE= N=1',
    `##NPOINTS= ${n}`,
    '##DATA TABLE= (X++(R..R)), XYDATA',
    table(trace.re),
    '##PAGE= N=2',
    `##NPOINTS= ${n}`,
    '##DATA TABLE= (X++(I..I)), XYDATA',
    table(trace.im),
    '##END NTUPLES= NMR FID',
    '##END=',
    '',
  ].join('\n');
}

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

/** A Spinsolve .1d file: the 32-byte header, then (type 504) the x axis and the complex points. */
function oneD(x: number[], trace: Trace, dims = [x.length, 1, 1, 1], type = 504): Buffer {
  const n = trace.re.length;
  const buf = Buffer.alloc(32 + 4 * (x.length + 2 * n));
  buf.write('SORPATAD1.1V', 0, 'latin1');
  buf.writeInt32LE(type, 12);
  dims.forEach((d, i) => buf.writeInt32LE(d, 16 + 4 * i));
  x.forEach((v, i) => buf.writeFloatLE(v, 32 + 4 * i));
  for (let i = 0; i < n; i++) {
    buf.writeFloatLE(trace.re[i]!, 32 + 4 * (x.length + 2 * i));
    buf.writeFloatLE(trace.im[i]!, 32 + 4 * (x.length + 2 * i + 1));
  }
  return buf;
}

const ACQU_PAR = (bandwidthKHz: number, b1: number, lowest: number): string =>
  [
    'Solvent                             = "Water"',
    `b1Freq                              = ${b1}`,
    `bandwidth                           = ${bandwidthKHz}`,
    `lowestFrequency                     = ${lowest}`,
    'nrScans                             = 8',
    'rxChannel                           = "1H"',
    'graphTitle                          = "1D-1H-"Auto"-20--10"',
    '',
  ].join('\n');

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
  ];
  for (const [name, data, par, message] of cases) {
    const dir = join(root, name);
    mkdirSync(dir);
    writeFileSync(join(dir, 'data.1d'), data);
    writeFileSync(join(dir, 'acqu.par'), par);
    assert.throws(
      () => readNmr(dir),
      (e: unknown) => {
        assert.ok(e instanceof NmrFormatError, `${name}: ${String(e)}`);
        assert.match(e.message, message, name);
        return true;
      },
    );
  }
});
