// Long-tailed training subsets (exponential and step profiles) and the test-agnostic test
// distributions (forward/backward r, uniform) built from a balanced test set, as the reference
// code does: class i (ranked by training frequency) keeps floor(n_max * rho^(i/(C-1))) images,
// chosen by a seeded shuffle of that class's images, taking the first n.
import { Rng } from '../../util/rng.js';
import { NumpyLegacyRandom } from './numpy-random.js';
import { classCounts } from './types.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/**
 * How class sizes fall off in a long-tailed subset: exponentially ('exp'), in two steps ('step'), or not at all ('none').
 */
export type ImbalanceProfile = 'exp' | 'step' | 'none';
/** 'numpy' reproduces the reference subsets bit for bit (np.random.seed + shuffle); 'tailor' uses Rng. */
export type SubsetSampler = 'numpy' | 'tailor';

export const PROFILES: readonly ImbalanceProfile[] = ['exp', 'step', 'none'];

/**
 * Per-rank image counts: rank 0 is the head class. exp: floor(nMax * rho^(i/(C-1))), rho = 1/r;
 * step: the first floor(C/2) ranks keep nMax, the others floor(nMax * rho); reverse turns the
 * profile around (backward test distributions use exponent (C-1-i)/(C-1)).
 */
export function longTailCounts(
  classes: number,
  nMax: number,
  imbalance: number,
  profile: ImbalanceProfile = 'exp',
  reverse = false,
): number[] {
  if (!(Number.isInteger(classes) && classes >= 1))
    throw new ArgumentError(`classes must be a positive integer, got ${classes}`);
  if (!(nMax >= 1)) throw new ArgumentError(`n_max must be at least 1, got ${nMax}`);
  if (!(imbalance >= 1))
    throw new ArgumentError(`the imbalance ratio must be >= 1 (n_max / n_min), got ${imbalance}`);
  // the reference computes with imb_factor = 1/r as a float, then int(); keep the same arithmetic
  const factor = 1 / imbalance;
  const counts: number[] = [];
  for (let i = 0; i < classes; i++) {
    const rank = reverse ? classes - 1 - i : i;
    if (profile === 'none' || classes === 1) counts.push(Math.floor(nMax));
    else if (profile === 'exp') counts.push(Math.floor(nMax * Math.pow(factor, rank / (classes - 1))));
    else if (profile === 'step')
      counts.push(Math.floor(rank < Math.floor(classes / 2) ? nMax : nMax * factor));
    else throw new ArgumentError(`unknown imbalance profile '${String(profile)}' (use exp, step or none)`);
  }
  return counts;
}

/**
 * How {@link longTailSubset} draws a long-tailed subset: imbalance ratio (head over tail),
 * profile, seed, sampler, head size.
 */
export interface LongTailOptions {
  imbalance: number;
  profile?: ImbalanceProfile;
  seed?: number;
  sampler?: SubsetSampler;
  /** Images per class at the head; default: the smallest class size of the source. */
  nMax?: number;
  /** classOrder[rank] = class label: which class gets the rank-th count. Default 0..C-1 (reference). */
  classOrder?: number[] | 'identity' | 'random';
}

/** Everything needed to record and reproduce a subset. */
export interface LongTailSubset {
  /** Indices into the source, class after class (class 0 first), as the reference orders them. */
  indices: Int32Array;
  /** counts[c] = images of class c in the subset. */
  counts: number[];
  classOrder: number[];
  imbalance: number;
  profile: ImbalanceProfile;
  seed: number;
  sampler: SubsetSampler;
  nMax: number;
}

/** Draws the long-tailed subset of a (balanced) labelled set. */
export function longTailSubset(
  labels: ArrayLike<number>,
  classes: number,
  options: LongTailOptions,
): LongTailSubset {
  const profile = options.profile ?? 'exp';
  const seed = options.seed ?? 0;
  const sampler = options.sampler ?? 'numpy';
  const available = classCounts(labels, classes);
  const nMax = options.nMax ?? Math.min(...available);
  const classOrder = resolveClassOrder(options.classOrder, classes, seed);
  const byRank = longTailCounts(classes, nMax, options.imbalance, profile);
  const counts = new Array<number>(classes).fill(0);
  classOrder.forEach((c, rank) => (counts[c] = byRank[rank]!));
  return {
    indices: drawPerClass(labels, classes, counts, seed, sampler),
    counts,
    classOrder,
    imbalance: options.imbalance,
    profile,
    seed,
    sampler,
    nMax,
  };
}

/** What a run records about its training subset (JSON-ready, snake_case like the run files). */
export function describeSubset(subset: LongTailSubset): Record<string, unknown> {
  return {
    imbalance: subset.imbalance,
    profile: subset.profile,
    seed: subset.seed,
    sampler: subset.sampler,
    n_max: subset.nMax,
    class_order: subset.classOrder,
    counts: subset.counts,
    total: subset.indices.length,
  };
}

