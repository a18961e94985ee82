// `tailor benchmark`: trains every model of a suite once per seed (the same training as
// `tailor train`, with the seed overridden), runs the suite's test-time methods on the eleven
// test distributions, and gathers the table. Everything is kept on disk as it finishes, so a
// second call resumes: finished runs and methods are skipped, an interrupted training continues
// from its last checkpoint.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as torch from '../../torch/index.js';
import { writeJsonAtomic } from '../../util/fs.js';
import { UserError } from '../../util/errors.js';
import { TEST_DISTRIBUTIONS } from '../data/longtail.js';
import { runTestTime, type TestTimeMethod, type TestTimeOptions } from '../adapt/testtime.js';
import { loadConfig } from '../config/config.js';
import { loadTestTimeConfig } from '../config/testtime.js';
import { adaptInput, buildSession, type Session } from '../config/session.js';
import type { DataOverrides } from '../config/experiment.js';
import { loadRun } from './load.js';
import { trainAndEvaluate } from './train.js';
import { benchmarkMethod } from './benchmark-methods.js';
import { benchmarkTable, meanTop1, type BenchmarkTable, type MethodRecord } from './benchmark-table.js';
import type { Suite } from './benchmark-suite.js';
import type { GroupResult } from '../train/evaluate.js';
import type { ExecutionMode } from '../train/graph.js';

/**
 * How {@link runBenchmark} runs: the output directory, how many runs to train in this call, logging.
 */
export interface BenchmarkOptions {
  outDir: string;
  /** Train at most this many runs in this call (the rest on the next call); finished work is never redone. */
  maxRuns?: number;
  quiet?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /** How the runs' steps train (resolveGraphMode of --graph; default eager). */
  graph?: ExecutionMode;
  /** --graph on: a step that cannot be captured is an error instead of an eager fallback. */
  graphRequired?: boolean;
  /** Graph mode's branch streams (default: each config's trainer.branch_streams, else on). */
  branchStreams?: boolean;
}

/**
 * What {@link runBenchmark} returns: the table and how many runs were trained, skipped and left.
 */
export interface BenchmarkResult {
  table: BenchmarkTable;
  trained: number;
  skipped: number;
  /** Runs left for a later call (maxRuns reached). */
  pending: number;
}

const METHODS_FILE = 'benchmark-methods.json';
/** The test-time settings the stored methods ran with; other settings make them stale. */
const TEST_TIME_FILE = 'benchmark-test-time.json';
/** What a run was trained from; a later call with other settings must not reuse it. */
const SETTINGS_FILE = 'benchmark-run.json';

/** Thrown when a run directory holds a run trained with other settings than the suite's. */
export class BenchmarkStaleRunError extends UserError {}

function runSettings(suite: Suite, modelConfig: string, seed: number) {
  const config = loadConfig(modelConfig);
  config.seed = seed;
  if (suite.epochs) config.trainer.epochs = suite.epochs;
  return { config, overrides: suiteDataOverrides(suite) };
}

/** The settings without the config's `$schema` line, which names an editor schema, not training. */
function withoutSchemaLine(settings: unknown): unknown {
  const copy = structuredClone(settings) as { config?: Record<string, unknown> };
  if (copy.config && typeof copy.config === 'object') delete copy.config.$schema;
  return copy;
}

/** Records the settings of a new run, or checks that an existing run was made with these. */
function checkSettings(runDir: string, settings: ReturnType<typeof runSettings>): void {
  const path = join(runDir, SETTINGS_FILE);
  if (!existsSync(path)) {
    mkdirSync(runDir, { recursive: true });
    writeJsonAtomic(path, settings);
    return;
  }
  if (
    JSON.stringify(withoutSchemaLine(JSON.parse(readFileSync(path, 'utf8')))) !==
    JSON.stringify(withoutSchemaLine(settings))
  )
    throw new BenchmarkStaleRunError(
      `${runDir} was trained with other settings (its config, epochs, seed or data overrides differ from the suite's now, see ${path}); ` +
        'give another --out, or delete that run directory to retrain it',
    );
}

/**
 * The run directory of one model and seed of a benchmark: `<outDir>/runs/<model>/seed-<seed>`.
 */
export function benchmarkRunDir(outDir: string, model: string, seed: number): string {
  return join(outDir, 'runs', model, `seed-${seed}`);
}

