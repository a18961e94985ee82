// Test-time training configs: SADE's test-time files (their arch/data_loader/trainer sections
// are accepted; what matters here is the optimizer, the epochs and the batch size) plus our
// fields: the methods to run, the early-stop weight, the distributions.
import { ConfigError, bool, int, num, obj, required, str, validate, type Schema } from './schema.js';
import { TEST_DISTRIBUTIONS } from '../data/longtail.js';
import { readJsonFile } from './config.js';
import type { TestTimeMethod, TestTimeOptions } from '../adapt/testtime.js';
import { DEFAULT_PRIOR_FIT, type PriorFit } from '../adapt/prior.js';

const schema: Schema = obj(
  {
    name: str(),
    n_gpu: int(),
    seed: int(),
    method: str(
      ['aggregation', 'preference', 'prior', 'both', 'all'] as const,
      'what to learn at test time (both: aggregation and, for PRL, preference; all: also prior)',
    ),
    min_weight: num('stop when an expert weight drops below this', { min: 0, max: 1 }),
    preference_lr: num('Adam step size of the preference search', { min: 0 }),
    prior_fit: str(
      ['likelihood', 'least_squares'] as const,
      'how prior matching fits the experts to the test set: the most likely prior of their family, or the one nearest the EM estimate',
    ),
    distributions: { kind: 'array', items: { kind: 'string', values: TEST_DISTRIBUTIONS }, optional: true },
    arch: { kind: 'any', optional: true },
    loss: { kind: 'any', optional: true },
    lr_scheduler: { kind: 'any', optional: true },
    add_extra_info: bool(),
    data_loader: obj({
      type: str(),
      args: obj({
        batch_size: int('batch size', 1),
        data_dir: str(),
        shuffle: bool(),
        num_workers: int(),
        training: bool(),
        test_imb_factor: num(),
        reverse: bool(),
      }),
    }),
    optimizer: obj({
      type: required(str(['SGD'] as const)),
      args: obj(
        {
          lr: required(num('learning rate', { min: 0 })),
          momentum: num(),
          weight_decay: num(),
          nesterov: bool(),
        },
        false,
      ),
    }),
    trainer: obj({
      epochs: int('test-time epochs', 1),
      save_dir: str(),
      save_period: int(),
      verbosity: int(),
      monitor: str(),
      tensorboard: bool(),
    }),
  },
  false,
);

interface Raw {
  seed?: number;
  method?: TestTimeMethod | 'both' | 'all';
  min_weight?: number;
  preference_lr?: number;
  prior_fit?: PriorFit;
  distributions?: string[];
  data_loader?: { args?: { batch_size?: number } };
  optimizer?: { args: { lr: number; momentum?: number; weight_decay?: number; nesterov?: boolean } };
  trainer?: { epochs?: number };
}

export function loadTestTimeConfig(file: string, isPrl: boolean): TestTimeOptions {
  const raw = readJsonFile(file);
  validate(schema, raw, file);
  const c = raw as Raw;
  // Asking for the preference search alone on a model without a hypernetwork is a mistake.
  const method = c.method ?? 'both';
  if (method === 'preference' && !isPrl) {
    throw new ConfigError(
      file,
      'method',
      `'preference' needs a PRL checkpoint (a hypernetwork); use 'aggregation' or 'both'`,
    );
  }
  const opt = c.optimizer?.args ?? { lr: 0.025 };
  const nesterov = opt.nesterov ?? true;
  const momentum = opt.momentum ?? 0.9;
  return {
    epochs: c.trainer?.epochs ?? 5,
    batchSize: c.data_loader?.args?.batch_size ?? 128,
    lr: opt.lr,
    momentum,
    weightDecay: opt.weight_decay ?? 5e-4,
    nesterov: nesterov && momentum > 0,
    minWeight: c.min_weight ?? 0.05,
    // Adam moves the preference logits by about this much per step whatever the gradient's size,
    // so it bounds how far r travels from uniform (at 0.05 the search ran into a corner within an
    // epoch on every distribution; see BENCHMARKS.md).
    preferenceLr: c.preference_lr ?? 0.01,
    priorFit: c.prior_fit ?? DEFAULT_PRIOR_FIT,
    seed: c.seed ?? 0,
    methods: expandMethod(method, isPrl),
    distributions: c.distributions ?? TEST_DISTRIBUTIONS,
  };
}

/** 'both': the self-supervised searches the checkpoint supports (so one config serves SADE and PRL); 'all' adds prior matching. */
function expandMethod(method: TestTimeMethod | 'both' | 'all', isPrl: boolean): TestTimeMethod[] {
  const searches: TestTimeMethod[] = isPrl ? ['aggregation', 'preference'] : ['aggregation'];
  if (method === 'both') return searches;
  if (method === 'all') return [...searches, 'prior'];
  return [method];
}
