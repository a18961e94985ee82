// DistributedSampler semantics: every rank draws the same seeded order for the epoch (from the
// wrapped sampler, seeded identically on all ranks) and takes its own disjoint shard of it:
// positions rank, rank + W, rank + 2W, ... The order is padded by wrapping around so every rank
// gets the same number of samples (or truncated with dropLast), as torch's DistributedSampler.

/** An epoch order of dataset indices, the same on every rank for the same epoch. */
export interface Sampler {
  readonly length: number;
  /** The sample indices for `epoch`, in order of use. */
  indices(epoch: number): Int32Array;
}

/** Options of DistributedSampler: this rank, the number of ranks, and whether to drop the uneven tail. */
export interface DistributedSamplerOptions {
  rank: number;
  worldSize: number;
  /** Drop the tail that does not divide evenly instead of repeating the first indices. */
  dropLast?: boolean;
}

/** Each rank's share of the indices of a data set, as torch.utils.data.DistributedSampler: the ranks see disjoint parts of equal length. */
export class DistributedSampler implements Sampler {
  readonly length: number;
  private readonly rank: number;
  private readonly worldSize: number;
  private readonly dropLast: boolean;

  constructor(
    private readonly base: Sampler,
    options: DistributedSamplerOptions,
  ) {
    const { rank, worldSize } = options;
    if (!Number.isInteger(worldSize) || worldSize < 1)
      throw new RangeError(`DistributedSampler: worldSize must be a positive integer, got ${worldSize}`);
    if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize)
      throw new RangeError(`DistributedSampler: rank must be in 0..${worldSize - 1}, got ${rank}`);
    this.rank = rank;
    this.worldSize = worldSize;
    this.dropLast = options.dropLast ?? false;
    const n = base.length;
    this.length = this.dropLast ? Math.floor(n / worldSize) : Math.ceil(n / worldSize);
  }

  /** This rank's indices for `epoch`. */
  indices(epoch: number): Int32Array {
    const order = this.base.indices(epoch);
    const out = new Int32Array(this.length);
    if (order.length === 0) return out;
    for (let i = 0, pos = this.rank; i < this.length; i++, pos += this.worldSize) {
      out[i] = order[pos < order.length ? pos : (pos - order.length) % order.length]!;
    }
    return out;
  }
}
