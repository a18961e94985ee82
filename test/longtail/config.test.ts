import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadConfig, parseConfig, ConfigError } from '../../src/longtail/config/config.js';
import { loadTestTimeConfig } from '../../src/longtail/config/testtime.js';
import { buildOptimizer } from '../../src/longtail/config/experiment.js';
import { sessionLabel, type Session } from '../../src/longtail/config/session.js';
import * as torch from '../../src/torch/index.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { repoRoot } from '../helpers.js';

const sade = {
  name: 'Imbalance_CIFAR100_LT_IR100_SADE',
  n_gpu: 1,
  arch: {
    type: 'ResNet32Model',
    args: { num_classes: 100, reduce_dimension: true, use_norm: true, returns_feat: true, num_experts: 3 },
  },
  data_loader: {
    type: 'ImbalanceCIFAR100DataLoader',
    args: { data_dir: './data/CIFAR-100', batch_size: 128, shuffle: true, num_workers: 2, imb_factor: 0.01 },
  },
  optimizer: { type: 'SGD', args: { lr: 0.1, weight_decay: 5e-4, momentum: 0.9, nesterov: true } },
  add_extra_info: true,
  loss: { type: 'DiverseExpertLoss', args: { tau: 2 } },
  lr_scheduler: { type: 'CustomLR', args: { step1: 160, step2: 180, gamma: 0.1, warmup_epoch: 5 } },
  trainer: {
    epochs: 200,
    save_dir: 'saved/cifar100/ir100/sade',
    save_period: 100,
    verbosity: 2,
    monitor: 'max val_accuracy',
    tensorboard: false,
  },
};

test('an official SADE config parses unchanged', () => {
  const c = parseConfig(JSON.stringify(sade), 'sade.json');
  assert.equal(c.arch.type, 'ResNet32Model');
  assert.equal(c.trainer.epochs, 200);
  assert.equal(c.prl, undefined);
});

test('every long-tail config in configs/ and configs/cifar/ parses and names its JSON Schema', () => {
  const seen = { train: 0, testTime: 0 };
  for (const folder of ['configs', join('configs', 'cifar')]) {
    for (const f of readdirSync(join(repoRoot, folder))) {
      const file = join(repoRoot, folder, f);
      const testTime = /_test_time\.json$/.test(f);
      if (!testTime && !/_lt_.*\.json$/.test(f)) continue;
      const raw = JSON.parse(readFileSync(file, 'utf8')) as { $schema?: string };
      // the path an editor resolves from the config's own folder
      const schema = testTime ? 'test-time.schema.json' : 'train.schema.json';
      assert.equal(
        raw.$schema && resolve(dirname(file), raw.$schema),
        join(repoRoot, 'configs', 'schema', schema),
        `${folder}/${f}: $schema`,
      );
      if (testTime) {
        loadTestTimeConfig(file, true);
        seen.testTime++;
      } else {
        loadConfig(file);
        seen.train++;
      }
    }
  }
  // fmnist and imagenet configs at the top, cifar10/100 in configs/cifar
  assert.ok(seen.train >= 20 && seen.testTime >= 3, JSON.stringify(seen));
});

test('a misspelled key is an error naming it and suggesting the valid key', () => {
  const bad = structuredClone(sade) as Record<string, unknown>;
  (bad.optimizer as { args: Record<string, unknown> }).args = { lr: 0.1, wieght_decay: 5e-4 };
  assert.throws(
    () => parseConfig(JSON.stringify(bad), 'c.json'),
    (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(
        e.message,
        /c\.json: optimizer\.args\.wieght_decay: unknown key; did you mean 'weight_decay'\?/,
      );
      return true;
    },
  );
  const bad2 = { ...sade, trainr: sade.trainer };
  assert.throws(
    () => parseConfig(JSON.stringify(bad2), 'c.json'),
    /trainr: unknown key; did you mean 'trainer'/,
  );
  const bad3 = { ...sade, arch: { type: 'ResNet23Model', args: {} } };
  assert.throws(
    () => parseConfig(JSON.stringify(bad3), 'c.json'),
    /arch\.type: unknown value 'ResNet23Model'; did you mean 'ResNet32Model'/,
  );
  const bad4 = { ...sade, trainer: { ...sade.trainer, epochs: -3 } };
  assert.throws(() => parseConfig(JSON.stringify(bad4), 'c.json'), /trainer\.epochs: must be >= 1/);
});

