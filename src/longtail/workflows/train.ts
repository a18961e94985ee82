// Trains a built session and runs the steps after training: the optimizer, schedule, data and
// checkpoint record all come from the session's config, so the `train` command and the tests
// run exactly the same training; then the results on the test distributions (and PRL's
// controllability grid) are written to the run directory.
import { sessionRecord, trainingSetup, type Session } from '../config/session.js';
import { trainSystem, type ParallelRun, type TrainOptions, type TrainResult } from '../train/trainer.js';
import type { ExecutionMode } from '../train/graph.js';
import { calibrateSession, evaluateSession, writeResults, type LongtailResults } from './results.js';
import { controllabilityGrid } from './preference.js';
import { loadPretrainedFile } from '../models/pretrained.js';
import { readWeightsFile } from './weights-file.js';
import { buildTeacher, readModelWeights, withTeacher } from './distill.js';
import { loadModelWeights } from '../models/checkpoint-layout.js';
import { ConfigError, baseArchType, isExpertAssignment } from '../config/config.js';
import { InputError } from '../../util/errors.js';
import { dispose, type AmpMode, type Tensor } from '../../torch/index.js';

/**
 * How {@link trainSession} trains: epochs, seed, run directory, resumption, device options, logging.
 */
export interface SessionTrainOptions {
  epochs: number;
  seed: number;
  runDir: string;
  resumeFrom?: string;
  quiet?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
  /** One rank of a data-parallel run (only rank 0 then evaluates and writes results). */
  parallel?: ParallelRun | null;
  /** Mixed precision on the session's device (its model's). */
  amp?: AmpMode | null;
  /** Channels-last layout of the model and its batches (default: the config's trainer.channels_last, else off). */
  channelsLast?: boolean;
  /** How the steps run (--graph resolved): 'graph' captures the step in a CUDA graph where it can. */
  graph?: ExecutionMode;
  /** Graph mode's branch streams (default: the config's trainer.branch_streams, else on). */
  branchStreams?: boolean;
  /** --graph on: a step that cannot be captured is an error instead of an eager fallback. */
  graphRequired?: boolean;
}

/**
 * Trains a session's system with the optimiser and schedule of its config, writing checkpoints to
 * `o.runDir`. Needs libtorch.
 * @throws NonFiniteLossError when the loss diverges.
 */
export async function trainSession(session: Session, o: SessionTrainOptions): Promise<TrainResult> {
  // A resumed run's checkpoint holds the weights; a fresh one may start from pretrained ones.
  if (!o.resumeFrom) {
    startFromPretrained(session, o);
    startFromStage1(session, o);
  }
  // The teacher is not in the checkpoints: every start, resumed or not, loads it.
  const teacher = buildTeacher(session);
  if (teacher) {
    say(o)(
      `distill: teacher ${session.config.distill_arch!.type} with ${teacher.experts.length} experts from ${session.config.distill_checkpoint!}`,
    );
  }
  try {
    return await trainSystem({
      ...sessionTrainOptions(session),
      ...(teacher ? { system: withTeacher(session.system, teacher) } : {}),
      epochs: o.epochs,
      seed: o.seed,
      runDir: o.runDir,
      ...(o.resumeFrom ? { resumeFrom: o.resumeFrom } : {}),
      checkpointExtra: sessionRecord(session) as unknown as Record<string, unknown>,
      quiet: o.quiet ?? false,
      ...(o.log ? { log: o.log } : {}),
      parallel: o.parallel ?? null,
      amp: o.amp ?? null,
      channelsLast: channelsLastOf(session, o),
      ...(o.graph ? { graph: o.graph } : {}),
      ...(o.graphRequired ? { graphRequired: true } : {}),
      ...(o.branchStreams !== undefined ? { branchStreams: o.branchStreams } : {}),
    });
  } finally {
    teacher?.dispose();
  }
}

/**
 * The options of trainSystem that come from a session: its system, data, transforms and
 * batching, with the optimizer, schedule, mixup and evaluation period of its config (`setup`:
 * trainingSetup's, made here unless given).
 */
export function sessionTrainOptions(
  session: Session,
  setup: ReturnType<typeof trainingSetup> = trainingSetup(session),
) {
  const { data } = session;
  return {
    system: session.system,
    ...setup,
    train: data.train,
    test: data.val,
    trainCounts: data.trainCounts,
    trainTransform: session.trainTransform,
    ...(data.trainLoader ? { trainLoader: data.trainLoader } : {}),
    testTransform: session.testTransform,
    batchSize: data.batchSize,
    balancedSampling: data.balancedSampling,
    ...(data.onDevice !== undefined ? { onDevice: data.onDevice } : {}),
    ...(session.config.trainer.cudnn_benchmark !== undefined
      ? { cudnnBenchmark: session.config.trainer.cudnn_benchmark }
      : {}),
    ...(session.config.trainer.branch_streams !== undefined
      ? { branchStreams: session.config.trainer.branch_streams }
      : {}),
  } satisfies Partial<TrainOptions>;
}

