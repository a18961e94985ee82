// A long-tail session: the data, model, loss and training system a config describes, built the
// same way for training and for the test commands (which rebuild it from a checkpoint).
import { join } from 'node:path';
import { testTimeViewTransform, testTransform, trainTransform } from '../data/pipelines.js';
import type { ImageTransform } from '../data/augment.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import { NormedLinear } from '../models/heads.js';
import type { optim } from '../../torch/index.js';
import {
  buildPrlSystem,
  plainSystem,
  eaSystem,
  systemParameters,
  type EaSystem,
  headParameters,
  type PrlSystem,
  type System,
} from '../systems/index.js';
import {
  ConfigError,
  isExpertAssignment,
  loadConfig,
  parseConfig,
  type PrlSection,
  type TrainConfig,
} from './config.js';
import {
  buildData,
  buildModel,
  buildOptimizer,
  buildScheduler,
  type DataOverrides,
  type ExperimentData,
} from './experiment.js';
import { createLoss, createPrlLoss } from './losses.js';
import type { AdaptInput } from '../adapt/testtime.js';
import { checksOf } from '../../util/arguments.js';
import { UserError } from '../../util/errors.js';

/**
 * Everything a config builds: the config and its file, the data (train, validation, test splits and their transforms), the model and the trainable system. Needs libtorch.
 */
export interface Session {
  config: TrainConfig;
  file: string;
  data: ExperimentData;
  model: MultiExpertModel;
  system: System;
  trainTransform: ImageTransform;
  testTransform: ImageTransform;
  /** The two-view augmentation of test-time training. */
  viewTransform: ImageTransform;
  overrides: DataOverrides;
}

/**
 * Builds a session from a checked config: loads the data set (with the long-tailed subset the config
 * asks for), creates the multi-expert model and, for PRL, its hypernetwork. Needs libtorch.
 * @param file The config's path (relative data paths are resolved against it).
 * @param overrides Data settings that replace the config's (root, imbalance, ...).
 * @throws {@link ConfigError} or {@link DataFormatError} for a config or data set that cannot be used.
 *
 * @example
 * ```ts
 * import { loadConfig, buildSession, trainSession } from 'tailor/longtail';
 * const session = buildSession(loadConfig('configs/fmnist_lt_ir100_prl.json'), 'configs/fmnist_lt_ir100_prl.json');
 * await trainSession(session, { epochs: 5, seed: 0, runDir: 'runs/demo' });
 * ```
 */
export function buildSession(config: TrainConfig, file: string, overrides: DataOverrides = {}): Session {
  const c = checksOf('buildSession');
  c.object(config, 'config');
  c.string(file, 'file');
  const o = c.object(overrides, 'overrides');
  if (o.root !== undefined) c.string(o.root, 'overrides.root');
  for (const key of ['testPerClass', 'trainMaxPerClass'] as const)
    if (o[key] !== undefined) c.integer(o[key], `overrides.${key}`, { min: 1 });
  const data = buildData(config, overrides, file);
  const model = buildModel(config, data.train.shape[0], data.train.classes, file);
  const experts = model.experts.length;
  const kind = data.pipeline;
  const size = data.imageSize;
  const system: System = isExpertAssignment(config)
    ? eaSystemFromConfig(model, config)
    : config.prl
      ? prlSystemFromConfig(model, config.prl, data.trainCounts, file)
      : plainSystem(
          model,
          createLoss(config.loss.type, config.loss.args, {
            classCounts: data.trainCounts,
            experts,
            epochs: config.trainer.epochs,
            file,
          }),
        );
  return {
    config,
    file,
    data,
    model,
    system,
    trainTransform: trainTransform(kind, {
      ...(size ? { size } : {}),
      ...(data.autoAugment ? { autoAugment: true } : {}),
      ...(data.rotationDegrees ? { rotationDegrees: data.rotationDegrees } : {}),
    }),
    testTransform: testTransform(kind, size),
    viewTransform: testTimeViewTransform(kind, size),
    overrides,
  };
}

/**
 * RIDE-EA from an `*EAModel` arch: the routers' arguments from arch.args (RIDE's defaults). The
 * config's loss section is not used: the routers train with their own BCE, as in RIDE.
 */
function eaSystemFromConfig(model: MultiExpertModel, config: TrainConfig): EaSystem {
  const a = config.arch.args as {
    top_choices_num?: number;
    pos_weight?: number;
    share_expert_help_pred_fc?: boolean;
    force_all?: boolean;
  };
  return eaSystem(model, {
    ...(a.top_choices_num !== undefined ? { topChoices: a.top_choices_num } : {}),
    ...(a.pos_weight !== undefined ? { posWeight: a.pos_weight } : {}),
    ...(a.share_expert_help_pred_fc !== undefined ? { shareFc: a.share_expert_help_pred_fc } : {}),
    ...(a.force_all !== undefined ? { forceAll: a.force_all } : {}),
  });
}

