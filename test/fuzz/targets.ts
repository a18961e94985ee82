// The parsers the fuzz campaign attacks: for each, small valid seed files in the real layout and
// the reader call that must either succeed or throw a named error. Readers that reach native code
// (libtorch through safetensors and checkpoints, libvips through sharp) are marked `native`; the
// campaign runs every target in a child process anyway, so an abort is seen as a crash.
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { MARKUP, type SeedKind } from './mutate.js';
import {
  cifarBinaryRecords,
  cifarMetaPickle,
  cifarPythonBatch,
  classNames,
  idxBytes,
  makeImages,
} from '../longtail/data-fixtures.js';
import { syntheticGmm, syntheticLongtail } from '../report/fixtures.js';
import { readFashionMnist } from '../../src/longtail/data/idx.js';
import { readCifar } from '../../src/longtail/data/cifar.js';
import { decodeImage, readImageList } from '../../src/longtail/data/imagelist.js';
import { readJcamp } from '../../src/nmr/io/jcamp.js';
import { readBruker } from '../../src/nmr/io/bruker.js';
import { readPipe } from '../../src/nmr/io/nmrpipe.js';
import { formatCsvSpectrum, readCsvSpectrum } from '../../src/nmr/io/csv.js';
import { encodeDifDup } from '../../src/nmr/io/asdf.js';
import { formatJcampSpectrum } from '../../src/nmr/model/jcamp-writer.js';
import { readLabelsFile, readMatrixCsv } from '../../src/mixture/gaussianCsv.js';
import { readGaussianModel } from '../../src/mixture/gaussianModel.js';
import { readSubgroupCsv } from '../../src/mixture/subgroup/data.js';
import { renderRunReport } from '../../src/report/index.js';

export type Files = Record<string, Uint8Array>;

export interface FuzzTarget {
  name: string;
  /** Reaches native code (libtorch, libvips). */
  native: boolean;
  kind: SeedKind;
  /** Valid file sets (paths relative to the input directory). */
  seeds: () => Promise<Files[]>;
  /** The files of a set that get mutated (one of them per input). */
  mutable: string[];
  /** Tokens of the format the mutator inserts (latin1 strings). */
  dictionary?: string[];
  /** Turns the mutated bytes into the file written (e.g. gzip after mutating the content). */
  encode?: (mutated: Uint8Array, file: string, useEncoding: boolean) => Uint8Array;
  /** Reads the input directory; throws on bad input. Returns text to check (a report) or nothing. */
  run: (dir: string) => unknown;
}

const text = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'utf8'));
const json = (v: unknown): Uint8Array => text(JSON.stringify(v, null, 2));

/** A report must never contain the fuzzer's markup unescaped. */
export function checkReport(html: unknown): string | undefined {
  if (typeof html === 'string' && html.includes(MARKUP.slice(0, 8)))
    return `unescaped markup in the report: ...${html.slice(Math.max(0, html.indexOf(MARKUP.slice(0, 8)) - 80), html.indexOf(MARKUP.slice(0, 8)) + 40)}...`;
  return undefined;
}

// ---------------------------------------------------------------- long-tail data
function fashionFiles(gz: boolean): Files {
  const n = 3;
  const images = idxBytes([n, 28, 28], makeImages(n, 784));
  const labels = idxBytes([n], Uint8Array.from([0, 9, 4]));
  const ext = gz ? '.gz' : '';
  const enc = (b: Uint8Array): Uint8Array => (gz ? new Uint8Array(gzipSync(b)) : b);
  return {
    [`t10k-images-idx3-ubyte${ext}`]: enc(images),
    [`t10k-labels-idx1-ubyte${ext}`]: enc(labels),
  };
}

/** The idx content before compression, so that mutations reach the parser behind gunzip. */
function fashionRaw(): Files {
  const raw = fashionFiles(false);
  return {
    't10k-images-idx3-ubyte.gz': raw['t10k-images-idx3-ubyte']!,
    't10k-labels-idx1-ubyte.gz': raw['t10k-labels-idx1-ubyte']!,
  };
}

const split3 = { images: makeImages(3, 3072), labels: [1, 0, 7] };

// ---------------------------------------------------------------- NMR
function spectrum(n: number): { real: Float64Array; ppmFirst: number; ppmLast: number; refMHz: number } {
  const real = new Float64Array(n);
  for (let i = 0; i < n; i++) real[i] = 1000 * Math.exp(-(((i - n / 3) / 3) ** 2)) + ((i * 37) % 11) - 5;
  return { real, ppmFirst: 10, ppmLast: 0, refMHz: 400.13 };
}

