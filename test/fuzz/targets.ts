// The parsers the fuzz campaign attacks: for each, small valid seed files in the real layout and
// the reader call that must either succeed or throw a named error. Readers that reach native code
// (libtorch through safetensors and checkpoints, libvips through sharp) are marked `native`; the
// campaign runs every target in a child process anyway, so an abort is seen as a crash.
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import sharp from 'sharp';
import { MARKUP, type SeedKind } from './mutate.js';
import {
  cifarBinaryRecords,
  cifarMetaPickle,
  cifarPythonBatch,
  classNames,
  makeImages,
} from '../longtail/data-fixtures.js';
import {
  SUBGROUP_COLUMNS,
  brukerFiles,
  fashionFiles,
  fashionRaw,
  jcampFid,
  json,
  pipeFile,
  spectrum,
  split3,
  subgroupCsv,
  subgroupData,
  subgroupFit,
  text,
  type Files,
} from './seeds.js';
import { ablationRow, syntheticGmm, syntheticLongtail } from '../report/fixtures.js';
import { readFashionMnist } from '../../src/longtail/data/idx.js';
import { readCifar } from '../../src/longtail/data/cifar.js';
import { decodeImage, readImageList } from '../../src/longtail/data/imagelist.js';
import { ImageListLoader, listSource } from '../../src/longtail/data/imagelist-loader.js';
import { readJcamp } from '../../src/nmr/io/jcamp.js';
import { readBruker } from '../../src/nmr/io/bruker.js';
import { readPipe } from '../../src/nmr/io/nmrpipe.js';
import { formatCsvSpectrum, readCsvSpectrum } from '../../src/nmr/io/csv.js';
import { formatJcampSpectrum } from '../../src/nmr/io/jcamp-writer.js';
import { parseMatrixCsv, readLabelsFile, readMatrixCsv } from '../../src/mixture/csv.js';
import { gaussianModelToJson, readGaussianModel } from '../../src/mixture/gaussian-model.js';
import { BayesianGaussianMixture } from '../../src/mixture/bayesian.js';
import { readSubgroupCsv } from '../../src/mixture/subgroup/data.js';
import { renderRunReport } from '../../src/report/index.js';
import { checkpointTargets } from './checkpoint-targets.js';
import { pytorchTargets } from './pytorch-targets.js';
import { configTargets } from './config-targets.js';
import { vendorTargets } from './vendor-targets.js';
import { apiTargets, type ApiFuzzTarget } from './api-targets.js';
import { SW, line, spinsolveJcamp } from '../nmr/vendor-fixtures.js';

export { assemble } from './checkpoint-targets.js';

export type { Files };

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

/** A variational mixture's model JSON, fitted on the report fixture's data. */
function bayesianModel(): Record<string, unknown> {
  const x = parseMatrixCsv(syntheticGmm().csv, 'data.csv');
  const model = new BayesianGaussianMixture({ nComponents: 3, covarianceType: 'diag', seed: 1 }).fit(x);
  return gaussianModelToJson(model, x, { columns: x.columns }) as unknown as Record<string, unknown>;
}

/** An nmr train run's history.json: three epochs, with or without validation scores. */
function nmrHistory(validation: boolean): unknown[] {
  return [1, 2, 3].map((epoch) => ({
    epoch,
    stage: epoch < 3 ? 'A' : 'B',
    lr: 3e-4 / epoch,
    loss: 0.5 / epoch,
    rec: 0.3,
    deriv: 0.1,
    curv: 0.05,
    cons: 0.01,
    ratio: epoch < 3 ? 0 : 0.4,
    minLevel: 1,
    val: validation
      ? { rec: 0.2 / epoch, energySnrDb: 10 + epoch, inputEnergySnrDb: 9 }
      : { rec: null, energySnrDb: null, inputEnergySnrDb: null },
    seconds: 2,
  }));
}

