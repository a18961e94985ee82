// The JSON configuration of `tailor nmr train`: the defaults (the 2.7 M-parameter U-Net, the
// loss weights, stage A 40 + stage B 50 epochs, AdamW with warm-up and cosine decay), and a
// validation that names the offending field and says what is expected.
import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { InputError, UserError } from '../../util/errors.js';
import { DeviceUnavailableError, parseDevice } from '../../torch/device.js';
import { DEFAULT_UNET, resolveUNetConfig, type UNetConfig } from '../model/unet.js';
import { SEED_LOSS_WEIGHTS, type LossWeights } from './losses.js';

export type TargetKind = 'pseudo' | 'last' | 'truth';

export interface DataConfig {
  /**
   * Training sources: folders written by `tailor nmr simulate`, or experiments JSON files listing
   * the user's own multi-SNR measurements per sample (src/nmr/data/experiments.ts).
   */
  train: string[];
  /** Validation sources; if absent, the last valFraction of the training samples. */
  val: string[] | null;
  valFraction: number;
  maxSamples: number | null;
  /** Training windows of this many points (one window per sample and step, shared by its levels); 0 = whole spectra. */
  crop: number;
  /**
   * Supervised target: the SNR-weighted fusion of the other levels (pseudo ground truth), level K
   * only, or the simulator's truth.
   */
  target: TargetKind;
  /**
   * Peak mask of the loss weighting and baseline terms: the pipeline's estimate from the stack
   * (the thresholded maximum over the levels), or, for synthetic data, the simulator's true peak
   * mask (its complement eroded by 2 points is the baseline), which also covers weak peaks the
   * estimate misses.
   */
  peakMask: 'estimate' | 'truth';
  /** Amplitude rescaling of each level onto the highest-SNR one, or 'none' (ablation). */
  rescale: 'huber' | 'inverse' | 'seed' | 'none';
  localAlign: boolean;
  fusion: { scheme: 'snr' | 'T'; gamma: number; wMax: number };
  /** T of the residual-ratio constraint: per-sample estimate from the sigmas, the data set's ratio, or a number. */
  T: 'estimate' | 'manifest' | number;
}

export interface StageConfig {
  epochs: number;
  /** Loss weights of this stage (missing ones come from SEED_LOSS_WEIGHTS). */
  loss: LossWeights;
  /** Levels k > 0 drawn per sample for consistency / T (stage A: 1-2; 'all' = every level). */
  extraLevels: [number, number] | 'all';
  /** Stage B: epochs over which the lowest eligible k goes from K - 1 down to 1 (0 = no curriculum). */
  curriculumEpochs: number;
  /** Stage B: peak weight and lambda_2 at the end of the stage (linear from loss.* over the stage). */
  peakWeightEnd: number | null;
  curvEnd: number | null;
}

export interface OptimConfig {
  lr: number;
  weightDecay: number;
  warmupEpochs: number;
  minLrFactor: number;
  /** Clip the global gradient norm to this (0 = off). */
  gradClip: number;
}

/**
 * A checked NMR training config (see {@link loadConfig}): name, output, seed, threads, device,
 * data, model, loss terms, optimisation stages.
 */
export interface NmrTrainConfig {
  name: string;
  out: string;
  seed: number;
  threads: number;
  /** 'cpu', 'cuda' or 'cuda:N' (optional; --device overrides it). */
  device?: string;
  data: DataConfig;
  model: UNetConfig;
  stageA: StageConfig;
  stageB: StageConfig;
  optim: OptimConfig;
  /** Samples per batch; each brings its level 0 and its drawn levels k > 0. */
  batchSamples: number;
  /** Optimizer steps per epoch (0 = one pass over the training samples). */
  stepsPerEpoch: number;
  logEvery: number;
  checkpointEvery: number;
}