function jcampFid(): string {
  const n = 64;
  const re: number[] = [];
  const im: number[] = [];
  for (let i = 0; i < n; i++) {
    re.push(Math.round(20000 * Math.exp(-i / 20) * Math.cos(i / 3)));
    im.push(Math.round(20000 * Math.exp(-i / 20) * Math.sin(i / 3)));
  }
  const page = (sym: string, y: number[]): string[] => [
    `##PAGE= N=${sym === 'R' ? 1 : 2}`,
    `##DATA TABLE= (X++(${sym}..${sym})), XYDATA`,
    ...encodeDifDup(y, (i) => String(i)),
  ];
  return [
    '##TITLE= fuzz fid',
    '##JCAMP-DX= 6.00',
    '##DATA TYPE= NMR FID',
    '##DATA CLASS= NTUPLES',
    '##.OBSERVE FREQUENCY= 400.13',
    '##.OBSERVE NUCLEUS= ^1H',
    '##$SW_h= 8000',
    '##$SFO1= 400.131',
    '##$BF1= 400.13',
    '##$GRPDLY= 67.98',
    '##$PHC0= 12.5',
    '##NTUPLES= NMR FID',
    '##VAR_NAME= TIME, FID/REAL, FID/IMAG, PAGE NUMBER',
    '##SYMBOL= X, R, I, N',
    `##VAR_DIM= ${n}, ${n}, ${n}, 2`,
    '##UNITS= SECONDS, ARBITRARY UNITS, ARBITRARY UNITS,',
    `##FIRST= 0, ${re[0]}, ${im[0]}, 1`,
    `##LAST= ${(n - 1) / 8000}, ${re[n - 1]}, ${im[n - 1]}, 2`,
    '##FACTOR= 0.000125, 1, 1, 1',
    ...page('R', re),
    ...page('I', im),
    '##END NTUPLES= NMR FID',
    '##END=',
  ].join('\n');
}

function brukerFiles(): Files {
  const td = 64;
  const fid = Buffer.alloc(td * 4);
  for (let i = 0; i < td; i++) fid.writeInt32LE(Math.round(1e5 * Math.exp(-i / 30) * Math.cos(i)), i * 4);
  const si = 32;
  const r1 = Buffer.alloc(si * 4);
  const i1 = Buffer.alloc(si * 4);
  for (let i = 0; i < si; i++) {
    r1.writeInt32LE(Math.round(5e4 * Math.exp(-(((i - 10) / 2) ** 2))), i * 4);
    i1.writeInt32LE(i * 100 - 1600, i * 4);
  }
  const acqus = [
    '##TITLE= Parameter file, TOPSPIN',
    '##JCAMPDX= 5.0',
    '##$BF1= 400.13',
    '##$BYTORDA= 0',
    '##$DECIM= 16',
    '##$DIGMOD= 1',
    '##$DSPFVS= 20',
    '##$DTYPA= 0',
    '##$GRPDLY= 67.9842376708984',
    '##$NS= 8',
    '##$NUC1= <1H>',
    '##$SFO1= 400.132',
    '##$SW_h= 8012.82',
    `##$TD= ${td}`,
    '##$VD= 0.1',
    '##$VDLIST= (0..3)',
    '0.1 0.2 0.3 0.4',
    '##END=',
  ].join('\n');
  const procs = [
    '##TITLE= Parameter file, TOPSPIN',
    '##$BYTORDP= 0',
    '##$DTYPP= 0',
    '##$LB= 0.3',
    '##$NC_proc= -2',
    '##$OFFSET= 12.5',
    '##$PHC0= 21.3',
    '##$PHC1= -3.5',
    '##$SF= 400.13',
    `##$SI= ${si}`,
    '##$SW_p= 8012.82',
    '##END=',
  ].join('\n');
  return {
    acqus: text(acqus),
    fid: new Uint8Array(fid),
    'pdata/1/procs': text(procs),
    'pdata/1/1r': new Uint8Array(r1),
    'pdata/1/1i': new Uint8Array(i1),
  };
}