/** Whether a run trains channels-last: the option given, else the config's trainer.channels_last. */
function channelsLastOf(session: Session, o: SessionTrainOptions): boolean {
  return o.channelsLast ?? session.config.trainer.channels_last ?? false;
}

/**
 * What {@link trainAndEvaluate} returns: the training result and the evaluated results with their path.
 */
export interface TrainedRun {
  train: TrainResult;
  results: LongtailResults;
  resultsPath: string;
}

/**
 * Trains, evaluates the last epoch on the test distributions (PRL: and the controllability grid),
 * fits the calibration on the validation split, writes results.json.
 */
export async function trainAndEvaluate(session: Session, o: SessionTrainOptions): Promise<TrainedRun> {
  const train = await trainSession(session, o);
  const results = await evaluateSession(session, train.lastCheckpoint, train.history);
  results.calibration = await calibrateSession(session);
  if (session.system.kind === 'prl') results.controllability = await controllabilityGrid(session, 10);
  results.world_size = o.parallel?.worldSize ?? 1;
  results.effective_batch = session.data.batchSize;
  results.device = session.system.device.name;
  if (o.amp) results.amp = o.amp;
  if (channelsLastOf(session, o)) results.channels_last = true;
  results.graph = train.graph;
  if (train.graph === 'graph') results.branch_streams = train.branchStreams;
  const resultsPath = writeResults(o.runDir, results);
  return { train, results, resultsPath };
}

/** Sets the model's backbone from the config's arch.args.pretrained, logging what was taken. */
function startFromPretrained(session: Session, o: SessionTrainOptions): void {
  const line = say(o);
  const file = session.config.arch.args.pretrained;
  const optimizer = session.config.optimizer;
  if (!file) {
    if (optimizer.type === 'SGD' && optimizer.args.share_lr !== undefined) {
      line(
        'warning: optimizer.args.share_lr without arch.args.pretrained trains the backbone from scratch at ' +
          "share_lr; SADE's Places-LT recipe starts from ImageNet-pretrained ResNet-152 weights: give them in arch.args.pretrained",
      );
    }
    return;
  }
  const report = loadPretrainedFile(session.model, file, (f) => readWeightsFile(f, 'arch.args.pretrained'));
  const unused = report.unused.length
    ? `; ${report.unused.length} checkpoint tensors unused (${report.unused.slice(0, 3).join(', ')}${report.unused.length > 3 ? ', ...' : ''})`
    : '';
  const text =
    `pretrained: ${file}: ${report.loaded} tensors loaded, ${report.copiedIntoExperts} of them copied into ` +
    `the experts' stages; ${report.kept.length} kept as initialised (the classifiers)${unused}`;
  line(text);
}

/**
 * RIDE-EA: every weight of the trained model from stage1_checkpoint (the routers start fresh).
 * @throws ConfigError naming stage1_checkpoint when the weights do not fit the arch.
 */
function startFromStage1(session: Session, o: SessionTrainOptions): void {
  const { config, file } = session;
  if (!isExpertAssignment(config) || !config.stage1_checkpoint) return;
  const checkpoint = config.stage1_checkpoint;
  let state: Record<string, Tensor> = {};
  try {
    state = readModelWeights(checkpoint, 'stage1_checkpoint');
    const report = loadModelWeights(session.model, state, checkpoint, 'arch');
    say(o)(
      `stage 1: ${checkpoint}: the ${baseArchType(config.arch.type)} weights loaded (${report.layout}); training the routers only`,
    );
  } catch (error) {
    const message =
      error instanceof InputError
        ? error.message
        : `${checkpoint}: ${(error as Error).message} (the stage-1 model must be a ${baseArchType(config.arch.type)} of the same arch.args, e.g. a tailor RIDE run)`;
    throw new ConfigError(file, 'stage1_checkpoint', message);
  } finally {
    dispose(Object.values(state));
  }
}

/** Where a training's notes go: the log callback, else stderr unless quiet. */
function say(o: SessionTrainOptions): (line: string) => void {
  return (line) => {
    if (o.log) o.log(line);
    else if (!o.quiet) process.stderr.write(`${line}\n`);
  };
}
