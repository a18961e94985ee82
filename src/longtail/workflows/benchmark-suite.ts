// A benchmark suite file: the models (training configs), the seeds, the test-time methods, and
// the budget overrides. Paths inside it are relative to the suite file. Every problem is a
// ConfigError naming the file, the field and the remedy.
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, int, obj, parseWith, text } from '../config/schema.js';
import { loadConfig, readJsonFile } from '../config/config.js';
import { loadTestTimeConfig } from '../config/testtime.js';
import { BENCHMARK_METHOD_NAMES, benchmarkMethod, type BenchmarkMethodName } from './benchmark-methods.js';

/** Bounds that keep a typo from starting days of training. */
const MAX_MODELS = 32;
const MAX_SEEDS = 20;

const SUITE = obj({
  name: z.string().describe('the suite name (names the output directory)'),
  description: text(),
  seeds: z.array(z.int().min(0)).min(1).describe('training seeds, for example [0, 1, 2]'),
  models: z
    .array(
      obj({
        name: z.string().describe('the row label, also the run directory name'),
        config: z.string().describe('a training config (tailor train -c), relative to the suite file'),
      }),
    )
    .min(1)
    .describe('the models: [{ "name": ..., "config": ... }]'),
  methods: z
    .array(z.enum(BENCHMARK_METHOD_NAMES as [BenchmarkMethodName, ...BenchmarkMethodName[]]))
    .min(1)
    .describe(`test-time methods (${BENCHMARK_METHOD_NAMES.join(', ')})`),
  test_time: text('a test-time config (tailor test-time-train -c), relative to the suite file'),
  epochs: int('training epochs of every model (default: each config’s trainer.epochs)', 1),
  train_max_per_class: int('cap the head class (default: each config’s)', 1),
  test_per_class: int('test images per class (default: each config’s)', 1),
  root: text('data directory (overrides each config’s data_dir)'),
  threads: int('libtorch threads', 1),
});

/** One model of a benchmark suite: its name and training config. */
export interface SuiteModel {
  name: string;
  /** Absolute path of the training config. */
  config: string;
}

/**
 * A benchmark suite as {@link loadSuite} reads it: the models (configs), seeds and methods to compare.
 */
export interface Suite {
  file: string;
  name: string;
  description?: string;
  seeds: number[];
  models: SuiteModel[];
  methods: BenchmarkMethodName[];
  /** Absolute path of the test-time config; needed by every method with a test-time step. */
  testTime?: string;
  epochs?: number;
  trainMaxPerClass?: number;
  testPerClass?: number;
  root?: string;
  threads?: number;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function unique<T>(file: string, field: string, values: T[], what: string): void {
  const seen = new Set<T>();
  values.forEach((v, i) => {
    if (seen.has(v))
      throw new ConfigError(
        file,
        `${field}[${i}]`,
        `${what} ${JSON.stringify(v)} appears twice; list each once`,
      );
    seen.add(v);
  });
}

/**
 * Reads and checks a benchmark suite file; paths in it are relative to the file.
 * @throws {@link ConfigError} for an invalid field or a missing config.
 */
export function loadSuite(file: string): Suite {
  const c = parseWith(SUITE, readJsonFile(file), file);
  const here = dirname(resolve(file));
  const path = (field: string, p: string, what: string) => {
    const full = resolve(here, p);
    if (!existsSync(full))
      throw new ConfigError(
        file,
        field,
        `${what} '${p}' not found (looked at ${full}); paths are relative to the suite file`,
      );
    return full;
  };
  if (!SAFE_NAME.test(c.name))
    throw new ConfigError(
      file,
      'name',
      `'${c.name}' cannot name a directory; use letters, digits, '.', '_' or '-' (at most 64)`,
    );
  if (c.seeds.length > MAX_SEEDS)
    throw new ConfigError(file, 'seeds', `${c.seeds.length} seeds; at most ${MAX_SEEDS}`);
  if (c.models.length > MAX_MODELS)
    throw new ConfigError(
      file,
      'models',
      `${c.models.length} models; at most ${MAX_MODELS}, split the suite`,
    );
  unique(file, 'seeds', c.seeds, 'seed');
  unique(file, 'methods', c.methods, 'method');
  unique(
    file,
    'models',
    c.models.map((m) => m.name),
    'model name',
  );
  c.models.forEach((m, i) => {
    if (!SAFE_NAME.test(m.name))
      throw new ConfigError(
        file,
        `models[${i}].name`,
        `'${m.name}' cannot name a directory; use letters, digits, '.', '_' or '-' (at most 64)`,
      );
  });
  const models = c.models.map((m, i) => ({
    name: m.name,
    config: path(`models[${i}].config`, m.config, 'training config'),
  }));
  // Check every config now, so that a typo in the last one does not surface hours into the suite.
  for (const m of models) loadConfig(m.config);
  const needsTestTime = c.methods.filter((m) => benchmarkMethod(m).step !== null);
  if (needsTestTime.length > 0 && c.test_time === undefined)
    throw new ConfigError(
      file,
      'test_time',
      `methods ${needsTestTime.join(', ')} need a test-time config (optimizer, epochs, batch size); add "test_time": "../fmnist_test_time.json" or drop them`,
    );
  const testTime = c.test_time !== undefined ? path('test_time', c.test_time, 'test-time config') : undefined;
  if (testTime) loadTestTimeConfig(testTime, true);
  return {
    file: resolve(file),
    name: c.name,
    ...(c.description !== undefined ? { description: c.description } : {}),
    seeds: c.seeds,
    models,
    methods: c.methods,
    ...(testTime ? { testTime } : {}),
    ...(c.epochs !== undefined ? { epochs: c.epochs } : {}),
    ...(c.train_max_per_class !== undefined ? { trainMaxPerClass: c.train_max_per_class } : {}),
    ...(c.test_per_class !== undefined ? { testPerClass: c.test_per_class } : {}),
    ...(c.root !== undefined ? { root: resolve(here, c.root) } : {}),
    ...(c.threads !== undefined ? { threads: c.threads } : {}),
  };
}