function pipeFile(n: number, complex: boolean, ft: boolean): Uint8Array {
  const buf = new ArrayBuffer(2048 + 4 * n * (complex ? 2 : 1));
  const v = new DataView(buf);
  const set = (w: number, x: number): void => v.setFloat32(w * 4, x, true);
  set(2, 2.345);
  set(9, 1);
  set(99, n);
  set(100, 5000);
  set(101, -1000);
  set(106, complex ? 0 : 1);
  set(119, 100);
  set(220, ft ? 1 : 0);
  for (let i = 0; i < n * (complex ? 2 : 1); i++) v.setFloat32(2048 + 4 * i, Math.sin(i / 3) * 100, true);
  return new Uint8Array(buf);
}

// ---------------------------------------------------------------- mixtures
const SUBGROUP_COLUMNS = { id: 'id', time: 'time', y: 'y', fixed: ['W1', 'W2'], membership: ['U1'] };

function subgroupCsv(): string {
  const lines = ['"id","time","y","W1","W2","W3","U1","U2"'];
  for (let s = 1; s <= 6; s++)
    for (let t = 0; t < 3; t++)
      lines.push(
        [s, t, (s * 1.7 + t * 0.9).toFixed(4), t % 2, (s * 0.31 - 1).toFixed(4), 1, s % 3, s % 2].join(','),
      );
  return lines.join('\n') + '\n';
}

function subgroupFit(): Record<string, unknown> {
  return {
    model: 'latent-subgroup linear mixed model',
    K: 2,
    correlation: 'independent',
    nSubjects: 4,
    nObservations: 12,
    fixed: ['x'],
    membership: ['(intercept)'],
    alpha: [1],
    mu: [0.05, 10.25],
    sigmaB2: 0.1,
    sigmaEps2: 0.01,
    phi: 0,
    gamma: [[0], [0.1]],
    logLik: -3,
    bic: 14,
    aic: 12,
    nIter: 10,
    converged: true,
    classSizes: [2, 2],
    meanPosterior: [0.5, 0.5],
    warnings: ['a warning'],
    data: 'data.csv',
  };
}

function subgroupData(): string {
  const data = ['id,time,y,x'];
  ['s1', 's2', 's3', 's4'].forEach((id, i) =>
    [0, 1, 2].forEach((t) => data.push(`${id},${t},${(i < 2 ? 0 : 10) + t + 0.1 * i},${t}`)),
  );
  return data.join('\n') + '\n';
}

