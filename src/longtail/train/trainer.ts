// The training loop of the long-tail commands: epochs of augmented (optionally mixup) batches,
// an SGD/AdamW step per batch, the LR schedule per epoch, evaluation on the uniform test set,
// JSONL metrics, best/last checkpoints and exact resume (same RNG streams and optimizer state).
// One loop for both kinds of data: in-memory sets give their batches synchronously, image lists
// asynchronously (decoded while the previous batch trains); `for await` consumes either.
import { join } from 'node:path';
import { appendFileSync, mkdirSync } from 'node:fs';
import * as torch from '../../torch/index.js';
import { optim } from '../../torch/index.js';
import { Rng } from '../../torch/rng.js';
import { saveCheckpoint, loadCheckpoint, restoreTorchRng } from '../../torch/checkpoint.js';
import { mixup } from '../data/batches.js';
import type { ImageTransform } from '../data/augment.js';
import { epochBatches, type ImageSet } from '../data/source.js';
import { mixupLoss } from '../losses/mixup.js';
import { evaluateLogits } from '../core/metrics.js';
import { Progress, formatSeconds } from '../core/progress.js';
import { loadSystemState, setTraining, systemStateDict, type TrainableSystem } from '../systems/system.js';
import { predict, summarize, type GroupResult } from './evaluate.js';
import type { PhaseClock } from './phases.js';

export interface EpochRecord {
  epoch: number;
  lr: number;
  train_loss: number;
  train_acc: number;
  val: GroupResult | null;
  seconds: number;
}

export interface TrainOptions {
  system: TrainableSystem;
  optimizer: optim.SGD | optim.AdamW;
  scheduler: optim.LRScheduler | null;
  train: ImageSet;
  /** Evaluated after every epoch (the uniform test set, or an image list's val list). */
  test: ImageSet;
  trainCounts: number[];
  trainTransform: ImageTransform;
  testTransform: ImageTransform;
  epochs: number;
  batchSize: number;
  balancedSampling?: boolean;
  mixupAlpha?: number;
  seed: number;
  runDir: string;
  evalPeriod?: number;
  savePeriod?: number;
  resumeFrom?: string;
  /** Stored in every checkpoint so test commands can rebuild the experiment. */
  checkpointExtra: Record<string, unknown>;
  log?: (line: string) => void;
  quiet?: boolean;
  /** Stop each epoch after this many batches (benchmarks on a busy machine; not for real runs). */
  maxBatches?: number;
  /** Accumulates the seconds spent per phase (bench/epoch.ts); timing is all it does. */
  phases?: PhaseClock;
}

const EVAL_BATCH = 256;

/**
 * With maxBatches, evaluation covers the same fraction of the test set as training covered of
 * the training set (so the phases keep their full-epoch proportions), spread evenly over it.
 */
function evalSubset(nTest: number, nTrain: number, batchSize: number, maxBatches: number): number[] {
  const m = Math.max(1, Math.min(nTest, Math.ceil((nTest * maxBatches * batchSize) / nTrain)));
  return Array.from({ length: m }, (_, i) => Math.floor((i * nTest) / m));
}

export class NonFiniteLossError extends Error {}

export interface TrainResult {
  history: EpochRecord[];
  best: { epoch: number; top1: number } | null;
  lastCheckpoint: string;
  bestCheckpoint: string | null;
}

