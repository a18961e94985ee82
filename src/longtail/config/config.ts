// Training configs in the structure of the SADE / BalPoE / PRL reference code (name, arch,
// data_loader, optimizer, loss, lr_scheduler, trainer), accepting their type names, plus the
// few sections of our own (mixup, prl, seed). Loaded and checked before anything runs.
import { readFileSync } from 'node:fs';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import {
  ConfigError,
  bool,
  int,
  num,
  obj,
  required,
  str,
  suggestion,
  validate,
  type Schema,
} from './schema.js';
import { IDEAL_POINT, LOSS_TYPES } from './losses.js';

export interface TypedSection<A = Record<string, unknown>> {
  type: string;
  args: A;
}

export interface TrainConfig {
  name: string;
  n_gpu?: number;
  seed?: number;
  arch: TypedSection;
  data_loader: TypedSection;
  optimizer: TypedSection;
  loss: TypedSection;
  lr_scheduler?: TypedSection;
  add_extra_info?: boolean;
  mixup?: { alpha: number };
  prl?: PrlSection;
  trainer: {
    epochs: number;
    save_dir?: string;
    save_period?: number;
    verbosity?: number;
    monitor?: string;
    tensorboard?: boolean;
    early_stop?: number;
    eval_period?: number;
    threads?: number;
  };
}

export interface PrlSection {
  /** 'paper': the preference reaches the loss through the scalarization; 'released': the released code. */
  variant?: 'paper' | 'released';
  alpha?: number;
  /** 'stch' or 'linear' (a PRLLoss's args may also name the released solvers: 'ls', 'released_stch', 'sum'). */
  scalarization?: 'stch' | 'linear' | 'ls' | 'released_stch' | 'sum';
  mu?: number;
  /** Ideal point: a number, one per expert, or 'running_min' (the lowest loss each expert reached). */
  z?: number | number[] | 'running_min';
  hidden?: number[];
  generate_norm_affine?: boolean;
  /**
   * Preferences drawn per batch (default 1). The objective is the expectation over r of the
   * scalarized loss; several draws per batch estimate it with less noise, and the backbone's
   * features are computed once for all of them.
   */
  draws_per_batch?: number;
  expert_losses?: { type: 'forward' | 'uniform' | 'backward'; tau?: number }[];
}

const imagenetArchArgs = obj({
  num_classes: required(int('classes', 1)),
  num_experts: int('experts', 1),
  reduce_dimension: bool(),
  layer3_output_dim: int(),
  layer4_output_dim: int(),
  use_norm: bool('cosine classifier'),
  s: num('cosine classifier scale'),
  returns_feat: bool(),
  share_layer3: bool(),
  reduce_first_kernel: bool(),
  zero_init_residual: bool(),
  in_channels: int('input channels', 1),
  use_experts: { kind: 'any', optional: true },
  dropout: { kind: 'any', optional: true },
});

export const ARCH_TYPES: Record<string, Schema> = {
  ResNet50Model: imagenetArchArgs,
  ResNeXt50Model: imagenetArchArgs,
  ResNet152Model: imagenetArchArgs,
  ResNet32Model: obj({
    num_classes: required(int('classes', 1)),
    reduce_dimension: bool(),
    layer2_output_dim: int(),
    layer3_output_dim: int(),
    use_norm: bool('cosine classifier'),
    returns_feat: bool(),
    num_experts: int('experts', 1),
    s: num('cosine classifier scale'),
    in_channels: int('input channels (1 for Fashion-MNIST)', 1),
    share_layer3: bool(),
    use_experts: { kind: 'any', optional: true },
  }),
};

const imbalanceLoaderArgs: Record<string, Schema> = {
  data_dir: str(undefined, 'directory of the data set'),
  batch_size: int('batch size', 1),
  shuffle: bool(),
  num_workers: int(),
  imb_factor: num('1 / imbalance ratio, e.g. 0.01 for IR100', { min: 0, max: 1 }),
  imb_type: str(['exp', 'step'] as const),
  training: bool(),
  randaugm: bool(),
  test_imb_factor: num('test-set imbalance (test-time training)'),
  reverse: bool(),
  validation_split: num(),
  retain_epoch_size: bool(),
  balanced: bool('class-balanced sampling'),
  seed: int('subsampling seed'),
  n_max: int('images of the head class (default: all the balanced set has)', 1),
  test_per_class: int('use only this many test images per class', 1),
};

