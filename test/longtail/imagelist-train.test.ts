// Training from image lists (ImageNet-LT layout) end to end on a tiny generated data set: the
// loader type names, finding the lists, train / test / test-all / test-time-train through the
// CLI, exact resume over lazily decoded batches, an ImageNet backbone with PRL, and the errors
// for a malformed list line or a missing image.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { buildData } from '../../src/longtail/config/experiment.js';
import { isLazy } from '../../src/longtail/data/source.js';
import { trainRun as baseTrainRun } from './train-run.js';
import { repoRoot, runTailor } from '../helpers.js';
import { tempDir } from './data-fixtures.js';
import { tinyListConfig, writeTinyImageList } from './imagelist-fixtures.js';
import { TEST_DISTRIBUTIONS } from '../../src/longtail/data/longtail.js';

const DISTRIBUTIONS = TEST_DISTRIBUTIONS;

let dir = '';
let root = '';

before(async () => {
  dir = tempDir('imagelist-train');
  root = join(dir, 'data');
  await writeTinyImageList(root);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const tailor = (...args: string[]) => runTailor(args, dir);

function writeConfig(name: string, config: Record<string, unknown>): string {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

function config(patch: (c: TrainConfig) => void = () => {}): TrainConfig {
  const c = parseConfig(JSON.stringify(tinyListConfig(root)), 'tiny.json');
  patch(c);
  return c;
}

test('the image-list loader names of the reference configs are accepted, misspellings suggested', () => {
  for (const type of ['ImageNetLTDataLoader', 'iNaturalistDataLoader', 'Places_LT', 'Places_LT_DataLoader']) {
    const c = tinyListConfig('/data') as { data_loader: { type: string } };
    c.data_loader.type = type;
    assert.equal(parseConfig(JSON.stringify(c), 'c.json').data_loader.type, type);
  }
  const typo = tinyListConfig('/data') as { data_loader: { type: string } };
  typo.data_loader.type = 'ImageNetLTDataloader';
  assert.throws(
    () => parseConfig(JSON.stringify(typo), 'typo.json'),
    /typo\.json: data_loader\.type: unknown value 'ImageNetLTDataloader'; did you mean 'ImageNetLTDataLoader'\?/,
  );
  const badArg = tinyListConfig('/data') as { data_loader: { args: Record<string, unknown> } };
  badArg.data_loader.args.train_list = 'x.txt';
  assert.throws(
    () => parseConfig(JSON.stringify(badArg), 'arg.json'),
    /data_loader\.args\.train_list: unknown key; did you mean 'train_txt'\?/,
  );
  for (const name of ['imagenet_lt_resnext50_sade.json', 'imagenet_lt_resnext50_prl.json']) {
    const c = parseConfig(readFileSync(join(repoRoot, 'configs', name), 'utf8'), name);
    assert.equal(c.arch.type, 'ResNeXt50Model');
    assert.equal(c.data_loader.type, 'ImageNetLTDataLoader');
    assert.equal((c.optimizer.args as { lr: number }).lr, 0.025);
    assert.equal(c.trainer.epochs, 180);
  }
});

test('lists are found where the reference loaders look; explicit *_txt overrides; iNaturalist tests on val', () => {
  const d = buildData(config());
  assert.ok(isLazy(d.train) && isLazy(d.test) && isLazy(d.val));
  assert.equal(d.lists!.train, join(root, 'ImageNet_LT_train.txt'));
  assert.equal(d.lists!.val, join(root, 'ImageNet_LT_val.txt'));
  assert.deepEqual(d.trainCounts, [12, 6, 3, 2]);
  assert.equal(d.test.labels.length, 16);
  assert.equal(d.val.labels.length, 8);
  assert.deepEqual(d.test.shape, [3, 16, 16]);
  assert.equal(d.subset.imbalance, 6);

  // SADE writes data_dir + "/ImageNet_LT_train.txt"; an absolute path is used as given
  const sade = buildData(
    config((c) => {
      c.data_loader.args = {
        ...c.data_loader.args,
        train_txt: '/ImageNet_LT_train.txt',
        test_txt: join(root, 'ImageNet_LT_val.txt'),
      };
    }),
  );
  assert.equal(sade.lists!.train, join(root, 'ImageNet_LT_train.txt'));
  assert.equal(sade.test.labels.length, 8);
  assert.throws(
    () =>
      buildData(
        config((c) => (c.data_loader.args = { ...c.data_loader.args, test_txt: 'nope.txt' })),
        {},
        'cfg.json',
      ),
    (e: Error) =>
      e instanceof ConfigError &&
      /cfg\.json: data_loader\.args\.test_txt: no test list found/.test(e.message),
  );

  // iNaturalist: iNaturalist18_train.txt / iNaturalist18_val.txt under data_txt/iNaturalist18
  const txt = join(root, 'data_txt', 'iNaturalist18');
  mkdirSync(txt, { recursive: true });
  copyFileSync(join(root, 'ImageNet_LT_train.txt'), join(txt, 'iNaturalist18_train.txt'));
  copyFileSync(join(root, 'ImageNet_LT_test.txt'), join(txt, 'iNaturalist18_val.txt'));
  const i = buildData(config((c) => (c.data_loader.type = 'iNaturalistDataLoader')));
  assert.equal(i.dataset, 'inat2018');
  assert.equal(i.pipeline, 'inat');
  // iNaturalist's val list is its test set: the validation split comes out of the training list
  assert.notEqual(i.test, i.val);
  assert.equal(i.test.labels.length, 16);
  assert.match(i.lists!.val, /iNaturalist18_train\.txt \(held out\)$/);
  const trainAll = buildData(config((c) => (c.data_loader.type = 'ImageNetLTDataLoader'))).train.labels
    .length;
  assert.equal(i.train.labels.length + i.val.labels.length, trainAll);
  assert.ok(i.val.labels.length > 0);
});

test('train, test, test-all and test-time-train from an image list through the CLI', () => {
  const file = writeConfig(
    'sade',
    tinyListConfig(root, {
      lr_scheduler: { type: 'CosineAnnealingLR', args: { T_max: 5, eta_min: 0 } },
    }),
  );
  const run = join(dir, 'run-sade');
  const t = tailor('train', '-c', file, '--epochs', '5', '--out', run, '--quiet');
  assert.equal(t.code, 0, t.err);
  assert.match(t.err, /on imagenet_lt .*ImageNet_LT_train\.txt.*23 training images \(12 \.\. 2 per class\)/);
  const epochs = readFileSync(join(run, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(epochs.length, 5);
  for (const e of epochs) assert.ok(e.val && typeof e.val.top1 === 'number', 'every epoch is evaluated');
  const results = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8'));
  assert.equal(results.dataset.name, 'imagenet_lt');
  assert.deepEqual(results.dataset.train_counts, [12, 6, 3, 2]);
  assert.deepEqual(Object.keys(results.distributions), DISTRIBUTIONS);
  assert.equal(results.uniform.n, 16);
  assert.equal(results.distributions.uniform.n, 16);
  // four colour classes: well above chance (25%) after five short epochs
  assert.ok(results.uniform.top1 > 0.4, `uniform top-1 ${results.uniform.top1}`);

  const one = tailor('test', '-r', run, '--json');
  assert.equal(one.code, 0, one.err);
  const u = JSON.parse(one.out);
  assert.equal(u.n, 16);
  assert.equal(u.top1, results.uniform.top1);

  const all = tailor('test-all', '-r', join(run, 'checkpoint-last.json'), '--json');
  assert.equal(all.code, 0, all.err);
  const a = JSON.parse(all.out);
  assert.deepEqual(Object.keys(a.distributions), DISTRIBUTIONS);
  for (const name of DISTRIBUTIONS)
    assert.equal(a.distributions[name].top1, results.distributions[name].top1);

  const tt = writeConfig('tt', {
    name: 'tiny_tt',
    data_loader: { type: 'TestAgnosticImageNetLTDataLoader', args: { batch_size: 8 } },
    optimizer: { type: 'SGD', args: { lr: 0.025, momentum: 0.9, weight_decay: 5e-4, nesterov: true } },
    trainer: { epochs: 1 },
  });
  const ttt = tailor('test-time-train', '-c', tt, '-r', run, '--json', '--threads', '1');
  assert.equal(ttt.code, 0, ttt.err);
  const s = JSON.parse(ttt.out);
  assert.deepEqual(Object.keys(s.distributions), DISTRIBUTIONS);
  for (const d of Object.values(s.distributions) as { weights: number[]; before: { top1: number } }[]) {
    assert.equal(d.weights.length, 3);
    assert.ok(Math.abs(d.weights.reduce((x, y) => x + y, 0) - 1) < 1e-5);
  }
  assert.equal(s.distributions.uniform.before.top1, results.uniform.top1);
});

const trainRun = (c: TrainConfig, runDir: string, epochs: number, resumeFrom?: string) =>
  baseTrainRun(c, runDir, epochs, { file: 'tiny.json', ...(resumeFrom ? { resumeFrom } : {}) });

test('a resumed image-list run ends exactly where an uninterrupted one does (mixup, lazy batches)', async () => {
  const c = () => config((x) => (x.mixup = { alpha: 0.4 }));
  const straight = await trainRun(c(), join(dir, 'resume-a'), 2);
  const first = await trainRun(c(), join(dir, 'resume-b'), 1);
  assert.equal(first.result.history.length, 1);
  const resumed = await trainRun(
    c(),
    join(dir, 'resume-b'),
    2,
    join(dir, 'resume-b', 'checkpoint-last.json'),
  );
  assert.equal(resumed.result.history.length, 2);
  let differs = 0;
  for (const [k, v] of Object.entries(straight.weights)) {
    assert.deepEqual(resumed.weights[k], v, `weight ${k} differs after resume`);
    if (first.weights[k]!.some((x, i) => x !== v[i])) differs++;
  }
  assert.ok(differs > 0, 'the second epoch changed the weights');
  const last = (h: { history: { train_loss: number; val: unknown }[] }) => h.history[h.history.length - 1]!;
  assert.equal(last(resumed.result).train_loss, last(straight.result).train_loss);
  assert.deepEqual(last(resumed.result).val, last(straight.result).val);
});

test('data_loader.args.num_workers: worker threads train exactly as the training thread does', async () => {
  const withWorkers = (n: number) =>
    config((x) => (x.data_loader.args = { ...x.data_loader.args, num_workers: n, prefetch_factor: 3 }));
  const d = buildData(withWorkers(2));
  assert.equal(d.trainLoader!.workers, 2);
  assert.equal(d.trainLoader!.prefetch, 6);
  assert.equal(d.trainLoader!.spec.stage, 'train');
  const main = await trainRun(withWorkers(0), join(dir, 'workers-0'), 1);
  const threads = await trainRun(withWorkers(2), join(dir, 'workers-2'), 1);
  for (const [k, v] of Object.entries(main.weights))
    assert.deepEqual(threads.weights[k], v, `weight ${k} differs with num_workers 2`);
  assert.equal(threads.result.history[0]!.train_loss, main.result.history[0]!.train_loss);
});

test('an ImageNet backbone (ResNeXt50Model) trains with PRL from an image list; grid and preference search run', () => {
  const file = writeConfig(
    'prl',
    tinyListConfig(root, {
      name: 'tiny_list_prl',
      arch: {
        type: 'ResNeXt50Model',
        // small expert stages keep the test quick; the shared stem and stages 1-2 are ResNeXt-50's
        args: {
          num_classes: 4,
          reduce_dimension: true,
          use_norm: true,
          num_experts: 3,
          layer3_output_dim: 16,
          layer4_output_dim: 32,
          // blocks start as identity: after two SGD steps the eval-mode running statistics of
          // 16 untrained bottlenecks would otherwise overflow float32 activations
          zero_init_residual: true,
        },
      },
      loss: { type: 'PRLLoss', args: {} },
      prl: {
        variant: 'paper',
        alpha: 1.2,
        scalarization: 'stch',
        mu: 0.1,
        hidden: [16, 16],
        expert_losses: [{ type: 'forward' }, { type: 'uniform' }, { type: 'backward', tau: 2 }],
      },
      data_loader: {
        type: 'ImageNetLTDataLoader',
        args: { data_dir: root, batch_size: 8, image_size: 32, resize_size: 36, n_max: 3, test_per_class: 2 },
      },
    }),
  );
  const run = join(dir, 'run-prl');
  const t = tailor('train', '-c', file, '--epochs', '1', '--out', run, '--quiet');
  assert.equal(t.code, 0, t.err);
  assert.match(t.err, /11 training images \(3 \.\. 2 per class\)/);
  const results = JSON.parse(readFileSync(join(run, 'results.json'), 'utf8'));
  assert.equal(results.method, 'PRL (paper)');
  assert.equal(results.uniform.n, 8);
  assert.equal(results.controllability.points.length, 66);

  const all = tailor('test-all', '-r', run, '--json', '--grid', '2', '--preference', '1,1,2');
  assert.equal(all.code, 0, all.err);
  const a = JSON.parse(all.out);
  assert.deepEqual(a.preference, [0.25, 0.25, 0.5]);
  assert.equal(a.controllability.points.length, 6);

  const tt = writeConfig('tt-prl', {
    name: 'tiny_tt_prl',
    method: 'both',
    distributions: ['forward50', 'uniform', 'backward50'],
    data_loader: { type: 'TestAgnosticImageNetLTDataLoader', args: { batch_size: 4 } },
    optimizer: { type: 'SGD', args: { lr: 0.025, momentum: 0.9, weight_decay: 5e-4, nesterov: true } },
    trainer: { epochs: 1 },
  });
  const ttt = tailor('test-time-train', '-c', tt, '-r', run, '--json', '--threads', '1');
  assert.equal(ttt.code, 0, ttt.err);
  const s = JSON.parse(ttt.out);
  assert.deepEqual(Object.keys(s.distributions), ['forward50', 'uniform', 'backward50']);
  assert.equal(s.distributions.uniform.preference.length, 3);
  assert.equal(typeof s.mean_top1_preference, 'number');
});

test('a malformed list line or a missing image is reported with the list file and line', () => {
  const lines = readFileSync(join(root, 'ImageNet_LT_train.txt'), 'utf8').trim().split('\n');
  const bad = [...lines];
  bad[2] = 'train/n00/img_2.png';
  writeFileSync(join(root, 'bad_train.txt'), bad.join('\n') + '\n');
  const missing = [...lines];
  missing[1] = 'train/n00/nope.png 0';
  writeFileSync(join(root, 'missing_train.txt'), missing.join('\n') + '\n');

  const withList = (name: string, list: string) => {
    const c = tinyListConfig(root) as { data_loader: { args: Record<string, unknown> } };
    c.data_loader.args.train_txt = list;
    return writeConfig(name, c);
  };
  const t1 = tailor(
    'train',
    '-c',
    withList('bad', 'bad_train.txt'),
    '--out',
    join(dir, 'bad-run'),
    '--quiet',
  );
  assert.equal(t1.code, 2, t1.err);
  assert.match(t1.err, /bad_train\.txt:3: expected 'relative\/path label', got 'train\/n00\/img_2\.png'/);
  assert.doesNotMatch(t1.err, /\n\s+at /, 'no stack trace');

  const t2 = tailor(
    'train',
    '-c',
    withList('missing', 'missing_train.txt'),
    '--out',
    join(dir, 'missing-run'),
    '--quiet',
  );
  assert.equal(t2.code, 2, t2.err);
  assert.match(t2.err, /missing_train\.txt:2: image 'train\/n00\/nope\.png' not found under /);

  // skip_missing drops the line with a warning
  const c = tinyListConfig(root) as { data_loader: { args: Record<string, unknown> } };
  c.data_loader.args.train_txt = 'missing_train.txt';
  c.data_loader.args.skip_missing = true;
  const d = buildData(parseConfig(JSON.stringify(c), 'skip.json'));
  assert.equal(d.train.labels.length, 22);
});