// ---------------------------------------------------------------- the targets
export const TARGETS: FuzzTarget[] = [
  {
    name: 'fashion-mnist idx (gz)',
    native: false,
    kind: 'binary',
    seeds: async () => [fashionRaw()],
    mutable: ['t10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz'],
    // Mostly mutate the content and compress it (to reach the idx parser), sometimes the gzip bytes.
    encode: (b, _f, useEncoding) => (useEncoding ? new Uint8Array(gzipSync(b)) : b),
    run: (dir) => readFashionMnist(dir, 'test'),
  },
  {
    name: 'fashion-mnist idx (raw)',
    native: false,
    kind: 'binary',
    seeds: async () => [fashionFiles(false)],
    mutable: ['t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'],
    run: (dir) => readFashionMnist(dir, 'test'),
  },
  {
    name: 'cifar pickle',
    native: false,
    kind: 'binary',
    seeds: async () => [
      {
        'cifar-10-batches-py/test_batch': new Uint8Array(
          cifarPythonBatch('cifar10', split3, 'testing batch 1 of 1'),
        ),
        'cifar-10-batches-py/batches.meta': new Uint8Array(
          cifarMetaPickle('label_names', classNames(10), [['num_vis', 3072]]),
        ),
      },
    ],
    mutable: ['cifar-10-batches-py/test_batch', 'cifar-10-batches-py/batches.meta'],
    // opcodes with negative or huge lengths, marks, memo references, stack operations
    dictionary: [
      'X\xff\xff\xff\xff',
      'X\xfb\xff\xff\xff',
      'T\xff\xff\xff\xff',
      'T\x00\x00\x00\x7f',
      'U\xff',
      'r\xff\xff\xff\xff',
      'j\xff\xff\xff\xff',
      'h\x00',
      'h\x01a',
      '(',
      't',
      'e',
      'a',
      's',
      'u',
      'b',
      'R',
      ')',
      ']',
      '}',
      '.',
      'N',
      '\x85',
      'J\xff\xff\xff\xff',
      'cnumpy\ndtype\n',
      'c__builtin__\neval\n',
    ],
    run: (dir) => readCifar(dir, 'cifar10', 'test'),
  },
  {
    name: 'cifar binary',
    native: false,
    kind: 'binary',
    seeds: async (): Promise<Files[]> => [
      {
        'cifar-10-batches-bin/test_batch.bin': new Uint8Array(cifarBinaryRecords('cifar10', split3)),
        'cifar-10-batches-bin/batches.meta.txt': text(classNames(10).join('\n') + '\n'),
      },
      {
        'cifar-100-binary/test.bin': new Uint8Array(cifarBinaryRecords('cifar100', split3)),
        'cifar-100-binary/fine_label_names.txt': text(classNames(100).join('\n') + '\n'),
      },
    ],
    mutable: [
      'cifar-10-batches-bin/test_batch.bin',
      'cifar-10-batches-bin/batches.meta.txt',
      'cifar-100-binary/test.bin',
      'cifar-100-binary/fine_label_names.txt',
    ],
    run: (dir) => readCifar(dir, 'cifar10', 'test'),
  },
  {
    name: 'image list',
    native: false,
    kind: 'text',
    seeds: async () => [
      {
        'list.txt': text('train/n01/a.png 0\ntrain/n01/b b.JPEG 0\ntrain/n02/c.png 1\ntrain/n03/d.png 2\n'),
        'train/n01/a.png': text(''),
        'train/n01/b b.JPEG': text(''),
        'train/n02/c.png': text(''),
        'train/n03/d.png': text(''),
      },
    ],
    mutable: ['list.txt'],
    dictionary: [
      'x.png 1e20\n',
      'x.png 99999999999999999999\n',
      'x.png 4294967296\n',
      'x.png -1\n',
      'a b c 2\n',
      `${' '.repeat(100_000)}1\n`,
    ],
    run: (dir) => readImageList(dir, join(dir, 'list.txt'), { missing: 'skip', warn: () => undefined }),
  },
  {
    name: 'images (sharp)',
    native: true,
    kind: 'binary',
    seeds: async () => {
      const pixels = Buffer.from(makeImages(1, 20 * 16 * 3));
      const img = () => sharp(pixels, { raw: { width: 20, height: 16, channels: 3 } });
      return [
        { 'img.png': new Uint8Array(await img().png().toBuffer()) },
        { 'img.png': new Uint8Array(await img().jpeg({ quality: 80 }).toBuffer()) },
        { 'img.png': new Uint8Array(await img().webp().toBuffer()) },
      ];
    },
    mutable: ['img.png'],
    run: async (dir) => {
      await decodeImage(join(dir, 'img.png'), { height: 16, width: 16 });
    },
  },
  {
    name: 'safetensors',
    native: true,
    kind: 'binary',
    seeds: async () => {
      const torch = await import('../../src/torch/index.js');
      const bytes = torch.tidy(() =>
        torch.encodeSafetensors(
          {
            'conv.weight': torch.arange(0, 24).reshape(2, 3, 2, 2),
            'bn.running_mean': torch.tensor([0.5, -1], { dtype: 'float64' }),
            'bn.num_batches_tracked': torch.tensor([7], { dtype: 'int64' }),
            half: torch.tensor([1, 2, 3], { dtype: 'float16' }),
            mask: torch.tensor([1, 0], { dtype: 'uint8' }),
          },
          { format: 'pt' },
        ),
      );
      return [{ 'model.safetensors': bytes }];
    },
    mutable: ['model.safetensors'],
    run: async (dir) => {
      const torch = await import('../../src/torch/index.js');
      const { tensors } = torch.loadSafetensors(join(dir, 'model.safetensors'));
      torch.dispose(tensors);
    },
  },
  ...checkpointTargets(),
  {
    name: 'jcamp-dx (AFFN, ASDF)',
    native: false,
    kind: 'text',
    seeds: async () => [
      { 'spectrum.jdx': text(formatJcampSpectrum({ ...spectrum(40), source: 'x' }, 'fuzz spectrum')) },
      { 'spectrum.jdx': text(jcampFid()) },
    ],
    mutable: ['spectrum.jdx'],
    dictionary: [
      '0 S99999999999999',
      '1 @S9999999999',
      'J9999999999',
      's999999999',
      '%',
      '@',
      '##XYDATA= (X++(Y..Y))\n',
      '##NPOINTS= 1e20\n',
      '##NPOINTS= -1\n',
      '##FIRSTX= NaN\n',
      '##XUNITS= PPM\n',
      '##.OBSERVE FREQUENCY= 0\n',
      '##VAR_DIM= 1e15, 1e15\n',
      '##FACTOR= 1e308, 1e308\n',
      '##TITLE= nested\n',
      '##END=\n',
      '$$',
      '##PAGE= N=1\n##DATA TABLE= (X++(R..R)), XYDATA\n0 S9999999999999\n',
    ],
    run: (dir) => readJcamp(join(dir, 'spectrum.jdx')),
  },
  ...(['acqus', 'fid', 'pdata/1/procs', 'pdata/1/1r'] as const).map((file): FuzzTarget => ({
    name: `bruker ${file.split('/').pop()}`,
    native: false,
    kind: file === 'acqus' || file.endsWith('procs') ? 'text' : 'binary',
    seeds: async () => [brukerFiles()],
    mutable: [file],
    dictionary: [
      '##$TD= 4294967296\n',
      '##$TD= -8\n',
      '##$TD= 7\n',
      '##$SI= 1e12\n',
      '##$SI= 0\n',
      '##$NC_proc= 5000\n',
      '##$SF= 0\n',
      '##$SW_h= -1\n',
      '##$DTYPA= 2\n',
      '##$DTYPP= 2\n',
      '##$BYTORDA= 1\n',
      '##$GRPDLY= -1\n',
      '##$DECIM= 0\n',
      '##$DSPFVS= 99\n',
      '##$PHC0= NaN\n',
      '\xff\xff\xf0\x7f\x00\x00\x00\x00',
    ],
    run: (dir) => readBruker(dir, file.startsWith('pdata') ? 'processed' : 'raw'),
  })),
  {
    name: 'nmrpipe',
    native: false,
    kind: 'binary',
    seeds: async () => [{ 'test.fid': pipeFile(32, true, false) }, { 'test.fid': pipeFile(32, false, true) }],
    mutable: ['test.fid'],
    run: (dir) => readPipe(join(dir, 'test.fid')),
  },
  {
    name: 'nmr csv',
    native: false,
    kind: 'text',
    seeds: async () => [
      { 'spectrum.csv': text(formatCsvSpectrum({ ...spectrum(30), source: 'x' }, 'denoised by tailor')) },
      {
        'spectrum.csv': text(
          formatCsvSpectrum({ ...spectrum(20), imag: new Float64Array(20).fill(1), source: 'x' }),
        ),
      },
    ],
    mutable: ['spectrum.csv'],
    dictionary: [
      `# ${'MHz'.repeat(100_000)}\n`,
      `#${'#'.repeat(200_000)}\n`,
      '# frequency MHz 1e400\n',
      'ppm,real,imag\n',
    ],
    run: (dir) => readCsvSpectrum(join(dir, 'spectrum.csv')),
  },
  {
    name: 'mixture csv',
    native: false,
    kind: 'text',
    seeds: async () => [{ 'data.csv': text(syntheticGmm().csv.split('\n').slice(0, 30).join('\n')) }],
    mutable: ['data.csv'],
    run: (dir) => readMatrixCsv(join(dir, 'data.csv')),
  },
  {
    name: 'subgroup csv',
    native: false,
    kind: 'text',
    seeds: async () => [{ 'long.csv': text(subgroupCsv()) }],
    mutable: ['long.csv'],
    run: (dir) => readSubgroupCsv(join(dir, 'long.csv'), SUBGROUP_COLUMNS),
  },
  {
    name: 'label file',
    native: false,
    kind: 'text',
    seeds: async () => [
      { 'labels.csv': text('label\n0\n1\n2\n1\n0\n') },
      { 'labels.csv': text('0\n1\n2\n1\n0\n') },
    ],
    mutable: ['labels.csv'],
    dictionary: ['1e20\n', '-0\n', '0x1\n', '2.5\n', 'NaN\n'],
    run: (dir) => readLabelsFile(join(dir, 'labels.csv'), 5, 3),
  },
  {
    name: 'gmm model json',
    native: false,
    kind: 'json',
    seeds: async () => [{ 'model.json': json(syntheticGmm().model) }],
    mutable: ['model.json'],
    run: (dir) => {
      const { model } = readGaussianModel(join(dir, 'model.json'));
      model.predict({
        rows: 2,
        cols: model.nFeatures,
        data: new Float64Array(2 * model.nFeatures).fill(0.5),
      });
    },
  },
  {
    name: 'report: long-tail results',
    native: false,
    kind: 'json',
    seeds: async () => [
      { 'results.json': json(syntheticLongtail({ classes: 5, epochs: 3 })) },
      { 'results.json': json(syntheticLongtail({ classes: 4, epochs: 2, prl: true })) },
    ],
    mutable: ['results.json'],
    run: (dir) => renderRunReport(dir),
  },
  {
    name: 'report: gmm model',
    native: false,
    kind: 'json',
    seeds: async (): Promise<Files[]> => {
      const g = syntheticGmm();
      return [
        { 'results.json': json(g.model), 'data.csv': text(g.csv.split('\n').slice(0, 40).join('\n')) },
        { 'results.json': json(g.selection) },
      ];
    },
    mutable: ['results.json'],
    run: (dir) => renderRunReport(dir),
  },
  {
    name: 'report: subgroup fit',
    native: false,
    kind: 'json',
    seeds: async () => [
      {
        'results.json': json(subgroupFit()),
        'data.csv': text(subgroupData()),
        'posterior.csv': text(
          'id,class,prob1,prob2\ns1,1,0.99,0.01\ns2,1,0.8,0.2\ns3,2,0.05,0.95\ns4,2,0.001,0.999\n',
        ),
      },
    ],
    mutable: ['results.json', 'posterior.csv'],
    run: (dir) => renderRunReport(dir),
  },
];

