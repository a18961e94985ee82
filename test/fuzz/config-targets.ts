// The config targets of the fuzz campaign: the shipped training, test-time and NMR training configs, mutated.
// A training config is taken as far as `tailor train` goes before it reads any data: the checked
// config, its loss (whose `args` are checked against the loss type there), the optimizer and the
// learning-rate schedule on one small parameter. Each must succeed or end in a ConfigError
// naming the file.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers.js';
import { json, text, type Files } from './seeds.js';
import type { FuzzTarget } from './targets.js';
import { ConfigError, loadConfig } from '../../src/longtail/config/config.js';
import { createLoss, createPrlLoss } from '../../src/longtail/config/losses.js';
import { buildOptimizer, buildScheduler } from '../../src/longtail/config/experiment.js';
import { loadTestTimeConfig } from '../../src/longtail/config/testtime.js';
import { loadConfig as loadNmrConfig } from '../../src/nmr/train/config.js';

const TRAIN_SEEDS = [
  'fmnist_lt_ir100_ce.json',
  'fmnist_lt_ir100_sade.json',
  'fmnist_lt_ir100_ldam_drw.json',
  'fmnist_lt_ir100_balpoe.json',
  'fmnist_lt_ir100_prl.json',
  'fmnist_lt_ir100_prl_released.json',
  'imagenet_lt_resnext50_sade.json',
  'cifar/cifar100_lt_ir100_prl.json',
];
const TEST_TIME_SEEDS = [
  'fmnist_test_time.json',
  'cifar/cifar10_test_time.json',
  'suites/tiny_test_time.json',
];

const NMR_SEEDS = [
  'nmr_seed.json',
  'nmr_seed_semi.json',
  'nmr_seed_large.json',
  'nmr_stack4.json',
  'nmr_fast.json',
  'nmr_tiny.json',
];

const NMR_TOKENS = [
  '"model": {"channels": [4096, 4096, 4096, 4096], "kernel": 255},\n',
  '"model": {"channels": [1e9, 2], "dilations": [1, 2]},\n',
  '"model": {"channels": [8], "dilations": [1], "kernel": 4},\n',
  '"model": {"inputLevels": 0, "conv": "polyphase", "head": "tanh", "norm": "layer"},\n',
  '"data": {"train": [], "crop": -1, "target": "truth", "peakMask": "truth", "T": 0},\n',
  '"data": {"fusion": {"scheme": "T", "gamma": 1e308, "wMax": 0}},\n',
  '"stageA": {"epochs": 0, "extraLevels": [3, 1], "loss": {"mse": -1}},\n',
  '"stageB": {"epochs": 1e9, "curriculumEpochs": 2, "peakWeightEnd": null},\n',
  '"optim": {"lr": 0, "gradClip": -1, "warmupEpochs": 1e308},\n',
  '"device": "cuda:99",\n',
  '"batchSamples": 0,\n',
  '"__proto__": {"seed": 1},\n',
];

/** Each shipped config as the one file `config.json` of an input (so seeds splice into each other). */
function shipped(names: string[]): Files[] {
  return names.map((name) => ({
    'config.json': new Uint8Array(readFileSync(join(repoRoot, 'configs', name))),
  }));
}

// Sections no shipped config combines with the others, so that inputs reach every loss type,
// optimizer and schedule; each replaces its section of the CE config.
const VARIANTS: Record<string, unknown>[] = [
  { loss: { type: 'CrossEntropyLoss', args: { reweight_CE: true, beta: 0.999 } } },
  { loss: { type: 'BalancedSoftmaxLoss', args: { eps: 1e-6 } } },
  { loss: { type: 'LogitAdjustLoss', args: { tau: 1 } } },
  { loss: { type: 'FocalLoss', args: { gamma: 2, weight: [1, 1, 2] } } },
  { loss: { type: 'FocalLoss', args: { gamma: 1, reweight_epoch: 20 } } },
  { loss: { type: 'DiverseExpertLoss', args: { tau: 2, num_experts: 3 } } },
  {
    loss: {
      type: 'RIDELoss',
      args: { additional_diversity_factor: -0.45, reweight_epoch: 24, reweight_factor: 0.05 },
    },
  },
  { combiner: { type: 'Combiner', mode: 'mixup', mixup: { alpha: 0.4 } } },
  { optimizer: { type: 'SGD', args: { lr: 0.01, share_lr: 0.001, momentum: 0.9 } } },
  { loss: { type: 'PRL', args: { variant: 'paper', z: 'running_min', mu: 0.1 } } },
  { optimizer: { type: 'AdamW', args: { lr: 0.001, betas: [0.9, 0.999], eps: 1e-8, amsgrad: true } } },
  { lr_scheduler: { type: 'MultiStepLR', args: { milestones: [20, 25], gamma: 0.1 } } },
  { lr_scheduler: { type: 'StepLR', args: { step_size: 10, gamma: 0.5 } } },
  { lr_scheduler: { type: 'CosineAnnealingLR', args: { T_max: 30, eta_min: 0.001 } } },
  { mixup: { alpha: 0.2 }, use_hnet: true, Solvers: { name: 'ls', mu: 0.01, Z: 0 } },
];

