// `tailor tune-test-time`: chooses a test-time method's settings on the labelled validation split,
// never on the test set. The split is divided per class into a tuning pool and a calibration part.
// The eleven test distributions are drawn from the pool (its labels give their accuracy), and
// the calibration part takes the place the validation split has at test time (BCTS, BBSE's
// confusion matrix, the searches' guard), so no image is used both to adapt and to score. Each
// setting of the grid runs the method on the eleven pool distributions; the best mean top-1
// wins, ties going to the earlier setting of the grid (list the defaults first).
// The searches take one optimizer step per batch, so an epoch over a pool distribution 30 times
// smaller than the test set's would take 30 times fewer steps and reward settings that move the
// weights further per step. Given the test set's size, the pool's batch shrinks in proportion,
// so that each epoch takes as many steps on the pool as on the test set.
import { Rng } from '../../util/rng.js';
import type { ImageDataset } from '../data/types.js';
import { imageSize } from '../data/types.js';
import { LazyImageDataset } from '../data/imagelist.js';
import type { ImageSet } from '../data/source.js';
import { TEST_DISTRIBUTIONS } from '../data/longtail.js';
import { runTestTime, type TestTimeOptions } from '../adapt/testtime.js';
import { adaptInput, type Session } from '../config/session.js';
import { RunError } from './load.js';
import { formatSeconds } from '../../util/progress.js';
import { SEARCH_OBJECTIVES, type SearchObjective } from '../adapt/search-objective.js';

/** The settings a grid may vary, by their test-time config names. */
export const TUNABLE = {
  consistency_weight: 'consistencyWeight',
  preference_lr: 'preferenceLr',
  lr: 'lr',
  epochs: 'epochs',
  min_weight: 'minWeight',
  aggregation_objective: 'aggregationObjective',
  preference_objective: 'preferenceObjective',
} as const satisfies Record<string, keyof TestTimeOptions>;
/** The test-time settings a tuning grid can vary (keys of {@link TUNABLE}). */
export type TunableName = keyof typeof TUNABLE;
/** The grid names whose values are objectives (words), not numbers. */
export const OBJECTIVE_GRIDS: readonly TunableName[] = ['aggregation_objective', 'preference_objective'];
export { SEARCH_OBJECTIVES };
/** A value in a tuning grid: a number, or a search objective. */
export type GridValue = number | SearchObjective;
/** A tuning grid: per tunable setting, the values to try. */
export type Grid = Partial<Record<TunableName, GridValue[]>>;
/** One point of a tuning grid: a value per tunable setting. */
export type GridSetting = Partial<Record<TunableName, GridValue>>;
/** The test-time searches that can be tuned. */
export type TunedMethod = 'aggregation' | 'preference';

/** How {@link tuneTestTime} tunes: the method, the grid, the validation pool share, the seed. */
export interface TuneOptions {
  method: TunedMethod;
  grid: Grid;
  /** Share of each class's validation images in the tuning pool (the rest calibrates). */
  poolFraction: number;
  seed: number;
  /**
   * Images of the test set test-time training will see (its size only; nothing of it is read
   * here). The pool's batch becomes batchSize * pool / testImages, at least 1.
   */
  testImages?: number;
  quiet?: boolean;
  /** Progress lines. */
  log?: (line: string) => void;
}

/**
 * One grid setting's result on the validation pool: mean top-1 with and without the step, per
 * distribution.
 */
export interface TuneRow {
  setting: GridSetting;
  mean_top1: number;
  /** Mean top-1 of the same pool distributions without a test-time step. */
  mean_top1_before: number;
  per_distribution: Record<string, number>;
}

/** What {@link tuneTestTime} returns: the method, the validation pool, every row and the best. */
export interface TuneResult {
  method: TunedMethod;
  pool: { counts: number[]; calibration_counts: number[]; batch_size: number };
  rows: TuneRow[];
  best: TuneRow;
}

/** Every combination of the grid's values, in the order given (the first name varies slowest). */
export function gridSettings(grid: Grid): GridSetting[] {
  let settings: GridSetting[] = [{}];
  for (const [name, values] of Object.entries(grid) as [TunableName, GridValue[]][])
    settings = settings.flatMap((s) => values.map((v) => ({ ...s, [name]: v })));
  return settings;
}

/** Per class, a seeded `fraction` of the indices (at least one where the class has two). */
export function splitPerClass(
  labels: ArrayLike<number>,
  classes: number,
  fraction: number,
  seed: number,
): { pool: Int32Array; rest: Int32Array } {
  const byClass: number[][] = Array.from({ length: classes }, () => []);
  for (let i = 0; i < labels.length; i++) byClass[labels[i]!]!.push(i);
  const rng = new Rng(seed ^ 0x70e5);
  const pool: number[] = [];
  const rest: number[] = [];
  for (const members of byClass) {
    rng.shuffle(members);
    // At least one image on each side where the class has two.
    const n = members.length;
    const take = n < 2 ? n : Math.min(n - 1, Math.max(1, Math.round(n * fraction)));
    pool.push(...members.slice(0, take));
    rest.push(...members.slice(take));
  }
  return {
    pool: Int32Array.from(pool.sort((a, b) => a - b)),
    rest: Int32Array.from(rest.sort((a, b) => a - b)),
  };
}