function checkpointTargets(): FuzzTarget[] {
  // One small checkpoint: a linear layer's weights, SGD momentum state, the libtorch generator
  // and a tailor Rng state, as the trainers write them.
  const make = async (): Promise<Files> => {
    const torch = await import('../../src/torch/index.js');
    const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { Rng } = await import('../../src/torch/rng.js');
    const dir = mkdtempSync(join(tmpdir(), 'tailor-fuzz-ck-'));
    try {
      torch.manualSeed(1);
      const layer = new torch.nn.Linear(3, 2);
      const opt = new torch.optim.SGD(layer.parameters(), { lr: 0.1, momentum: 0.9 });
      torch.tidy(() =>
        layer
          .forward(torch.ones([4, 3]))
          .sum()
          .backward(),
      );
      opt.step();
      torch.saveCheckpoint(join(dir, 'checkpoint-last'), {
        weights: layer.stateDict(),
        optimizer: opt.stateDict(),
        epoch: 3,
        step: 12,
        rng: { data: new Rng(5).state() },
        extra: { history: [{ epoch: 1 }], best: { epoch: 1, top1: 0.5 } },
      });
      const files: Files = {};
      for (const f of readdirSync(dir)) files[f] = new Uint8Array(readFileSync(join(dir, f)));
      return files;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const load = async (dir: string): Promise<void> => {
    const torch = await import('../../src/torch/index.js');
    const { Rng } = await import('../../src/torch/rng.js');
    const ck = torch.loadCheckpoint(join(dir, 'checkpoint-last'));
    try {
      torch.restoreTorchRng(ck);
      torch.tidy(() =>
        torch
          .randn([8])
          .add(torch.rand([8]))
          .sum()
          .item(),
      );
      for (const state of Object.values(ck.rng ?? {})) new Rng(state).normal();
    } finally {
      torch.dispose([ck.weights, ck.optimizer?.state]);
    }
  };
  return [
    {
      name: 'checkpoint sidecar',
      native: true,
      kind: 'json',
      seeds: async () => [await make()],
      mutable: ['checkpoint-last.json'],
      run: load,
    },
    {
      name: 'checkpoint weights',
      native: true,
      kind: 'binary',
      seeds: async () => [await make()],
      mutable: ['checkpoint-last.safetensors', 'checkpoint-last.optim.safetensors'],
      run: load,
    },
    {
      name: 'checkpoint rng state',
      native: true,
      kind: 'binary',
      // The mutated bytes are libtorch's generator state, stored base64 in the sidecar.
      seeds: async () => {
        const files = await make();
        const sidecar = JSON.parse(Buffer.from(files['checkpoint-last.json']!).toString('utf8')) as {
          torchRngState: string;
        };
        return [{ ...files, 'rng.bin': new Uint8Array(Buffer.from(sidecar.torchRngState, 'base64')) }];
      },
      mutable: ['rng.bin'],
      run: load,
    },
  ];
}

/** Files of an input after the mutated file changed (the RNG target rewrites the sidecar). */
export function assemble(target: FuzzTarget, seed: Files, file: string, written: Uint8Array): Files {
  const files: Files = { ...seed, [file]: written };
  if (file === 'rng.bin') {
    const sidecar = JSON.parse(Buffer.from(seed['checkpoint-last.json']!).toString('utf8')) as Record<
      string,
      unknown
    >;
    sidecar.torchRngState = Buffer.from(written).toString('base64');
    files['checkpoint-last.json'] = json(sidecar);
    delete files['rng.bin'];
  }
  void target;
  return files;
}
