// k-means (Lloyd) with greedy k-means++ seeding, as scikit-learn's KMeans(n_init=1) does it for
// the default initialisation of a Gaussian mixture: 2 + floor(ln K) candidate centres per step,
// tolerance 1e-4 times the mean per-feature variance, at most 300 iterations, empty clusters
// moved to the points farthest from their centres. The random streams differ from NumPy's, so
// the labels agree with scikit-learn's only up to the local optimum reached.
import type { Rng } from '../util/rng.js';
import type { DenseMatrix } from './linalg.js';
import { MixtureArgumentError, requireDenseMatrix } from './errors.js';

/** The seeds {@link kmeansPlusPlus} chose. */
export interface KMeansPlusPlusResult {
  /** K x d, row-major. */
  centers: Float64Array;
  /** Row indices of the chosen centres. */
  indices: Int32Array;
}

/** Greedy k-means++ seeding: K rows of X chosen with probability proportional to D(x)^2. */
export function kmeansPlusPlus(
  x: DenseMatrix,
  k: number,
  rng: Rng,
  nLocalTrials?: number,
): KMeansPlusPlusResult {
  const { rows: n, cols: d, data } = x;
  const trials = nLocalTrials ?? 2 + Math.floor(Math.log(k));
  const centers = new Float64Array(k * d);
  const indices = new Int32Array(k);
  let closest = new Float64Array(n);
  let candidateDist = new Float64Array(n);
  let bestDist = new Float64Array(n);
  const first = rng.int(n);
  indices[0] = first;
  centers.set(data.subarray(first * d, first * d + d), 0);
  let potential = 0;
  for (let i = 0; i < n; i++) {
    closest[i] = squaredDistance(data, i * d, data, first * d, d);
    potential += closest[i]!;
  }
  const cumulative = new Float64Array(n);
  for (let c = 1; c < k; c++) {
    let acc = 0;
    for (let i = 0; i < n; i++) cumulative[i] = acc += closest[i]!;
    let bestPotential = Infinity;
    let bestIndex = -1;
    for (let t = 0; t < trials; t++) {
      const candidate = Math.min(searchSorted(cumulative, rng.uniform() * potential), n - 1);
      let pot = 0;
      for (let i = 0; i < n; i++) {
        const dist = Math.min(closest[i]!, squaredDistance(data, i * d, data, candidate * d, d));
        candidateDist[i] = dist;
        pot += dist;
      }
      if (pot < bestPotential) {
        bestPotential = pot;
        bestIndex = candidate;
        const swap = bestDist;
        bestDist = candidateDist;
        candidateDist = swap;
      }
    }
    potential = bestPotential;
    const swap = closest;
    closest = bestDist;
    bestDist = swap;
    indices[c] = bestIndex;
    centers.set(data.subarray(bestIndex * d, bestIndex * d + d), c * d);
  }
  return { centers, indices };
}

/** Options of {@link kmeans}. */
export interface KMeansOptions {
  /** Lloyd iterations at most (default 300). */
  maxIter?: number;
  /** Relative tolerance: multiplied by the mean per-feature variance of X (default 1e-4). */
  tol?: number;
}

/** A k-means clustering. */
export interface KMeansResult {
  /** The cluster of each sample (0-based). */
  labels: Int32Array;
  /** K x d, row-major. */
  centers: Float64Array;
  /** Sum of squared distances of the samples to their centres. */
  inertia: number;
  /** Lloyd iterations run. */
  nIter: number;
}

