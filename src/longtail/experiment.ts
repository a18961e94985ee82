// Builds what a config describes: the long-tailed training set and the balanced test set, the
// model, the optimizer and the learning-rate schedule.
import { optim, type Tensor } from '../torch/index.js';
import { loadBuiltin, pipelineKind, type BuiltinDataset } from './data/index.js';
import { longTailSubset, type LongTailSubset } from './data/longtail.js';
import type { ImageDataset } from './data/types.js';
import { ConfigError, type TrainConfig } from './config/config.js';
import { ResNetCifar } from './models/resnet_cifar.js';
import { IMAGENET_CONFIG_TYPES, ResNetImageNet, type MultiExpertBackbone } from './models/resnet_imagenet.js';

const LOADER_DATASETS: Record<string, BuiltinDataset> = {
  ImbalanceCIFAR100DataLoader: 'cifar100',
  ImbalanceCIFAR10DataLoader: 'cifar10',
  ImbalanceFashionMNISTDataLoader: 'fmnist',
};

export interface ExperimentData {
  dataset: BuiltinDataset;
  train: ImageDataset;
  test: ImageDataset;
  subset: LongTailSubset;
  /** Training images per class of the long-tailed set. */
  trainCounts: number[];
  batchSize: number;
  balancedSampling: boolean;
}

export interface DataOverrides {
  root?: string;
  /** Keep at most this many images per class of the test set (quick runs and tests). */
  testPerClass?: number;
  /** Cap the head class (quick runs and tests): nMax of the long-tail profile. */
  trainMaxPerClass?: number;
}

export function buildData(
  config: TrainConfig,
  overrides: DataOverrides = {},
  file = 'config',
): ExperimentData {
  const loader = config.data_loader;
  const dataset = LOADER_DATASETS[loader.type];
  if (!dataset) throw new ConfigError(file, 'data_loader.type', `unsupported data loader '${loader.type}'`);
  const args = loader.args as {
    data_dir?: string;
    imb_factor?: number;
    imb_type?: 'exp' | 'step';
    batch_size?: number;
    balanced?: boolean;
    seed?: number;
    n_max?: number;
    test_per_class?: number;
  };
  // The config's caps, unless the command line gives its own.
  overrides = {
    ...(args.n_max ? { trainMaxPerClass: args.n_max } : {}),
    ...(args.test_per_class ? { testPerClass: args.test_per_class } : {}),
    ...overrides,
  };
  const root = overrides.root ?? (dataset === 'fmnist' ? undefined : args.data_dir);
  const train = loadBuiltin(
    dataset,
    'train',
    root ?? (dataset === 'fmnist' && args.data_dir ? args.data_dir : undefined),
  );
  let test = loadBuiltin(
    dataset,
    'test',
    root ?? (dataset === 'fmnist' && args.data_dir ? args.data_dir : undefined),
  );
  const imbFactor = args.imb_factor ?? 0.01;
  if (!(imbFactor > 0 && imbFactor <= 1))
    throw new ConfigError(file, 'data_loader.args.imb_factor', 'must be in (0, 1], e.g. 0.01 for IR100');
  const subset = longTailSubset(train.labels, train.classes, {
    imbalance: 1 / imbFactor,
    profile: args.imb_type ?? 'exp',
    seed: args.seed ?? 0,
    ...(overrides.trainMaxPerClass ? { nMax: overrides.trainMaxPerClass } : {}),
  });
  const trainSet = selectByIndices(train, subset.indices);
  if (overrides.testPerClass) {
    const keep: number[] = [];
    const seen = new Array<number>(test.classes).fill(0);
    test.labels.forEach((y, i) => {
      if (seen[y]! < overrides.testPerClass!) {
        seen[y]!++;
        keep.push(i);
      }
    });
    test = selectByIndices(test, keep);
  }
  return {
    dataset,
    train: trainSet,
    test,
    subset,
    trainCounts: subset.counts,
    batchSize: args.batch_size ?? 128,
    balancedSampling: args.balanced ?? false,
  };
}

function selectByIndices(ds: ImageDataset, indices: ArrayLike<number>): ImageDataset {
  const size = ds.shape[0] * ds.shape[1] * ds.shape[2];
  const images = new Uint8Array(indices.length * size);
  const labels = new Int32Array(indices.length);
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    images.set(ds.images.subarray(i * size, (i + 1) * size), k * size);
    labels[k] = ds.labels[i]!;
  }
  return { ...ds, images, labels };
}

export function pipelineFor(dataset: BuiltinDataset): 'cifar' | 'fmnist' | 'imagenet' {
  return pipelineKind(dataset);
}

export function buildModel(
  config: TrainConfig,
  inChannels: number,
  classes: number,
  file = 'config',
): MultiExpertBackbone {
  const arch = config.arch;
  const a = arch.args as {
    num_classes?: number;
    num_experts?: number;
    reduce_dimension?: boolean;
    use_norm?: boolean;
    s?: number;
    in_channels?: number;
    layer3_output_dim?: number;
    layer4_output_dim?: number;
    share_layer3?: boolean;
    reduce_first_kernel?: boolean;
    zero_init_residual?: boolean;
  };
  if (a.num_classes !== undefined && a.num_classes !== classes) {
    throw new ConfigError(
      file,
      'arch.args.num_classes',
      `is ${a.num_classes} but the data set has ${classes} classes`,
    );
  }
  switch (arch.type) {
    case 'ResNet32Model':
      return new ResNetCifar({
        classes,
        experts: a.num_experts ?? 1,
        inChannels: a.in_channels ?? inChannels,
        reduceDimension: a.reduce_dimension ?? false,
        normedClassifier: a.use_norm ?? false,
        scale: a.s ?? 30,
      });
    case 'ResNet50Model':
    case 'ResNeXt50Model':
    case 'ResNet152Model':
      return new ResNetImageNet({
        arch: IMAGENET_CONFIG_TYPES[arch.type]!,
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
    default:
      throw new ConfigError(file, 'arch.type', `unsupported architecture '${arch.type}'`);
  }
}

export function buildOptimizer(config: TrainConfig, params: Tensor[]): optim.SGD | optim.AdamW {
  const o = config.optimizer;
  const a = o.args as {
    lr: number;
    momentum?: number;
    weight_decay?: number;
    nesterov?: boolean;
    dampening?: number;
    betas?: number[];
    eps?: number;
    amsgrad?: boolean;
  };
  if (o.type === 'SGD') {
    return new optim.SGD(params, {
      lr: a.lr,
      momentum: a.momentum ?? 0,
      weightDecay: a.weight_decay ?? 0,
      nesterov: a.nesterov ?? false,
      dampening: a.dampening ?? 0,
    });
  }
  return new optim.AdamW(params, {
    lr: a.lr,
    weightDecay: a.weight_decay ?? 0.01,
    ...(a.betas ? { betas: [a.betas[0]!, a.betas[1]!] as [number, number] } : {}),
    ...(a.eps !== undefined ? { eps: a.eps } : {}),
    ...(a.amsgrad !== undefined ? { amsgrad: a.amsgrad } : {}),
  });
}

export function buildScheduler(
  config: TrainConfig,
  optimizer: optim.SGD | optim.AdamW,
): optim.LRScheduler | null {
  if (!config.lr_scheduler) return null;
  return optim.schedulerFromConfig(optimizer, config.lr_scheduler);
}
