// tailor train -c CONFIG [-r CHECKPOINT] [--epochs N] [--out DIR] [--seed S]
import { parseArgs } from 'node:util';
import { dirname } from 'node:path';
import { mkdirSync } from 'node:fs';
import * as torch from '../../torch/index.js';
import { writeJsonAtomic } from '../../torch/fs.js';
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
  withOverrides,
  type SessionRecord,
} from '../../longtail/index.js';
import { writeLongtailReport } from '../../report/index.js';
import { CliError } from '../errors.js';
import { numberArg, numberOr } from '../args.js';
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
    const written = values.config
      ? loadConfig(values.config)
      : parseConfig(JSON.stringify(record!.config), `${resumeCheckpoint} (stored config)`);
    const config = withOverrides(written, {
      epochs: numberArg('--epochs', values.epochs, { integer: true, min: 1 }),
      seed: numberOr('--seed', values.seed, written.seed ?? 0, { integer: true, min: 0 }),
    });
    const epochs = config.trainer.epochs;
    const seed = config.seed ?? 0;
    const threads = numberOr('--threads', values.threads, config.trainer.threads ?? 2, {
      integer: true,
      min: 1,
    });
    torch.setNumThreads(threads);
    torch.manualSeed(seed);
    const positive = { integer: true, min: 1 };
    const overrides = {
      ...(record?.overrides ?? {}),
      ...(values.root ? { root: values.root } : {}),
      ...(values['train-max-per-class']
        ? { trainMaxPerClass: numberArg('--train-max-per-class', values['train-max-per-class'], positive)! }
        : {}),
      ...(values['test-per-class']
        ? { testPerClass: numberArg('--test-per-class', values['test-per-class'], positive)! }
        : {}),
    };
    const runDir = values.out ?? (resumeCheckpoint ? dirname(resumeCheckpoint) : defaultRunDir(config));
    mkdirSync(runDir, { recursive: true });
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