function readMethods(runDir: string): Record<string, MethodRecord> {
  const path = join(runDir, METHODS_FILE);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, MethodRecord>;
  } catch {
    return {}; // a torn or hand-edited file: recompute its methods
  }
}

/** Test-time options when the suite names no test-time config (plain and oracle only). */
const NO_STEP_OPTIONS: Omit<TestTimeOptions, 'seed' | 'methods'> = {
  epochs: 1,
  batchSize: 128,
  lr: 0.025,
  momentum: 0.9,
  weightDecay: 5e-4,
  nesterov: true,
  minWeight: 0.05,
  preferenceLr: 0.01,
  distributions: TEST_DISTRIBUTIONS,
};

/** The data settings a suite gives every run (root, train and test caps). */
export function suiteDataOverrides(suite: Suite): DataOverrides {
  return {
    ...(suite.root ? { root: suite.root } : {}),
    ...(suite.trainMaxPerClass ? { trainMaxPerClass: suite.trainMaxPerClass } : {}),
    ...(suite.testPerClass ? { testPerClass: suite.testPerClass } : {}),
  };
}

async function trainRun(
  suite: Suite,
  modelConfig: string,
  seed: number,
  runDir: string,
  o: BenchmarkOptions,
) {
  const log = o.log ?? (() => {});
  const config = loadConfig(modelConfig);
  config.seed = seed;
  if (suite.epochs) config.trainer.epochs = suite.epochs;
  torch.manualSeed(seed);
  const session = buildSession(config, modelConfig, suiteDataOverrides(suite));
  mkdirSync(runDir, { recursive: true });
  writeJsonAtomic(join(runDir, 'config.json'), config);
  const last = join(runDir, 'checkpoint-last.json');
  const resumeFrom = existsSync(last) ? last : undefined;
  log(
    `${resumeFrom ? 'resuming' : 'training'} ${runDir} (${config.trainer.epochs} epochs, ${session.data.train.labels.length} images)`,
  );
  await trainAndEvaluate(session, {
    epochs: config.trainer.epochs,
    seed,
    runDir,
    ...(resumeFrom ? { resumeFrom } : {}),
    quiet: o.quiet ?? true,
    log,
    ...(o.graph ? { graph: o.graph } : {}),
    ...(o.graphRequired ? { graphRequired: true } : {}),
    ...(o.branchStreams !== undefined ? { branchStreams: o.branchStreams } : {}),
  });
  return session;
}

