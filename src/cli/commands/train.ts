// tailor train -c CONFIG [-r CHECKPOINT] [--epochs N] [--out DIR] [--seed S]
import { dirname } from 'node:path';
import * as torch from '../../torch/index.js';
import { ensureDir, writeJsonAtomic } from '../../util/fs.js';
import {
  applySettings,
  buildSession,
  defaultRunDir,
  loadConfig,
  parseConfig,
  readSessionRecord,
  resolveCheckpoint,
  trainAndEvaluate,
  withOverrides,
  trainSession,
  parseGraphMode,
  resolveGraphMode,
  type ExecutionMode,
  type LongtailResults,
  type Session,
  type SessionRecord,
  type TrainConfig,
} from '../../longtail/index.js';
import { writeLongtailReport } from '../../report/index.js';
import { CliError } from '../errors.js';
import { RUNTIME_OPTIONS, defineCommand } from '../command.js';
import { numberArg, numberOr } from '../args.js';
import { joinJob, resolveAmp, resolveThreads, useDevice, type DistributedRun } from '../runtime.js';
import { distributionTable, groupsLine } from './longtail-common.js';

const HELP = `usage: tailor train -c CONFIG [-r CHECKPOINT] [options]

Trains a long-tail model, evaluating on the balanced validation split held out of the training
pool every epoch (model_best is chosen there), then once on the eleven test-agnostic
distributions. Writes checkpoints, metrics.jsonl, results.json and report.html.

What the config chooses (the structure of the SADE / BalPoE / LDAM-DRW / PRL reference configs):
  arch.type         ResNet32Model (CIFAR / Fashion-MNIST), ResNet10Model, ResNet50Model,
                    ResNeXt50Model, ResNet152Model (ImageNet-LT, iNaturalist, Places-LT); one or
                    several experts; arch.args.pretrained starts from a weights file.
                    ResNet32EAModel, ResNet10EAModel, ResNet50EAModel, ResNeXt50EAModel: RIDE-EA,
                    routers over the trained model of "stage1_checkpoint" (a RIDE run), the
                    only part trained (top_choices_num, pos_weight, share_expert_help_pred_fc,
                    force_all in arch.args)
  loss.type         CrossEntropyLoss (CE; reweight_epoch: deferred class-balanced reweighting),
                    BalancedSoftmaxLoss, LogitAdjustLoss, FocalLoss, LDAMLoss (LDAM-DRW with
                    reweight_epoch), DiverseExpertLoss (SADE's experts), BSExpertLoss (BalPoE's
                    logit-adjusted experts), RIDELoss (RIDE: LDAM-DRW per expert with a
                    diversity term; RIDELossWithDistill with "distill", "distill_arch" and
                    "distill_checkpoint" distils from a teacher run), PRLLoss (PRL; scalarization stch, linear, ls,
                    released_stch or sum)
  prl               a "prl" section trains PRL: a hypernetwork generates the experts' classifiers
                    from a preference drawn from a Dirichlet; variant paper or released,
                    scalarization stch (smooth Tchebycheff) or linear
  data_loader.type  ImbalanceCIFAR10DataLoader, ImbalanceCIFAR100DataLoader,
                    ImbalanceFashionMNISTDataLoader (imb_type exp or step), ImageNetLTDataLoader,
                    iNaturalistDataLoader, Places_LT (or Places_LT_DataLoader)
  optimizer.type    SGD, Adam or AdamW
  lr_scheduler.type CustomLR (warm-up, then x gamma at step1 and step2), MultiStepLR,
                    CosineAnnealingLR or StepLR

options:
  -c, --config FILE        JSON config (structure of the SADE/PRL configs)
  -r, --resume CHECKPOINT  resume an interrupted run (checkpoint-last.json of its run directory)
      --epochs N           override trainer.epochs
      --set PATH=VALUE     set any config field before the config is checked (repeatable): the
                           path is dotted, the value JSON or else text, e.g. --set
                           optimizer.args.lr=0.05 --set arch.args.num_experts=7 --set
                           loss.args.tau_list=limits (BalPoE's --num_experts 7 --tau_list limits)
      --out DIR            run directory (default: <trainer.save_dir or runs>/<name>/<timestamp>)
      --seed S             global seed (default: config seed or 0)
      --root DIR           data directory (overrides data_loader.args.data_dir)
      --threads N          libtorch threads (default: TAILOR_THREADS, trainer.threads or 2)
      --device D           cpu, cuda or cuda:N (default: the config's "device", else n_gpu: 0 = cpu)
      --amp bf16|fp16      mixed precision (autocast; fp16 with a gradient scaler; fp16 needs a GPU)
      --channels-last      lay out the convolution weights and every batch channels-last (NHWC),
                           the fast layout of GPU convolutions, above all with --amp bf16
                           (default: trainer.channels_last; --no-channels-last turns it off)
      --graph auto|on|off  capture the training step in one CUDA graph and replay it per batch
                           (default auto: on a CUDA device where the step can be captured, with one
                           line naming why not otherwise; on: that line is an error; docs/gpus.md)
      --no-branch-streams  in graph mode, keep the step on one CUDA stream instead of running each
                           expert (and PRL draw) on a stream of its own (default:
                           trainer.branch_streams, else on; docs/gpus.md)
      --train-max-per-class N  cap the head class (quick runs)
      --test-per-class N   use only N test images per class (quick runs)
      --quiet              no progress bar
  -h, --help

Under \`tailor launch\` (or torchrun) each rank trains its shard of every epoch with
batch_size / ranks images per step (batch_size stays the effective batch, so the learning rate
needs no change); rank 0 evaluates and writes the run directory.`;