test('invalid JSON reports line and column', () => {
  assert.throws(
    () => parseConfig('{\n  "name": "x",\n  "arch": }', 'broken.json'),
    /broken\.json:3:\d+: invalid JSON/,
  );
});

test('released PRL configs (use_hnet, Solvers) map to the released variant', () => {
  const c = parseConfig(
    JSON.stringify({ ...sade, use_hnet: true, Solvers: { name: 'stch', mu: 0.1, Z: 0 } }),
    'prl.json',
  );
  assert.equal(c.prl?.variant, 'released');
  assert.equal(c.prl?.mu, 0.1);
});

test('test-time configs: defaults, methods, invalid JSON with its position, unknown keys, PRL-only methods', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-tt-config-'));
  try {
    const file = join(dir, 'tt.json');
    writeFileSync(file, readFileSync(join(repoRoot, 'configs', 'fmnist_test_time.json')));
    const o = loadTestTimeConfig(file, true);
    // the label-shift baselines (validation split) always join the chosen searches
    assert.deepEqual(o.methods, ['aggregation', 'preference', 'prior', 'em', 'em_ts', 'em_bcts', 'bbse']);
    assert.equal(o.distributions.length, 11);
    assert.equal(o.epochs, 5);
    assert.deepEqual(
      loadTestTimeConfig(file, false).methods,
      ['aggregation', 'prior', 'em', 'em_ts', 'em_bcts', 'bbse'],
      "'all' on SADE",
    );
    writeFileSync(file, JSON.stringify({ method: 'both' }));
    assert.deepEqual(loadTestTimeConfig(file, true).methods, [
      'aggregation',
      'preference',
      'em',
      'em_ts',
      'em_bcts',
      'bbse',
    ]);
    assert.deepEqual(
      loadTestTimeConfig(file, false).methods,
      ['aggregation', 'em', 'em_ts', 'em_bcts', 'bbse'],
      "'both' on SADE",
    );
    writeFileSync(file, JSON.stringify({ method: 'prior' }));
    assert.deepEqual(loadTestTimeConfig(file, false).methods, ['prior', 'em', 'em_ts', 'em_bcts', 'bbse']);
    // methods: exactly the named ones, from the exported list
    writeFileSync(file, JSON.stringify({ methods: ['em_bcts', 'bbse', 'em_bcts'] }));
    assert.deepEqual(loadTestTimeConfig(file, false).methods, ['em_bcts', 'bbse']);
    assert.equal(loadTestTimeConfig(file, true).preferenceObjective, 'consistent', 'PRL search default');
    assert.equal(
      loadTestTimeConfig(file, true).aggregationObjective,
      'consistent',
      'chosen on the validation split',
    );
    assert.equal(loadTestTimeConfig(file, true).preferenceLr, 0.03, 'chosen on the validation split');
    writeFileSync(file, JSON.stringify({ methods: ['mlls'] }));
    assert.throws(() => loadTestTimeConfig(file, false), /tt\.json: methods\[0\]: .*em_bcts/);
    writeFileSync(file, JSON.stringify({ methods: ['preference'] }));
    assert.throws(() => loadTestTimeConfig(file, false), /methods: 'preference' needs a PRL checkpoint/);
    writeFileSync(file, JSON.stringify({ method: 'prior' }));
    assert.equal(loadTestTimeConfig(file, false).priorFit, 'likelihood', 'prior_fit default');
    writeFileSync(file, JSON.stringify({ method: 'prior', prior_fit: 'least_squares' }));
    assert.equal(loadTestTimeConfig(file, false).priorFit, 'least_squares');
    writeFileSync(file, JSON.stringify({ method: 'prior', prior_fit: 'em' }));
    assert.throws(() => loadTestTimeConfig(file, false), /tt\.json: prior_fit: .*likelihood/);
    writeFileSync(file, JSON.stringify({ method: 'priors' }));
    assert.throws(() => loadTestTimeConfig(file, false), /tt\.json: method: .*prior/);
    writeFileSync(file, JSON.stringify({ method: 'preference' }));
    assert.throws(() => loadTestTimeConfig(file, false), /method: 'preference' needs a PRL checkpoint/);
    writeFileSync(file, readFileSync(join(repoRoot, 'configs', 'fmnist_test_time.json')));
    writeFileSync(file, '{\n  "method": "aggregation",\n  "epochs" 3\n}');
    assert.throws(() => loadTestTimeConfig(file, false), /tt\.json:3:\d+: invalid JSON/);
    writeFileSync(file, JSON.stringify({ method: 'aggregation', min_wieght: 0.1 }));
    assert.throws(
      () => loadTestTimeConfig(file, false),
      /min_wieght: unknown key; did you mean 'min_weight'/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("SADE's test-time files as written: top-level epochs, metrics, imb_factor and share_lr", () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-tt-sade-'));
  try {
    const file = join(dir, 'test_time_places.json');
    // The shape of SADE-AgnosticLT's configs/test_time_*.json (values chosen here).
    const sadeFile = {
      name: 'Places_LT_test_time',
      n_gpu: 1,
      arch: { type: 'ResNet152Model', args: { num_classes: 365, num_experts: 3 } },
      data_loader: {
        type: 'Places_LT',
        args: { data_dir: './data', batch_size: 64, num_workers: 8, imb_factor: 0.01 },
      },
      optimizer: {
        type: 'SGD',
        args: { lr: 0.01, share_lr: 0.001, weight_decay: 4e-4, momentum: 0.9, nesterov: true },
      },
      add_extra_info: true,
      metrics: ['accuracy'],
      epochs: 3,
    };
    writeFileSync(file, JSON.stringify(sadeFile));
    const o = loadTestTimeConfig(file, false);
    assert.equal(o.epochs, 3, 'the top-level epochs are the test-time epochs');
    assert.equal(o.batchSize, 64);
    assert.equal(o.lr, 0.01, 'lr, not share_lr, steps the expert weights');
    assert.equal(o.weightDecay, 4e-4);
    writeFileSync(file, JSON.stringify({ ...sadeFile, trainer: { epochs: 3 } }));
    assert.equal(loadTestTimeConfig(file, false).epochs, 3);
    writeFileSync(file, JSON.stringify({ ...sadeFile, trainer: { epochs: 4 } }));
    assert.throws(
      () => loadTestTimeConfig(file, false),
      /test_time_places\.json: epochs: is 3 but trainer\.epochs is 4/,
    );
    writeFileSync(file, JSON.stringify({ ...sadeFile, epochs: 0 }));
    assert.throws(() => loadTestTimeConfig(file, false), /test_time_places\.json: epochs:/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("BalPoE's configs as written: the combiner is the mixup section, randaugm true is CIFAR's AutoAugment or the image lists' RandAugment (refused by name for Fashion-MNIST and Places-LT), cutmix is refused by name", () => {
  const balpoe = {
    ...sade,
    loss: { type: 'BSExpertLoss', tau_min: 0, tau_max: 2.0, args: { tau_list: [0, 1.0, 2.0] } },
    combiner: { type: 'Combiner', mode: 'mixup', mixup: { alpha: 0.4 } },
  };
  assert.deepEqual(parseConfig(JSON.stringify(balpoe), 'b.json').mixup, { alpha: 0.4 });
  const plain = { ...balpoe, combiner: { type: 'Combiner', mode: 'default', mixup: { alpha: 0.4 } } };
  assert.equal(parseConfig(JSON.stringify(plain), 'b.json').mixup, undefined);
  const both = { ...balpoe, mixup: { alpha: 0.2 } };
  assert.throws(
    () => parseConfig(JSON.stringify(both), 'b.json'),
    /b\.json: combiner: mixup alpha 0\.4 differs/,
  );
  const cutmix = { ...balpoe, combiner: { mode: 'cutmix', mixup: { cutmix_alpha: 1 } } };
  assert.throws(() => parseConfig(JSON.stringify(cutmix), 'b.json'), /combiner\.mode: tailor has no cutmix/);
  const noAlpha = { ...balpoe, combiner: { mode: 'mixup' } };
  assert.throws(
    () => parseConfig(JSON.stringify(noAlpha), 'b.json'),
    /combiner\.mixup\.alpha: mode "mixup" needs alpha/,
  );
  const loader = (type: string, randaugm: boolean) => ({
    ...balpoe,
    data_loader: { type, args: { ...sade.data_loader.args, randaugm } },
  });
  for (const type of [
    'ImbalanceCIFAR100DataLoader',
    'ImbalanceCIFAR10DataLoader',
    'ImbalanceFashionMNISTDataLoader',
  ])
    parseConfig(JSON.stringify(loader(type, false)), 'b.json');
  for (const type of ['ImbalanceCIFAR100DataLoader', 'ImbalanceCIFAR10DataLoader']) {
    const args = parseConfig(JSON.stringify(loader(type, true)), 'b.json').data_loader.args as {
      randaugm?: boolean;
    };
    assert.equal(args.randaugm, true, type);
  }
  assert.throws(
    () => parseConfig(JSON.stringify(loader('ImbalanceFashionMNISTDataLoader', true)), 'b.json'),
    /b\.json: data_loader\.args\.randaugm: AutoAugment's CIFAR-10 policy is for RGB CIFAR images/,
  );
  const lists = (type: string) => ({
    ...balpoe,
    data_loader: { type, args: { data_dir: './data', batch_size: 64, randaugm: true } },
  });
  for (const type of ['ImageNetLTDataLoader', 'iNaturalistDataLoader']) {
    const args = parseConfig(JSON.stringify(lists(type)), 'b.json').data_loader.args as {
      randaugm?: boolean;
    };
    assert.equal(args.randaugm, true, type);
  }
  for (const type of ['Places_LT', 'Places_LT_DataLoader'])
    assert.throws(
      () => parseConfig(JSON.stringify(lists(type)), 'b.json'),
      new RegExp(`b\\.json: data_loader\\.args\\.randaugm: .*BalPoE has no Places-LT loader \\(${type}\\)`),
    );
});

test('prl.z takes a number, one per expert, or "running_min"; anything else names the field', () => {
  const withZ = (z: unknown) =>
    JSON.stringify({ ...sade, loss: { type: 'PRLLoss', args: {} }, prl: { variant: 'paper', z } });
  for (const z of [0, [0, 0.1, 0.2], 'running_min'])
    assert.deepEqual(parseConfig(withZ(z), 'p.json').prl?.z, z);
  assert.throws(
    () => parseConfig(withZ('runing_min'), 'p.json'),
    (e: Error) =>
      e instanceof ConfigError &&
      /p\.json: prl\.z: expected a number, one number per expert, or "running_min"/.test(e.message),
  );
});

test('prl.draws_per_batch is a whole number of preferences, at least 1', () => {
  const withDraws = (draws: unknown) =>
    JSON.stringify({ ...sade, loss: { type: 'PRLLoss', args: {} }, prl: { draws_per_batch: draws } });
  assert.equal(parseConfig(withDraws(8), 'p.json').prl?.draws_per_batch, 8);
  for (const bad of [0, 2.5, '8'])
    assert.throws(() => parseConfig(withDraws(bad), 'p.json'), /p\.json: prl\.draws_per_batch: /);
});

test('a PRLLoss without a prl section trains PRL with the loss arguments; bad ones name loss.args', () => {
  const prlLoss = (args: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ...sade, loss: { type: 'PRLLoss', args }, ...extra });
  const c = parseConfig(prlLoss({ z: 'running_min', mu: 0.2, scalarization: 'stch' }), 'p.json');
  assert.deepEqual(c.prl, { scalarization: 'stch', mu: 0.2, z: 'running_min' });
  assert.deepEqual(parseConfig(prlLoss({ Z: 0.5 }), 'p.json').prl, { z: 0.5 });
  assert.equal(parseConfig(prlLoss({}, { prl: { alpha: 2 } }), 'p.json').prl?.alpha, 2);
  assert.throws(
    () => parseConfig(prlLoss({ z: 'min' }), 'p.json'),
    /p\.json: loss\.args\.z: expected a number, one number per expert, or "running_min"/,
  );
  assert.throws(
    () => parseConfig(prlLoss({ muu: 0.1 }), 'p.json'),
    /loss\.args\.muu: unknown key; did you mean 'mu'/,
  );
});

test('command-line overrides go through the config layer: a new config, checked like the fields', async () => {
  const { withOverrides } = await import('../../src/longtail/config/config.js');
  const c = parseConfig(JSON.stringify(sade), 'c.json');
  const o = withOverrides(c, { epochs: 3, seed: 7 });
  assert.equal(o.trainer.epochs, 3);
  assert.equal(o.seed, 7);
  assert.equal(c.trainer.epochs, sade.trainer.epochs, 'the parsed config is not changed');
  assert.equal(withOverrides(c, {}).trainer.epochs, sade.trainer.epochs);
  assert.throws(() => withOverrides(c, { epochs: 0 }), /command line: epochs: must be >= 1/);
  assert.throws(() => withOverrides(c, { seed: 1.5 }), /command line: seed: expected an integer/);
});

test('optimizer and schedule arguments are checked when the config is loaded, naming the field', () => {
  const bad = (patch: Record<string, unknown>, pattern: RegExp): void =>
    assert.throws(
      () => parseConfig(JSON.stringify({ ...sade, ...patch }), 'o.json'),
      (e: Error) => e instanceof ConfigError && pattern.test(e.message),
      JSON.stringify(patch),
    );
  const schedule = (type: string, args: Record<string, unknown>) => ({ lr_scheduler: { type, args } });
  // what the schedulers need (once a TypeError from the scheduler, after the data was read)
  bad(schedule('MultiStepLR', { gamma: 0.1 }), /^o\.json: lr_scheduler\.args\.milestones: missing required/);
  bad(schedule('CustomLR', { step1: 160, step2: 180 }), /lr_scheduler\.args\.warmup_epoch: missing required/);
  bad(schedule('CosineAnnealingLR', {}), /lr_scheduler\.args\.T_max: missing required/);
  bad(schedule('CosineAnnealingLR', { T_max: 0 }), /lr_scheduler\.args\.T_max: must be >= 1, got 0/);
  bad(schedule('StepLR', { step_size: 0 }), /lr_scheduler\.args\.step_size: must be >= 1, got 0/);
  // what the optimizers refuse (once a RangeError from the optimizer)
  const adamw = (args: Record<string, unknown>) => ({
    optimizer: { type: 'AdamW', args: { lr: 1e-3, ...args } },
  });
  bad(adamw({ eps: -1 }), /^o\.json: optimizer\.args\.eps: must be >= 0, got -1/);
  bad(adamw({ weight_decay: -0.1 }), /optimizer\.args\.weight_decay: must be >= 0/);
  bad(adamw({ betas: [0.9, 1] }), /optimizer\.args\.betas\[1\]: must be < 1, got 1/);
  const sgd = (args: Record<string, unknown>) => ({ optimizer: { type: 'SGD', args: { lr: 0.1, ...args } } });
  bad(sgd({ momentum: -0.9 }), /optimizer\.args\.momentum: must be >= 0/);
  bad(
    sgd({ nesterov: true }),
    /optimizer\.args\.nesterov: Nesterov momentum needs momentum > 0 and dampening 0/,
  );
  bad(sgd({ nesterov: true, momentum: 0.9, dampening: 0.1 }), /optimizer\.args\.nesterov: /);
  // the accepted forms still parse
  for (const patch of [
    schedule('MultiStepLR', { milestones: [120, 160] }),
    schedule('StepLR', { step_size: 30, gamma: 0.1 }),
    schedule('CosineAnnealingLR', { T_max: 200 }),
    adamw({ betas: [0.9, 0.999], eps: 1e-8 }),
    sgd({ momentum: 0.9, nesterov: true }),
    sgd({ nesterov: false }),
    { optimizer: { type: 'Adam', args: { lr: 1e-3, amsgrad: true } } },
  ])
    parseConfig(JSON.stringify({ ...sade, ...patch }), 'o.json');
  bad(
    { optimizer: { type: 'Adam', args: { lr: 1e-3, momentum: 0.9 } } },
    /optimizer\.args\.momentum: unknown key; valid: lr, weight_decay, betas, eps, amsgrad/,
  );
});

test('optimizer Adam and AdamW: the same keys, weight decay L2 (default 0) or decoupled (default 0.01)', () => {
  const build = (type: string, args: Record<string, unknown>) => {
    const config = parseConfig(
      JSON.stringify({ ...sade, optimizer: { type, args: { lr: 0.002, ...args } } }),
      'o.json',
    );
    const w = torch.keep(torch.zeros([2]).requiresGrad_());
    const opt = buildOptimizer(config, [w]);
    const out: Record<string, unknown> = {
      name: opt.constructor.name,
      ...opt.paramGroups[0]!,
      params: undefined,
    };
    opt.dispose();
    w.dispose();
    return out;
  };
  assert.deepEqual(
    { ...build('Adam', {}) },
    {
      name: 'Adam',
      lr: 0.002,
      betas: [0.9, 0.999],
      eps: 1e-8,
      weightDecay: 0,
      amsgrad: false,
      maximize: false,
      params: undefined,
    },
  );
  assert.equal(build('AdamW', {}).weightDecay, 0.01);
  assert.equal(build('AdamW', {}).name, 'AdamW');
  assert.deepEqual(build('Adam', { weight_decay: 1e-4, betas: [0.8, 0.9] }).betas, [0.8, 0.9]);
});

test('trainer.cudnn_benchmark: a boolean, carried into the training options (default left to the trainer)', () => {
  const withFlag = (value: unknown) =>
    JSON.stringify({ ...sade, trainer: { ...sade.trainer, cudnn_benchmark: value } });
  assert.equal(parseConfig(withFlag(false), 'sade.json').trainer.cudnn_benchmark, false);
  assert.equal(parseConfig(JSON.stringify(sade), 'sade.json').trainer.cudnn_benchmark, undefined);
  assert.throws(
    () => parseConfig(withFlag('yes'), 'sade.json'),
    (e: unknown) => e instanceof ConfigError && /trainer\.cudnn_benchmark/.test((e as Error).message),
  );
});

test('the method a run records: PRL by variant, SADE, BalPoE and RIDE by name, DRW losses as LOSS-DRW', () => {
  const method = (file: string) =>
    sessionLabel({ config: loadConfig(join(repoRoot, 'configs', file)) } as Session).method;
  assert.equal(method('fmnist_lt_ir100_prl.json'), 'PRL (paper)');
  assert.equal(method('fmnist_lt_ir100_prl_released.json'), 'PRL (released)');
  assert.equal(method('fmnist_lt_ir100_sade.json'), 'SADE (DiverseExpertLoss)');
  assert.equal(method('fmnist_lt_ir100_balpoe.json'), 'BalPoE (BSExpertLoss)');
  assert.equal(method('fmnist_lt_ir100_ldam_drw.json'), 'LDAM-DRW (LDAMLoss)');
  assert.equal(method('fmnist_lt_ir100_ride.json'), 'RIDE (RIDELoss)');
  assert.equal(method('fmnist_lt_ir100_ce.json'), 'CrossEntropyLoss');
});
