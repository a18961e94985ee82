// The training loop of the long-tail commands: epochs of augmented (optionally mixup) batches,
// an SGD/AdamW step per batch, the LR schedule per epoch, evaluation on the uniform test set,
// JSONL metrics (an epoch's line after its checkpoint), best/last checkpoints and exact resume (same RNG streams and optimizer state).
// One loop for both kinds of data: in-memory sets give their batches synchronously, image lists
// asynchronously (decoded while the previous batch trains); `for await` consumes either.
// Data-parallel (one rank of a c10d job): every rank trains its shard of each epoch order with
// batch B / W, gradients are averaged across ranks before each step (DDP), rank 0's buffers are
// broadcast before each forward; rank 0 alone evaluates, logs and writes checkpoints and metrics.
import { join } from 'node:path';
import * as torch from '../../torch/index.js';
import { appendLine, ensureDir, writeFileAtomic } from '../../util/fs.js';
import { UserError } from '../../util/errors.js';
import { Rng } from '../../util/rng.js';
import { saveCheckpoint, loadCheckpoint, restoreFrom, restoreTorchRng } from '../../torch/checkpoint.js';
import { mixup, type BatchOptions } from '../data/batches.js';
import { epochBatches } from '../data/source.js';
import { evaluateLogits } from '../metrics/metrics.js';
import { Progress, formatSeconds } from '../../util/progress.js';
import { loadSystemState, setTraining, systemStateDict } from '../systems/system.js';
import { predict, summarize, type GroupResult } from './evaluate.js';
import { batchLayout, channelsLastSystem } from './channels-last.js';
import { deviceInput, hostInput, trainStep, type StepContext, type StepInput } from './step.js';
import { stepContext } from './step-context.js';
import type { EpochRecord, ParallelRun, TrainOptions, TrainResult } from './train-options.js';

export type { EpochRecord, ParallelRun, TrainOptions, TrainResult } from './train-options.js';

const EVAL_BATCH = 256;

/**
 * With maxBatches, evaluation covers the same fraction of the test set as training covered of
 * the training set (so the phases keep their full-epoch proportions), spread evenly over it.
 */
function evalSubset(nTest: number, nTrain: number, batchSize: number, maxBatches: number): number[] {
  const m = Math.max(1, Math.min(nTest, Math.ceil((nTest * maxBatches * batchSize) / nTrain)));
  return Array.from({ length: m }, (_, i) => Math.floor((i * nTest) / m));
}

/** The loss became NaN or infinite: the message names the epoch, the step and the remedy. */
export class NonFiniteLossError extends UserError {}

/** Where a run's outputs go and which part of the job this process is. */
interface RunLayout {
  /** The job this process is one rank of (null: a single process). */
  par: ParallelRun | null;
  /** Rank 0 (or the single process) evaluates, logs and writes. */
  isMain: boolean;
  log: (line: string) => void;
  world: number;
  /** Images per step on this rank. */
  rankBatch: number;
  lastBase: string;
  bestBase: string;
  metricsPath: string;
}

/** What a run has done so far: its epochs' records and best validation epoch. */
interface RunState {
  history: EpochRecord[];
  best: { epoch: number; top1: number } | null;
  startEpoch: number;
}

export async function trainSystem(o: TrainOptions): Promise<TrainResult> {
  const run = runLayout(o);
  const state: RunState = o.resumeFrom
    ? resumeRun(o, o.resumeFrom, run)
    : { history: [], best: null, startEpoch: 1 };
  if (o.channelsLast) channelsLastSystem(o.system);
  const cudnnBefore = o.system.device.type === 'cuda' ? torch.backends.cudnn.benchmark : null;
  if (cudnnBefore !== null) torch.backends.cudnn.benchmark = o.cudnnBenchmark ?? true;
  // After a resume too: every rank continues from rank 0's weights.
  const ctx = stepContext(o, run);
  try {
    const result = await trainEpochs(o, run, state, ctx);
    const graphed = ctx.graphed !== null && ctx.graphed.failure === null && ctx.graphed.replays > 0;
    return {
      ...result,
      graph: graphed ? 'graph' : 'eager',
      branchStreams: graphed && ctx.graphed!.branchStreams,
    };
  } finally {
    if (cudnnBefore !== null) torch.backends.cudnn.benchmark = cudnnBefore;
    ctx.graphed?.dispose();
    ctx.figures.dispose();
    ctx.source?.dispose();
  }
}