/** One run of Lloyd's k-means from k-means++ seeds. */
export function kmeans(x: DenseMatrix, k: number, rng: Rng, options: KMeansOptions = {}): KMeansResult {
  requireDenseMatrix(x);
  if (!Number.isInteger(k) || k < 1)
    throw new MixtureArgumentError(`k must be an integer >= 1, got ${String(k)}`);
  const { rows: n, cols: d, data } = x;
  if (n < k) throw new MixtureArgumentError(`k-means needs at least ${k} samples, got ${n}`);
  const maxIter = options.maxIter ?? 300;
  const tol = (options.tol ?? 1e-4) * meanVariance(x);
  let centers: Float64Array = kmeansPlusPlus(x, k, rng).centers;
  let next: Float64Array = new Float64Array(k * d);
  const labels = new Int32Array(n).fill(-1);
  const distances = new Float64Array(n);
  const counts = new Float64Array(k);
  let nIter = 0;
  let strict = false;
  for (let iter = 1; iter <= maxIter; iter++) {
    nIter = iter;
    const changed = assign(data, n, d, centers, k, labels, distances);
    if (changed === 0 && iter > 1) {
      strict = true;
      break;
    }
    next.fill(0);
    counts.fill(0);
    for (let i = 0; i < n; i++) {
      const c = labels[i]!;
      counts[c]!++;
      for (let j = 0; j < d; j++) next[c * d + j]! += data[i * d + j]!;
    }
    relocateEmpty(data, d, labels, distances, counts, next);
    let shift = 0;
    for (let c = 0; c < k; c++) {
      for (let j = 0; j < d; j++) {
        next[c * d + j]! /= counts[c]!;
        const delta = next[c * d + j]! - centers[c * d + j]!;
        shift += delta * delta;
      }
    }
    const swap = centers;
    centers = next;
    next = swap;
    if (shift <= tol) break;
  }
  // Labels must match the final centres (scikit-learn reruns the assignment likewise).
  if (!strict) assign(data, n, d, centers, k, labels, distances);
  let inertia = 0;
  for (let i = 0; i < n; i++) inertia += distances[i]!;
  return { labels, centers, inertia, nIter };
}

function assign(
  data: Float64Array,
  n: number,
  d: number,
  centers: Float64Array,
  k: number,
  labels: Int32Array,
  distances: Float64Array,
): number {
  let changed = 0;
  for (let i = 0; i < n; i++) {
    let best = 0;
    let bestDist = Infinity;
    for (let c = 0; c < k; c++) {
      const dist = squaredDistance(data, i * d, centers, c * d, d);
      if (dist < bestDist) {
        bestDist = dist;
        best = c;
      }
    }
    if (labels[i] !== best) changed++;
    labels[i] = best;
    distances[i] = bestDist;
  }
  return changed;
}

/** Gives each empty cluster the point farthest from its centre (sums updated in place). */
function relocateEmpty(
  data: Float64Array,
  d: number,
  labels: Int32Array,
  distances: Float64Array,
  counts: Float64Array,
  sums: Float64Array,
): void {
  for (let c = 0; c < counts.length; c++) {
    if (counts[c]! > 0) continue;
    let far = -1;
    for (let i = 0; i < labels.length; i++) {
      if (counts[labels[i]!]! > 1 && (far < 0 || distances[i]! > distances[far]!)) far = i;
    }
    if (far < 0) continue;
    const old = labels[far]!;
    counts[old]!--;
    counts[c] = 1;
    for (let j = 0; j < d; j++) {
      sums[old * d + j]! -= data[far * d + j]!;
      sums[c * d + j] = data[far * d + j]!;
    }
    labels[far] = c;
    distances[far] = 0;
  }
}

function squaredDistance(a: Float64Array, aOff: number, b: Float64Array, bOff: number, d: number): number {
  let s = 0;
  for (let j = 0; j < d; j++) {
    const t = a[aOff + j]! - b[bOff + j]!;
    s += t * t;
  }
  return s;
}

/** The first index whose cumulative value is >= v (numpy.searchsorted, side 'left'). */
function searchSorted(cumulative: Float64Array, v: number): number {
  let lo = 0;
  let hi = cumulative.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function meanVariance(x: DenseMatrix): number {
  const { rows: n, cols: d, data } = x;
  let total = 0;
  for (let j = 0; j < d; j++) {
    let mean = 0;
    for (let i = 0; i < n; i++) mean += data[i * d + j]!;
    mean /= n;
    let v = 0;
    for (let i = 0; i < n; i++) {
      const t = data[i * d + j]! - mean;
      v += t * t;
    }
    total += v / n;
  }
  return total / d;
}