/** PRL from the config's `prl` section: defaults applied, errors naming the config field. */
export function prlSystemFromConfig(
  model: MultiExpertModel,
  prl: PrlSection,
  trainCounts: number[],
  file: string,
): PrlSystem {
  if (model.experts.items.some((e) => !(e.classifier instanceof NormedLinear))) {
    throw new ConfigError(
      file,
      'arch.args.use_norm',
      'PRL generates cosine classifiers: set use_norm to true',
    );
  }
  const variant = prl.variant ?? 'paper';
  const drawsPerBatch = prl.draws_per_batch ?? 1;
  if (variant === 'released' && drawsPerBatch !== 1) {
    throw new ConfigError(
      file,
      'prl.draws_per_batch',
      'the released variant draws one preference per expert call; draws_per_batch applies to the paper variant',
    );
  }
  const loss = createPrlLoss(prl, { classCounts: trainCounts, experts: model.experts.length, file });
  return buildPrlSystem(
    model,
    {
      variant,
      alpha: prl.alpha ?? (variant === 'released' ? 0.5 : 1.2),
      drawsPerBatch,
      hidden: prl.hidden ?? [128, 128, 128],
      generateAffine: prl.generate_norm_affine ?? false,
    },
    loss,
  );
}

/**
 * {@link buildSession} for a config file: reads it ({@link loadConfig}) and builds data, model and system.
 */
export function sessionFromConfigFile(file: string, overrides: DataOverrides = {}): Session {
  return buildSession(loadConfig(file), file, overrides);
}

/** What a checkpoint stores to rebuild its session. */
export interface SessionRecord {
  config: TrainConfig;
  configFile: string;
  overrides: DataOverrides;
  dataset: {
    name: string;
    classes: number;
    trainCounts: number[];
    imbalance: number;
    profile: string;
    seed: number;
    classOrder: number[];
  };
}

export function sessionRecord(s: Session): SessionRecord {
  return {
    config: s.config,
    configFile: s.file,
    overrides: s.overrides,
    dataset: {
      name: s.data.dataset,
      classes: s.data.train.classes,
      trainCounts: s.data.trainCounts,
      imbalance: s.data.subset.imbalance,
      profile: s.data.subset.profile,
      seed: s.data.subset.seed,
      classOrder: s.data.subset.classOrder,
    },
  };
}

export function sessionFromRecord(record: SessionRecord, checkpointFile: string): Session {
  const config = parseConfig(JSON.stringify(record.config), `${checkpointFile} (stored config)`);
  return buildSession(config, record.configFile, record.overrides ?? {});
}

/**
 * The run directory a training run writes when none is given: `<trainer.save_dir or runs>/<name>/<UTC timestamp>`.
 */
export function defaultRunDir(config: TrainConfig): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return join(config.trainer.save_dir ?? 'runs', config.name, stamp);
}

/** The methods whose names say more than their loss's (the loss follows in brackets). */
const METHOD_OF_LOSS: Record<string, string> = {
  DiverseExpertLoss: 'SADE',
  BSExpertLoss: 'BalPoE',
  RIDELoss: 'RIDE',
};

/**
 * The session's name and method as results, compare and reports show them: PRL with its
 * variant, SADE, BalPoE and RIDE by name, a loss with deferred re-weighting as LDAM-DRW or
 * CrossEntropy-DRW (each with its loss in brackets), else the loss.
 */
export function sessionLabel(s: Session): { name: string; method: string } {
  const { config } = s;
  const { type, args } = config.loss;
  const drwEpoch = (args as { reweight_epoch?: number } | undefined)?.reweight_epoch;
  const drw = drwEpoch !== undefined && drwEpoch !== -1;
  const named = METHOD_OF_LOSS[type];
  if (isExpertAssignment(config)) return { name: config.name, method: 'RIDE-EA (expert assignment)' };
  return {
    name: config.name,
    method: config.prl
      ? `PRL (${config.prl.variant ?? 'paper'})`
      : named || drw
        ? `${named ?? type.replace(/Loss$/, '-DRW')} (${type})`
        : type,
  };
}

/** What the training loop needs from the config besides the session's data and system. */
export function trainingSetup(s: Session): {
  optimizer: optim.SGD | optim.Adam | optim.AdamW;
  scheduler: optim.LRScheduler | null;
  mixupAlpha?: number;
  evalPeriod?: number;
  savePeriod?: number;
} {
  const { config } = s;
  const optimizer = buildOptimizer(config, systemParameters(s.system), headParameters(s.system), s.file);
  return {
    optimizer,
    scheduler: buildScheduler(config, optimizer),
    ...(config.mixup ? { mixupAlpha: config.mixup.alpha } : {}),
    ...(config.trainer.eval_period ? { evalPeriod: config.trainer.eval_period } : {}),
    ...(config.trainer.save_period ? { savePeriod: config.trainer.save_period } : {}),
  };
}

/** What test-time adaptation and the controllability grid take from a session. */
export function adaptInput(s: Session): AdaptInput {
  if (s.system.kind === 'ea') {
    // The methods combine or adjust every expert's logits; the routers' choice of experts per
    // image has no place in them, so they are refused rather than run on a different model.
    throw new UserError(
      `${s.config.arch.type}: test-time methods combine every expert's logits and have no place for RIDE-EA's routing; evaluate the run with tailor test or test-all, or run the methods on its stage-1 RIDE run`,
    );
  }
  return {
    system: s.system,
    test: s.data.test,
    testTransform: s.testTransform,
    viewTransform: s.viewTransform,
    trainCounts: s.data.trainCounts,
    val: s.data.val,
  };
}