export const run = defineCommand({
  help: HELP,
  options: {
    config: { type: 'string', short: 'c' },
    resume: { type: 'string', short: 'r' },
    epochs: { type: 'string' },
    out: { type: 'string' },
    seed: { type: 'string' },
    set: { type: 'string', multiple: true },
    root: { type: 'string' },
    ...RUNTIME_OPTIONS,
    amp: { type: 'string' },
    'channels-last': { type: 'boolean' },
    'no-channels-last': { type: 'boolean' },
    graph: { type: 'string' },
    'no-branch-streams': { type: 'boolean' },
    'train-max-per-class': { type: 'string' },
    'test-per-class': { type: 'string' },
    quiet: { type: 'boolean', default: false },
  },
  run: async ({ values }) => {
    let record: SessionRecord | undefined;
    let resumeCheckpoint: string | undefined;
    if (values.resume) {
      resumeCheckpoint = resolveCheckpoint(values.resume);
      record = readSessionRecord(resumeCheckpoint);
    }
    if (!values.config && !record)
      throw new CliError(`give a config with -c CONFIG (or resume with -r CHECKPOINT)\n\n${HELP}`);

    const { file, config } = trainConfig(values, record, resumeCheckpoint);
    const setup = runSetup(values, config);
    const overrides = dataOverrides(values, record);
    const runDir = values.out ?? (resumeCheckpoint ? dirname(resumeCheckpoint) : defaultRunDir(config));
    if (setup.isMain) ensureDir(runDir);
    const session = buildSession(config, file, overrides);
    const { parallel } = setup;
    if (parallel && session.data.batchSize % parallel.worldSize !== 0)
      throw new CliError(
        `data_loader.args.batch_size ${session.data.batchSize} is the effective batch over the ${parallel.worldSize} ranks and must divide by ${parallel.worldSize}`,
      );
    if (setup.isMain) {
      console.error(runDescription(config, session, setup, runDir));
      const empty = emptyClassesWarning(config, session);
      if (empty) console.error(empty);
    }
    const trainOptions = {
      epochs: config.trainer.epochs,
      seed: setup.seed,
      runDir,
      ...(resumeCheckpoint ? { resumeFrom: resumeCheckpoint } : {}),
      quiet: values.quiet ?? false,
      parallel,
      amp: setup.amp,
      channelsLast: setup.channelsLast,
      graph: setup.graph,
      graphRequired: setup.graphRequired,
      ...(values['no-branch-streams'] ? { branchStreams: false } : {}),
    };
    if (!setup.isMain) {
      // Every rank trains; rank 0 alone evaluates and writes the run directory.
      await trainSession(session, trainOptions);
      parallel!.group.destroy();
      return 0;
    }
    writeJsonAtomic(`${runDir}/config.json`, config);
    const { train: result, results, resultsPath } = await trainAndEvaluate(session, trainOptions);
    parallel?.group.destroy();
    printResults(runDir, results, resultsPath, result.lastCheckpoint);
    return 0;
  },
});

/**
 * The config: the file given, else the one stored in the checkpoint resumed, with --set, --epochs
 * and --seed.
 */
function trainConfig(
  values: { config?: string; epochs?: string; seed?: string; set?: string[] },
  record: SessionRecord | undefined,
  resumeCheckpoint: string | undefined,
): { file: string; config: TrainConfig } {
  const file = values.config ?? record!.configFile;
  const settings = values.set ?? [];
  const written = values.config
    ? loadConfig(values.config, settings)
    : parseConfig(
        JSON.stringify(applySettings(record!.config, settings)),
        `${resumeCheckpoint} (stored config${settings.length > 0 ? ', with --set' : ''})`,
      );
  const config = withOverrides(written, {
    epochs: numberArg('--epochs', values.epochs, { integer: true, min: 1 }),
    seed: numberOr('--seed', values.seed, written.seed ?? 0, { integer: true, min: 0 }),
  });
  return { file, config };
}

interface RunSetup {
  seed: number;
  threads: number;
  device: torch.Device;
  amp: torch.AmpMode | null;
  /** --channels-last / --no-channels-last, else trainer.channels_last. */
  channelsLast: boolean;
  /** How the steps run (--graph resolved for the device). */
  graph: ExecutionMode;
  /** --graph on (a step that cannot be captured is an error). */
  graphRequired: boolean;
  parallel: DistributedRun | null;
  /** Rank 0 (or the single process) evaluates and writes the run directory. */
  isMain: boolean;
}

