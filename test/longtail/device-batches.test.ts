// Device-side training data and metric accumulation, checked on CPU tensors: the device
// augmentation draws the host pipeline's distribution (every crop offset of the padded range
// equally often, flips half the time, the host's normalization bit for bit), mixup on the device
// mixes with the host's lam and a permutation, the epoch order is the host's, an oversized
// training set is a named error before anything is uploaded, the device-side figures equal the
// per-step sums, and a run drawing its batches on the device resumes exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { Rng } from '../../src/util/rng.js';
import { fusedImage } from '../../src/longtail/data/fused.js';
import { epochOrder, batchIndices, mixup } from '../../src/longtail/data/batches.js';
import { trainTransform, NORMALIZATION } from '../../src/longtail/data/pipelines.js';
import {
  DeviceBatchSource,
  DeviceDataTooLargeError,
  augmentOnDevice,
  deviceAugmentOf,
  mixupOnDevice,
  type DeviceAugment,
} from '../../src/longtail/data/device-batches.js';
import { StepFigures } from '../../src/longtail/train/step-figures.js';
import { parseConfig, type TrainConfig } from '../../src/longtail/config/config.js';
import { trainRun } from './train-run.js';
import { repoRoot } from '../helpers.js';

/** An Rng stand-in that makes fusedImage draw the given offsets and flip. */
function forced(top: number, left: number, flip: boolean): Rng {
  const ints = [top, left];
  return { int: () => ints.shift()!, uniform: () => (flip ? 0 : 0.99) } as unknown as Rng;
}

test('device augmentation: every crop offset of the padded range equally often, flips at 0.5, the host normalization exactly', () => {
  const [c, h, w, pad] = [3, 8, 8, 2];
  const spec: DeviceAugment = {
    crop: { height: h, width: w, padding: pad },
    flipP: 0.5,
    ...NORMALIZATION.cifar,
  };
  const pixels = new Rng(5);
  const image = Uint8Array.from({ length: c * h * w }, () => 1 + pixels.int(255));
  // every outcome the host pipeline can give, by its exact bytes
  const outcomes = new Map<string, string>();
  const range = 2 * pad + 1;
  for (let t = 0; t < range; t++)
    for (let l = 0; l < range; l++)
      for (const f of [false, true]) {
        const out = new Float32Array(c * h * w);
        fusedImage(image, 0, c, h, w, spec, forced(t, l, f), out, 0);
        outcomes.set(Buffer.from(out.buffer).toString('base64'), `${t},${l},${f}`);
      }
  const n = 5000;
  torch.manualSeed(11);
  const got = torch.tidy(() => {
    const batch = torch.tensor(image, { shape: [1, c, h, w], dtype: 'uint8' }).expand(n, c, h, w);
    return augmentOnDevice(batch, spec).toFloat32Array();
  });
  const tops = new Array<number>(range).fill(0);
  const lefts = new Array<number>(range).fill(0);
  let flips = 0;
  const size = c * h * w;
  for (let k = 0; k < n; k++) {
    const key = Buffer.from(got.slice(k * size, (k + 1) * size).buffer).toString('base64');
    const what = outcomes.get(key);
    assert.ok(
      what,
      `device image ${k} is none of the host pipeline's outcomes (geometry or normalization differs)`,
    );
    const [t, l, f] = what.split(',');
    tops[Number(t)]!++;
    lefts[Number(l)]!++;
    if (f === 'true') flips++;
  }
  // each offset: n / 5 = 1000 expected, sd ~ 28; 5 sd bounds (a fixed seed, so no flakiness)
  const expected = n / range;
  const sd = Math.sqrt(n * (1 / range) * (1 - 1 / range));
  for (const counts of [tops, lefts])
    for (const k of counts) assert.ok(Math.abs(k - expected) < 5 * sd, `offset counts ${counts.join(' ')}`);
  assert.ok(Math.abs(flips - n / 2) < 5 * Math.sqrt(n / 4), `${flips} flips of ${n}`);
});

test('device augmentation without a crop or flip is the host normalization of the image', () => {
  const [c, h, w] = [1, 5, 4];
  const image = Uint8Array.from({ length: c * h * w }, (_, i) => (i * 37) % 256);
  const spec: DeviceAugment = { flipP: 0, ...NORMALIZATION.fmnist };
  const host = new Float32Array(c * h * w);
  fusedImage(image, 0, c, h, w, spec, new Rng(0), host, 0);
  const device = torch.tidy(() =>
    augmentOnDevice(torch.tensor(image, { shape: [1, c, h, w], dtype: 'uint8' }), spec).toFloat32Array(),
  );
  assert.deepEqual(device, host);
});

test('the device pipeline takes the fused training transforms, not rotation', () => {
  assert.equal(typeof deviceAugmentOf(trainTransform('fmnist')), 'object');
  assert.match(String(deviceAugmentOf(trainTransform('cifar', { rotationDegrees: 15 }))), /rotation/);
  assert.match(String(deviceAugmentOf(trainTransform('imagenet'))), /host only/);
});