async function trainEpochs(
  o: TrainOptions,
  run: RunLayout,
  state: RunState,
  ctx: StepContext,
): Promise<TrainResult> {
  for (let epoch = state.startEpoch; epoch <= o.epochs; epoch++) {
    const started = performance.now();
    const trained = await trainEpoch(o, run, ctx, epoch);
    const val = await validateEpoch(o, run, epoch);
    const record: EpochRecord = {
      epoch,
      lr: o.optimizer.paramGroups[0]!.lr,
      train_loss: trained.lossSum / Math.max(trained.seen, 1),
      train_acc: trained.correct / Math.max(trained.seen, 1),
      val,
      seconds: (performance.now() - started) / 1000,
    };
    state.history.push(record);
    if (!run.isMain) {
      // The others wait here while rank 0 evaluates and saves (within TAILOR_DIST_TIMEOUT).
      run.par!.group.barrier();
      continue;
    }
    logEpoch(run.log, record, o.epochs);
    saveEpoch(o, run, state, record);
    run.par?.group.barrier();
  }
  return {
    history: state.history,
    best: state.best,
    lastCheckpoint: `${run.lastBase}.json`,
    bestCheckpoint: state.best ? `${run.bestBase}.json` : null,
    graph: 'eager',
    branchStreams: false,
  };
}

function runLayout(o: TrainOptions): RunLayout {
  const par = o.parallel && o.parallel.worldSize > 1 ? o.parallel : null;
  const isMain = !par || par.rank === 0;
  const world = par?.worldSize ?? 1;
  if (o.batchSize % world !== 0) {
    throw new RangeError(
      `data_loader.args.batch_size ${o.batchSize} is the effective batch of the ${world} ranks and must divide by ${world}`,
    );
  }
  if (isMain) ensureDir(o.runDir);
  return {
    par,
    isMain,
    log: isMain ? (o.log ?? ((s: string) => console.error(s))) : () => {},
    world,
    rankBatch: o.batchSize / world,
    lastBase: join(o.runDir, 'checkpoint-last'),
    bestBase: join(o.runDir, 'model_best'),
    metricsPath: join(o.runDir, 'metrics.jsonl'),
  };
}

/** Restores weights, optimizer, schedule and RNG streams from a checkpoint, and the run's records. */
function resumeRun(o: TrainOptions, from: string, run: RunLayout): RunState {
  const ck = loadCheckpoint(from.replace(/\.json$/, ''));
  try {
    restoreFrom(ck, 'the weights', () => torch.tidy(() => loadSystemState(o.system, ck.weights)));
    const { optimizer, scheduler } = ck;
    if (optimizer) restoreFrom(ck, 'the optimizer state', () => o.optimizer.loadStateDict(optimizer));
    if (scheduler && o.scheduler) {
      const target = o.scheduler;
      restoreFrom(ck, 'the schedule', () => target.loadStateDict(scheduler));
    }
    restoreTorchRng(ck);
  } finally {
    torch.dispose([ck.weights, ck.optimizer?.state]);
  }
  const extra = (ck.extra !== null && typeof ck.extra === 'object' ? ck.extra : {}) as {
    history?: unknown;
    best?: unknown;
  };
  const history = Array.isArray(extra.history) ? (extra.history as EpochRecord[]) : [];
  const b = extra.best as { epoch?: unknown; top1?: unknown } | null | undefined;
  const best =
    b && typeof b.epoch === 'number' && typeof b.top1 === 'number' ? { epoch: b.epoch, top1: b.top1 } : null;
  const startEpoch = (ck.epoch ?? 0) + 1;
  // metrics.jsonl holds exactly the epochs of the checkpoint: a line written for an epoch whose
  // checkpoint never made it (a crash or a full disk in between) is dropped, a missing one restored.
  if (run.isMain) writeFileAtomic(run.metricsPath, history.map((h) => JSON.stringify(h) + '\n').join(''));
  run.log(`resumed from ${from} at epoch ${startEpoch}`);
  return { history, best, startEpoch };
}

