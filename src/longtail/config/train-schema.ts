// The zod schema of a training config (TRAIN_CONFIG and its sections: arch, data_loader,
// optimizer, lr_scheduler, trainer, prl), field by field as written. Kept apart from config.ts,
// which parses the text, folds the released keys and checks the fields against one another.
import { z } from 'zod';
import { bool, int, num, obj, oneOfValues, text } from './schema.js';
import { IDEAL_POINT } from './losses.js';
import { EA_ARGS } from './expert-assignment.js';

const PRETRAINED =
  "weights to start training from (.safetensors or a PyTorch .pth): the trunk and every expert's stages; the classifiers keep their initialisation";

const imagenetArchArgs = obj({
  num_classes: int('classes', 1).unwrap(),
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
  use_experts: z.unknown().optional(),
  dropout: z.unknown().optional(),
  pretrained: text(PRETRAINED),
});

const cifarArchArgs = obj({
  num_classes: int('classes', 1).unwrap(),
  reduce_dimension: bool(),
  layer2_output_dim: int(),
  layer3_output_dim: int(),
  use_norm: bool('cosine classifier'),
  returns_feat: bool(),
  num_experts: int('experts', 1),
  s: num('cosine classifier scale'),
  in_channels: int('input channels (1 for Fashion-MNIST)', 1),
  share_layer3: bool(),
  use_experts: z.unknown().optional(),
  pretrained: text(PRETRAINED),
});

/** A `{type, args}` section: one strict object per type, so `args` is typed once `type` is known. */
function typed<const T extends string, A extends z.ZodType>(type: T, args: A) {
  return obj({ type: z.literal(type), args: args.prefault({} as never) });
}
function section<const O extends readonly [z.ZodType, ...z.ZodType[]]>(options: O) {
  return z.discriminatedUnion('type', options as never) as unknown as z.ZodUnion<O>;
}

const ARCH = section([
  typed('ResNet32Model', cifarArchArgs),
  typed('ResNet10Model', imagenetArchArgs),
  typed('ResNet50Model', imagenetArchArgs),
  typed('ResNeXt50Model', imagenetArchArgs),
  typed('ResNet152Model', imagenetArchArgs),
  typed('ResNet32EAModel', cifarArchArgs.extend(EA_ARGS)),
  typed('ResNet10EAModel', imagenetArchArgs.extend(EA_ARGS)),
  typed('ResNet50EAModel', imagenetArchArgs.extend(EA_ARGS)),
  typed('ResNeXt50EAModel', imagenetArchArgs.extend(EA_ARGS)),
]);

const RANDAUGM =
  "BalPoE's long-training augmentation: true = AutoAugment's CIFAR-10 policy after crop and flip (ImbalanceCIFAR100DataLoader; ImbalanceCIFAR10DataLoader, as BalPoE's code, then trains with crop, flip and normalization only); refused for Fashion-MNIST";
const RANDAUGM_LISTS =
  "BalPoE's long-training augmentation of the ImageNet-LT / iNaturalist loaders (aug_plus, PaCo's recipe): true = RandomResizedCrop(scale 0.08..1), flip, colour jitter 0.4, then RandAugment rand-n2-m10-mstd0.5 (two of 15 operations, each with probability 0.5, magnitude N(10, 0.5) clipped to 10, fill the ImageNet mean); the test transform stays Resize + CenterCrop; refused for the Places-LT loaders (BalPoE has none)";

const imbalanceLoaderArgs = obj({
  data_dir: text('directory of the data set'),
  batch_size: int('batch size', 1),
  shuffle: bool(),
  num_workers: int(),
  imb_factor: num('1 / imbalance ratio, e.g. 0.01 for IR100', { min: 0, max: 1 }),
  imb_type: oneOfValues(['exp', 'step']),
  training: bool(),
  randaugm: bool(RANDAUGM),
  test_imb_factor: num('test-set imbalance (test-time training)'),
  reverse: bool(),
  validation_split: num(),
  retain_epoch_size: bool(),
  balanced: bool('class-balanced sampling'),
  on_device: z
    .union([z.boolean(), z.literal('auto')])
    .optional()
    .describe(
      "draw training batches on the model's device (true), on the host (false) or on the device when it is a GPU (auto, the default); see docs/gpus.md",
    ),
  seed: int('subsampling seed'),
  n_max: int('images of the head class (default: all the balanced set has)', 1),
  test_per_class: int('use only this many test images per class', 1),
  validation_per_class: int('validation images per class held out of the training pool (default 20)', 1),
});

