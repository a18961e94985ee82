// Batching: seeded epoch orders (shuffled, sequential or class-balanced), uint8 -> float [0, 1]
// conversion, per-image augmentation into one N x C x H x W Float32Array, two views for
// test-time training, and mixup. In-memory sets batch synchronously; lazily decoded image
// lists batch asynchronously, decoding the next batch while the current one is used.
import { DistributedSampler } from '../../torch/distributed/sampler.js';
import { Rng } from '../../util/rng.js';
import type { ImageTransform, ImageView } from './augment.js';
import { fusedImage, type FusableTransform } from './fused.js';
import type { LazyImageDataset } from './imagelist.js';
import { imageSize, type ImageDataset } from './types.js';

export interface Batch {
  /** n x c x h x w, augmented and normalized. */
  x: Float32Array;
  y: Int32Array;
  n: number;
  shape: [number, number, number];
  /** Indices of the images in the data set. */
  indices: Int32Array;
  /** The second view (views: 2), drawn independently from the same images. */
  x2?: Float32Array;
}

export type SamplerKind = 'sequential' | 'shuffle' | 'class-balanced';

export interface BatchOptions {
  batchSize: number;
  /** 'shuffle' (default): a seeded permutation per epoch; 'class-balanced': class uniform, then an image of it. */
  sampler?: SamplerKind;
  dropLast?: boolean;
  seed?: number;
  /** Epoch number: each epoch gets its own order and augmentation draws, reproducibly. */
  epoch?: number;
  /** Per-image transform (training augmentation or the test transform); none = plain [0, 1] floats. */
  transform?: ImageTransform;
  views?: 1 | 2;
  /** Restrict to these images of the data set (a long-tailed subset or a test distribution). */
  indices?: ArrayLike<number>;
  /** Reuse the arrays of batches given back with pool.release(batch) (see BatchBufferPool). */
  pool?: BatchBufferPool;
  /**
   * This rank's shard of the epoch order in a data-parallel run (DistributedSampler semantics:
   * positions rank, rank + W, ...; padded by wrapping). With a per-rank batch of B / W, step k of
   * the W ranks together covers exactly the images of the single-process batch k of size B.
   */
  shard?: { rank: number; worldSize: number };
}

/**
 * Recycles batch arrays. Allocating a fresh 1.5 MB array per batch costs a page fault per 4 KB
 * under jemalloc (which the launcher preloads): it returns freed pages to the kernel, and the
 * faults made batch building 2-4x slower in our measurements. A consumer that is done with a
 * batch (e.g. after copying it to the device) releases it, and the next batch reuses its memory.
 */
export class BatchBufferPool {
  private free = new Map<number, Float32Array[]>();

  take(length: number): Float32Array {
    const list = this.free.get(length);
    return list?.pop() ?? new Float32Array(length);
  }

  /** Gives the batch's arrays back; the batch must not be used afterwards. */
  release(batch: { x: Float32Array; x2?: Float32Array }): void {
    for (const a of [batch.x, batch.x2]) {
      if (!a) continue;
      const list = this.free.get(a.length) ?? [];
      if (list.length < 8) list.push(a);
      this.free.set(a.length, list);
    }
  }
}

function epochRng(seed: number, epoch: number, stream: number): Rng {
  return new Rng((seed ^ Math.imul(epoch + 1, 0x9e3779b9) ^ Math.imul(stream, 0x85ebca6b)) >>> 0);
}

/**
 * The augmentation generator of batch `b` of an epoch: one per batch (not one per epoch), so a
 * batch is the same whichever thread builds it and in whichever order.
 */
export function batchRng(seed: number, epoch: number, b: number): Rng {
  return new Rng((seed ^ Math.imul(epoch + 1, 0x9e3779b9) ^ Math.imul(b + 2, 0x85ebca6b) ^ 0x6a09e667) >>> 0);
}

/** The order in which one epoch visits the images (positions refer to the data set). */
export function epochOrder(labels: Int32Array, options: BatchOptions): Int32Array {
  const order = fullEpochOrder(labels, options);
  if (!options.shard || options.shard.worldSize === 1) return order;
  return new DistributedSampler({ length: order.length, indices: () => order }, options.shard).indices(0);
}