/** One epoch of training steps; the loss and accuracy sums over every rank's images. */
async function trainEpoch(
  o: TrainOptions,
  run: RunLayout,
  ctx: StepContext,
  epoch: number,
): Promise<{ lossSum: number; correct: number; seen: number }> {
  const { par, world } = run;
  // The schedule is indexed from epoch 0 like the reference (lr for epoch e = f(e - 1)).
  if (o.scheduler && epoch > 1 && o.scheduler.lastEpoch < epoch - 1) {
    while (o.scheduler.lastEpoch < epoch - 1) o.scheduler.step();
  }
  o.system.loss.setEpoch?.(epoch);
  setTraining(o.system, true);
  // Every epoch's randomness derives from (seed, epoch): a resumed run draws what an
  // uninterrupted one would have drawn.
  const rng = new Rng((o.seed * 1000003 + epoch) >>> 0);
  // the epoch's order: the same for host and device batches
  const order: BatchOptions = {
    batchSize: o.batchSize,
    sampler: o.balancedSampling ? 'class-balanced' : 'shuffle',
    seed: o.seed,
    epoch,
    ...(par ? { batchSize: run.rankBatch, shard: { rank: par.rank, worldSize: world } } : {}),
  };
  const progress = new Progress({
    label: `epoch ${epoch}/${o.epochs}`,
    total: Math.ceil(o.train.labels.length / world),
    unit: 'img',
    quiet: (o.quiet ?? false) || !run.isMain,
  });
  const figures = ctx.figures;
  figures.reset();
  let seen = 0;
  let step = 0;
  // The figures are read (a wait for the device) only when the progress line is drawn, every
  // CHECK_EVERY steps and at the epoch's end. A NaN or infinite loss is therefore noticed at the
  // next read, not at its own step: the steps in between train on (no checkpoint is written in
  // between), and the error still names the epoch and the first step whose loss was not finite.
  const read = () => {
    const f = figures.read();
    if (f.badStep > 0) {
      throw new NonFiniteLossError(
        `the loss became ${f.badLoss} at epoch ${epoch}, step ${f.badStep}; lower the learning rate (optimizer.args.lr) or check the data, then resume from ${run.lastBase}.json`,
      );
    }
    return f;
  };
  /** One step (replayed from the graph in graph mode); true when the epoch stops here. */
  const trainOne = (input: () => StepInput, n: number): boolean => {
    step++;
    ctx.ddp?.syncBuffers();
    if (ctx.graphed) ctx.graphed.step(input, rng, step);
    else trainStep(o, ctx, { input, rng, step });
    seen += n;
    progress.tick(n, () => `loss ${(read().lossSum / seen).toFixed(4)}`);
    if (step % CHECK_EVERY === 0) read();
    return o.maxBatches !== undefined && step >= o.maxBatches;
  };
  o.phases?.mark();
  if (ctx.source) {
    for (const item of ctx.source.epoch(order)) {
      if (trainOne(() => deviceInput(item.draw(), o.mixupAlpha, rng), item.n)) break;
    }
  } else {
    for await (const batch of epochBatches(
      o.train,
      { ...order, transform: o.trainTransform },
      o.trainLoader,
    )) {
      const mixed = o.mixupAlpha ? mixup(batch, o.mixupAlpha, rng) : null;
      if (trainOne(() => hostInput(batch, mixed), batch.n)) break;
    }
  }
  progress.finish();
  let { lossSum, correct } = read();
  if (par) [lossSum, correct, seen] = sumOverRanks(par, [lossSum, correct, seen]);
  return { lossSum, correct, seen };
}

/** How often (in steps) the trainer reads its device-side figures even when no line is drawn. */
const CHECK_EVERY = 50;

/** Rank 0's evaluation on the validation set, every evalPeriod epochs and after the last. */
async function validateEpoch(o: TrainOptions, run: RunLayout, epoch: number): Promise<GroupResult | null> {
  const evalPeriod = o.evalPeriod ?? 1;
  if (!run.isMain || (epoch % evalPeriod !== 0 && epoch !== o.epochs)) return null;
  o.phases?.mark();
  setTraining(o.system, false);
  const p = await predict(
    (x) => o.system.evalForward(batchLayout(x, o.channelsLast)),
    o.test,
    o.testTransform,
    EVAL_BATCH,
    o.maxBatches === undefined
      ? undefined
      : evalSubset(o.test.labels.length, o.train.labels.length, o.batchSize, o.maxBatches),
  );
  const val = summarize(evaluateLogits(p.logits, p.labels, p.classes, o.trainCounts));
  o.phases?.lap('eval');
  return val;
}

function logEpoch(log: (line: string) => void, record: EpochRecord, epochs: number): void {
  const { val } = record;
  const fmt = (v: number | null | undefined) =>
    v === null || v === undefined ? '  -  ' : (100 * v).toFixed(2);
  log(
    `epoch ${record.epoch}/${epochs} lr ${record.lr.toExponential(2)} loss ${record.train_loss.toFixed(4)} train acc ${fmt(record.train_acc)}` +
      (val
        ? ` | val top1 ${fmt(val.top1)} many ${fmt(val.many)} medium ${fmt(val.medium)} few ${fmt(val.few)}`
        : '') +
      ` (${formatSeconds(record.seconds)})`,
  );
}

/** The epoch's checkpoints (last, best when it improved, periodic), then its metrics line. */
function saveEpoch(o: TrainOptions, run: RunLayout, state: RunState, record: EpochRecord): void {
  const { epoch, val } = record;
  const improved = val !== null && val.top1 !== null && (state.best === null || val.top1 > state.best.top1);
  if (improved) state.best = { epoch, top1: val!.top1! };
  const content = {
    weights: systemStateDict(o.system),
    optimizer: o.optimizer.stateDict(),
    ...(o.scheduler ? { scheduler: o.scheduler.stateDict() } : {}),
    epoch,
    extra: { ...o.checkpointExtra, history: state.history, best: state.best },
  };
  saveCheckpoint(run.lastBase, content);
  if (improved) saveCheckpoint(run.bestBase, content);
  if (o.savePeriod && epoch % o.savePeriod === 0)
    saveCheckpoint(join(o.runDir, `checkpoint-epoch${epoch}`), content);
  // Only now the epoch's metrics line: every line of metrics.jsonl has its checkpoint.
  appendLine(run.metricsPath, JSON.stringify(record));
}

/** The element-wise sums of a few numbers over all ranks (one float64 allreduce). */
function sumOverRanks(par: ParallelRun, values: number[]): number[] {
  return torch.tidy(() => {
    const t = torch.tensor(Float64Array.from(values));
    par.group.allreduce(t);
    return [...t.toFloat64Array()];
  });
}
