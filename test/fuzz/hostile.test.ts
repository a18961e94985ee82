// Hostile inputs that once killed, hung or fooled tailor: each must now end in a named error (or,
// for reports, in escaped text), quickly, from the library and from the command line. The files and
// the command line are here; hostile-tensor.test.ts has the tensor API's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import { parseJcamp } from '../../src/nmr/io/jcamp.js';
import { decodeXyTable } from '../../src/nmr/io/asdf.js';
import { NmrFormatError } from '../../src/nmr/io/errors.js';
import { parseCsvSpectrum } from '../../src/nmr/io/csv.js';
import { unpickle, PickleError } from '../../src/longtail/data/pickle.js';
import { parseImageList } from '../../src/longtail/data/imagelist.js';
import { DataFormatError } from '../../src/longtail/data/types.js';
import { renderRunReport } from '../../src/report/index.js';
import { InputError, OutputError } from '../../src/util/errors.js';
import { writeFileAtomic } from '../../src/util/fs.js';
import { syntheticLongtail, writeRun } from '../report/fixtures.js';

// results.json as a test edits it: any field may be overwritten with anything
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;

const cli = join(repoRoot, 'dist', 'src', 'cli', 'main.js');
const tmp = (): string => mkdtempSync(join(tmpdir(), 'tailor-hostile-'));

function runCli(args: string[]): { status: number | null; stderr: string; ms: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stderr: r.stderr, ms: performance.now() - t };
}

test('ASDF: a 13-byte line asking for 10^13 repeats is refused before expanding', () => {
  const t = performance.now();
  assert.throws(
    () => decodeXyTable(['0 @S9999999999999'], 'x.jdx', 10),
    (e: unknown) =>
      e instanceof NmrFormatError &&
      /x\.jdx: line 10: DUP count \d{13,} is not a whole number that fits/.test(e.message),
  );
  assert.ok(performance.now() - t < 1000);
  const jdx = [
    '##TITLE= t',
    '##XUNITS= PPM',
    '##FIRSTX= 10',
    '##LASTX= 0',
    '##XYDATA= (X++(Y..Y))',
    '0 @S9999999999999',
    '##END=',
  ];
  assert.throws(() => parseJcamp(jdx.join('\n'), 'bomb.jdx'), /bomb\.jdx: line 6: DUP count/);
});

