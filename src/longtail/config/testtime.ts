// Test-time training configs: SADE's test-time files (their arch/data_loader/trainer sections
// are accepted; what matters here is the optimizer, the epochs and the batch size) plus our
// fields: the methods to run, the early-stop weight, the distributions.
import { z } from 'zod';
import { ConfigError, bool, int, num, obj, oneOfValues, parseWith, text } from './schema.js';
import { TEST_DISTRIBUTIONS } from '../data/longtail.js';
import { readJsonFile } from './config.js';
import { applySettings } from './settings.js';
import type { TestTimeOptions } from '../adapt/testtime.js';
import { LABEL_SHIFT_METHODS, SELECTABLE_METHODS, type TestTimeMethod } from '../adapt/methods.js';
import { DEFAULT_PRIOR_FIT } from '../adapt/prior.js';
import { DEFAULT_CONSISTENCY_WEIGHT } from '../adapt/search-objective.js';

/** The test-time config as written. */
export const TEST_TIME_CONFIG = obj({
  $schema: text('the JSON Schema of this file (for editors)'),
  name: text(),
  n_gpu: int(),
  seed: int(),
  method: oneOfValues(
    ['aggregation', 'preference', 'prior', 'both', 'all'],
    'what to learn at test time (both: aggregation and, for PRL, preference; all: also prior)',
  ),
  methods: z
    .array(z.enum(SELECTABLE_METHODS))
    .describe('the test-time methods to run, by name (replaces method)')
    .optional(),
  aggregation_objective: oneOfValues(
    ['stability', 'consistent'],
    "SADE aggregation's objective (default 'consistent': view agreement plus prior consistency; 'stability': view agreement alone, as published)",
  ),
  preference_objective: oneOfValues(
    ['stability', 'consistent'],
    "PRL preference search's objective (default 'consistent': view agreement plus prior consistency)",
  ),
  consistency_weight: num('weight of the prior-consistency term (default 3)', { min: 0 }),
  min_weight: num('stop when an expert weight drops below this', { min: 0, max: 1 }),
  preference_lr: num('Adam step size of the preference search', { min: 0 }),
  prior_fit: oneOfValues(
    ['likelihood', 'least_squares'],
    'how prior matching fits the experts to the test set: the most likely prior of their family, or the one nearest the EM estimate',
  ),
  distributions: z.array(z.enum(TEST_DISTRIBUTIONS)).optional(),
  arch: z.unknown().optional(),
  loss: z.unknown().optional(),
  lr_scheduler: z.unknown().optional(),
  add_extra_info: bool(),
  metrics: z
    .array(z.string())
    .describe("the reference's metric names (accepted; tailor reports top-1 and many/medium/few)")
    .optional(),
  epochs: int("test-time epochs (SADE's test-time files write it here; trainer.epochs is the same)", 1),
  data_loader: obj({
    type: text(),
    args: obj({
      batch_size: int('batch size', 1),
      data_dir: text(),
      shuffle: bool(),
      num_workers: int(),
      training: bool(),
      test_imb_factor: num(),
      reverse: bool(),
      imb_factor: num("the training set's imbalance in SADE's CIFAR files (the run's data decides)"),
    }).optional(),
  }).optional(),
  optimizer: obj({
    type: z.literal('SGD'),
    args: obj({
      lr: num('learning rate', { min: 0 }).unwrap(),
      momentum: num(undefined, { min: 0 }),
      weight_decay: num(undefined, { min: 0 }),
      nesterov: bool(),
      share_lr: num(
        'the backbone learning rate of training (accepted: test time learns only the expert weights)',
        {
          min: 0,
        },
      ),
    }).optional(),
  }).optional(),
  trainer: obj({
    epochs: int('test-time epochs', 1),
    save_dir: text(),
    save_period: int(),
    verbosity: int(),
    monitor: text(),
    tensorboard: bool(),
  }).optional(),
});

