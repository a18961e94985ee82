// Training configs in the structure of the SADE / BalPoE / PRL reference code (name, arch,
// data_loader, optimizer, loss, lr_scheduler, trainer), accepting their type names, plus the
// few sections of our own (mixup, prl, seed). Loaded and checked before anything runs.
import { readFileSync } from 'node:fs';
import { parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { ConfigError, checkDepth, int, obj, parseWith } from './schema.js';
import { LOSS_TYPES } from './losses.js';
import { PRL, TRAINER, TRAIN_CONFIG } from './train-schema.js';
import { checksOf } from '../../util/arguments.js';
import { applySettings } from './settings.js';
import { resolveTauList } from './tau-list.js';
import { checkExpertAssignment } from './expert-assignment.js';

export { baseArchType, isExpertAssignment } from './expert-assignment.js';

type Written = z.output<typeof TRAIN_CONFIG>;

/** RIDE's distillation: a teacher and its weights with RIDELossWithDistill, and only then. */
function checkDistill(config: TrainConfig, file: string): void {
  const withDistillLoss = config.loss.type === 'RIDELossWithDistill';
  if (!config.distill) {
    if (withDistillLoss) {
      throw new ConfigError(file, 'distill', 'RIDELossWithDistill needs "distill": true with a teacher');
    }
    return;
  }
  if (!withDistillLoss) {
    throw new ConfigError(
      file,
      'loss.type',
      `distillation uses the teacher through RIDELossWithDistill, not ${config.loss.type}`,
    );
  }
  if (!config.distill_arch)
    throw new ConfigError(file, 'distill_arch', "the teacher's arch section is missing");
  if (!config.distill_checkpoint) {
    throw new ConfigError(
      file,
      'distill_checkpoint',
      "the teacher's weights (a tailor run, or a .safetensors or .pth state dict) are missing",
    );
  }
}

/** BalPoE's `combiner` section as the `mixup` section it means; cutmix is refused by name. */
function foldCombiner(config: TrainConfig, combiner: Written['combiner'], file: string): void {
  if (!combiner || (combiner.mode ?? 'default') === 'default') return;
  if (combiner.mode === 'cutmix') {
    throw new ConfigError(file, 'combiner.mode', "tailor has no cutmix; use 'mixup' or 'default'");
  }
  const alpha = combiner.mixup?.alpha;
  if (alpha === undefined) throw new ConfigError(file, 'combiner.mixup.alpha', 'mode "mixup" needs alpha');
  if (config.mixup && config.mixup.alpha !== alpha) {
    throw new ConfigError(
      file,
      'combiner',
      `mixup alpha ${alpha} differs from the mixup section's ${config.mixup.alpha}; give it once`,
    );
  }
  config.mixup = { alpha };
}
/** The `prl` section; built from a PRLLoss's args it may name the released solvers too. */
export type PrlSection = Omit<z.output<typeof PRL>, 'scalarization'> & {
  scalarization?: z.output<(typeof LOSS_TYPES)['PRLLoss']>['scalarization'];
};
/** A checked training config: the released PRL keys are folded into `prl`. */
export type TrainConfig = Omit<Written, 'prl' | 'use_hnet' | 'Solvers'> & { prl?: PrlSection };

/**
 * Where the first JSON syntax error is, as :line:column (jsonc-parser reports offsets; V8's
 * "at position N" is the fallback). jsonc-parser recovers from errors recursively: brackets that
 * checkDepth saw inside a broken string can exhaust the stack, which must not hide the error.
 */
function jsonErrorLocation(text: string, message: string): string {
  const errors: ParseError[] = [];
  let offset: number | undefined;
  try {
    parseJsonc(text, errors, { allowTrailingComma: false, disallowComments: true });
    offset = errors[0]?.offset;
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    const position = /at position (\d+)/.exec(message);
    offset = position ? Number(position[1]) : undefined;
  }
  if (offset === undefined) return '';
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `:${line}:${column}`;
}

/** Parses JSON text; a syntax error is a ConfigError naming file:line:column. */
export function parseJsonText(text: string, file: string): unknown {
  checkDepth(text, file);
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    throw new ConfigError(`${file}${jsonErrorLocation(text, message)}`, '', `invalid JSON: ${message}`);
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

/**
 * Parses and checks the text of a training config (JSON).
 * @param file Names the source in messages.
 * @throws {@link ConfigError} naming the field, with its line and column.
 */
export function parseConfig(text: string, file: string): TrainConfig {
  const c = checksOf('parseConfig');
  if (typeof text !== 'string') c.fail('text', 'the JSON text of a config (a string)', text);
  c.string(file, 'file');
  return checkConfig(parseJsonText(text, file), file);
}

/**
 * BalPoE's `randaugm: true` is AutoAugment for CIFAR and RandAugment (aug_plus) for its ImageNet-LT
 * and iNaturalist loaders; Fashion-MNIST has no such recipe, and BalPoE has no Places-LT loader.
 */
function refuseRandaugm(config: TrainConfig, file: string): void {
  const loader = config.data_loader;
  if (!(loader.args as { randaugm?: boolean } | undefined)?.randaugm) return;
  switch (loader.type) {
    case 'ImbalanceCIFAR10DataLoader':
    case 'ImbalanceCIFAR100DataLoader':
    case 'ImageNetLTDataLoader':
    case 'iNaturalistDataLoader':
      return;
    case 'ImbalanceFashionMNISTDataLoader':
      throw new ConfigError(
        file,
        'data_loader.args.randaugm',
        "AutoAugment's CIFAR-10 policy is for RGB CIFAR images, and BalPoE has no long-training recipe for Fashion-MNIST; set it to false for the standard augmentation",
      );
    default:
      throw new ConfigError(
        file,
        'data_loader.args.randaugm',
        `BalPoE's randaugm recipe (RandAugment) is defined for its ImageNet-LT and iNaturalist loaders, and BalPoE has no Places-LT loader (${loader.type}); set it to false for the standard augmentation, or train the list with ImageNetLTDataLoader`,
      );
  }
}

function checkConfig(raw: unknown, file: string): TrainConfig {
  const { use_hnet, Solvers, combiner, ...written } = parseWith(TRAIN_CONFIG, raw, file);
  const config: TrainConfig = written;
  foldCombiner(config, combiner, file);
  checkDistill(config, file);
  refuseRandaugm(config, file);
  resolveTauList(config, file);
  checkExpertAssignment(config, file);
  const opt = config.optimizer;
  if (opt.type === 'SGD' && opt.args.nesterov && (!opt.args.momentum || opt.args.dampening)) {
    throw new ConfigError(
      file,
      'optimizer.args.nesterov',
      'Nesterov momentum needs momentum > 0 and dampening 0',
    );
  }
  if (use_hnet && !config.prl) {
    config.prl = {
      variant: 'released',
      ...(Solvers?.name ? { scalarization: Solvers.name === 'ls' ? 'linear' : 'stch' } : {}),
      ...(Solvers?.mu !== undefined ? { mu: Solvers.mu } : {}),
      ...(Solvers?.Z !== undefined ? { z: Solvers.Z } : {}),
    };
  }
  if ((config.loss.type === 'PRLLoss' || config.loss.type === 'PRL') && !config.prl) {
    // The preference that PRLLoss scalarizes with is drawn by the PRL system (hypernetwork), so
    // a PRL loss without a prl section trains PRL with the loss's arguments.
    const a = parseWith(LOSS_TYPES.PRLLoss, config.loss.args, file, 'loss.args');
    const z = a.z ?? a.Z;
    config.prl = {
      ...(a.variant !== undefined ? { variant: a.variant } : {}),
      ...(a.scalarization !== undefined ? { scalarization: a.scalarization } : {}),
      ...(a.mu !== undefined ? { mu: a.mu } : {}),
      ...(z !== undefined ? { z } : {}),
      ...(a.expert_losses !== undefined ? { expert_losses: a.expert_losses } : {}),
    };
  }
  return config;
}

/** What the command line may change in a training config. */
export interface TrainOverrides {
  epochs?: number | undefined;
  seed?: number | undefined;
}

const OVERRIDES = obj({ epochs: TRAINER.shape.epochs.optional(), seed: int('global seed') });

/**
 * The config with command-line overrides applied (a new object; checked by the rules of the
 * fields they replace, errors naming `where`).
 */
export function withOverrides(
  config: TrainConfig,
  overrides: TrainOverrides,
  where = 'command line',
): TrainConfig {
  const o = parseWith(OVERRIDES, JSON.parse(JSON.stringify(overrides)) as unknown, where);
  return {
    ...config,
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    trainer: { ...config.trainer, ...(o.epochs !== undefined ? { epochs: o.epochs } : {}) },
  };
}

/**
 * Reads and checks a training config file (the JSON that `tailor train` takes), with `settings`
 * (`path=value`, `tailor train --set`) applied before the check; errors then name the file as
 * `FILE (with --set)`.
 * @throws {@link ConfigError} naming the file, the field and the remedy.
 */
export function loadConfig(file: string, settings: readonly string[] = []): TrainConfig {
  const raw = readJsonFile(file);
  if (settings.length === 0) return checkConfig(raw, file);
  return checkConfig(applySettings(raw, settings), `${file} (with --set)`);
}

export { ConfigError };