function fullEpochOrder(labels: Int32Array, options: BatchOptions): Int32Array {
  const pool = options.indices
    ? Int32Array.from(options.indices)
    : Int32Array.from({ length: labels.length }, (_, i) => i);
  const sampler = options.sampler ?? 'shuffle';
  if (sampler === 'sequential') return pool;
  const rng = epochRng(options.seed ?? 0, options.epoch ?? 0, 1);
  if (sampler === 'shuffle') {
    for (let i = pool.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      const t = pool[i]!;
      pool[i] = pool[j]!;
      pool[j] = t;
    }
    return pool;
  }
  if (sampler === 'class-balanced') {
    const byClass = new Map<number, number[]>();
    for (const i of pool) {
      const y = labels[i]!;
      if (!byClass.has(y)) byClass.set(y, []);
      byClass.get(y)!.push(i);
    }
    const groups = [...byClass.keys()].sort((a, b) => a - b).map((y) => byClass.get(y)!);
    const out = new Int32Array(pool.length);
    for (let k = 0; k < out.length; k++) {
      const g = groups[rng.int(groups.length)]!;
      out[k] = g[rng.int(g.length)]!;
    }
    return out;
  }
  throw new RangeError(`unknown sampler '${String(sampler)}' (use sequential, shuffle or class-balanced)`);
}

/** The batches of one epoch as index arrays. */
export function batchIndices(order: Int32Array, batchSize: number, dropLast = false): Int32Array[] {
  if (!(Number.isInteger(batchSize) && batchSize >= 1))
    throw new RangeError(`batch size must be a positive integer, got ${batchSize}`);
  const out: Int32Array[] = [];
  for (let s = 0; s < order.length; s += batchSize) {
    const chunk = order.subarray(s, Math.min(order.length, s + batchSize));
    if (dropLast && chunk.length < batchSize) break;
    out.push(chunk);
  }
  return out;
}

/** out[at..at+size) = bytes[start..start+size) / 255 (a small function, so V8 optimizes it on its own). */
function bytesToUnit(bytes: Uint8Array, start: number, size: number, out: Float32Array, at: number): void {
  const scale = 1 / 255;
  for (let p = 0; p < size; p++) out[at + p] = bytes[start + p]! * scale;
}

/** Converts images (uint8, CHW each) to floats in [0, 1], runs the transform per image, stacks them. */
export function buildBatch(
  images: Uint8Array,
  shape: readonly [number, number, number],
  labels: Int32Array,
  indices: Int32Array,
  transform: ImageTransform | undefined,
  rng: Rng,
  views: 1 | 2 = 1,
  /** Offset of indices[k] in `images`: by default the data-set index itself. */
  position: (k: number) => number = (k) => indices[k]!,
  pool?: BatchBufferPool,
): Batch {
  const alloc = (length: number): Float32Array => (pool ? pool.take(length) : new Float32Array(length));
  const size = imageSize(shape);
  const n = indices.length;
  const y = new Int32Array(n);
  const fused = (transform as FusableTransform | undefined)?.fused;
  if (fused) {
    const [c, h, w] = shape;
    const oh = fused.crop?.height ?? h;
    const ow = fused.crop?.width ?? w;
    const outs = Array.from({ length: views }, () => alloc(n * c * oh * ow));
    for (let v = 0; v < views; v++) {
      for (let k = 0; k < n; k++)
        fusedImage(images, position(k) * size, c, h, w, fused, rng, outs[v]!, k * c * oh * ow);
    }
    for (let k = 0; k < n; k++) y[k] = labels[indices[k]!]!;
    const batch: Batch = { x: outs[0]!, y, n, shape: [c, oh, ow], indices: Int32Array.from(indices) };
    if (views === 2) batch.x2 = outs[1]!;
    return batch;
  }
  const outs: Float32Array[] = [];
  let outShape: [number, number, number] | undefined;
  for (let v = 0; v < views; v++) {
    let x: Float32Array | undefined;
    for (let k = 0; k < n; k++) {
      const start = position(k) * size;
      if (!transform) {
        // plain [0, 1] floats: straight into the batch
        x ??= alloc(n * size);
        outShape ??= [...shape];
        bytesToUnit(images, start, size, x, k * size);
        if (v === 0) y[k] = labels[indices[k]!]!;
        continue;
      }
      const data = new Float32Array(size);
      bytesToUnit(images, start, size, data, 0);
      let img: ImageView = { data, c: shape[0], h: shape[1], w: shape[2] };
      img = transform(img, rng);
      if (!outShape) outShape = [img.c, img.h, img.w];
      else if (img.c !== outShape[0] || img.h !== outShape[1] || img.w !== outShape[2]) {
        throw new RangeError(
          `the transform gave images of different shapes (${outShape.join('x')} and ${img.c}x${img.h}x${img.w})`,
        );
      }
      x ??= alloc(n * img.data.length);
      x.set(img.data, k * img.data.length);
      if (v === 0) y[k] = labels[indices[k]!]!;
    }
    outs.push(x ?? new Float32Array(0));
  }
  const batch: Batch = {
    x: outs[0]!,
    y,
    n,
    shape: outShape ?? [...shape],
    indices: Int32Array.from(indices),
  };
  if (views === 2) batch.x2 = outs[1]!;
  return batch;
}