function variants(): Files[] {
  const base = JSON.parse(
    readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_ce.json'), 'utf8'),
  ) as object;
  return VARIANTS.map((v) => ({ 'config.json': json({ ...base, ...v }) }));
}

// Lines a config may hold, inserted at a line start of the pretty-printed seeds: sections and
// switches that send the checker down other branches, and values at the edges of their ranges.
const CONFIG_TOKENS = [
  '"use_hnet": true,\n',
  '"Solvers": {"name": "stch", "mu": -1, "Z": 1e308},\n',
  '"prl": {"variant": "released", "draws_per_batch": 4, "z": [0, 1]},\n',
  '"prl": {"hidden": [0], "expert_losses": []},\n',
  '"mixup": {"alpha": -1},\n',
  '"loss": {"type": "PRLLoss", "args": {"z": "running_max", "expert_losses": [{"type": "sideways"}]}},\n',
  '"loss": {"type": "FocalLoss", "args": {"weight": [1, 2], "reweight": true}},\n',
  '"loss": {"type": "DiverseExpertLoss", "args": {"num_experts": 7}},\n',
  '"loss": {"type": "BalancedSoftmaxCE", "args": {"eps": -1}},\n',
  '"loss": {"type": "RIDE", "args": {"reweight_factor": 2, "base_diversity_temperature": 0}},\n',
  '"combiner": {"mode": "cutmix", "mixup": {"alpha": -1}},\n',
  '"distill": true, "distill_checkpoint": "",\n',
  '"loss": {"type": "RIDELossWithDistill", "args": {"distill_temperature": 0}},\n',
  '"epochs": 0,\n',
  '"lr_scheduler": {"type": "MultiStepLR", "args": {}},\n',
  '"lr_scheduler": {"type": "CustomLR", "args": {"step1": 160}},\n',
  '"lr_scheduler": {"type": "CosineAnnealingLR", "args": {"T_max": 0}},\n',
  '"lr_scheduler": {"type": "StepLR", "args": {"step_size": 0, "gamma": 1e308}},\n',
  '"optimizer": {"type": "SGD", "args": {"lr": 0.1, "momentum": -1, "nesterov": true}},\n',
  '"optimizer": {"type": "AdamW", "args": {"lr": 1e308, "betas": [2, -1], "eps": -1}},\n',
  '"trainer": {"epochs": 9007199254740993},\n',
  '"arch": {"type": "ResNet32Model", "args": {"num_classes": 1, "num_experts": 1e6}},\n',
  '"__proto__": {"epochs": 1},\n',
  '"method": "preference",\n',
  '"methods": ["em", "preference", "em"],\n',
  '"distributions": [],\n',
  '"min_weight": 2,\n',
  '"loss": {"type": "BSExpertLoss", "tau_min": 0, "tau_max": 1e308, "args": {"tau_list": "limits"}},\n',
  '"loss": {"type": "BSExpertLoss", "args": {"tau_list": "1;;2e999"}},\n',
];

/** `tailor train --set` lines: the paths and values a user (or a script gone wrong) may give. */
const SETTING_TOKENS = [
  'arch.args.num_experts=7\n',
  'arch.args.num_experts=1e9\n',
  'loss.args.tau_list=limits\n',
  'loss.args.tau_list=uniform\n',
  'loss.args.tau_list=0;1;2\n',
  'loss.tau_min=-1e308\n',
  'loss.tau_max=NaN\n',
  '__proto__.polluted=1\n',
  'constructor.prototype.x=1\n',
  'optimizer.args.lr={"a":[[[[]]]]}\n',
  'lr_scheduler.args.milestones.0=5\n',
  'lr_scheduler.args.milestones.99=5\n',
  'name.first=1\n',
  'a..b=1\n',
  '=\n',
  'trainer=null\n',
  'data_loader.args.batch_size=0\n',
];

