// tailor train -c CONFIG [-r CHECKPOINT] [--epochs N] [--out DIR] [--seed S]
import { parseArgs } from 'node:util';
import { dirname } from 'node:path';
import * as torch from '../../torch/index.js';
import { ensureDir, writeJsonAtomic } from '../../torch/fs.js';
import {
  ConfigError,
  DataFormatError,
  NonFiniteLossError,
  RunError,
  buildSession,
  defaultRunDir,
  loadConfig,
  parseConfig,
  readSessionRecord,
  trainAndEvaluate,
  type SessionRecord,
} from '../../longtail/index.js';
import { writeLongtailReport } from '../../report/index.js';
import { CliError } from '../errors.js';
import { distributionTable, groupsLine, resolveCheckpoint } from './longtail-common.js';

const HELP = `usage: tailor train -c CONFIG [-r CHECKPOINT] [options]

Trains a long-tail model (multi-expert ResNet, SADE/BalPoE/LDAM-DRW losses, or PRL when the config
has a "prl" section), evaluating on the uniform test set every epoch, then on the eleven
test-agnostic distributions. Writes checkpoints, metrics.jsonl, results.json and report.html.

options:
  -c, --config FILE        JSON config (structure of the SADE/PRL configs)
  -r, --resume CHECKPOINT  resume an interrupted run (checkpoint-last.json of its run directory)
      --epochs N           override trainer.epochs
      --out DIR            run directory (default: <trainer.save_dir or runs>/<name>/<timestamp>)
      --seed S             global seed (default: config seed or 0)
      --root DIR           data directory (overrides data_loader.args.data_dir)
      --threads N          libtorch threads (default: trainer.threads or 2)
      --train-max-per-class N  cap the head class (quick runs)
      --test-per-class N   use only N test images per class (quick runs)
      --quiet              no progress bar
  -h, --help`;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', short: 'c' },
      resume: { type: 'string', short: 'r' },
      epochs: { type: 'string' },
      out: { type: 'string' },
      seed: { type: 'string' },
      root: { type: 'string' },
      threads: { type: 'string' },
      'train-max-per-class': { type: 'string' },
      'test-per-class': { type: 'string' },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const positiveInt = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!(Number.isInteger(n) && n > 0)) throw new CliError(`--${name} needs a positive integer, got '${v}'`);
    return n;
  };

  let record: SessionRecord | undefined;
  let resumeCheckpoint: string | undefined;
  if (values.resume) {
    resumeCheckpoint = resolveCheckpoint(values.resume);
    try {
      record = readSessionRecord(resumeCheckpoint);
    } catch (error) {
      if (error instanceof RunError) throw new CliError(error.message);
      throw error;
    }
  }
  if (!values.config && !record)
    throw new CliError(`give a config with -c CONFIG (or resume with -r CHECKPOINT)\n\n${HELP}`);

  try {
    const file = values.config ?? record!.configFile;
    const config = values.config
      ? loadConfig(values.config)
      : parseConfig(JSON.stringify(record!.config), `${resumeCheckpoint} (stored config)`);
    const epochs = positiveInt('epochs', values.epochs) ?? config.trainer.epochs;
    config.trainer.epochs = epochs;
    const seed = values.seed !== undefined ? Number(values.seed) : (config.seed ?? 0);
    if (!Number.isInteger(seed) || seed < 0)
      throw new CliError(`--seed needs a non-negative integer, got '${values.seed}'`);
    config.seed = seed;
    const threads = positiveInt('threads', values.threads) ?? config.trainer.threads ?? 2;
    torch.setNumThreads(threads);
    torch.manualSeed(seed);
    const overrides = {
      ...(record?.overrides ?? {}),
      ...(values.root ? { root: values.root } : {}),
      ...(values['train-max-per-class']
        ? { trainMaxPerClass: positiveInt('train-max-per-class', values['train-max-per-class'])! }
        : {}),
      ...(values['test-per-class']
        ? { testPerClass: positiveInt('test-per-class', values['test-per-class'])! }
        : {}),
    };
    const runDir = values.out ?? (resumeCheckpoint ? dirname(resumeCheckpoint) : defaultRunDir(config));
    ensureDir(runDir);
    const session = buildSession(config, file, overrides);
    const d = session.data;
    const what = d.lists
      ? `${d.dataset} (${d.lists.train}, IR ${d.subset.imbalance.toFixed(1)} as listed, evaluated on ${d.lists.val} each epoch)`
      : `${d.dataset}-LT (IR ${d.subset.imbalance}, ${d.subset.profile})`;
    console.error(
      `tailor train: ${config.name} on ${what}, ${d.train.labels.length} training images ` +
        `(${Math.max(...d.trainCounts)} .. ${Math.min(...d.trainCounts)} per class), ${session.model.experts.length} expert(s), ` +
        `${session.model.numParameters()} parameters, ${threads} threads, seed ${seed}; run directory ${runDir}`,
    );
    writeJsonAtomic(`${runDir}/config.json`, config);
    const {
      train: result,
      results,
      resultsPath,
    } = await trainAndEvaluate(session, {
      epochs,
      seed,
      runDir,
      ...(resumeCheckpoint ? { resumeFrom: resumeCheckpoint } : {}),
      quiet: values.quiet ?? false,
    });
    console.log(`uniform test set (last epoch): ${groupsLine(results.uniform)}`);
    console.log(distributionTable(results.distributions, results.mean_top1));
    const report = writeLongtailReport(runDir);
    console.log(
      `results: ${resultsPath}${report ? `\nreport:  ${report}` : ''}\ncheckpoint: ${result.lastCheckpoint}`,
    );
    return 0;
  } catch (error) {
    if (
      error instanceof ConfigError ||
      error instanceof NonFiniteLossError ||
      error instanceof DataFormatError
    )
      throw new CliError(error.message);
    throw error;
  }
}