/** A report must never contain the fuzzer's markup unescaped. */
export function checkReport(html: unknown): string | undefined {
  if (typeof html === 'string' && html.includes(MARKUP.slice(0, 8)))
    return `unescaped markup in the report: ...${html.slice(Math.max(0, html.indexOf(MARKUP.slice(0, 8)) - 80), html.indexOf(MARKUP.slice(0, 8)) + 40)}...`;
  return undefined;
}

/** A target of either kind: mutated files for a reader, or hostile arguments for the API. */
export type AnyTarget = FuzzTarget | ApiFuzzTarget;

export function isApiTarget(target: AnyTarget): target is ApiFuzzTarget {
  return 'call' in target;
}

// ---------------------------------------------------------------- the targets
export const TARGETS: AnyTarget[] = [
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
    // the training pipeline's decoder: the addon's libjpeg-turbo where it has one (sharp else)
    name: 'image-list JPEGs (training pipeline)',
    native: true,
    kind: 'binary',
    seeds: async () => {
      const pixels = Buffer.from(makeImages(1, 40 * 30 * 3));
      const img = () => sharp(pixels, { raw: { width: 40, height: 30, channels: 3 } });
      const jpegs = [
        await img().jpeg({ quality: 80 }).toBuffer(),
        await img().jpeg({ quality: 90, progressive: true }).toBuffer(),
        await img().grayscale().jpeg({ quality: 70 }).toBuffer(),
      ];
      return jpegs.map((j) => ({ 'list.txt': text('train/a.JPEG 0\n'), 'train/a.JPEG': new Uint8Array(j) }));
    },
    mutable: ['train/a.JPEG'],
    run: async (dir) => {
      const source = listSource(readImageList(dir, join(dir, 'list.txt')));
      const loader = new ImageListLoader(source, {
        spec: { stage: 'train', kind: 'imagenet', size: 24 },
        workers: 0,
      });
      try {
        for await (const b of loader.epoch({ batchSize: 1, sampler: 'sequential' })) void b;
      } finally {
        await loader.close();
      }
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
  ...pytorchTargets(),
  {
    name: 'jcamp-dx (AFFN, ASDF)',
    native: false,
    kind: 'text',
    seeds: async () => [
      { 'spectrum.jdx': text(formatJcampSpectrum({ ...spectrum(40), source: 'x' }, 'fuzz spectrum')) },
      { 'spectrum.jdx': text(jcampFid()) },
      {
        'spectrum.jdx': text(
          spinsolveJcamp(line(32, 200, 1000), 'yes', SW, 80.4871976179812, 80.4875791072845),
        ),
      },
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
      '##$REVERSE= yes\n',
      '##$SF= 0\n',
      '##.SHIFT REFERENCE= (INTERNAL, X, 1e300, NaN)\n',
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
  ...vendorTargets(),
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
    seeds: async () => [
      { 'model.json': json(syntheticGmm().model) },
      { 'model.json': json(bayesianModel()) },
    ],
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
        { 'results.json': json(bayesianModel()) },
      ];
    },
    mutable: ['results.json'],
    run: (dir) => renderRunReport(dir),
  },
  {
    name: 'report: nmr train run',
    native: false,
    kind: 'json',
    seeds: async () => [
      {
        'history.json': json(nmrHistory(true)),
        'best.json': text('{"format": "tailor-checkpoint", "epoch": 1}'),
      },
      { 'history.json': json(nmrHistory(false)), 'best.json': text('{"epoch": 2}') },
    ],
    mutable: ['history.json', 'best.json'],
    run: (dir) => renderRunReport(dir),
  },
  {
    name: 'report: nmr ablation',
    native: false,
    kind: 'json',
    seeds: async () => [
      {
        'ablation.json': json({
          data: 'runs/nmr/y-test',
          seeds: [0, 1],
          rows: [
            ablationRow('full', 0, 7, 0.75),
            ablationRow('no-curv', 0, 6, null),
            ablationRow('full', 1, 8, 0.7),
          ],
        }),
      },
      { 'ablation.json': json({ data: 'd', rows: [ablationRow('<i>x</i>', 0, 7, 0.75)] }) },
    ],
    mutable: ['ablation.json'],
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
  ...configTargets(),
  ...apiTargets(),
];
