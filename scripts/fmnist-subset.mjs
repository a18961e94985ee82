#!/usr/bin/env node
// Fashion-MNIST cut down to what benchmark suites read, so that it travels to a GPU machine in
// the same call as the build (the device tool carries at most 64 MiB; the whole training file is
// 26 MB gzipped, the images the full Fashion-MNIST-LT suite trains and validates on 7 MB).
//
//   node scripts/fmnist-subset.mjs write OUTDIR SUITE.json [SUITE.json ...] [--from DIR]
//   node scripts/fmnist-subset.mjs verify DIR SUITE.json
//
// write: the training file keeps the pixels of every image that some Fashion-MNIST model of the
// suites trains or validates on (the long-tailed subset and the validation split depend on the
// labels and the data seed only, never on the pixels or the run seed) and zeros the others; the
// labels and the test files are copied whole. SUBSET.json beside them says what was kept, so no
// tool mistakes the directory for the whole data set.
// verify: every image each Fashion-MNIST model of SUITE reads from DIR (train, validation and
// test splits, with the suite's data settings) has a non-zero pixel, as every Fashion-MNIST image
// has; exits 2 naming the model otherwise. gpu-suite.sh runs it before training from a subset.
// Needs the compiled library (dist/, npx tsc -p tsconfig.json).
import { copyFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const lib = (p) => import(join(root, 'dist/src', p));
const { loadConfig } = await lib('longtail/config/config.js');
const { buildData } = await lib('longtail/config/experiment.js');
const { loadSuite } = await lib('longtail/workflows/benchmark-suite.js');
const { suiteDataOverrides } = await lib('longtail/workflows/benchmark.js');
const { readFashionMnist, FASHION_MNIST_DEFAULT_ROOT } = await lib('longtail/data/idx.js');

const MARKER = 'SUBSET.json';
const FILES = ['train-labels-idx1-ubyte.gz', 't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz'];

function fail(message) {
  console.error(`fmnist-subset: ${message}`);
  process.exit(2);
}

/** The suite's Fashion-MNIST models with the data each reads from `dir` under the suite's settings. */
function suiteData(suiteFile, dir) {
  const suite = loadSuite(suiteFile);
  const overrides = { ...suiteDataOverrides(suite), root: dir };
  return suite.models.map((m) => {
    const config = loadConfig(m.config);
    if (config.data_loader.type !== 'ImbalanceFashionMNISTDataLoader')
      fail(
        `${suiteFile}: model ${m.name} reads ${config.data_loader.type}, not Fashion-MNIST; only Fashion-MNIST suites can be cut down`,
      );
    return { name: m.name, data: buildData(config, overrides, m.config) };
  });
}

function write(out, suites, from) {
  const train = readFashionMnist(from, 'train');
  const n = train.labels.length;
  const used = new Uint8Array(n);
  for (const file of suites)
    for (const { data } of suiteData(file, from))
      for (const indices of [data.sourceIndices.train, data.sourceIndices.val])
        for (const i of indices) used[i] = 1;
  const size = train.images.length / n;
  const bytes = new Uint8Array(16 + train.images.length);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 0x803);
  view.setUint32(4, n);
  view.setUint32(8, train.shape[1]);
  view.setUint32(12, train.shape[2]);
  let kept = 0;
  for (let i = 0; i < n; i++) {
    if (!used[i]) continue;
    bytes.set(train.images.subarray(i * size, (i + 1) * size), 16 + i * size);
    kept++;
  }
  mkdirSync(out, { recursive: true });
  const target = join(out, 'train-images-idx3-ubyte.gz');
  writeFileSync(`${target}.tmp`, gzipSync(bytes, { level: 9 }));
  renameSync(`${target}.tmp`, target);
  for (const f of FILES) {
    if (!existsSync(join(from, f))) fail(`${from} lacks ${f} (the gzipped idx files of Fashion-MNIST)`);
    copyFileSync(join(from, f), join(out, f));
  }
  const marker = {
    what: 'Fashion-MNIST with the pixels of only the training images these suites read; the other training images are all zero',
    suites: suites.map((s) => resolve(s).slice(root.length + 1)),
    kept,
    of: n,
    from,
  };
  writeFileSync(join(out, MARKER), `${JSON.stringify(marker, null, 2)}\n`);
  console.log(`fmnist-subset: ${out}: ${kept} of ${n} training images kept (${suites.join(', ')})`);
}

function zeroImages(set) {
  const per = set.shape.reduce((a, b) => a * b, 1);
  const n = set.images.length / per;
  let zero = 0;
  for (let i = 0; i < n; i++) if (set.images.subarray(i * per, (i + 1) * per).every((v) => v === 0)) zero++;
  return zero;
}

function verify(dir, suite) {
  for (const { name, data } of suiteData(suite, dir)) {
    for (const [split, set] of [
      ['train', data.train],
      ['val', data.val],
      ['test', data.test],
    ]) {
      const zero = zeroImages(set);
      if (zero > 0)
        fail(
          `${dir} lacks ${zero} of the ${split} images model ${name} of ${suite} reads (they are zero there: ` +
            `the directory was cut down for another suite); rewrite it with scripts/fmnist-subset.mjs write for this suite, or use the whole data set`,
        );
    }
  }
  console.log(`fmnist-subset: ${dir} holds every image ${suite} reads`);
}

const [command, ...rest] = process.argv.slice(2);
const fromAt = rest.indexOf('--from');
const from = fromAt >= 0 ? rest.splice(fromAt, 2)[1] : FASHION_MNIST_DEFAULT_ROOT;
try {
  if (command === 'write' && rest.length >= 2) write(rest[0], rest.slice(1), from);
  else if (command === 'verify' && rest.length === 2) verify(rest[0], rest[1]);
  else fail('usage: fmnist-subset.mjs write OUTDIR SUITE.json... [--from DIR] | verify DIR SUITE.json');
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
