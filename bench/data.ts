// Data-pipeline throughput: time to build, augment and normalize batches of 128 for one epoch of
// CIFAR-like 32x32x3 data (synthetic bytes; the pixel values do not change the cost), per
// pipeline, in images per second. Usage: npm run bench -- data [--images N] [--batch 128] [--json]
// The engine is not wired yet, so compute time is not measured here; compare the seconds per
// epoch with the training step time of the engine bench.
import './lib/user-errors.js';
import { count } from './lib/options.js';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Rng } from '../src/util/rng.js';
import { BatchBufferPool, iterateBatches, mixup } from '../src/longtail/data/batches.js';
import { longTailSubset } from '../src/longtail/data/longtail.js';
import {
  testTimeViewTransform,
  testTransform,
  trainTransform,
  type PipelineSpec,
} from '../src/longtail/data/pipelines.js';
import { ParallelBatchLoader } from '../src/longtail/data/parallel.js';
import type { ImageTransform } from '../src/longtail/data/augment.js';
import type { ImageDataset } from '../src/longtail/data/types.js';

const { values } = parseArgs({
  options: {
    images: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '128' },
    repeats: { type: 'string', default: '2' },
    workers: { type: 'string', default: String(Math.max(1, availableParallelism() - 1)) },
    json: { type: 'boolean', default: false },
  },
});
const n = count('images', values.images);
const batchSize = count('batch', values.batch);
const repeats = count('repeats', values.repeats);
const workers = count('workers', values.workers);

const rng = new Rng(0);
const images = new Uint8Array(n * 3072);
for (let i = 0; i < images.length; i += 4) {
  const v = rng.nextUint32();
  images[i] = v & 255;
  images[i + 1] = (v >>> 8) & 255;
  images[i + 2] = (v >>> 16) & 255;
  images[i + 3] = v >>> 24;
}
const ds: ImageDataset = {
  images,
  labels: Int32Array.from({ length: n }, (_, i) => i % 100),
  shape: [3, 32, 32],
  classes: 100,
};
const lt = longTailSubset(ds.labels, 100, { imbalance: 100 });

interface Case {
  name: string;
  transform?: ImageTransform;
  views?: 1 | 2;
  mixupAlpha?: number;
  indices?: Int32Array;
  /** Build on worker threads with this pipeline instead of in the main thread. */
  parallel?: PipelineSpec;
}
const cases: Case[] = [
  { name: 'to-float only' },
  { name: 'test transform (normalize)', transform: testTransform('cifar') },
  { name: 'train: crop32 pad4 + flip + normalize', transform: trainTransform('cifar') },
  { name: 'train + rotation 15 (BalPoE)', transform: trainTransform('cifar', { rotationDegrees: 15 }) },
  { name: 'train + mixup 0.4 (PRL/BalPoE)', transform: trainTransform('cifar'), mixupAlpha: 0.4 },
  { name: 'train, CIFAR-100-LT IR100 subset', transform: trainTransform('cifar'), indices: lt.indices },
  { name: 'test-time two views (jitter/gray/blur)', transform: testTimeViewTransform('cifar'), views: 2 },
  { name: `train, ${workers} worker threads`, parallel: { stage: 'train', kind: 'cifar' } },
  {
    name: `train + rotation 15, ${workers} worker threads`,
    parallel: { stage: 'train', kind: 'cifar', options: { rotationDegrees: 15 } },
  },
];
const loader = new ParallelBatchLoader(ds, workers);

// CPU time as well as wall time: on a shared machine the wall time mostly measures the neighbours
// (for the worker-thread cases the main thread's CPU time includes the workers' time)
const results: {
  name: string;
  images: number;
  batches: number;
  seconds: number;
  images_per_s: number;
  cpu_seconds: number;
  images_per_cpu_s: number;
}[] = [];
for (const c of cases) {
  let best = Infinity;
  let bestCpu = Infinity;
  let count = 0;
  let batches = 0;
  for (let r = 0; r < repeats; r++) {
    const mixRng = new Rng(r);
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    count = 0;
    batches = 0;
    const options = { batchSize, seed: r, epoch: r, views: c.views, indices: c.indices };
    if (c.parallel) {
      for await (const b of loader.epoch({ ...options, pipeline: c.parallel })) {
        count += b.n;
        batches++;
        loader.release(b);
      }
    } else {
      // the consumer gives each batch back once used, as a training loop does after the copy to the device
      const pool = new BatchBufferPool();
      for (const b of iterateBatches(ds, { ...options, transform: c.transform, pool })) {
        if (c.mixupAlpha) pool.release({ x: mixup(b, c.mixupAlpha, mixRng, pool.take(b.x.length)).x });
        count += b.n;
        batches++;
        pool.release(b);
      }
    }
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
    const cpu = process.cpuUsage(c0);
    bestCpu = Math.min(bestCpu, (cpu.user + cpu.system) / 1e6);
  }
  results.push({
    name: c.name,
    images: count,
    batches,
    seconds: best,
    images_per_s: count / best,
    cpu_seconds: bestCpu,
    images_per_cpu_s: count / bestCpu,
  });
}

await loader.close();

if (values.json) {
  const load = loadavg()[0];
  console.log(
    JSON.stringify(
      { bench: 'data', batch_size: batchSize, dataset_images: n, node: process.version, load, results },
      null,
      2,
    ),
  );
} else {
  console.log(
    `data pipeline, batches of ${batchSize}, ${n} CIFAR-like 32x32x3 images, best of ${repeats} epochs`,
  );
  for (const r of results) {
    console.log(
      `  ${r.name.padEnd(42)} ${String(r.images).padStart(6)} images  ${r.seconds.toFixed(3).padStart(7)} s wall ` +
        `${Math.round(r.images_per_s).toString().padStart(8)} images/s  ${Math.round(r.images_per_cpu_s).toString().padStart(8)} images/cpu-s`,
    );
  }
}