function resolveClassOrder(order: LongTailOptions['classOrder'], classes: number, seed: number): number[] {
  if (order === undefined || order === 'identity') return Array.from({ length: classes }, (_, i) => i);
  if (order === 'random') return new Rng(seed ^ 0x5eed).permutation(classes);
  const seen = new Set(order);
  if (
    order.length !== classes ||
    seen.size !== classes ||
    order.some((c) => !(Number.isInteger(c) && c >= 0 && c < classes))
  ) {
    throw new RangeError(`classOrder must be a permutation of 0..${classes - 1}`);
  }
  return [...order];
}

/**
 * For each class c in label order: shuffle that class's indices (in source order) with one
 * generator seeded once, keep the first counts[c]. Throws if a class has too few images.
 */
export function drawPerClass(
  labels: ArrayLike<number>,
  classes: number,
  counts: readonly number[],
  seed: number,
  sampler: SubsetSampler,
): Int32Array {
  const members: number[][] = Array.from({ length: classes }, () => []);
  for (let i = 0; i < labels.length; i++) members[labels[i]!]!.push(i);
  const numpy = sampler === 'numpy' ? new NumpyLegacyRandom(seed) : undefined;
  const rng = sampler === 'tailor' ? new Rng(seed) : undefined;
  const total = counts.reduce((a, b) => a + b, 0);
  const out = new Int32Array(total);
  let k = 0;
  for (let c = 0; c < classes; c++) {
    const idx = members[c]!;
    const n = counts[c]!;
    if (n > idx.length)
      throw new RangeError(`class ${c} has ${idx.length} images, the profile asks for ${n}`);
    // numpy's np.unique(targets) skips classes without images; so does its shuffle sequence
    if (idx.length === 0) continue;
    if (numpy) numpy.shuffle(idx);
    else rng!.shuffle(idx);
    for (let j = 0; j < n; j++) out[k++] = idx[j]!;
  }
  return out;
}

// ---- test-agnostic distributions ----

/**
 * The test-agnostic distributions of SADE: forward and backward long-tailed test sets (imbalance 50 to 2) and the uniform one.
 */
export const TEST_DISTRIBUTIONS = [
  'forward50',
  'forward25',
  'forward10',
  'forward5',
  'forward2',
  'uniform',
  'backward2',
  'backward5',
  'backward10',
  'backward25',
  'backward50',
] as const;
/** iNaturalist 2018 only has these (its test set has 3 images per class). */
export const INATURALIST_TEST_DISTRIBUTIONS = [
  'forward3',
  'forward2',
  'uniform',
  'backward2',
  'backward3',
] as const;

export interface TestDistribution {
  name: string;
  direction: 'forward' | 'backward' | 'uniform';
  ratio: number;
}

export function parseTestDistribution(name: string): TestDistribution {
  if (name === 'uniform') return { name, direction: 'uniform', ratio: 1 };
  const m = /^(forward|backward)(\d+(?:\.\d+)?)$/.exec(name);
  if (!m || !(Number(m[2]) >= 1)) {
    throw new RangeError(
      `unknown test distribution '${name}' (use uniform, forwardR or backwardR with R >= 1, e.g. forward50)`,
    );
  }
  return { name, direction: m[1] as 'forward' | 'backward', ratio: Number(m[2]) };
}

/**
 * Classes ranked by training frequency, most frequent first (ties keep label order, so a
 * reference-style training set sorted by label gives 0..C-1).
 */
export function rankByFrequency(trainCounts: readonly number[]): number[] {
  return trainCounts
    .map((n, c) => ({ n, c }))
    .sort((a, b) => b.n - a.n || a.c - b.c)
    .map((e) => e.c);
}

/** Per-class test counts of one distribution: counts[c] for class label c. */
export function testDistributionCounts(
  name: string,
  nPerClass: number,
  trainCounts: readonly number[],
): number[] {
  const c = checksOf('testDistributionCounts');
  c.string(name, 'name');
  c.integer(nPerClass, 'nPerClass', { min: 0 });
  c.numbers(trainCounts, 'trainCounts', { minLength: 1 });
  const d = parseTestDistribution(name);
  const classes = trainCounts.length;
  const byRank =
    d.direction === 'uniform'
      ? longTailCounts(classes, nPerClass, 1, 'none')
      : longTailCounts(classes, nPerClass, d.ratio, 'exp', d.direction === 'backward');
  const counts = new Array<number>(classes).fill(0);
  rankByFrequency(trainCounts).forEach((c, rank) => (counts[c] = byRank[rank]!));
  return counts;
}

export interface TestSubsetOptions {
  /** Training counts per class, for the ranking (the reference: class i is the i-th most frequent). */
  trainCounts: readonly number[];
  seed?: number;
  sampler?: SubsetSampler;
  /** Images per class to start from; default the smallest class of the balanced test set. */
  nPerClass?: number;
}

/** The images of the balanced test set that form distribution `name` (seeded like the reference). */
export function testDistributionSubset(
  testLabels: ArrayLike<number>,
  name: string,
  options: TestSubsetOptions,
): { name: string; indices: Int32Array; counts: number[] } {
  const classes = options.trainCounts.length;
  const available = classCounts(testLabels, classes);
  const nPerClass = options.nPerClass ?? Math.min(...available);
  const counts = testDistributionCounts(name, nPerClass, options.trainCounts);
  const indices = drawPerClass(testLabels, classes, counts, options.seed ?? 0, options.sampler ?? 'numpy');
  return { name, indices, counts };
}
