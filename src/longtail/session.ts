// A long-tail session: the data, model, loss and training system a config describes, built the
// same way for training and for the test commands (which rebuild it from a checkpoint).
import { join } from 'node:path';
import { createLoss } from './losses/index.js';
import { loadConfig, parseConfig, type TrainConfig } from './config/config.js';
import { buildData, buildModel, type DataOverrides, type ExperimentData } from './experiment.js';
import { plainSystem, type TrainableSystem } from './system.js';
import { testTimeViewTransform, testTransform, trainTransform } from './data/pipelines.js';
import type { ImageTransform } from './data/augment.js';
import type { MultiExpertBackbone } from './models/resnet_imagenet.js';
import { buildPrlSystem } from './prl/system.js';

export interface Session {
  config: TrainConfig;
  file: string;
  data: ExperimentData;
  model: MultiExpertBackbone;
  system: TrainableSystem;
  trainTransform: ImageTransform;
  testTransform: ImageTransform;
  /** The two-view augmentation of test-time training. */
  viewTransform: ImageTransform;
  overrides: DataOverrides;
}

export function buildSession(config: TrainConfig, file: string, overrides: DataOverrides = {}): Session {
  const data = buildData(config, overrides, file);
  const model = buildModel(config, data.train.shape[0], data.train.classes, file);
  const experts = model.experts.length;
  const kind = data.pipeline;
  const size = data.imageSize;
  const system = config.prl
    ? buildPrlSystem(model, config.prl, data.trainCounts, file)
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
    trainTransform: trainTransform(kind, size ? { size } : {}),
    testTransform: testTransform(kind, size),
    viewTransform: testTimeViewTransform(kind, size),
    overrides,
  };
}

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

export function defaultRunDir(config: TrainConfig): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return join(config.trainer.save_dir ?? 'runs', config.name, stamp);
}