/** The image-list loaders (ImageNet-LT, Places-LT, iNaturalist 2018): a root and txt lists. */
const imageListLoaderArgs: Record<string, Schema> = {
  data_dir: required(str(undefined, 'image root; the list paths are relative to it')),
  batch_size: int('batch size', 1),
  shuffle: bool(),
  num_workers: int('accepted for compatibility; images are decoded on libuv threads (UV_THREADPOOL_SIZE)'),
  training: bool(),
  balanced: bool('class-balanced sampling'),
  retain_epoch_size: bool(),
  train_txt: str(undefined, 'training list (absolute, relative to data_dir or to the working directory)'),
  val_txt: str(undefined, 'list evaluated after every epoch (default: the test list if none is found)'),
  eval_txt: str(undefined, 'same as val_txt (the name of the Places/iNaturalist loaders)'),
  test_txt: str(undefined, 'test list'),
  image_size: int('crop size of the transforms (224)', 1),
  resize_size: int('decode size: Resize before CenterCrop at test time (256)', 1),
  skip_missing: bool('drop list lines whose image is missing (with a warning) instead of failing'),
  n_max: int('use at most this many training images per class (quick runs)', 1),
  test_per_class: int('use only this many test images per class', 1),
};

export const DATA_LOADER_TYPES: Record<string, Schema> = {
  ImbalanceCIFAR100DataLoader: obj(imbalanceLoaderArgs),
  ImbalanceCIFAR10DataLoader: obj(imbalanceLoaderArgs),
  ImbalanceFashionMNISTDataLoader: obj(imbalanceLoaderArgs),
  ImageNetLTDataLoader: obj(imageListLoaderArgs),
  iNaturalistDataLoader: obj(imageListLoaderArgs),
  // SADE's class name, and the longer spelling
  Places_LT: obj(imageListLoaderArgs),
  Places_LT_DataLoader: obj(imageListLoaderArgs),
};

export const OPTIMIZER_TYPES: Record<string, Schema> = {
  SGD: obj({
    lr: required(num('learning rate', { min: 0 })),
    momentum: num(),
    weight_decay: num(),
    nesterov: bool(),
    dampening: num(),
  }),
  AdamW: obj({
    lr: required(num('learning rate', { min: 0 })),
    weight_decay: num(),
    betas: { kind: 'array', items: { kind: 'number' }, optional: true },
    eps: num(),
    amsgrad: bool(),
  }),
};

export const SCHEDULER_TYPES: Record<string, Schema> = {
  CustomLR: obj({ step1: int(), step2: int(), gamma: num(), warmup_epoch: int() }),

  MultiStepLR: obj({ milestones: { kind: 'array', items: { kind: 'number' } }, gamma: num() }),
  CosineAnnealingLR: obj({ T_max: int(), eta_min: num() }),
  StepLR: obj({ step_size: int(), gamma: num() }),
};

const trainerSchema = obj(
  {
    epochs: required(int('number of epochs', 1)),
    save_dir: str(),
    save_period: int(),
    verbosity: int(),
    monitor: str(),
    tensorboard: bool(),
    early_stop: int(),
    eval_period: int('evaluate every N epochs', 1),
    threads: int('libtorch threads', 1),
  },
  false,
);

const typed = (types: Record<string, Schema>, optional = false): Schema =>
  obj({ type: required(str(Object.keys(types))), args: { kind: 'any', optional: true } }, optional);

const topLevel: Schema = obj(
  {
    name: required(str()),
    n_gpu: int(),
    seed: int('global seed'),
    arch: typed(ARCH_TYPES),
    data_loader: typed(DATA_LOADER_TYPES),
    optimizer: typed(OPTIMIZER_TYPES),
    loss: obj(
      {
        type: required(str()),
        args: { kind: 'any', optional: true },
        // BalPoE keeps these beside args
        tau_min: num(),
        tau_max: num(),
        return_expert_losses: bool(),
      },
      false,
    ),
    // the released PRL configs: a hypernetwork switch and the solver of the expert losses
    use_hnet: bool('released PRL: train with the hypernetwork (maps to prl.variant "released")'),
    Solvers: obj({ name: str(), mu: num(), Z: num() }),
    lr_scheduler: typed(SCHEDULER_TYPES, true),
    add_extra_info: bool(),
    // the reference configs list their metrics; accuracy and the shot groups are always reported
    metrics: { kind: 'array', items: { kind: 'string' }, optional: true },
    mixup: obj({ alpha: required(num('Beta(alpha, alpha) mixing', { min: 0 })) }),
    prl: obj({
      variant: str(['paper', 'released'] as const),
      alpha: num('Dirichlet concentration of the preference', { min: 0 }),
      scalarization: str(['stch', 'linear'] as const),
      mu: num('smoothing of the Tchebycheff scalarization', { min: 0 }),
      z: IDEAL_POINT,
      hidden: { kind: 'array', items: { kind: 'number', integer: true, min: 1 }, optional: true },
      generate_norm_affine: bool('also generate the last normalization layer affine parameters'),
      draws_per_batch: int('preferences drawn per batch', 1),
      expert_losses: {
        kind: 'array',
        optional: true,
        items: obj({ type: required(str(['forward', 'uniform', 'backward'] as const)), tau: num() }, false),
      },
    }),
    trainer: trainerSchema,
  },
  false,
);