/** The image-list loaders (ImageNet-LT, Places-LT, iNaturalist 2018): a root and txt lists. */
const imageListLoaderArgs = obj({
  data_dir: z.string().describe('image root; the list paths are relative to it'),
  batch_size: int('batch size', 1),
  shuffle: bool(),
  num_workers: int(
    'worker threads that decode and augment training batches, as in a PyTorch DataLoader (0: the training thread; capped to the cores)',
    0,
  ),
  prefetch_factor: int('training batches built ahead per worker (default 2, as PyTorch)', 1),
  skip_corrupt: bool('leave unreadable or truncated images out of their batch (counted) instead of failing'),
  training: bool(),
  randaugm: bool(RANDAUGM_LISTS),
  balanced: bool('class-balanced sampling'),
  retain_epoch_size: bool(),
  train_txt: text('training list (absolute, relative to data_dir or to the working directory)'),
  val_txt: text('list evaluated after every epoch (default: the test list if none is found)'),
  eval_txt: text('same as val_txt (the name of the Places/iNaturalist loaders)'),
  test_txt: text('test list'),
  image_size: int('crop size of the transforms (224)', 1),
  resize_size: int('decode size: Resize before CenterCrop at test time (256)', 1),
  skip_missing: bool('drop list lines whose image is missing (with a warning) instead of failing'),
  n_max: int('use at most this many training images per class (quick runs)', 1),
  test_per_class: int('use only this many test images per class', 1),
  validation_per_class: int(
    'without a val list: validation images per class held out of the training list (default 20)',
    1,
  ),
});

const DATA_LOADER = section([
  typed('ImbalanceCIFAR100DataLoader', imbalanceLoaderArgs),
  typed('ImbalanceCIFAR10DataLoader', imbalanceLoaderArgs),
  typed('ImbalanceFashionMNISTDataLoader', imbalanceLoaderArgs),
  // the image-list loaders need data_dir, so their args are required
  obj({ type: z.literal('ImageNetLTDataLoader'), args: imageListLoaderArgs }),
  obj({ type: z.literal('iNaturalistDataLoader'), args: imageListLoaderArgs }),
  // SADE's class name, and the longer spelling
  obj({ type: z.literal('Places_LT'), args: imageListLoaderArgs }),
  obj({ type: z.literal('Places_LT_DataLoader'), args: imageListLoaderArgs }),
]);

const beta = z.number().min(0).lt(1);

const adamArgs = obj({
  lr: num('learning rate', { min: 0 }).unwrap(),
  weight_decay: num(undefined, { min: 0 }),
  betas: z.tuple([beta, beta]).optional(),
  eps: num(undefined, { min: 0 }),
  amsgrad: bool(),
});

const OPTIMIZER = section([
  obj({
    type: z.literal('SGD'),
    args: obj({
      lr: num('learning rate', { min: 0 }).unwrap(),
      momentum: num(undefined, { min: 0 }),
      weight_decay: num(undefined, { min: 0 }),
      nesterov: bool('Nesterov momentum (needs momentum > 0 and no dampening)'),
      dampening: num(),
      share_lr: num(
        'learning rate of everything but the classifiers (and the hypernetwork), which keep lr: fine-tuning pretrained weights, as SADE trains Places-LT',
        { min: 0 },
      ),
    }),
  }),
  // Adam's weight_decay is L2 (added to the gradient, default 0); AdamW's is decoupled (default 0.01).
  obj({ type: z.literal('Adam'), args: adamArgs }),
  obj({ type: z.literal('AdamW'), args: adamArgs }),
]);

// The arguments the schedulers need are required here, so a config missing one fails when it is
// loaded rather than when training starts, after the data was read.
const SCHEDULER = section([
  typed(
    'CustomLR',
    obj({
      step1: int('x gamma after this epoch').unwrap(),
      step2: int('x gamma again after this epoch').unwrap(),
      gamma: num(),
      warmup_epoch: int('linear warm-up epochs').unwrap(),
    }),
  ),
  typed('MultiStepLR', obj({ milestones: z.array(z.int().min(0)).describe('epochs'), gamma: num() })),
  typed('CosineAnnealingLR', obj({ T_max: int('epochs of the half cosine', 1).unwrap(), eta_min: num() })),
  typed('StepLR', obj({ step_size: int('epochs between x gamma', 1).unwrap(), gamma: num() })),
]);