/**
 * Reads a test-time config file into {@link TestTimeOptions}, with `settings` (`path=value`, the
 * commands' `--set`) applied before the check.
 * @param isPrl Whether the model has a hypernetwork (the preference search needs one).
 * @throws {@link ConfigError} for an invalid field, or a preference search asked of a model without a hypernetwork.
 */
export function loadTestTimeConfig(
  file: string,
  isPrl: boolean,
  settings: readonly string[] = [],
): TestTimeOptions {
  const raw = readJsonFile(file);
  if (settings.length === 0) return testTimeOptions(raw, isPrl, file);
  return testTimeOptions(applySettings(raw, settings), isPrl, `${file} (with --set)`);
}

/** The options of a test-time config already read (`{}`: every default), `file` naming it in errors. */
export function testTimeOptions(raw: unknown, isPrl: boolean, file: string): TestTimeOptions {
  const c = parseWith(TEST_TIME_CONFIG, raw, file);
  // Asking for the preference search alone on a model without a hypernetwork is a mistake.
  const method = c.method ?? 'both';
  if (method === 'preference' && !isPrl) {
    throw new ConfigError(
      file,
      'method',
      `'preference' needs a PRL checkpoint (a hypernetwork); use 'aggregation' or 'both'`,
    );
  }
  if (c.methods?.includes('preference') && !isPrl) {
    throw new ConfigError(file, 'methods', `'preference' needs a PRL checkpoint (a hypernetwork)`);
  }
  if (c.epochs !== undefined && c.trainer?.epochs !== undefined && c.epochs !== c.trainer.epochs) {
    throw new ConfigError(
      file,
      'epochs',
      `is ${c.epochs} but trainer.epochs is ${c.trainer.epochs}; give the test-time epochs once`,
    );
  }
  const opt = c.optimizer?.args ?? { lr: 0.025 };
  const nesterov = opt.nesterov ?? true;
  const momentum = opt.momentum ?? 0.9;
  return {
    epochs: c.epochs ?? c.trainer?.epochs ?? 5,
    batchSize: c.data_loader?.args?.batch_size ?? 128,
    lr: opt.lr,
    momentum,
    weightDecay: opt.weight_decay ?? 5e-4,
    nesterov: nesterov && momentum > 0,
    minWeight: c.min_weight ?? 0.05,
    // Adam moves the preference logits by about this much per step whatever the gradient's size,
    // so it bounds how far r travels from uniform (at 0.05 the search ran into a corner within an
    // epoch on every distribution). 0.03 was chosen on the validation split (BENCHMARKS.md).
    preferenceLr: c.preference_lr ?? 0.03,
    priorFit: c.prior_fit ?? DEFAULT_PRIOR_FIT,
    aggregationObjective: c.aggregation_objective ?? 'consistent',
    preferenceObjective: c.preference_objective ?? 'consistent',
    consistencyWeight: c.consistency_weight ?? DEFAULT_CONSISTENCY_WEIGHT,
    seed: c.seed ?? 0,
    methods: c.methods ? [...new Set(c.methods)] : expandMethod(method, isPrl),
    distributions: c.distributions ?? TEST_DISTRIBUTIONS,
  };
}

/**
 * 'both': the self-supervised searches the checkpoint supports (so one config serves SADE and
 * PRL); 'all' adds prior matching. The label-shift baselines (EM, EM after TS / BCTS, BBSE) cost
 * one pass over the validation split and always run, so every method is compared with them.
 */
function expandMethod(
  method: 'aggregation' | 'preference' | 'prior' | 'both' | 'all',
  isPrl: boolean,
): TestTimeMethod[] {
  const searches: TestTimeMethod[] = isPrl ? ['aggregation', 'preference'] : ['aggregation'];
  if (method === 'both') return [...searches, ...LABEL_SHIFT_METHODS];
  if (method === 'all') return [...searches, 'prior', ...LABEL_SHIFT_METHODS];
  return [method, ...LABEL_SHIFT_METHODS];
}