/** Runs the methods a run still lacks and stores them with the run. */
async function runMethods(
  suite: Suite,
  session: Session,
  seed: number,
  runDir: string,
  missing: string[],
  done: Record<string, MethodRecord>,
  o: BenchmarkOptions,
) {
  const log = o.log ?? (() => {});
  const records = { ...done };
  const toRun: string[] = [];
  for (const m of missing) {
    const why = benchmarkMethod(m).unsupported?.(session.system) ?? null;
    if (why) records[m] = { unsupported: why };
    else toRun.push(m);
  }
  if (toRun.length > 0) {
    const steps = [
      ...new Set(toRun.map((m) => benchmarkMethod(m).step).filter((s): s is TestTimeMethod => s !== null)),
    ];
    // The suite picks the methods; the test-time config gives only their settings (so its own
    // "method" field, which may name the PRL-only search, does not matter here).
    const base = testTimeBase(suite);
    log(`test-time ${runDir}: ${toRun.join(', ')}`);
    const started = performance.now();
    const { results } = await runTestTime(
      adaptInput(session),
      // The run's seed also seeds the test-time views, so the spread covers the whole pipeline.
      { ...base, distributions: TEST_DISTRIBUTIONS, seed, methods: steps, quiet: o.quiet ?? true },
      (line) => log(`  ${line}`),
    );
    // where a suite's time goes (training epochs are timed in results.json)
    log(`test-time ${runDir}: done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    for (const m of toRun) {
      const distributions: Record<string, GroupResult> = {};
      let declined = false;
      for (const d of TEST_DISTRIBUTIONS) {
        const r = results[d] ? benchmarkMethod(m).pick(results[d]) : undefined;
        if (!r) declined = true;
        else distributions[d] = { top1: r.top1, many: r.many, medium: r.medium, few: r.few };
      }
      records[m] = declined
        ? { unsupported: `the '${benchmarkMethod(m).step}' step gave no result for this model (see the log)` }
        : { distributions, mean_top1: meanTop1(distributions) };
    }
  }
  writeJsonAtomic(join(runDir, METHODS_FILE), records);
  writeJsonAtomic(join(runDir, TEST_TIME_FILE), testTimeBase(suite));
  return records;
}

function testTimeBase(suite: Suite): Omit<TestTimeOptions, 'seed' | 'methods'> {
  return suite.testTime ? loadTestTimeConfig(suite.testTime, true) : NO_STEP_OPTIONS;
}

/**
 * The stored methods of a run, or none when they ran with other test-time settings than the
 * suite's now (a changed test-time config must not mix old and new results in one table). Runs
 * stored without the record count as made with the current settings.
 */
function currentMethods(
  runDir: string,
  suite: Suite,
  log: (line: string) => void,
): Record<string, MethodRecord> {
  const done = readMethods(runDir);
  const path = join(runDir, TEST_TIME_FILE);
  if (Object.keys(done).length === 0 || !existsSync(path)) return done;
  let stored: unknown = null;
  try {
    stored = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    // torn or edited: recompute
  }
  if (JSON.stringify(stored) === JSON.stringify(JSON.parse(JSON.stringify(testTimeBase(suite))))) return done;
  log(`${runDir}: the suite's test-time settings changed since its methods ran; recomputing them`);
  return {};
}

function disposeSession(session: Session): void {
  for (const m of Object.values(session.system.modules)) m.dispose();
}

/**
 * Runs a benchmark suite: trains every model for every seed (resuming finished work), runs the
 * test-time methods and tabulates the results. Needs libtorch.
 * @throws BenchmarkStaleRunError when a stored run was made with a different config.
 */
export async function runBenchmark(suite: Suite, o: BenchmarkOptions): Promise<BenchmarkResult> {
  const log = o.log ?? (() => {});
  if (suite.threads) torch.setNumThreads(suite.threads);
  const records: Record<string, Record<number, Record<string, MethodRecord>>> = {};
  let trained = 0;
  let skipped = 0;
  let pending = 0;
  const total = suite.models.length * suite.seeds.length;
  let index = 0;
  for (const model of suite.models) {
    records[model.name] = {};
    for (const seed of suite.seeds) {
      index++;
      const runDir = benchmarkRunDir(o.outDir, model.name, seed);
      const done = currentMethods(runDir, suite, log);
      const missing = suite.methods.filter((m) => !(m in done));
      const hasResults = existsSync(join(runDir, 'results.json'));
      const tag = `[${index}/${total}] ${model.name} seed ${seed}`;
      const settings = runSettings(suite, model.config, seed);
      const existed = existsSync(runDir);
      if (existed) checkSettings(runDir, settings);
      if (hasResults && missing.length === 0) {
        log(`${tag}: finished, skipped`);
        records[model.name]![seed] = done;
        skipped++;
        continue;
      }
      if (!hasResults && o.maxRuns !== undefined && trained >= o.maxRuns) {
        log(`${tag}: left for the next call (--max-runs ${o.maxRuns})`);
        records[model.name]![seed] = done;
        pending++;
        continue;
      }
      let session: Session;
      if (hasResults) {
        log(`${tag}: trained earlier; methods ${missing.join(', ')}`);
        session = loadRun(runDir, suite.root ? { root: suite.root } : {}).session;
      } else {
        log(
          `${tag}: ${existsSync(join(runDir, 'checkpoint-last.json')) ? 'resuming the interrupted training' : 'training'}`,
        );
        // A fresh run records its settings before training (an existing one was checked above).
        if (!existed) checkSettings(runDir, settings);
        session = await trainRun(suite, model.config, seed, runDir, { ...o, log: (l) => log(`  ${l}`) });
        trained++;
      }
      try {
        records[model.name]![seed] = await runMethods(suite, session, seed, runDir, missing, done, o);
      } finally {
        disposeSession(session);
      }
    }
  }
  const table = benchmarkTable({
    name: suite.name,
    ...(suite.description !== undefined ? { description: suite.description } : {}),
    suite: suite.file,
    seeds: suite.seeds,
    models: suite.models.map((m) => m.name),
    methods: suite.methods,
    records,
  });
  return { table, trained, skipped, pending };
}
