// A small seeded pseudo-random generator (xoshiro128**, seeded by splitmix32) for everything
// outside libtorch that must be reproducible: shuffles, subsampling, augmentation, EM starts.
// Its whole state is four 32-bit words, so runs can record and restore it in checkpoints.

/** The whole state of an {@link Rng}: four 32-bit words. */
export type RngState = [number, number, number, number];

/**
 * A seeded pseudo-random generator (xoshiro128**): the same seed gives the same sequence on every
 * machine. The mixture models draw their starts from one (`seed` option); k-means takes one.
 */
export class Rng {
  private s: Uint32Array;
  private spareNormal: number | undefined;

  constructor(seed: number | RngState = 0) {
    this.s = new Uint32Array(4);
    if (Array.isArray(seed)) {
      if (seed.length !== 4 || !seed.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffffffff))
        throw new RangeError(
          `Rng: a state is four 32-bit unsigned integers, got [${seed.slice(0, 5).join(', ')}]`,
        );
      // The all-zero state never leaves zero (uniform() would return 0 forever).
      if (seed.every((w) => w === 0)) throw new RangeError('Rng: the all-zero state is not a valid state');
      this.s.set(seed);
    } else {
      let x = seed >>> 0;
      for (let i = 0; i < 4; i++) {
        x = (x + 0x9e3779b9) >>> 0;
        let z = x;
        z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
        z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
        this.s[i] = (z ^ (z >>> 16)) >>> 0;
      }
      if (this.s.every((v) => v === 0)) this.s[0] = 1;
    }
  }

  /** The generator state, to store in a checkpoint. */
  state(): RngState {
    return [this.s[0]!, this.s[1]!, this.s[2]!, this.s[3]!];
  }

  /** An independent generator derived from this one (for a worker or a sub-task). */
  fork(): Rng {
    return new Rng(this.nextUint32() ^ Math.imul(this.nextUint32(), 0x9e3779b9));
  }

  /** The next 32 random bits, as an unsigned integer. */
  nextUint32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1]! << 9) >>> 0;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.nextUint32() >>> 5;
    const lo = this.nextUint32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(n > 0) || !Number.isInteger(n)) throw new RangeError(`Rng.int needs a positive integer, got ${n}`);
    return Math.floor(this.uniform() * n);
  }

  /** Standard normal (Marsaglia polar method). */
  normal(): number {
    if (this.spareNormal !== undefined) {
      const v = this.spareNormal;
      this.spareNormal = undefined;
      return v;
    }
    for (;;) {
      const u = 2 * this.uniform() - 1;
      const v = 2 * this.uniform() - 1;
      const s = u * u + v * v;
      if (s > 0 && s < 1) {
        const f = Math.sqrt((-2 * Math.log(s)) / s);
        this.spareNormal = v * f;
        return u * f;
      }
    }
  }

  /** Gamma(shape, 1) by Marsaglia and Tsang (with the boost for shape < 1). */
  gamma(shape: number): number {
    if (!(shape > 0)) throw new RangeError(`Rng.gamma needs shape > 0, got ${shape}`);
    if (shape < 1) return this.gamma(shape + 1) * Math.pow(this.uniform() || Number.MIN_VALUE, 1 / shape);
    const d = shape - 1 / 3;
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number;
      let v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const u = this.uniform();
      if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
    }
  }

  /** A draw from Dirichlet(alpha); alpha may be one number (symmetric) with the dimension given. */
  dirichlet(alpha: number | readonly number[], dim?: number): number[] {
    const alphas = typeof alpha === 'number' ? new Array<number>(dim ?? 1).fill(alpha) : [...alpha];
    const g = alphas.map((a) => this.gamma(a));
    const sum = g.reduce((a, b) => a + b, 0);
    return g.map((v) => v / sum);
  }

  /** Fisher-Yates shuffle in place; returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }

  /** A random permutation of 0..n-1. */
  permutation(n: number): number[] {
    return this.shuffle(Array.from({ length: n }, (_, i) => i));
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
