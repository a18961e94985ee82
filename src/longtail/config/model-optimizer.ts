// The model, the optimizer and the learning-rate schedule a training config describes. Apart
// from experiment.ts, which builds the data sets, because these read only the arch, optimizer and
// lr_scheduler sections; experiment.ts re-exports them for its importers.
import { optim, type Tensor } from '../../torch/index.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import { ResNetCifar } from '../models/resnet-cifar.js';
import { IMAGENET_CONFIG_TYPES, ResNetImageNet } from '../models/resnet-imagenet.js';
import { ConfigError, baseArchType, type TrainConfig } from './config.js';

export function buildModel(
  config: TrainConfig,
  inChannels: number,
  classes: number,
  file = 'config',
): MultiExpertModel {
  const arch = config.arch;
  if (arch.args.num_classes !== classes) {
    throw new ConfigError(
      file,
      'arch.args.num_classes',
      `is ${arch.args.num_classes} but the data set has ${classes} classes`,
    );
  }
  if (arch.type === 'ResNet32Model' || arch.type === 'ResNet32EAModel') {
    const a = arch.args;
    const reduce = a.reduce_dimension ?? false;
    const width2 = a.layer2_output_dim ?? (reduce ? 24 : 32);
    const width3 = a.layer3_output_dim ?? (reduce ? 48 : 64);
    // Option-A shortcuts pad the channels equally on both sides: each stage widens by an even count.
    for (const [field, inPlanes, planes] of [
      ['layer2_output_dim', 16, width2],
      ['layer3_output_dim', width2, width3],
    ] as const) {
      if (planes < inPlanes || (planes - inPlanes) % 2 !== 0)
        throw new ConfigError(
          file,
          `arch.args.${field}`,
          `is ${planes}; the option-A shortcut needs at least ${inPlanes} channels, more by an even number`,
        );
    }
    return new ResNetCifar({
      classes,
      experts: a.num_experts ?? 1,
      inChannels: a.in_channels ?? inChannels,
      reduceDimension: reduce,
      layer2Planes: width2,
      layer3Planes: width3,
      normedClassifier: a.use_norm ?? false,
      scale: a.s ?? 30,
    });
  }
  const a = arch.args;
  return new ResNetImageNet({
    arch: IMAGENET_CONFIG_TYPES[baseArchType(arch.type)]!,
    classes,
    experts: a.num_experts ?? 1,
    inChannels: a.in_channels ?? inChannels,
    reduceDimension: a.reduce_dimension ?? false,
    ...(a.layer3_output_dim !== undefined ? { layer3Planes: a.layer3_output_dim } : {}),
    ...(a.layer4_output_dim !== undefined ? { layer4Planes: a.layer4_output_dim } : {}),
    shareLayer3: a.share_layer3 ?? false,
    reduceFirstKernel: a.reduce_first_kernel ?? false,
    normedClassifier: a.use_norm ?? false,
    scale: a.s ?? 30,
    zeroInitResidual: a.zero_init_residual ?? false,
  });
}

/**
 * The config's optimizer over `params`. With SGD's `share_lr`, two parameter groups: `heads` (the
 * classifiers, the hypernetwork) at `lr` and everything else at `share_lr`, as SADE fine-tunes
 * Places-LT (a LambdaLR schedule scales both). `file` names the config in errors.
 */
export function buildOptimizer(
  config: TrainConfig,
  params: Tensor[],
  heads: readonly Tensor[] = [],
  file = 'config',
): optim.SGD | optim.Adam | optim.AdamW {
  const o = config.optimizer;
  if (o.type === 'SGD') {
    const a = o.args;
    const headSet = new Set(heads);
    const shared = params.filter((p) => !headSet.has(p));
    const own = params.filter((p) => headSet.has(p));
    if (a.share_lr !== undefined && (shared.length === 0 || own.length === 0)) {
      throw new ConfigError(
        file,
        'optimizer.args.share_lr',
        `needs both a backbone and classifiers to tell apart (got ${shared.length} backbone and ${own.length} classifier tensors)`,
      );
    }
    const groups = a.share_lr !== undefined ? [{ params: shared, lr: a.share_lr }, { params: own }] : params;
    return new optim.SGD(groups, {
      lr: a.lr,
      momentum: a.momentum ?? 0,
      weightDecay: a.weight_decay ?? 0,
      nesterov: a.nesterov ?? false,
      dampening: a.dampening ?? 0,
    });
  }
  const a = o.args;
  const Adam = o.type === 'Adam' ? optim.Adam : optim.AdamW;
  return new Adam(params, {
    lr: a.lr,
    weightDecay: a.weight_decay ?? (o.type === 'Adam' ? 0 : 0.01),
    ...(a.betas ? { betas: a.betas } : {}),
    ...(a.eps !== undefined ? { eps: a.eps } : {}),
    ...(a.amsgrad !== undefined ? { amsgrad: a.amsgrad } : {}),
  });
}

export function buildScheduler(
  config: TrainConfig,
  optimizer: optim.SGD | optim.Adam | optim.AdamW,
): optim.LRScheduler | null {
  if (!config.lr_scheduler) return null;
  return optim.schedulerFromConfig(optimizer, config.lr_scheduler);
}