export const DEFAULT_CONFIG: Omit<NmrTrainConfig, 'data' | 'out'> & { data: Omit<DataConfig, 'train'> } = {
  name: 'nmr-unet',
  seed: 0,
  threads: 2,
  data: {
    val: null,
    valFraction: 0.1,
    maxSamples: null,
    crop: 2048,
    target: 'pseudo',
    peakMask: 'estimate',
    rescale: 'huber',
    localAlign: false,
    fusion: { scheme: 'snr', gamma: 1, wMax: 0.7 },
    T: 'estimate',
  },
  model: DEFAULT_UNET,
  stageA: {
    epochs: 40,
    loss: { ...SEED_LOSS_WEIGHTS, ratio: 0 },
    extraLevels: [1, 2],
    curriculumEpochs: 0,
    peakWeightEnd: null,
    curvEnd: null,
  },
  stageB: {
    epochs: 50,
    loss: { ...SEED_LOSS_WEIGHTS, cons: 1, ratio: 0.5 },
    extraLevels: 'all',
    curriculumEpochs: 20,
    peakWeightEnd: null,
    curvEnd: 0.05,
  },
  optim: { lr: 3e-4, weightDecay: 1e-4, warmupEpochs: 5, minLrFactor: 0.01, gradClip: 1 },
  batchSamples: 4,
  stepsPerEpoch: 0,
  logEvery: 20,
  checkpointEvery: 1,
};

type Json = Record<string, unknown>;

/** A field of the config that cannot be used; resolveConfig adds the file (as an NmrConfigError). */
class ConfigError extends UserError {}

/** A training config that cannot be read or used; the message names the file and the field. */
export class NmrConfigError extends InputError {}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(obj: Json, allowed: string[], where: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key))
      throw new ConfigError(`${where}.${key}: unknown field (allowed: ${allowed.join(', ')})`);
  }
}

