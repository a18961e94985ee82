// A dataset module for the DataLoader worker tests (loaded inside worker threads by path).
import type { Dataset, Sample } from '../../src/torch/data/dataset.js';
import type { Rng } from '../../src/torch/rng.js';

export interface FixtureArgs {
  length: number;
  /** Milliseconds of busy CPU work per sample (simulates decoding and augmentation). */
  busyMs?: number;
  /** An index whose get() throws. */
  failAt?: number;
  /** Shared counter of samples built (Int32 at offset 0), so tests can watch another thread work. */
  progress?: SharedArrayBuffer;
}

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* spin */
  }
}

/** Sample i: an 8-value "image" filled with i plus seeded noise, and label i % 3. */
export function makeDataset(args: FixtureArgs): Dataset {
  const progress = args.progress ? new Int32Array(args.progress) : undefined;
  return {
    length: args.length,
    shapes: { image: [2, 4] },
    get(index: number, rng: Rng): Sample {
      if (index === args.failAt) throw new Error(`sample ${index} is corrupt`);
      if (args.busyMs) busy(args.busyMs);
      const image = new Float32Array(8);
      for (let k = 0; k < 8; k++) image[k] = index + rng.uniform() * 0.001;
      if (progress) {
        Atomics.add(progress, 0, 1);
        Atomics.notify(progress, 0);
      }
      return { image, label: index % 3 };
    },
  };
}

export default makeDataset;
