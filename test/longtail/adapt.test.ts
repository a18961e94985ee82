// Test-time adaptation on a system whose answer is known: two experts, one reading a pixel that
// carries the label (the same in both augmented views), one reading a pixel the view
// augmentation redraws. SADE's aggregation, which rewards agreement between the views, must move
// the weight to the first expert and recover its accuracy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { runTestTime, type TestTimeOptions } from '../../src/longtail/adapt/testtime.js';
import { ExpertBase, MultiExpertModel } from '../../src/longtail/models/multi-expert.js';
import { plainSystem } from '../../src/longtail/systems/system.js';
import { CrossEntropyLoss } from '../../src/longtail/losses/single.js';
import { systemPredictions } from '../../src/longtail/train/evaluate.js';
import { evaluateLogits } from '../../src/longtail/metrics/metrics.js';
import type { ImageDataset } from '../../src/longtail/data/types.js';
import type { ImageTransform } from '../../src/longtail/data/augment.js';

const CLASSES = 3;

/** Scores class c by how close its channel's value is to c / 2. */
class PixelReader extends ExpertBase {
  readonly classifier: nn.Linear;
  constructor(readonly channel: number) {
    super();
    this.classifier = this.registerModule('classifier', new nn.Linear(1, CLASSES));
  }
  features(shared: Tensor): Tensor {
    return torch.tidy(() => shared.select(1, this.channel).reshape(-1, 1));
  }
  override classify(features: Tensor): Tensor {
    return torch.tidy(() =>
      features
        .sub(torch.tensor([0, 0.5, 1]))
        .square()
        .mul(-20),
    );
  }
}

class TwoReaders extends MultiExpertModel {
  readonly options = { classes: CLASSES };
  readonly featureDim = 1;
  readonly experts: nn.ModuleList<PixelReader>;
  constructor() {
    super();
    this.experts = this.registerModule(
      'experts',
      new nn.ModuleList([new PixelReader(0), new PixelReader(1)]),
    );
  }
  shared(x: Tensor): Tensor {
    return torch.tidy(() => x.flatten(1));
  }
}

/** Channel 0 holds the label (0, 0.5, 1); channel 1 a value unrelated to it. */
function pixelSet(n: number): ImageDataset {
  const images = new Uint8Array(n * 2);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = i % CLASSES;
    images[2 * i] = [0, 128, 255][labels[i]!]!;
    images[2 * i + 1] = (i * 97) % 256;
  }
  return { images, labels, shape: [2, 1, 1], classes: CLASSES };
}

const identity: ImageTransform = (img) => img;
/** The view augmentation: channel 1 redrawn, channel 0 kept. */
const redrawNoise: ImageTransform = (img, rng) => {
  const data = Float32Array.from(img.data);
  data[1] = rng.uniform();
  return { ...img, data };
};

const options: TestTimeOptions = {
  epochs: 5,
  batchSize: 30,
  lr: 0.5,
  momentum: 0.9,
  weightDecay: 0,
  nesterov: true,
  minWeight: 0,
  preferenceLr: 0.01,
  seed: 0,
  methods: ['aggregation'],
  // SADE's published objective, view agreement alone: what these tests check is that mechanism
  // (the default 'consistent' objective is tested in search-objective.test.ts).
  aggregationObjective: 'stability',
  distributions: ['uniform'],
  quiet: true,
};

test('SADE aggregation (published objective) moves the weight to the expert whose views agree, and scores with those weights', async () => {
  const model = new TwoReaders();
  const counts = [100, 30, 10];
  const system = plainSystem(model, new CrossEntropyLoss(counts));
  const test = pixelSet(300);
  const before = torch.liveTensors();
  try {
    const input = { system, test, testTransform: identity, viewTransform: redrawNoise, trainCounts: counts };
    const { results } = await runTestTime(input, options, () => {});
    assert.equal(torch.liveTensors(), before, 'weights, optimizers and views are freed');
    const uniform = results.uniform!;
    const agg = uniform.aggregation!;
    assert.equal(agg.epochs, options.epochs);
    assert.ok(agg.weights[0]! > 0.8, `weights ${agg.weights}`);
    assert.equal(agg.top1, 1, 'the label-reading expert alone is always right');
    assert.ok(
      uniform.before.top1! < 0.9,
      `the plain mean is corrupted by the noise expert: ${uniform.before.top1}`,
    );

    // The reported accuracy is that of the experts weighted by the reported weights.
    const p = await systemPredictions(system, test, identity);
    const n = p.n * CLASSES;
    const weighted = new Float32Array(n);
    for (let k = 0; k < n; k++)
      weighted[k] = agg.weights[0]! * p.expertLogits[k]! + agg.weights[1]! * p.expertLogits[n + k]!;
    assert.equal(evaluateLogits(weighted, p.labels, CLASSES, counts).top1, agg.top1);

    // Without the redrawn pixel the views agree for any weights: nothing to learn.
    const still = await runTestTime({ ...input, viewTransform: identity }, options, () => {});
    const w = still.results.uniform!.aggregation!.weights;
    assert.ok(Math.abs(w[0]! - 0.5) < 0.05, `weights ${w}`);
  } finally {
    model.dispose();
  }
});

test('a failing test-time run frees what it allocated and unfreezes the model', async () => {
  const model = new TwoReaders();
  const counts = [100, 30, 10];
  const system = plainSystem(model, new CrossEntropyLoss(counts));
  const before = torch.liveTensors();
  const failing: ImageTransform = () => {
    throw new Error('decoding failed');
  };
  try {
    const input = {
      system,
      test: pixelSet(60),
      testTransform: identity,
      viewTransform: failing,
      trainCounts: counts,
    };
    await assert.rejects(
      runTestTime(input, options, () => {}),
      /decoding failed/,
    );
    assert.equal(torch.liveTensors(), before);
    assert.ok(model.parameters().every((t) => t.requiresGrad));
  } finally {
    model.dispose();
  }
});

test('the searches stop early on the same step whether the weights are read back each step or every few', async () => {
  const model = new TwoReaders();
  const counts = [100, 30, 10];
  const system = plainSystem(model, new CrossEntropyLoss(counts));
  try {
    const input = {
      system,
      test: pixelSet(300),
      testTransform: identity,
      viewTransform: redrawNoise,
      trainCounts: counts,
    };
    // the noise expert's weight falls from 0.5 below 0.3 part-way through the first epoch
    const early = { ...options, minWeight: 0.3, distributions: ['uniform', 'backward5'] };
    const eachStep = await runTestTime(input, { ...early, readEvery: 1 }, () => {});
    const first = eachStep.results.uniform!.aggregation!;
    assert.equal(first.stopped_early, true);
    assert.equal(first.epochs, 1);
    for (const readEvery of [3, 16]) {
      const grouped = await runTestTime(input, { ...early, readEvery }, () => {});
      assert.deepEqual(grouped.results, eachStep.results, `read every ${readEvery} steps`);
    }
  } finally {
    model.dispose();
  }
});