export function subsetImages(ds: ImageSet, indices: Int32Array): ImageSet {
  if (ds instanceof LazyImageDataset)
    return new LazyImageDataset(
      { ...ds.list, entries: Array.from(indices, (i) => ds.list.entries[i]!) },
      ds.decode,
    );
  const d = ds as ImageDataset;
  const size = imageSize(d.shape);
  const images = new Uint8Array(indices.length * size);
  indices.forEach((i, k) => images.set(d.images.subarray(i * size, (i + 1) * size), k * size));
  return { ...d, images, labels: Int32Array.from(indices, (i) => d.labels[i]!) };
}

function countsOf(labels: ArrayLike<number>, classes: number): number[] {
  const counts = new Array<number>(classes).fill(0);
  for (let i = 0; i < labels.length; i++) counts[labels[i]!]!++;
  return counts;
}

/**
 * Tunes the settings of a test-time search on the validation split: tries every grid setting and keeps the best by the objective (no test labels are used).
 */
export async function tuneTestTime(
  session: Session,
  base: Omit<TestTimeOptions, 'methods' | 'distributions' | 'seed'>,
  o: TuneOptions,
): Promise<TuneResult> {
  const log = o.log ?? (() => {});
  const val = session.data.val;
  if (!val || val.labels.length === 0)
    throw new RunError(
      'this run has no validation split to tune on (data_loader.args.validation_per_class is 0); retrain with a validation split',
    );
  if (o.method === 'preference' && session.system.kind !== 'prl')
    throw new RunError("the preference search needs a PRL model; tune 'aggregation' for this run");
  const classes = val.classes;
  const { pool, rest } = splitPerClass(val.labels, classes, o.poolFraction, o.seed);
  const poolSet = subsetImages(val, pool);
  const calibration = subsetImages(val, rest);
  const poolCounts = countsOf(poolSet.labels, classes);
  if (Math.min(...poolCounts) < 1)
    throw new RunError(
      `the tuning pool lacks a class (per class ${poolCounts.join(', ')}); hold out more validation images (data_loader.args.validation_per_class)`,
    );
  // The test set of the session is never read: the pool takes its place.
  const input = { ...adaptInput(session), test: poolSet, val: calibration };
  const poolImages = poolSet.labels.length;
  const batchSize = matchedBatchSize(base.batchSize, poolImages, o.testImages);
  if (o.testImages)
    log(
      `pool of ${poolImages} images for a test set of ${o.testImages}: batch ${batchSize} (test time ${base.batchSize}) keeps the steps per epoch`,
    );
  const rows: TuneRow[] = [];
  const settings = gridSettings(o.grid);
  const started = Date.now();
  for (const setting of settings) {
    const options: TestTimeOptions = {
      ...base,
      batchSize,
      seed: o.seed,
      methods: [o.method],
      distributions: TEST_DISTRIBUTIONS,
      quiet: o.quiet ?? true,
    };
    // The grid's parser keeps words to the objective names and numbers to the others.
    const fields = options as unknown as Record<string, GridValue>;
    for (const [name, value] of Object.entries(setting) as [TunableName, GridValue][])
      fields[TUNABLE[name]] = value;
    const { results } = await runTestTime(input, options, () => {});
    const per: Record<string, number> = {};
    let sum = 0;
    let before = 0;
    for (const d of TEST_DISTRIBUTIONS) {
      const r = results[d]!;
      const top1 = r[o.method]?.top1;
      if (top1 === undefined || top1 === null)
        throw new RunError(`the '${o.method}' step gave no result on ${d}`);
      per[d] = top1;
      sum += top1;
      before += r.before.top1 ?? 0;
    }
    const row = {
      setting,
      mean_top1: sum / TEST_DISTRIBUTIONS.length,
      mean_top1_before: before / TEST_DISTRIBUTIONS.length,
      per_distribution: per,
    };
    rows.push(row);
    const done = rows.length;
    const eta = ((Date.now() - started) / done) * (settings.length - done);
    log(
      `[${done}/${settings.length}, ETA ${formatSeconds(eta / 1000)}] ${Object.entries(setting)
        .map(([k, v]) => `${k}=${v}`)
        .join(
          ' ',
        )}: mean top-1 ${(100 * row.mean_top1).toFixed(2)} (no step ${(100 * row.mean_top1_before).toFixed(2)})`,
    );
  }
  const best = rows.reduce((a, b) => (b.mean_top1 > a.mean_top1 ? b : a));
  return {
    method: o.method,
    pool: {
      counts: poolCounts,
      calibration_counts: countsOf(calibration.labels, classes),
      batch_size: batchSize,
    },
    rows,
    best,
  };
}

/** The pool's batch size that gives it as many steps per epoch as the test set (unchanged without its size). */
export function matchedBatchSize(batchSize: number, poolImages: number, testImages?: number): number {
  if (!testImages || testImages <= poolImages) return batchSize;
  return Math.max(1, Math.round((batchSize * poolImages) / testImages));
}

/** A test-time config (its JSON object) with a tuned setting written into the fields it names. */
export function withTunedSetting(
  config: Record<string, unknown>,
  setting: GridSetting,
): Record<string, unknown> {
  const out = structuredClone(config);
  const section = (key: string): Record<string, unknown> => {
    const v = out[key];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    return (out[key] = {}) as Record<string, unknown>;
  };
  for (const [name, value] of Object.entries(setting) as [TunableName, GridValue][]) {
    if (name === 'epochs') section('trainer').epochs = value;
    else if (name === 'lr') {
      const optimizer = section('optimizer');
      const args = optimizer.args;
      if (args !== null && typeof args === 'object' && !Array.isArray(args))
        (args as Record<string, unknown>).lr = value;
      else optimizer.args = { lr: value };
    } else out[name] = value;
  }
  return out;
}