/**
 * Batch b of an epoch, drawn with the batch's own generator; `position` maps a batch sample to
 * its image in `images` (by default its data-set index).
 */
function epochBatch(
  images: Uint8Array,
  ds: { shape: readonly [number, number, number]; labels: Int32Array },
  chunk: Int32Array,
  b: number,
  options: BatchOptions,
  position?: (k: number) => number,
): Batch {
  const rng = batchRng(options.seed ?? 0, options.epoch ?? 0, b);
  return buildBatch(
    images,
    ds.shape,
    ds.labels,
    chunk,
    options.transform,
    rng,
    options.views ?? 1,
    position,
    options.pool,
  );
}

/** One epoch of batches of an in-memory data set. */
export function* iterateBatches(ds: ImageDataset, options: BatchOptions): Generator<Batch> {
  const order = epochOrder(ds.labels, options);
  const chunks = batchIndices(order, options.batchSize, options.dropLast);
  for (let b = 0; b < chunks.length; b++) {
    yield epochBatch(ds.images, ds, chunks[b]!, b, options);
  }
}

/** One epoch of batches of a lazily decoded image list; decoding of batch k+1 overlaps the use of batch k. */
export async function* iterateBatchesAsync(
  ds: LazyImageDataset | ImageDataset,
  options: BatchOptions,
): AsyncGenerator<Batch> {
  if (!('loadImages' in ds)) {
    yield* iterateBatches(ds, options);
    return;
  }
  const order = epochOrder(ds.labels, options);
  const chunks = batchIndices(order, options.batchSize, options.dropLast);
  // a consumer that stops early leaves the prefetched batch behind: its failure must not
  // become an unhandled rejection (awaiting it still throws)
  const load = (b: number): Promise<Uint8Array> => {
    const p = ds.loadImages(chunks[b]!);
    p.catch(() => undefined);
    return p;
  };
  let pending = chunks.length > 0 ? load(0) : undefined;
  for (let b = 0; b < chunks.length; b++) {
    const images = await pending!;
    pending = b + 1 < chunks.length ? load(b + 1) : undefined;
    // the loaded images hold the batch's samples in order
    yield epochBatch(images, ds, chunks[b]!, b, options, (k) => k);
  }
}

export interface MixedBatch {
  x: Float32Array;
  /** Targets of the first and of the second image of each mix: loss = lam*CE(yA) + (1-lam)*CE(yB). */
  yA: Int32Array;
  yB: Int32Array;
  lam: number;
}

/** mixup (Zhang et al.): one lam ~ Beta(alpha, alpha) per batch, partner = a random permutation. */
export function mixup(
  batch: { x: Float32Array; y: Int32Array; n: number },
  alpha: number,
  rng: Rng,
  /** Where to write the mixed images (e.g. from a BatchBufferPool); a new array by default. */
  out?: Float32Array,
): MixedBatch {
  if (!(alpha > 0)) return { x: batch.x, yA: batch.y, yB: batch.y, lam: 1 };
  if (out && (out.length !== batch.x.length || out === batch.x))
    throw new RangeError('mixup: out must be a separate array of the batch size');
  const g1 = rng.gamma(alpha);
  const g2 = rng.gamma(alpha);
  const lam = g1 / (g1 + g2);
  const perm = rng.permutation(batch.n);
  const size = batch.x.length / batch.n;
  const x = out ?? new Float32Array(batch.x.length);
  const yB = new Int32Array(batch.n);
  for (let k = 0; k < batch.n; k++) {
    const j = perm[k]!;
    const a = k * size;
    const b = j * size;
    for (let p = 0; p < size; p++) x[a + p] = lam * batch.x[a + p]! + (1 - lam) * batch.x[b + p]!;
    yB[k] = batch.y[j]!;
  }
  return { x, yA: Int32Array.from(batch.y), yB, lam };
}
