// Hostile inputs that once killed, hung or fooled tailor: each must now end in a named error (or,
// for reports, in escaped text), quickly, from the library and from the command line.
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

test('tensor API: hostile arguments from JavaScript end in named errors (the API fuzz targets found them)', async () => {
  const torch = await import('../../src/torch/index.js');
  const { ArgumentError } = await import('../../src/util/arguments.js');
  const live = torch.liveTensors();
  const x = torch.randn([2, 3]);
  const param = torch.randn([2]).requiresGrad_();
  const sgd = new torch.optim.SGD([param], { lr: 0.1 });
  const linear = new torch.nn.Linear(3, 2);
  const cyclic: unknown[] = [];
  cyclic.push(cyclic);
  // converting it to a string (as a property key, or in `dim + 1`) overflows the stack
  let deep: unknown = [1];
  for (let k = 0; k < 100_000; k++) deep = [deep];
  const self: Record<string, unknown> = {};
  self.self = self;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const any = (v: unknown): any => v;
  const cases: [string, () => unknown, RegExp][] = [
    [
      'a missing Tensor',
      () => x.matmul(any(undefined)),
      /^aten::matmul: argument 'other' must be a Tensor, got undefined/,
    ],
    [
      'a string for Tensor[]',
      () => torch.cat(any('abc')),
      /^aten::cat: argument 'tensors' must be an array of Tensors/,
    ],
    [
      'a Tensor for a Scalar',
      () => torch.full([2], any(x)),
      /^aten::full: argument '\w+' must be a number or a boolean/,
    ],
    [
      'a string for an int',
      () => torch.linspace(0, 1, any('a')),
      /^aten::linspace: argument 'steps' must be a number/,
    ],
    [
      'an array for a thread count',
      () => torch.setNumThreads(any([1])),
      /^setNumThreads: n must be an integer/,
    ],
    ['a string for a seed', () => torch.manualSeed(any('x')), /^manualSeed: seed must be an integer/],
    [
      'an array for a generator state',
      () => torch.setRngState(any([1, 2])),
      /^setRngState: state must be a Uint8Array/,
    ],
    [
      'a cyclic array for data',
      () => torch.tensor(any(cyclic)),
      /^tensor: data is nested deeper than 64 levels/,
    ],
    ['an unknown dtype', () => torch.zeros([2], any('x')), /unknown dtype 'x'/],
    ['an unknown memory format', () => x.isContiguousIn(any(0)), /unknown memory format 0/],
    ['an array for a device', () => x.to(any([[1]])), /invalid device an array of 1/],
    [
      'a Tensor for outputs',
      () => torch.autograd.grad(any(x), [x]),
      /^autograd\.grad: outputs must be an array/,
    ],
    ['a string for inputs', () => torch.gradcheck((t) => t, any('x')), /^gradcheck: inputs must be an array/],
    [
      'a deep array for a dim',
      () => x.size(any(deep)),
      /^Tensor\.size: dim must be an integer, got an array of 1/,
    ],
    ['a deep array for a dtype', () => torch.randn([2], any(deep)), /unknown dtype an array of 1/],
    [
      'null svdvals options',
      () => torch.linalg.svdvals(x, any(null)),
      /^linalg\.svdvals: options must be an object/,
    ],
    [
      'a degree of 2^53',
      () => torch.special.legendrePolynomialP(x, 2 ** 53),
      /^special\.legendrePolynomialP: n must be a degree of at most 100000/,
    ],
    ['null options', () => torch.linalg.pinv(x, any(null)), /^linalg\.pinv: options must be an object/],
    [
      'no options',
      () => torch.tidy(() => torch.nn.functional.interpolate(torch.zeros([1, 1, 4]), any(undefined))),
      /^interpolate: options must be an object/,
    ],
    [
      'a number for bytes',
      () => torch.decodeSafetensors(any(2)),
      /^decodeSafetensors: bytes must be a Uint8Array/,
    ],
    [
      'a number in metadata',
      () => torch.encodeSafetensors({ x }, any({ k: 1 })),
      /^encodeSafetensors: metadata 'k' must be a string/,
    ],
    [
      'a cyclic batch',
      () => torch.data.defaultCollate([self, self]),
      /^defaultCollate: items\[0\] is nested deeper than 64/,
    ],
    [
      'an array for an epoch',
      () => new torch.data.RandomSampler(3).indices(any([[1]])),
      /^Sampler\.indices: epoch must be an integer/,
    ],
    [
      'no sampler weights',
      () => new torch.data.WeightedRandomSampler(any(null), 2),
      /^WeightedRandomSampler: weights must be an array/,
    ],
    [
      'a number for an icdf value',
      () => new torch.distributions.Normal(0, 1).icdf(any(0)),
      /Normal\.icdf: the value argument must be a Tensor/,
    ],
    [
      'null optimizer options',
      () => new torch.optim.SGD([param], any(null)),
      /^SGD: options must be an object, got null/,
    ],
    [
      'cyclic betas',
      () => new torch.optim.Adam([param], any({ betas: cyclic })),
      /^RangeError: Adam: invalid betas an array of 1/,
    ],
    [
      'milestones of a number',
      () => new torch.optim.MultiStepLR(sgd, any({ milestones: 5 })),
      /^MultiStepLR: options\.milestones must be an array/,
    ],
    [
      'a number for a factor',
      () => new torch.optim.LambdaLR(sgd, any(5)),
      /^LambdaLR: factor\[0\] must be a function/,
    ],
    [
      'an object for an input',
      () => new torch.nn.InstanceNorm1d(3).forward(any({})),
      /^InstanceNorm1d: input must be a Tensor/,
    ],
    [
      'a number for an input',
      () => new torch.nn.ReflectionPad1d(1).forward(any(5)),
      /^ReflectionPad1d: input must be a Tensor/,
    ],
    [
      'no unpooling indices',
      () => new torch.nn.MaxUnpool1d(2).forward(x, any(undefined)),
      /^MaxUnpool1d: indices must be a Tensor/,
    ],
    // a 0-d input reached libtorch's max_unpool3d with no spatial sizes: a segmentation fault
    [
      'a 0-d input to unpool',
      () => new torch.nn.MaxUnpool3d(1).forward(torch.scalarTensor(1), x),
      /^MaxUnpool3d: the input must be 4-d or 5-d/,
    ],
    // ... and so did the raw operators, with a 0-d input or too short an output_size
    [
      'a 0-d input to aten.max_unpool3d',
      () => torch.aten.max_unpool3d(torch.scalarTensor(1), x, [], [1, 1, 1], [0, 0, 0]),
      /^aten::max_unpool3d: argument 'self' must be a 4-d or 5-d Tensor, got a 0-d one/,
    ],
    [
      'a short output_size to aten.max_unpool2d',
      () => torch.aten.max_unpool2d(torch.ones([1, 2, 2]), torch.zeros([1, 2, 2], 'int64'), [4]),
      /^aten::max_unpool2d: argument 'output_size' must be 2 integers, got/,
    ],
    [
      'float indices',
      () => new torch.nn.MaxUnpool2d(1).forward(torch.ones([1, 2, 2]), torch.ones([1, 2, 2])),
      /^MaxUnpool2d: indices must be int64/,
    ],
    [
      'a symbol for an input',
      () => new torch.nn.Unflatten(0, [2]).forward(any(Symbol('s'))),
      /^Unflatten: input must be a Tensor, got Symbol\(s\)/,
    ],
    [
      'a number for a layer',
      () => new torch.nn.Sequential(any(5)),
      /^Sequential: submodule '0' must be a Module/,
    ],
    ['a state of a number', () => linear.loadStateDict(any(5)), /^loadStateDict: state must be an object/],
    [
      'an array for a weight',
      () => linear.loadStateDict(any({ weight: [], bias: x })),
      /^loadStateDict: state\['weight'\] must be a Tensor/,
    ],
  ];
  try {
    for (const [what, call, message] of cases) {
      const t = performance.now();
      assert.throws(
        () => torch.tidy(call),
        (e: unknown) => {
          const text = `${(e as Error).name}: ${(e as Error).message}`;
          assert.match(message.source.startsWith('^RangeError') ? text : (e as Error).message, message, what);
          assert.ok(
            e instanceof ArgumentError ||
              !(e instanceof TypeError) ||
              /^\w[\w.]*: /.test((e as Error).message),
            what,
          );
          return true;
        },
        what,
      );
      assert.ok(performance.now() - t < 1000, `${what} took ${performance.now() - t} ms`);
    }
  } finally {
    sgd.dispose();
    linear.dispose();
    torch.dispose([x, param]);
  }
  assert.equal(torch.liveTensors(), live, 'no tensor leaked');
});
