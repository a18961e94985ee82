// Synchronous data parallelism as PyTorch's DistributedDataParallel does it, over libtorch's c10d
// collectives: at construction every parameter and buffer is broadcast from rank 0; after each
// backward the gradients are all-reduced in flattened buckets (reverse parameter order, the
// first bucket capped at 1 MiB and the others at 25 MiB, as DDP's rebuilt buckets) and divided
// by the world size. Buffers (BatchNorm statistics) are broadcast from rank 0 before each forward
// (DDP's broadcast_buffers), while the batch statistics of a forward stay per rank.
import type { Module } from '../nn/module.js';
import type { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import { cat, zerosLike } from '../creation.js';
import * as aten from '../generated/aten.js';
import type { ProcessGroup } from './process-group.js';

/** The cap of the first gradient bucket (1 MiB, as DDP). */
export const FIRST_BUCKET_BYTES = 1024 * 1024;
/** The cap of the later gradient buckets (25 MiB, as DDP). */
export const BUCKET_BYTES = 25 * 1024 * 1024;

/** A tensor as assignBuckets sees it: its size in bytes and its dtype and device key. */
export interface BucketInput {
  bytes: number;
  /** Tensors of one bucket must share dtype and device (one flat buffer). */
  key: string;
}

/**
 * Bucket assignment in the manner of c10d's compute_bucket_assignment_by_size: tensors are taken
 * in the order given, one open bucket per (dtype, device); a bucket closes once it holds at
 * least its cap, the first cap being `firstCap` and the rest `cap`. Returns lists of indices.
 */
export function assignBuckets(
  tensors: BucketInput[],
  firstCap = FIRST_BUCKET_BYTES,
  cap = BUCKET_BYTES,
): number[][] {
  const buckets: number[][] = [];
  const open = new Map<string, { indices: number[]; bytes: number; limit: number }>();
  const closedPerKey = new Map<string, number>();
  for (const [i, t] of tensors.entries()) {
    let b = open.get(t.key);
    if (!b) {
      b = { indices: [], bytes: 0, limit: (closedPerKey.get(t.key) ?? 0) === 0 ? firstCap : cap };
      open.set(t.key, b);
    }
    b.indices.push(i);
    b.bytes += t.bytes;
    if (b.bytes >= b.limit) {
      buckets.push(b.indices);
      open.delete(t.key);
      closedPerKey.set(t.key, (closedPerKey.get(t.key) ?? 0) + 1);
    }
  }
  for (const b of open.values()) buckets.push(b.indices);
  // Ready order: the bucket holding the earliest tensor of the given order first.
  return buckets.sort((a, b) => Math.min(...a) - Math.min(...b));
}

const BYTES: Record<string, number> = { float64: 8, int64: 8, float32: 4, int32: 4, float16: 2, bfloat16: 2 };

/** Options of DistributedDataParallel. */
export interface DDPOptions {
  /** Cap of the buckets after the first, in MiB (default 25). */
  bucketCapMb?: number;
  /** Broadcast buffers from rank 0 before each forward (default true, as DDP). */
  broadcastBuffers?: boolean;
}

/** What DDP synchronises: a Module, or any owner of trainable parameters and buffers. */
export type Replica = Pick<Module, 'parameters' | 'buffers'>;

/** Data-parallel training in the manner of torch DDP: averages the gradients of a replica's parameters over the ranks in buckets after backward, and broadcasts buffers from rank 0. */
export class DistributedDataParallel<M extends Replica> {
  readonly buckets: Tensor[][];
  private readonly params: Tensor[];
  private readonly broadcastBuffers: boolean;

  constructor(
    readonly module: M,
    readonly group: ProcessGroup,
    options: DDPOptions = {},
  ) {
    this.params = module.parameters();
    this.broadcastBuffers = options.broadcastBuffers ?? true;
    const cap = (options.bucketCapMb ?? 25) * 1024 * 1024;
    const reversed = [...this.params].reverse();
    const order = reversed.map((p) => ({
      bytes: p.numel * (BYTES[p.dtype] ?? 4),
      key: `${p.dtype}@${p.device}`,
    }));
    this.buckets = assignBuckets(order, Math.min(FIRST_BUCKET_BYTES, cap), cap).map((b) =>
      b.map((i) => reversed[i]!),
    );
    // Every rank starts from rank 0's weights and buffers.
    noGrad(() => {
      for (const t of [...this.params, ...module.buffers()]) group.broadcast(t, 0);
    });
  }

  /**
   * Call before the forward pass: rank 0's buffers (running statistics) everywhere, in one
   * flattened broadcast per dtype (DDP coalesces them the same way).
   */
  syncBuffers(): void {
    if (!this.broadcastBuffers || this.group.worldSize === 1) return;
    const byType = new Map<string, Tensor[]>();
    for (const b of this.module.buffers()) {
      const key = `${b.dtype}@${b.device}`;
      if (!byType.has(key)) byType.set(key, []);
      byType.get(key)!.push(b);
    }
    noGrad(() => {
      for (const buffers of byType.values()) {
        tidy(() => {
          const flat = cat(buffers.map((b) => b.reshape(-1)));
          this.group.broadcast(flat, 0);
          let offset = 0;
          for (const b of buffers) {
            b.copy_(flat.narrow(0, offset, b.numel).view(...b.shape));
            offset += b.numel;
          }
        });
      }
    });
  }

  /**
   * Call after backward, before the optimizer step: every parameter's gradient becomes the mean
   * over ranks. A parameter without a gradient on this rank contributes zeros (all ranks must
   * send the same buckets), as DDP does with find_unused_parameters.
   */
  syncGradients(): void {
    const world = this.group.worldSize;
    if (world === 1) return;
    noGrad(() => {
      for (const bucket of this.buckets) {
        tidy(() => {
          const existing = bucket.map((p) => p.grad);
          const grads = bucket.map((p, i) => existing[i] ?? zerosLike(p));
          const flat = cat(grads.map((g) => g.reshape(-1)));
          this.group.allreduce(flat, 'sum');
          aten.div__Scalar(flat, world);
          let offset = 0;
          for (const [i, p] of bucket.entries()) {
            const n = p.numel;
            const view = flat.narrow(0, offset, n).view(...p.shape);
            offset += n;
            const g = existing[i];
            if (g) g.copy_(view);
            else p.grad = view.clone();
          }
        });
      }
    });
  }

  /** Bytes all-reduced per step (the sum of the gradient sizes). */
  get bytesPerStep(): number {
    return this.params.reduce((s, p) => s + p.numel * (BYTES[p.dtype] ?? 4), 0);
  }
}