function num(
  obj: Json,
  key: string,
  fallback: number,
  where: string,
  min = -Infinity,
  max = Infinity,
): number {
  const v = obj[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
    throw new ConfigError(`${where}.${key}: expected a number in [${min}, ${max}], got ${JSON.stringify(v)}`);
  return v;
}

function int(obj: Json, key: string, fallback: number, where: string, min = 0): number {
  const v = num(obj, key, fallback, where, min);
  if (!Number.isInteger(v)) throw new ConfigError(`${where}.${key}: expected an integer, got ${v}`);
  return v;
}

function oneOf<T extends string>(
  obj: Json,
  key: string,
  fallback: T,
  options: readonly T[],
  where: string,
): T {
  const v = obj[key] ?? fallback;
  if (typeof v !== 'string' || !options.includes(v as T))
    throw new ConfigError(`${where}.${key}: expected one of ${options.join(', ')}, got ${JSON.stringify(v)}`);
  return v as T;
}

function section(obj: Json, key: string, where: string): Json {
  const v = obj[key] ?? {};
  if (!isObject(v)) throw new ConfigError(`${where}.${key}: expected an object`);
  return v;
}

function lossWeights(raw: Json, base: LossWeights, where: string): LossWeights {
  checkKeys(raw, Object.keys(SEED_LOSS_WEIGHTS), where);
  const out = {} as LossWeights;
  for (const k of Object.keys(SEED_LOSS_WEIGHTS) as (keyof LossWeights)[])
    out[k] = num(raw, k, base[k] ?? 0, where, 0);
  return out;
}

function stage(raw: Json, base: StageConfig, where: string): StageConfig {
  checkKeys(raw, ['epochs', 'loss', 'extraLevels', 'curriculumEpochs', 'peakWeightEnd', 'curvEnd'], where);
  const extra = raw.extraLevels ?? base.extraLevels;
  if (
    extra !== 'all' &&
    !(
      Array.isArray(extra) &&
      extra.length === 2 &&
      extra.every((v) => Number.isInteger(v) && v >= 0) &&
      extra[0] <= extra[1]
    )
  )
    throw new ConfigError(
      `${where}.extraLevels: expected "all" or [min, max] with 0 <= min <= max, got ${JSON.stringify(extra)}`,
    );
  const nullableNum = (key: 'peakWeightEnd' | 'curvEnd'): number | null =>
    raw[key] === null ? null : raw[key] === undefined ? base[key] : num(raw, key, 0, where, 0);
  return {
    epochs: int(raw, 'epochs', base.epochs, where),
    loss: lossWeights(section(raw, 'loss', where), base.loss, `${where}.loss`),
    extraLevels: extra as StageConfig['extraLevels'],
    curriculumEpochs: int(raw, 'curriculumEpochs', base.curriculumEpochs, where),
    peakWeightEnd: nullableNum('peakWeightEnd'),
    curvEnd: nullableNum('curvEnd'),
  };
}

function deviceField(v: unknown): string {
  // The tensor library's parser reads the name; whether the device exists is checked when used.
  try {
    if (typeof v === 'string') return parseDevice(v).name;
  } catch (error) {
    if (!(error instanceof DeviceUnavailableError)) throw error;
  }
  throw new ConfigError(`config.device: expected "cpu", "cuda" or "cuda:N", got ${JSON.stringify(v)}`);
}

/** A path field, resolved against baseDir when relative. */
function pathField(v: unknown, where: string, baseDir: string): string {
  if (typeof v !== 'string' || v === '') throw new ConfigError(`${where}: expected a path string`);
  return isAbsolute(v) ? v : resolve(baseDir, v);
}

/** A path or a non-empty list of paths. */
function pathsField(v: unknown, where: string, baseDir: string): string[] {
  if (Array.isArray(v)) {
    if (v.length === 0) throw new ConfigError(`${where}: expected a path or a non-empty list of paths`);
    return v.map((p, i) => pathField(p, `${where}[${i}]`, baseDir));
  }
  return [pathField(v, where, baseDir)];
}

const CONFIG_FIELDS = [
  'name',
  'out',
  'seed',
  'threads',
  'device',
  'data',
  'model',
  'stageA',
  'stageB',
  'optim',
  'batchSamples',
  'stepsPerEpoch',
  'logEvery',
  'checkpointEvery',
  '$comment',
];

const DATA_FIELDS = [
  'train',
  'val',
  'valFraction',
  'maxSamples',
  'crop',
  'target',
  'peakMask',
  'rescale',
  'localAlign',
  'fusion',
  'T',
];

function dataConfig(dataRaw: Json, baseDir: string): DataConfig {
  const d = DEFAULT_CONFIG.data;
  checkKeys(dataRaw, DATA_FIELDS, 'config.data');
  const fusionRaw = section(dataRaw, 'fusion', 'config.data');
  checkKeys(fusionRaw, ['scheme', 'gamma', 'wMax'], 'config.data.fusion');
  const T = dataRaw.T ?? d.T;
  if (!(T === 'estimate' || T === 'manifest' || (typeof T === 'number' && T > 1)))
    throw new ConfigError(
      `config.data.T: expected "estimate", "manifest" or a number > 1, got ${JSON.stringify(T)}`,
    );
  const crop = int(dataRaw, 'crop', d.crop, 'config.data');
  if (crop !== 0 && crop < 16)
    throw new ConfigError(`config.data.crop: expected 0 (whole spectra) or >= 16, got ${crop}`);
  return {
    train: pathsField(dataRaw.train, 'config.data.train', baseDir),
    val:
      dataRaw.val === undefined || dataRaw.val === null
        ? null
        : pathsField(dataRaw.val, 'config.data.val', baseDir),
    valFraction: num(dataRaw, 'valFraction', d.valFraction, 'config.data', 0, 0.9),
    maxSamples:
      dataRaw.maxSamples === undefined || dataRaw.maxSamples === null
        ? null
        : int(dataRaw, 'maxSamples', 0, 'config.data', 1),
    crop,
    target: oneOf(dataRaw, 'target', d.target, ['pseudo', 'last', 'truth'] as const, 'config.data'),
    peakMask: oneOf(dataRaw, 'peakMask', d.peakMask, ['estimate', 'truth'] as const, 'config.data'),
    rescale: oneOf(
      dataRaw,
      'rescale',
      d.rescale,
      ['huber', 'inverse', 'seed', 'none'] as const,
      'config.data',
    ),
    localAlign: Boolean(dataRaw.localAlign ?? d.localAlign),
    fusion: {
      scheme: oneOf(fusionRaw, 'scheme', d.fusion.scheme, ['snr', 'T'] as const, 'config.data.fusion'),
      gamma: num(fusionRaw, 'gamma', d.fusion.gamma, 'config.data.fusion', 0, 10),
      wMax: num(fusionRaw, 'wMax', d.fusion.wMax, 'config.data.fusion', 0.01, 1),
    },
    T: T as DataConfig['T'],
  };
}

function modelConfig(modelRaw: Json): UNetConfig {
  checkKeys(modelRaw, Object.keys(DEFAULT_UNET), 'config.model');
  try {
    return resolveUNetConfig(modelRaw as Partial<UNetConfig>, 'config.model');
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
}

/** The optimizer fields (the section's keys are checked beforehand, see resolveConfig). */
function optimConfig(optimRaw: Json): OptimConfig {
  const d = DEFAULT_CONFIG.optim;
  return {
    lr: num(optimRaw, 'lr', d.lr, 'config.optim', 1e-8, 1),
    weightDecay: num(optimRaw, 'weightDecay', d.weightDecay, 'config.optim', 0, 1),
    warmupEpochs: int(optimRaw, 'warmupEpochs', d.warmupEpochs, 'config.optim'),
    minLrFactor: num(optimRaw, 'minLrFactor', d.minLrFactor, 'config.optim', 0, 1),
    gradClip: num(optimRaw, 'gradClip', d.gradClip, 'config.optim', 0),
  };
}

/** Validates a parsed JSON config; relative paths are resolved against baseDir. */
export function resolveConfig(raw: unknown, baseDir: string, file = 'config'): NmrTrainConfig {
  try {
    if (!isObject(raw)) throw new ConfigError('the top level must be a JSON object');
    const d = DEFAULT_CONFIG;
    checkKeys(raw, CONFIG_FIELDS, 'config');
    const data = dataConfig(section(raw, 'data', 'config'), baseDir);
    const model = modelConfig(section(raw, 'model', 'config'));
    const optimRaw = section(raw, 'optim', 'config');
    checkKeys(optimRaw, ['lr', 'weightDecay', 'warmupEpochs', 'minLrFactor', 'gradClip'], 'config.optim');
    const cfg: NmrTrainConfig = {
      name: typeof raw.name === 'string' ? raw.name : d.name,
      out:
        raw.out === undefined
          ? resolve(baseDir, 'runs', 'nmr', String(raw.name ?? d.name))
          : pathField(raw.out, 'config.out', baseDir),
      seed: int(raw, 'seed', d.seed, 'config'),
      threads: int(raw, 'threads', d.threads, 'config', 1),
      ...(raw.device === undefined ? {} : { device: deviceField(raw.device) }),
      data,
      model,
      stageA: stage(section(raw, 'stageA', 'config'), d.stageA, 'config.stageA'),
      stageB: stage(section(raw, 'stageB', 'config'), d.stageB, 'config.stageB'),
      optim: optimConfig(optimRaw),
      batchSamples: int(raw, 'batchSamples', d.batchSamples, 'config', 1),
      stepsPerEpoch: int(raw, 'stepsPerEpoch', d.stepsPerEpoch, 'config'),
      logEvery: int(raw, 'logEvery', d.logEvery, 'config', 1),
      checkpointEvery: int(raw, 'checkpointEvery', d.checkpointEvery, 'config', 1),
    };
    for (const st of ['stageA', 'stageB'] as const)
      if ((cfg[st].loss.nll ?? 0) !== 0 && !cfg.model.scaleHead)
        throw new ConfigError(
          `config.${st}.loss.nll: the Laplace NLL trains the scale head; set config.model.scaleHead to true (or nll to 0)`,
        );
    if (cfg.stageA.epochs + cfg.stageB.epochs === 0)
      throw new ConfigError('config.stageA.epochs + config.stageB.epochs: must be at least 1');
    return cfg;
  } catch (e) {
    if (e instanceof ConfigError) throw new NmrConfigError(`${file}: ${e.message}`, { cause: e });
    throw e;
  }
}

/** A config is a page of JSON; anything far larger is the wrong file. */
export const MAX_CONFIG_BYTES = 1 << 20;

/** Reads and validates a config file (paths inside are relative to the current directory). */
export function loadConfig(file: string, cwd = process.cwd()): NmrTrainConfig {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > MAX_CONFIG_BYTES)
      throw new NmrConfigError(
        `${file}: ${size} bytes, more than a training config needs (at most ${MAX_CONFIG_BYTES}); give the config file, not a data file`,
      );
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if (e instanceof NmrConfigError) throw e;
    throw new NmrConfigError(`${file}: cannot read the config (${(e as Error).message})`, { cause: e });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new NmrConfigError(`${file}: not valid JSON (${(e as Error).message})`, { cause: e });
  }
  return resolveConfig(raw, cwd, file);
}
