// A run's results: the uniform test set in detail and the eleven test distributions, written
// as results.json (the HTML report and `tailor serve` read it).
import { join } from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { writeJsonAtomic } from '../../util/fs.js';
import { evaluateLogits } from '../metrics/metrics.js';
import {
  evaluateDistributions,
  meanExpertsPerImage,
  systemPredictions,
  type GroupResult,
  type Predictions,
} from '../train/evaluate.js';
import type { EpochRecord } from '../train/trainer.js';
import { sessionLabel, type Session } from '../config/session.js';
import { fitOnValidation, scoreBasis, type ValidationFit } from '../adapt/baselines.js';

/** Fits temperature scaling, BCTS and BBSE's confusion matrix on the session's validation split. */
export async function calibrateSession(session: Session): Promise<ValidationFit> {
  const p = await systemPredictions(session.system, session.data.val, session.testTransform);
  return fitOnValidation(scoreBasis(session.system, session.data.trainCounts), p);
}

export interface UniformDetail extends GroupResult {
  n: number;
  per_class: (number | null)[];
  ece: number | null;
  confusion: number[][];
}

/**
 * A run's `results.json`: the uniform test results, per-distribution results, calibration, and the sections later commands add.
 */
export interface LongtailResults {
  kind: 'longtail';
  name: string;
  /** Ranks of the data-parallel training run (1: a single process) and its effective batch. */
  world_size?: number;
  effective_batch?: number;
  device?: string;
  amp?: string;
  /** Trained with the model and batches laid out channels-last (absent: row-major). */
  channels_last?: boolean;
  /** How the training steps ran: 'eager' (kernel by kernel) or 'graph' (a replayed CUDA graph). */
  graph?: 'eager' | 'graph';
  /** In graph mode: whether the captured step ran each expert (and PRL draw) on a CUDA stream of its own. */
  branch_streams?: boolean;
  method: string;
  checkpoint: string;
  dataset: {
    name: string;
    classes: number;
    class_names?: string[];
    train_counts: number[];
    imbalance: number;
    profile: string;
    /** The split evaluated after every epoch and used for model_best and calibration. */
    validation?: unknown;
  };
  preference?: number[];
  /** RIDE-EA: the mean number of experts its routers consulted per image of the uniform test set. */
  experts_per_image?: number;
  /** Temperature scaling and BCTS fitted on the validation split after training. */
  calibration?: ValidationFit;
  uniform: UniformDetail;
  distributions: Record<string, GroupResult & { n: number }>;
  mean_top1: number;
  history?: EpochRecord[];
  controllability?: unknown;
  test_time?: unknown;
}

/**
 * Top-1, shot groups, calibration error and confusion matrix of predictions on the uniform test set.
 */
export function uniformDetail(p: Predictions, trainCounts: number[]): UniformDetail {
  const r = evaluateLogits(p.logits, p.labels, p.classes, trainCounts);
  const confusion: number[][] = [];
  for (let i = 0; i < p.classes; i++)
    confusion.push(Array.from(r.confusion.subarray(i * p.classes, (i + 1) * p.classes)));
  return {
    n: r.n,
    top1: r.top1,
    many: r.groups.many,
    medium: r.groups.medium,
    few: r.groups.few,
    per_class: r.perClass,
    ece: r.ece,
    confusion,
  };
}

/** Test predictions on the whole balanced test set (every distribution is a subset of it). */
export function testPredictions(session: Session): Promise<Predictions> {
  return systemPredictions(session.system, session.data.test, session.testTransform);
}

/**
 * Evaluates a session's trained system on its test data (uniform and each test distribution) into {@link LongtailResults}. Needs libtorch.
 */
export async function evaluateSession(
  session: Session,
  checkpoint: string,
  history?: EpochRecord[],
): Promise<LongtailResults> {
  const p = await testPredictions(session);
  const { distributions, meanTop1 } = evaluateDistributions(p, session.data.trainCounts);
  const d = session.data;
  const classNames = 'list' in d.train ? d.train.list.classNames : d.train.classNames;
  const system = session.system;
  const consulted = meanExpertsPerImage(p);
  return {
    kind: 'longtail',
    ...sessionLabel(session),
    checkpoint,
    dataset: {
      name: d.dataset,
      classes: d.train.classes,
      ...(classNames ? { class_names: classNames } : {}),
      train_counts: d.trainCounts,
      imbalance: d.subset.imbalance,
      profile: d.subset.profile,
      validation: d.validation,
    },
    ...(system.kind === 'prl' ? { preference: [...system.preference.weights] } : {}),
    ...(consulted !== null ? { experts_per_image: consulted } : {}),
    uniform: uniformDetail(p, d.trainCounts),
    distributions,
    mean_top1: meanTop1,
    ...(history ? { history } : {}),
  };
}

/**
 * Writes a run's `results.json` (keeping the sections other commands added); returns its path.
 */
export function writeResults(runDir: string, results: LongtailResults): string {
  const path = join(runDir, 'results.json');
  let merged: LongtailResults = results;
  if (existsSync(path)) {
    // Keep sections other commands added (controllability, test-time training).
    const old = JSON.parse(readFileSync(path, 'utf8')) as Partial<LongtailResults>;
    merged = { ...old, ...results, history: results.history ?? old.history } as LongtailResults;
  }
  writeJsonAtomic(path, merged);
  return path;
}