/** Where the first JSON syntax error is, as :line:column (jsonc-parser reports offsets). */
function jsonErrorLocation(text: string): string {
  const errors: ParseError[] = [];
  parseJsonc(text, errors, { allowTrailingComma: false, disallowComments: true });
  const first = errors[0];
  if (!first) return '';
  const before = text.slice(0, first.offset);
  const line = before.split('\n').length;
  const column = first.offset - before.lastIndexOf('\n');
  return `:${line}:${column}`;
}

/** Parses JSON text; a syntax error is a ConfigError naming file:line:column. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    throw new ConfigError(`${file}${jsonErrorLocation(text)}`, '', `invalid JSON: ${message}`);
  }
}

/** Reads and parses a JSON config file, with errors that name the file (and line:column). */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, '', `cannot read the config: ${(error as Error).message}`);
  }
  return parseJsonText(text, file);
}

export function parseConfig(text: string, file: string): TrainConfig {
  return checkConfig(parseJsonText(text, file), file);
}

function checkConfig(raw: unknown, file: string): TrainConfig {
  validate(topLevel, raw, file);
  const config = raw as TrainConfig;
  const checkArgs = (
    section: 'arch' | 'data_loader' | 'optimizer' | 'lr_scheduler',
    types: Record<string, Schema>,
  ) => {
    const s = config[section];
    if (!s) return;
    const schema = types[s.type];
    if (!schema)
      throw new ConfigError(
        file,
        `${section}.type`,
        `unknown type '${s.type}'${suggestion(s.type, Object.keys(types))}`,
      );
    s.args ??= {};
    validate(schema, s.args, file, `${section}.args`);
  };
  checkArgs('arch', ARCH_TYPES);
  checkArgs('data_loader', DATA_LOADER_TYPES);
  checkArgs('optimizer', OPTIMIZER_TYPES);
  checkArgs('lr_scheduler', SCHEDULER_TYPES);
  config.loss.args ??= {};
  const released = raw as { use_hnet?: boolean; Solvers?: { name?: string; mu?: number; Z?: number } };
  if (released.use_hnet && !config.prl) {
    config.prl = {
      variant: 'released',
      ...(released.Solvers?.name
        ? { scalarization: released.Solvers.name === 'ls' ? 'linear' : 'stch' }
        : {}),
      ...(released.Solvers?.mu !== undefined ? { mu: released.Solvers.mu } : {}),
      ...(released.Solvers?.Z !== undefined ? { z: released.Solvers.Z } : {}),
    };
  }
  if ((config.loss.type === 'PRLLoss' || config.loss.type === 'PRL') && !config.prl) {
    // The preference that PRLLoss scalarizes with is drawn by the PRL system (hypernetwork), so
    // a PRL loss without a prl section trains PRL with the loss's arguments.
    validate(LOSS_TYPES.PRLLoss!, config.loss.args, file, 'loss.args');
    const a = config.loss.args as Record<string, unknown>;
    const pick = <K extends keyof PrlSection>(key: K, value: unknown) =>
      value === undefined ? {} : ({ [key]: value } as Pick<PrlSection, K>);
    config.prl = {
      ...pick('variant', a.variant),
      ...pick('scalarization', a.scalarization),
      ...pick('mu', a.mu),
      ...pick('z', a.z ?? a.Z),
      ...pick('expert_losses', a.expert_losses),
    };
  }
  return config;
}

export function loadConfig(file: string): TrainConfig {
  return checkConfig(readJsonFile(file), file);
}

export { ConfigError };