test('mixup on the device: the host lam, a permutation of partners and their targets', () => {
  const n = 16;
  const dim = 6;
  const data = Float32Array.from({ length: n * dim }, (_, i) => Math.floor(i / dim) * 10 + (i % dim));
  const y = Int32Array.from({ length: n }, (_, k) => k % 5);
  const host = mixup({ x: data, y, n }, 0.4, new Rng(3));
  torch.manualSeed(2);
  const { x, yB, lam } = torch.tidy(() => {
    const m = mixupOnDevice(torch.tensor(data, { shape: [n, dim] }), torch.tensor(y).long(), 0.4, new Rng(3));
    return { x: m.x.toFloat32Array(), yB: m.yB.toFloat64Array(), lam: m.lam };
  });
  assert.equal(lam, host.lam);
  const partners = new Set<number>();
  for (let k = 0; k < n; k++) {
    // image k's rows are 10k + i, so the partner follows from the mix
    const j = Math.round((x[k * dim]! - lam * 10 * k) / ((1 - lam) * 10));
    partners.add(j);
    assert.equal(yB[k], y[j], `target of image ${k}'s partner`);
    for (let i = 0; i < dim; i++)
      assert.ok(Math.abs(x[k * dim + i]! - (lam * (10 * k + i) + (1 - lam) * (10 * j + i))) < 1e-4);
  }
  assert.equal(partners.size, n);
});

test('the device batch source visits the host order and refuses an oversized set before uploading', () => {
  const [c, h, w] = [1, 4, 4];
  const n = 10;
  const ds = {
    images: Uint8Array.from({ length: n * c * h * w }, (_, i) => i % 251),
    labels: Int32Array.from({ length: n }, (_, k) => k % 3),
    shape: [c, h, w] as [number, number, number],
    numClasses: 3,
  };
  const spec: DeviceAugment = { flipP: 0, mean: [0], std: [1] };
  assert.throws(
    () => new DeviceBatchSource(ds as never, spec, 'cpu', { maxBytes: 100 }),
    (e: Error) => e instanceof DeviceDataTooLargeError && /on_device: false/.test(e.message),
  );
  const source = new DeviceBatchSource(ds as never, spec, 'cpu');
  try {
    const options = { batchSize: 4, sampler: 'shuffle' as const, seed: 7, epoch: 3 };
    const chunks = batchIndices(epochOrder(ds.labels, options), 4);
    // (a batch is drawn while its epoch is iterated, as the trainer does)
    const got: { y: number[]; first: number }[] = [];
    for (const item of source.epoch(options))
      got.push(
        torch.tidy(() => {
          const b = item.draw();
          return { y: [...b.y.toFloat64Array()], first: b.x.toFloat64Array()[0]! };
        }),
      );
    assert.deepEqual(
      got.map((b) => b.y),
      chunks.map((ch) => [...ch].map((i) => ds.labels[i]!)),
    );
    // no crop, no flip, mean 0 / std 1: the first pixel is its byte / 255
    got.forEach((b, k) => assert.equal(b.first, Math.fround((ds.images[chunks[k]![0]! * 16]! * 1) / 255)));
  } finally {
    source.dispose();
  }
});

test('device-side figures equal the per-step sums; the first non-finite loss is kept with its step', () => {
  const figures = new StepFigures('cpu');
  try {
    const losses = [2.302585, 1.75, 0.1 + 0.2, 3.3333333, 1e-7];
    const sizes = [16, 16, 16, 16, 7];
    let lossSum = 0;
    let correct = 0;
    const draw = new Rng(9);
    losses.forEach((value, s) => {
      const n = sizes[s]!;
      const pred = Int32Array.from({ length: n }, () => draw.int(3));
      const y = Int32Array.from({ length: n }, () => draw.int(3));
      torch.tidy(() => {
        const loss = torch.tensor(Float32Array.of(value)).reshape();
        figures.add(loss, torch.tensor(pred).long(), torch.tensor(y).long(), n, s + 1);
        lossSum += loss.item() * n;
      });
      correct += pred.filter((p, k) => p === y[k]).length;
    });
    assert.deepEqual(figures.read(), { lossSum, correct, badStep: 0, badLoss: 0 });
    for (const [step, value] of [
      [6, Infinity],
      [7, NaN],
    ] as const)
      torch.tidy(() =>
        figures.add(
          torch.tensor(Float32Array.of(value)).reshape(),
          torch.zeros([1], 'int64'),
          torch.zeros([1], 'int64'),
          1,
          step,
        ),
      );
    const f = figures.read();
    assert.equal(f.badStep, 6);
    assert.equal(f.badLoss, Infinity);
  } finally {
    figures.dispose();
  }
});

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

test(
  'batches drawn on the device (forced on the CPU): a resumed run ends exactly where an uninterrupted one does',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-devdata-'));
    try {
      const config = (): TrainConfig => {
        const name = 'fmnist_lt_ir100_sade.json';
        const c = parseConfig(readFileSync(join(repoRoot, 'configs', name), 'utf8'), name);
        c.data_loader.args = { ...c.data_loader.args, batch_size: 16, on_device: true };
        c.mixup = { alpha: 0.4 };
        c.trainer.epochs = 2;
        return c;
      };
      const overrides = { trainMaxPerClass: 8, testPerClass: 2 };
      const straight = await trainRun(config(), join(dir, 'a'), 2, { overrides });
      await trainRun(config(), join(dir, 'b'), 1, { overrides });
      const resumed = await trainRun(config(), join(dir, 'b'), 2, {
        overrides,
        resumeFrom: join(dir, 'b', 'checkpoint-last.json'),
      });
      for (const [k, v] of Object.entries(straight.weights))
        assert.deepEqual(resumed.weights[k], v, `weight ${k} differs after resume`);
      assert.deepEqual(
        resumed.result.history.map((e) => e.train_loss),
        straight.result.history.map((e) => e.train_loss),
      );
      // and it is not the host pipeline's run (the batches come from another generator)
      const c = config();
      c.data_loader.args = { ...c.data_loader.args, on_device: false };
      const host = await trainRun(c, join(dir, 'h'), 1, { overrides });
      assert.notEqual(host.result.history[0]!.train_loss, straight.result.history[0]!.train_loss);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