/** `SETTINGS` seeds: settings.txt holds one --set per line beside a shipped config. */
function withSettings(): Files[] {
  const lines = [
    'arch.args.num_experts=5\nloss.args.tau_list=limits\nloss.tau_min=0\nloss.tau_max=2\n',
    'optimizer.args.lr=0.05\ntrainer.epochs=2\n',
    'lr_scheduler.args.step1=10\nmixup.alpha=0.2\n',
  ];
  return shipped([
    'fmnist_lt_ir100_balpoe.json',
    'fmnist_lt_ir100_sade.json',
    'fmnist_lt_ir100_prl.json',
  ]).map((files, i) => ({ ...files, 'settings.txt': text(lines[i]!) }));
}

/** The steps of `tailor train` before any data is read, on three classes of 50, 20 and 5 images. */
async function trainConfig(dir: string, settings: string[] = []): Promise<void> {
  const torch = await import('../../src/torch/index.js');
  const file = join(dir, 'config.json');
  const config = loadConfig(file, settings);
  torch.tidy(() => {
    const ctx = {
      classCounts: [50, 20, 5],
      experts: config.arch.args.num_experts ?? 1,
      epochs: config.trainer.epochs,
      file,
    };
    if (config.prl) createPrlLoss(config.prl, ctx);
    else createLoss(config.loss.type, config.loss.args, ctx);
    // a backbone weight and a classifier weight, so that share_lr builds its two groups
    const weight = torch.zeros([2]).requiresGrad_(true);
    const classifier = torch.zeros([2]).requiresGrad_(true);
    const optimizer = buildOptimizer(config, [weight, classifier], [classifier], file);
    const scheduler = buildScheduler(config, optimizer);
    for (let epoch = 0; epoch < 3; epoch++) scheduler?.step();
  });
}

/** The test-time options as `tailor test-time-train` reads them, and the optimizers they build. */
async function testTimeConfig(dir: string): Promise<void> {
  const torch = await import('../../src/torch/index.js');
  const file = join(dir, 'config.json');
  // A SADE checkpoint rejects what a PRL checkpoint accepts (the preference search).
  for (const isPrl of [true, false]) {
    const o = loadTestTimeConfig(file, isPrl);
    torch.tidy(() => {
      const theta = torch.zeros([3]).requiresGrad_(true);
      const { lr, momentum, weightDecay, nesterov } = o;
      new torch.optim.SGD([theta], { lr, momentum, weightDecay, nesterov });
      new torch.optim.AdamW([theta], { lr: o.preferenceLr, weightDecay: 0 });
    });
  }
}

/**
 * An NMR training config as `tailor nmr train` reads it, and the network it asks for on the CPU
 * (the bounds must stop a network too large to allocate before libtorch is asked).
 */
async function nmrConfig(dir: string): Promise<void> {
  const torch = await import('../../src/torch/index.js');
  const { UNet1d } = await import('../../src/nmr/model/unet.js');
  const config = loadNmrConfig(join(dir, 'config.json'), dir);
  const small = config.model.channels.reduce((a, c) => a + c, 0) <= 1024 && config.model.kernel <= 31;
  // Building a big network is slow, not wrong: its bounds are what the input must respect.
  if (small) torch.tidy(() => new UNet1d(config.model).dispose());
}

export function configTargets(): FuzzTarget[] {
  return [
    {
      name: 'training config',
      // the losses and the optimizer hold libtorch tensors
      native: true,
      kind: 'json',
      seeds: async () => [...shipped(TRAIN_SEEDS), ...variants()],
      mutable: ['config.json'],
      dictionary: CONFIG_TOKENS,
      run: trainConfig,
    },
    {
      name: 'training config --set',
      native: true,
      kind: 'text',
      seeds: async () => withSettings(),
      mutable: ['settings.txt'],
      dictionary: SETTING_TOKENS,
      run: async (dir: string) => {
        const settings = join(dir, 'settings.txt');
        try {
          await trainConfig(
            dir,
            readFileSync(settings, 'latin1')
              .split('\n')
              .filter((l) => l !== ''),
          );
        } catch (error) {
          // a setting's own error names '--set' (the command line): here that line is the file
          if (error instanceof ConfigError && error.file === '--set')
            throw new ConfigError(settings, error.path, error.message);
          throw error;
        }
      },
    },
    {
      name: 'test-time config',
      // the searches' optimizers hold libtorch tensors
      native: true,
      kind: 'json',
      seeds: async () => [...shipped(TEST_TIME_SEEDS), { 'config.json': text('{}') }],
      mutable: ['config.json'],
      dictionary: CONFIG_TOKENS,
      run: testTimeConfig,
    },
    {
      name: 'NMR training config',
      // the network holds libtorch tensors
      native: true,
      kind: 'json',
      seeds: async () => shipped(NMR_SEEDS),
      mutable: ['config.json'],
      dictionary: NMR_TOKENS,
      run: nmrConfig,
    },
  ];
}