/** Threads, the device, mixed precision and the seed of the run; the job when started as one of its ranks. */
function runSetup(
  values: {
    threads?: string;
    device?: string;
    amp?: string;
    graph?: string;
    'channels-last'?: boolean;
    'no-channels-last'?: boolean;
  },
  config: TrainConfig,
): RunSetup {
  const seed = config.seed ?? 0;
  const threads = resolveThreads(values.threads, config.trainer.threads ?? 2);
  torch.setNumThreads(threads);
  // The model, its batches and optimizer state are created on the run's device.
  const device = useDevice(values.device, config);
  const amp = resolveAmp(values.amp, device);
  if (values['channels-last'] && values['no-channels-last'])
    throw new CliError('give --channels-last or --no-channels-last, not both');
  const channelsLast = values['channels-last']
    ? true
    : values['no-channels-last']
      ? false
      : (config.trainer.channels_last ?? false);
  const graphMode = parseGraphMode(values.graph);
  const graph = resolveGraphMode(graphMode, device);
  torch.manualSeed(seed);
  const parallel = joinJob(device);
  return {
    seed,
    threads,
    device,
    amp,
    channelsLast,
    graph,
    graphRequired: graphMode === 'on',
    parallel,
    isMain: !parallel || parallel.isMain,
  };
}

/** The data overrides: the resumed run's, then --root and the quick-run caps. */
function dataOverrides(
  values: { root?: string; 'train-max-per-class'?: string; 'test-per-class'?: string },
  record: SessionRecord | undefined,
): SessionRecord['overrides'] {
  const positive = { integer: true, min: 1 };
  return {
    ...(record?.overrides ?? {}),
    ...(values.root ? { root: values.root } : {}),
    ...(values['train-max-per-class']
      ? { trainMaxPerClass: numberArg('--train-max-per-class', values['train-max-per-class'], positive)! }
      : {}),
    ...(values['test-per-class']
      ? { testPerClass: numberArg('--test-per-class', values['test-per-class'], positive)! }
      : {}),
  };
}

/** The line that says what is trained, on what, where, and where it is written. */
function runDescription(config: TrainConfig, session: Session, setup: RunSetup, runDir: string): string {
  const d = session.data;
  const { device, amp, parallel } = setup;
  const what = d.lists
    ? `${d.dataset} (${d.lists.train}, IR ${d.subset.imbalance.toFixed(1)} as listed, evaluated on ${d.lists.val} each epoch)`
    : `${d.dataset}-LT (IR ${d.subset.imbalance}, ${d.subset.profile}; ${d.val.labels.length} validation images held out of the training pool, evaluated each epoch)`;
  return (
    `tailor train: ${config.name} on ${what}, ${d.train.labels.length} training images ` +
    `(${Math.max(...d.trainCounts)} .. ${Math.min(...d.trainCounts)} per class), ${session.model.experts.length} expert(s), ` +
    `${session.model.numParameters()} parameters${session.system.kind === 'ea' ? ` (frozen; ${session.system.router.numParameters()} router parameters trained)` : ''}, ${setup.threads} threads, ${device}${amp ? ` (${amp})` : ''}${setup.channelsLast ? ', channels-last' : ''}${parallel ? `, rank 0 of ${parallel.worldSize}` : ''}, seed ${setup.seed}; run directory ${runDir}`
  );
}

/**
 * A warning when classes of the model have no training image: an image list that uses fewer
 * classes than arch.args.num_classes (the reference configs say 1000 for ImageNet-LT, a synthetic
 * or own set may have 10). Training still runs, as the reference code would, but those classes
 * are learnt only as wrong answers and the long-tail losses treat them as the rarest.
 */
export function emptyClassesWarning(config: TrainConfig, session: Session): string | null {
  const counts = session.data.trainCounts;
  const empty = counts.filter((n) => n === 0).length;
  if (empty === 0) return null;
  const used = counts.length - empty;
  const where = session.data.lists ? ` in ${session.data.lists.train}` : '';
  // only where the labels in use are 0 .. used - 1 is a smaller num_classes the remedy
  const remedy = counts.slice(0, used).every((n) => n > 0)
    ? `if the data has only ${used} classes, set arch.args.num_classes to ${used} (labels 0 .. ${used - 1})`
    : `the first is label ${counts.indexOf(0)}`;
  return (
    `tailor train: warning: ${empty} of the ${counts.length} classes (arch.args.num_classes ${config.arch.args.num_classes}) ` +
    `have no training image${where}; ${remedy}`
  );
}

/** The test results, the report and the checkpoint, on stdout. */
function printResults(
  runDir: string,
  results: LongtailResults,
  resultsPath: string,
  checkpoint: string,
): void {
  console.log(`uniform test set (last epoch): ${groupsLine(results.uniform)}`);
  console.log(distributionTable(results.distributions, results.mean_top1));
  const report = writeLongtailReport(runDir);
  console.log(`results: ${resultsPath}${report ? `\nreport:  ${report}` : ''}\ncheckpoint: ${checkpoint}`);
}
