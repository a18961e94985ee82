// numpy's legacy global generator (np.random.seed + np.random.shuffle): MT19937 seeded with
// init_genrand, and the Fisher-Yates shuffle that draws j = random_interval(i) by masked
// rejection. The reference implementations (LDAM-DRW, SADE, BalPoE, PRL) build CIFAR-LT with
// np.random.seed(0) and one shuffle per class, so this reproduces their exact subsets.

const N = 624;
const M = 397;

export class NumpyLegacyRandom {
  private mt = new Uint32Array(N);
  private index = N;

  constructor(seed: number) {
    if (!(Number.isInteger(seed) && seed >= 0 && seed <= 0xffffffff)) {
      throw new RangeError(`numpy seeds are integers in 0..2^32-1, got ${seed}`);
    }
    let s = seed >>> 0;
    for (let i = 0; i < N; i++) {
      this.mt[i] = s;
      s = (Math.imul(1812433253, (s ^ (s >>> 30)) >>> 0) + i + 1) >>> 0;
    }
    this.index = N;
  }

  nextUint32(): number {
    const mt = this.mt;
    if (this.index >= N) {
      for (let k = 0; k < N; k++) {
        const y = (mt[k]! & 0x80000000) | (mt[(k + 1) % N]! & 0x7fffffff);
        mt[k] = mt[(k + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** A uniform integer in [0, max] (numpy's random_interval, for max < 2^32). */
  interval(max: number): number {
    if (max === 0) return 0;
    let mask = max;
    mask |= mask >>> 1;
    mask |= mask >>> 2;
    mask |= mask >>> 4;
    mask |= mask >>> 8;
    mask |= mask >>> 16;
    mask >>>= 0;
    for (;;) {
      const value = (this.nextUint32() & mask) >>> 0;
      if (value <= max) return value;
    }
  }

  /** np.random.shuffle on a 1-d array, in place. */
  shuffle<T>(items: T[] | Int32Array): void {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.interval(i);
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
  }
}
