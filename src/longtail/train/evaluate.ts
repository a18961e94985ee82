// Evaluation: logits of a model over a data set (test transform only, eval mode, no grad) and
// the metrics of the protocol over the uniform and the eleven test-agnostic distributions.
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import type { ImageTransform } from '../data/augment.js';
import { forEachBatch, type ImageSet } from '../data/source.js';
import { TEST_DISTRIBUTIONS, testDistributionSubset } from '../data/longtail.js';
import { evaluateLogits, type EvaluationReport } from '../metrics/metrics.js';
import type { MultiExpertOutput } from '../types/multi-expert-output.js';
import { setTraining, type TrainableSystem } from '../systems/system.js';

export type ForwardFn = (x: Tensor) => MultiExpertOutput;

/**
 * A model's outputs on a data set: logits (n x classes, mean of the experts, row-major), per-
 * expert logits and the labels.
 */
export interface Predictions {
  n: number;
  classes: number;
  experts: number;
  /** n x classes, the model output (mean of experts). */
  logits: Float32Array;
  /** experts x n x classes. */
  expertLogits: Float32Array;
  labels: Int32Array;
  /** Experts consulted per image (n), where routers chose them (RIDE-EA). */
  expertsPerImage?: Float32Array;
}

/**
 * How many batches of outputs stay on the device before they are read back: the host reads
 * (each a wait for the device) happen once per FLUSH_BATCHES batches, so on a GPU the next
 * batches are built and launched while the device works, and at most this many batches of
 * logits are held there.
 */
export const FLUSH_BATCHES = 16;

/** The model's logits over a data set (in memory, or an image list decoded batch by batch). */
export async function predict(
  forward: ForwardFn,
  ds: ImageSet,
  transform: ImageTransform,
  batchSize = 256,
  indices?: ArrayLike<number>,
): Promise<Predictions> {
  const n = indices ? indices.length : ds.labels.length;
  const classes = ds.classes;
  const labels = new Int32Array(n);
  let logits = new Float32Array(0);
  let expertLogits = new Float32Array(0);
  let experts = 0;
  let offset = 0;
  let consulted: Float32Array | null = null;
  const pending: { output: Tensor; perExpert: Tensor; consulted?: Tensor; at: number; n: number }[] = [];
  const held = () => pending.flatMap((p) => [p.output, p.perExpert, ...(p.consulted ? [p.consulted] : [])]);
  const flush = () => {
    for (const p of pending) {
      logits.set(p.output.toFloat32Array(), p.at * classes);
      if (p.consulted) consulted!.set(p.consulted.toFloat32Array(), p.at);
      const per = p.perExpert.toFloat32Array();
      for (let e = 0; e < experts; e++) {
        expertLogits.set(per.subarray(e * p.n * classes, (e + 1) * p.n * classes), (e * n + p.at) * classes);
      }
    }
    torch.dispose(held());
    pending.length = 0;
  };
  try {
    await forEachBatch(
      ds,
      { batchSize, sampler: 'sequential', transform, ...(indices ? { indices } : {}) },
      (batch) => {
        torch.noGrad(() =>
          torch.tidy(() => {
            const x = torch.tensor(batch.x, { shape: [batch.n, ...batch.shape] });
            const out = forward(x);
            if (experts === 0) {
              experts = out.logits.shape[0]!;
              logits = new Float32Array(n * classes);
              expertLogits = new Float32Array(experts * n * classes);
              if (out.expertsPerImage) consulted = new Float32Array(n);
            }
            pending.push({
              output: torch.keep(out.output),
              perExpert: torch.keep(out.logits),
              ...(out.expertsPerImage && consulted ? { consulted: torch.keep(out.expertsPerImage) } : {}),
              at: offset,
              n: batch.n,
            });
            labels.set(batch.y, offset);
            offset += batch.n;
          }),
        );
        if (pending.length >= FLUSH_BATCHES) flush();
      },
    );
    flush();
  } finally {
    torch.dispose(held());
  }
  return {
    n,
    classes,
    experts,
    logits,
    expertLogits,
    labels,
    ...(consulted ? { expertsPerImage: consulted } : {}),
  };
}

/** A system's predictions on a whole (balanced test) set, in eval mode. */
export async function systemPredictions(
  system: TrainableSystem,
  ds: ImageSet,
  transform: ImageTransform,
): Promise<Predictions> {
  setTraining(system, false);
  return predict((x) => system.evalForward(x), ds, transform);
}

/**
 * Top-1 accuracy overall and per shot group (null for a group without classes or test images).
 */
export interface GroupResult {
  top1: number | null;
  many: number | null;
  medium: number | null;
  few: number | null;
}

export function summarize(report: EvaluationReport): GroupResult {
  return {
    top1: report.top1,
    many: report.groups.many,
    medium: report.groups.medium,
    few: report.groups.few,
  };
}

/** Rows of the predictions (a subset of the test set). */
export function selectRows(p: Predictions, rows: ArrayLike<number>): Predictions {
  const { classes, experts, n } = p;
  const m = rows.length;
  const logits = new Float32Array(m * classes);
  const expertLogits = new Float32Array(experts * m * classes);
  const labels = new Int32Array(m);
  const consulted = p.expertsPerImage ? new Float32Array(m) : null;
  for (let k = 0; k < m; k++) {
    const i = rows[k]!;
    if (consulted) consulted[k] = p.expertsPerImage![i]!;
    logits.set(p.logits.subarray(i * classes, (i + 1) * classes), k * classes);
    for (let e = 0; e < experts; e++) {
      expertLogits.set(
        p.expertLogits.subarray((e * n + i) * classes, (e * n + i + 1) * classes),
        (e * m + k) * classes,
      );
    }
    labels[k] = p.labels[i]!;
  }
  return {
    n: m,
    classes,
    experts,
    logits,
    expertLogits,
    labels,
    ...(consulted ? { expertsPerImage: consulted } : {}),
  };
}

/** The mean number of experts consulted per image, where routers chose them (else null). */
export function meanExpertsPerImage(p: Predictions): number | null {
  if (!p.expertsPerImage || p.n === 0) return null;
  let s = 0;
  for (const v of p.expertsPerImage) s += v;
  return s / p.n;
}

/**
 * The eleven test distributions drawn from the balanced test set (whose predictions are given),
 * each scored from logits produced by `score` (default: the model output).
 */
export function evaluateDistributions(
  testPredictions: Predictions,
  trainCounts: readonly number[],
  score: (p: Predictions) => Float32Array = (p) => p.logits,
  seed = 0,
): { distributions: Record<string, GroupResult & { n: number }>; meanTop1: number } {
  const distributions: Record<string, GroupResult & { n: number }> = {};
  let sum = 0;
  for (const name of TEST_DISTRIBUTIONS) {
    const subset = testDistributionSubset(testPredictions.labels, name, { trainCounts, seed });
    const rows = selectRows(testPredictions, subset.indices);
    const report = evaluateLogits(score(rows), rows.labels, rows.classes, trainCounts);
    distributions[name] = { n: rows.n, ...summarize(report) };
    sum += report.top1 ?? 0;
  }
  return { distributions, meanTop1: sum / TEST_DISTRIBUTIONS.length };
}