export async function trainSystem(o: TrainOptions): Promise<TrainResult> {
  const log = o.log ?? ((s: string) => console.error(s));
  mkdirSync(o.runDir, { recursive: true });
  const lastBase = join(o.runDir, 'checkpoint-last');
  const bestBase = join(o.runDir, 'model_best');
  const metricsPath = join(o.runDir, 'metrics.jsonl');
  let history: EpochRecord[] = [];
  let best: { epoch: number; top1: number } | null = null;
  let startEpoch = 1;

  if (o.resumeFrom) {
    const ck = loadCheckpoint(o.resumeFrom.replace(/\.json$/, ''));
    torch.tidy(() => loadSystemState(o.system, ck.weights));
    if (ck.optimizer) o.optimizer.loadStateDict(ck.optimizer);
    if (ck.scheduler && o.scheduler) o.scheduler.loadStateDict(ck.scheduler);
    restoreTorchRng(ck);
    const extra = (ck.extra ?? {}) as {
      history?: EpochRecord[];
      best?: { epoch: number; top1: number } | null;
    };
    history = extra.history ?? [];
    best = extra.best ?? null;
    startEpoch = (ck.epoch ?? 0) + 1;
    torch.dispose([ck.weights, ck.optimizer?.state]);
    log(`resumed from ${o.resumeFrom} at epoch ${startEpoch}`);
  }

  for (let epoch = startEpoch; epoch <= o.epochs; epoch++) {
    const started = performance.now();
    // The schedule is indexed from epoch 0 like the reference (lr for epoch e = f(e - 1)).
    if (o.scheduler && epoch > 1 && o.scheduler.lastEpoch < epoch - 1) {
      while (o.scheduler.lastEpoch < epoch - 1) o.scheduler.step();
    }
    o.system.loss.setEpoch?.(epoch);
    setTraining(o.system, true);
    // Every epoch's randomness derives from (seed, epoch): a resumed run draws what an
    // uninterrupted one would have drawn.
    const rng = new Rng((o.seed * 1000003 + epoch) >>> 0);
    const batches = epochBatches(o.train, {
      batchSize: o.batchSize,
      sampler: o.balancedSampling ? 'class-balanced' : 'shuffle',
      seed: o.seed,
      epoch,
      transform: o.trainTransform,
    });
    const total = o.train.labels.length;
    const progress = new Progress({
      label: `epoch ${epoch}/${o.epochs}`,
      total,
      unit: 'img',
      quiet: o.quiet ?? false,
    });
    let lossSum = 0;
    let correct = 0;
    let seen = 0;
    let step = 0;
    const phases = o.phases;
    phases?.mark();
    for await (const batch of batches) {
      step++;
      const mixed = o.mixupAlpha ? mixup(batch, o.mixupAlpha, rng) : null;
      const stepLoss = torch.tidy(() => {
        const x = torch.tensor(mixed ? mixed.x : batch.x, { shape: [batch.n, ...batch.shape] });
        const yA = torch.tensor(mixed ? mixed.yA : batch.y).long();
        phases?.lap('data');
        const { out, extra } = o.system.trainForward(x, rng);
        const loss =
          mixed && mixed.lam < 1
            ? mixupLoss(o.system.loss, out, yA, torch.tensor(mixed.yB).long(), mixed.lam, extra)
            : o.system.loss.forward(out, yA, extra);
        const value = loss.item();
        if (!Number.isFinite(value)) {
          throw new NonFiniteLossError(
            `the loss became ${value} at epoch ${epoch}, step ${step}; lower the learning rate (optimizer.args.lr) or check the data, then resume from ${lastBase}.json`,
          );
        }
        phases?.lap('forward');
        loss.backward();
        const pred = out.output.argmax(1);
        correct += pred.eq(torch.tensor(batch.y).long()).sum().item();
        return value;
      });
      phases?.lap('backward');
      o.optimizer.step();
      o.optimizer.zeroGrad();
      phases?.lap('optimizer');
      lossSum += stepLoss * batch.n;
      seen += batch.n;
      progress.tick(batch.n, `loss ${(lossSum / seen).toFixed(4)}`);
      if (o.maxBatches !== undefined && step >= o.maxBatches) break;
    }
    progress.finish();
    let val: GroupResult | null = null;
    const evalPeriod = o.evalPeriod ?? 1;
    if (epoch % evalPeriod === 0 || epoch === o.epochs) {
      phases?.mark();
      setTraining(o.system, false);
      const p = await predict(
        (x) => o.system.evalForward(x),
        o.test,
        o.testTransform,
        EVAL_BATCH,
        o.maxBatches === undefined
          ? undefined
          : evalSubset(o.test.labels.length, o.train.labels.length, o.batchSize, o.maxBatches),
      );
      val = summarize(evaluateLogits(p.logits, p.labels, p.classes, o.trainCounts));
      phases?.lap('eval');
    }
    const record: EpochRecord = {
      epoch,
      lr: o.optimizer.paramGroups[0]!.lr,
      train_loss: lossSum / Math.max(seen, 1),
      train_acc: correct / Math.max(seen, 1),
      val,
      seconds: (performance.now() - started) / 1000,
    };
    history.push(record);
    appendFileSync(metricsPath, JSON.stringify(record) + '\n');
    const fmt = (v: number | null | undefined) =>
      v === null || v === undefined ? '  -  ' : (100 * v).toFixed(2);
    log(
      `epoch ${epoch}/${o.epochs} lr ${record.lr.toExponential(2)} loss ${record.train_loss.toFixed(4)} train acc ${fmt(record.train_acc)}` +
        (val
          ? ` | uniform top1 ${fmt(val.top1)} many ${fmt(val.many)} medium ${fmt(val.medium)} few ${fmt(val.few)}`
          : '') +
        ` (${formatSeconds(record.seconds)})`,
    );
    const improved = val !== null && val.top1 !== null && (best === null || val.top1 > best.top1);
    if (improved) best = { epoch, top1: val!.top1! };
    const content = {
      weights: systemStateDict(o.system),
      optimizer: o.optimizer.stateDict(),
      ...(o.scheduler ? { scheduler: o.scheduler.stateDict() } : {}),
      epoch,
      extra: { ...o.checkpointExtra, history, best },
    };
    saveCheckpoint(lastBase, content);
    if (improved) saveCheckpoint(bestBase, content);
    if (o.savePeriod && epoch % o.savePeriod === 0)
      saveCheckpoint(join(o.runDir, `checkpoint-epoch${epoch}`), content);
  }

  return {
    history,
    best,
    lastCheckpoint: `${lastBase}.json`,
    bestCheckpoint: best ? `${bestBase}.json` : null,
  };
}