test('ASDF bomb from the CLI: nmr process prints one tailor: line, exit 2, no stack', () => {
  const dir = tmp();
  try {
    const file = join(dir, 'bomb.jdx');
    writeFileSync(
      file,
      [
        '##TITLE= t',
        '##XUNITS= PPM',
        '##FIRSTX= 10',
        '##LASTX= 0',
        '##XYDATA= (X++(Y..Y))',
        '0 @S9999999999999',
        '##END=',
        '',
      ].join('\n'),
    );
    const r = runCli(['nmr', 'process', '--input', file, '--out', join(dir, 'out.csv')]);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^tailor: .*bomb\.jdx: line 6: DUP count/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CIFAR pickle: negative BINUNICODE (and other negative lengths) end in a named error, not a loop', () => {
  // PROTO 2, BINUNICODE with length -5, STOP
  const bytes = Uint8Array.from([0x80, 0x02, 0x58, 0xfb, 0xff, 0xff, 0xff, 0x2e]);
  assert.throws(
    () => unpickle(bytes, 'data_batch_1'),
    (e: unknown) => e instanceof PickleError && /negative BINUNICODE/.test((e as Error).message),
  );
  // SHORT_BINSTRING is unsigned; BINSTRING with -1
  const bin = Uint8Array.from([0x80, 0x02, 0x54, 0xff, 0xff, 0xff, 0xff, 0x2e]);
  assert.throws(() => unpickle(bin, 'data_batch_1'), PickleError);
});

test('image lists: a label of 1e20 digits is refused, not a class count of Infinity', () => {
  assert.throws(
    () => parseImageList('a.png 0\nb.png 100000000000000000000\n', 'train.txt'),
    (e: unknown) =>
      e instanceof DataFormatError && /train\.txt:2: label 1000.* is implausible/.test((e as Error).message),
  );
});

test('NMR CSV: a long comment line is read in linear time', () => {
  const line = `# ${'MHz'.repeat(300_000)}`;
  const text = `${line}\n# frequency MHz 400.13\nppm,intensity\n1,2\n0.5,3\n0,4\n`;
  const t = performance.now();
  const s = parseCsvSpectrum(text, 'x.csv');
  assert.ok(performance.now() - t < 1000, `${performance.now() - t} ms`);
  assert.equal(s.real.length, 3);
  const hashes = `${'#'.repeat(500_000)}\nppm,intensity\n1,2\n0,4\n`;
  const t2 = performance.now();
  parseCsvSpectrum(hashes, 'y.csv');
  assert.ok(performance.now() - t2 < 1000);
});

test('reports: markup in a numeric field is refused by field; markup in text is escaped', () => {
  const dir = tmp();
  try {
    const r = syntheticLongtail({ classes: 4, epochs: 2 }) as unknown as Loose;
    const payload = '<img src=x onerror=alert(1)>';
    r.dataset.train_counts[1] = payload;
    writeRun(dir, r);
    assert.throws(
      () => renderRunReport(dir),
      (e: unknown) =>
        e instanceof InputError &&
        /results\.json: field 'dataset\.train_counts\[1\]' is the text/.test((e as Error).message),
    );
    const r2 = syntheticLongtail({ classes: 4, epochs: 2 }) as unknown as Loose;
    r2.distributions[Object.keys(r2.distributions)[0]!].n = payload;
    writeRun(dir, r2);
    assert.throws(() => renderRunReport(dir), /distributions\..*\.n' is the text/);
    const r3 = syntheticLongtail({ classes: 4, epochs: 2 }) as unknown as Loose;
    r3.method = payload;
    r3.dataset.class_names = [payload, 'b', 'c', 'd'];
    writeRun(dir, r3);
    const html = renderRunReport(dir);
    assert.ok(!html.includes('<img src=x'), 'no raw markup');
    assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('writes: an output under a file is an OutputError naming the path and the cause', () => {
  const dir = tmp();
  try {
    writeFileSync(join(dir, 'file'), 'x');
    assert.throws(
      () => writeFileAtomic(join(dir, 'file', 'sub', 'out.json'), '{}'),
      (e: unknown) =>
        e instanceof OutputError &&
        /file\/sub: mkdir failed: a component of the path is not a directory/.test((e as Error).message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('reports from the CLI: a hostile results.json prints a tailor: line', () => {
  const dir = tmp();
  try {
    const r = syntheticLongtail({ classes: 4, epochs: 2 }) as unknown as Loose;
    r.uniform.confusion = 'not a matrix';
    writeRun(dir, r);
    const out = runCli(['report', '--run', dir]);
    assert.equal(out.status, 2, out.stderr);
    assert.match(out.stderr, /^tailor: .*results\.json: field 'uniform\.confusion' is/);
    assert.ok(!readFileSync(join(dir, 'results.json'), 'utf8').includes('report.html'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('checkpoints: weights corrupted at the same size, a bad RNG state or a forged sidecar are named errors', async () => {
  const torch = await import('../../src/torch/index.js');
  const { CheckpointError } = await import('../../src/util/errors.js');
  const dir = tmp();
  try {
    const save = (name: string) =>
      torch.tidy(() =>
        torch.saveCheckpoint(join(dir, name), { weights: { w: torch.arange(0, 64) }, epoch: 1 }),
      );
    save('checkpoint-last');
    save('model_best');
    const weights = join(dir, 'checkpoint-last.safetensors');
    const bytes = readFileSync(weights);
    bytes[bytes.length - 3]! ^= 0x40;
    writeFileSync(weights, bytes);
    assert.throws(
      () => torch.loadCheckpoint(join(dir, 'checkpoint-last')),
      (e: unknown) =>
        e instanceof CheckpointError &&
        /checkpoint-last\.safetensors does not match the SHA-256/.test(e.message) &&
        /use another checkpoint of .* instead: model_best\.json/.test(e.message),
    );
    const sidecar = join(dir, 'model_best.json');
    const good = readFileSync(sidecar, 'utf8');
    const forge = (edit: (s: Loose) => void): void => {
      const s = JSON.parse(good) as Loose;
      edit(s);
      writeFileSync(sidecar, JSON.stringify(s));
    };
    forge((s) => (s.weights.file = '../../etc/passwd'));
    assert.throws(
      () => torch.loadCheckpoint(join(dir, 'model_best')),
      /weights\.file: not a file name beside the sidecar/,
    );
    forge((s) => (s.epoch = '<b>1</b>'));
    assert.throws(
      () => torch.loadCheckpoint(join(dir, 'model_best')),
      /model_best\.json: epoch: not a non-negative integer/,
    );
    forge((s) => (s.rng = { data: [0, 0, 0, 0] }));
    assert.throws(() => torch.loadCheckpoint(join(dir, 'model_best')), /rng\.data: not four 32-bit words/);
    forge((s) => (s.torchRngState = Buffer.alloc(5056).toString('base64')));
    const ck = torch.loadCheckpoint(join(dir, 'model_best'));
    try {
      assert.throws(
        () => torch.restoreTorchRng(ck),
        (e: unknown) =>
          e instanceof CheckpointError && /torchRngState is not a valid/.test((e as Error).message),
      );
    } finally {
      torch.dispose(ck.weights);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('gmm model files: a negative regCovar names the field (it reached the constructor as a RangeError)', async () => {
  const { readGaussianModel, GaussianModelError } = await import('../../src/mixture/gaussian-model.js');
  const { syntheticGmm } = await import('../report/fixtures.js');
  const dir = tmp();
  try {
    const file = join(dir, 'model.json');
    writeFileSync(file, JSON.stringify({ ...syntheticGmm().model, regCovar: -1e-6 }));
    assert.throws(
      () => readGaussianModel(file),
      (e: unknown) =>
        e instanceof GaussianModelError &&
        /model\.json: field 'regCovar' is not a non-negative number/.test((e as Error).message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
