// The balanced validation split, held out from the training pool so that per-epoch evaluation,
// `model_best` and calibration never see the test set. Per class it takes images of the balanced
// source that the long-tailed subset did not draw (the subset uses a fraction of most classes);
// where a class has too few of those (the head class keeps all its images at the default n_max),
// it takes the rest from the subset and removes them from training, always leaving at least one
// training image per class. Seeded, independent of the subset's own draw.
import { Rng } from '../../util/rng.js';
import type { ImageList } from './imagelist.js';

export interface ValidationSplit {
  /** Indices into the source, class after class. */
  indices: Int32Array;
  /** The training subset without the images moved to validation (source indices, order kept). */
  train: Int32Array;
  perClass: number;
  seed: number;
  /** counts[c] = validation images of class c. */
  counts: number[];
  /** Of those, how many came from the subset (and left training). */
  fromSubset: number[];
}

export function holdOutValidation(
  labels: ArrayLike<number>,
  classes: number,
  subset: ArrayLike<number>,
  perClass: number,
  seed: number,
): ValidationSplit {
  if (!(Number.isInteger(perClass) && perClass >= 0))
    throw new RangeError(`validation images per class must be a non-negative integer, got ${perClass}`);
  const inSubset = new Uint8Array(labels.length);
  for (let k = 0; k < subset.length; k++) inSubset[subset[k]!] = 1;
  const outside: number[][] = Array.from({ length: classes }, () => []);
  const inside: number[][] = Array.from({ length: classes }, () => []);
  for (let i = 0; i < labels.length; i++) (inSubset[i] ? inside : outside)[labels[i]!]!.push(i);
  const rng = new Rng(seed ^ 0x7a11d);
  const chosen: number[] = [];
  const removed = new Set<number>();
  const counts = new Array<number>(classes).fill(0);
  const fromSubset = new Array<number>(classes).fill(0);
  for (let c = 0; c < classes; c++) {
    const pool = outside[c]!;
    rng.shuffle(pool);
    const take = pool.slice(0, perClass);
    const missing = perClass - take.length;
    if (missing > 0 && inside[c]!.length > 1) {
      const members = [...inside[c]!];
      rng.shuffle(members);
      const moved = members.slice(0, Math.min(missing, members.length - 1));
      moved.forEach((i) => removed.add(i));
      take.push(...moved);
      fromSubset[c] = moved.length;
    }
    counts[c] = take.length;
    chosen.push(...take.sort((a, b) => a - b));
  }
  const train = Int32Array.from(
    Array.prototype.filter.call(subset, (i: number) => !removed.has(i)) as number[],
  );
  return { indices: Int32Array.from(chosen), train, perClass, seed, counts, fromSubset };
}

/** What a run records about its validation split (JSON-ready). */
export function describeValidation(v: ValidationSplit | { source: string; counts: number[] }) {
  if ('source' in v)
    return { source: v.source, counts: v.counts, total: v.counts.reduce((a, b) => a + b, 0) };
  return {
    source: 'held out from the training pool',
    per_class: v.perClass,
    seed: v.seed,
    counts: v.counts,
    from_training_subset: v.fromSubset,
    total: v.indices.length,
  };
}

/** An image list without a val list of its own (iNaturalist's val list is its test set): the split held out of the training list. */
export function holdOutFromList(list: ImageList, perClass: number, seed: number) {
  const labels = list.entries.map((e) => e.label);
  const all = Int32Array.from(labels, (_, i) => i);
  const split = holdOutValidation(labels, list.classes, all, perClass, seed);
  return {
    train: { ...list, entries: Array.from(split.train, (i) => list.entries[i]!) },
    val: { ...list, entries: Array.from(split.indices, (i) => list.entries[i]!) },
    split,
  };
}