export const TRAINER = obj({
  epochs: int('number of epochs', 1).unwrap(),
  save_dir: text(),
  save_period: int(),
  verbosity: int(),
  monitor: text(),
  tensorboard: bool(),
  early_stop: int(),
  eval_period: int('evaluate every N epochs', 1),
  threads: int('libtorch threads', 1),
  channels_last: bool(
    'lay out the convolution weights and every batch channels-last (NHWC): faster GPU convolutions, most of all with --amp bf16; --channels-last / --no-channels-last override it',
  ),
  cudnn_benchmark: bool(
    "cuDNN's autotuner while training on a GPU (torch.backends.cudnn.benchmark): each convolution shape times the algorithms once and keeps the fastest (default true; no effect on the CPU)",
  ),
  branch_streams: bool(
    "in graph mode, the step's independent parts (each expert, each of PRL's preference draws) on CUDA streams of their own, so their kernels run side by side on the GPU (default true; the same arithmetic; no effect eagerly or on the CPU)",
  ),
});

export const PRL = obj({
  variant: oneOfValues(
    ['paper', 'released'],
    "'paper': the preference reaches the loss through the scalarization; 'released': the released code",
  ),
  alpha: num('Dirichlet concentration of the preference', { min: 0 }),
  scalarization: oneOfValues(['stch', 'linear']),
  mu: num('smoothing of the Tchebycheff scalarization', { min: 0 }),
  z: IDEAL_POINT,
  hidden: z.array(z.int().min(1)).optional(),
  generate_norm_affine: bool('also generate the last normalization layer affine parameters'),
  // The objective is the expectation over r of the scalarized loss; several draws per batch
  // estimate it with less noise, and the backbone's features are computed once for all of them.
  draws_per_batch: int('preferences drawn per batch (default 1)', 1),
  expert_losses: z.array(obj({ type: z.enum(['forward', 'uniform', 'backward']), tau: num() })).optional(),
});

/**
 * The training config as written, in the structure of the SADE / BalPoE / PRL reference code,
 * with the released PRL keys (use_hnet, Solvers).
 */
export const TRAIN_CONFIG = obj({
  $schema: text('the JSON Schema of this file (for editors)'),
  name: z.string(),
  n_gpu: int(),
  device: text("'cpu', 'cuda' or 'cuda:N' (default: cuda when n_gpu >= 1, else cpu)"),
  seed: int('global seed'),
  arch: ARCH,
  data_loader: DATA_LOADER,
  optimizer: OPTIMIZER,
  loss: obj({
    type: z.string(),
    // checked against the loss type's arguments when the loss is built (see losses.ts)
    args: z.record(z.string(), z.unknown()).prefault({}),
    // BalPoE keeps these beside args
    tau_min: num(),
    tau_max: num(),
    return_expert_losses: bool(),
  }),
  // the released PRL configs: a hypernetwork switch and the solver of the expert losses
  use_hnet: bool('released PRL: train with the hypernetwork (maps to prl.variant "released")'),
  Solvers: obj({ name: text(), mu: num(), Z: num() }).optional(),
  lr_scheduler: SCHEDULER.optional(),
  add_extra_info: bool(),
  // the reference configs list their metrics; accuracy and the shot groups are always reported
  metrics: z.array(z.string()).optional(),
  mixup: obj({ alpha: num('Beta(alpha, alpha) mixing', { min: 0 }).unwrap() }).optional(),
  // BalPoE's spelling of mixup: {type: "Combiner", mode: "mixup", mixup: {alpha}}
  combiner: obj({
    type: z.literal('Combiner').optional(),
    mode: oneOfValues(
      ['default', 'mixup', 'cutmix'],
      "BalPoE's batch combiner (default: none; mixup: Beta(alpha, alpha))",
    ),
    mixup: obj({ alpha: num(undefined, { min: 0 }), cutmix_alpha: num(undefined, { min: 0 }) }).optional(),
  }).optional(),
  prl: PRL.optional(),
  // RIDE's distillation: a teacher model (distill_arch) and its weights (a tailor run's)
  distill: bool("distil from a teacher (RIDE's RIDELossWithDistill)"),
  distill_arch: ARCH.optional(),
  distill_checkpoint: text(
    "the teacher's weights: a tailor run directory, its checkpoint (.json or .safetensors), or a state dict (.safetensors or a PyTorch .pth)",
  ),
  // RIDE-EA (an *EAModel arch): the trained RIDE model whose routers are trained
  stage1_checkpoint: text(
    'RIDE-EA: the trained RIDE model (its every weight, classifiers included; the routers start fresh): a tailor run directory, its checkpoint (.json or .safetensors), or a state dict (.safetensors or a PyTorch .pth)',
  ),
  resume_state_dict_only: bool(
    "RIDE's flag for starting RIDE-EA from the stage-1 weights (stage1_checkpoint)",
  ),
  trainer: TRAINER,
});
