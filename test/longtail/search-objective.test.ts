// The searches' objective must not reward collapse. Two experts: one reads the label from a pixel
// but also a pixel the view augmentation redraws (right most of the time, its views disagree
// sometimes); the other always says class 0 with confidence (its views always agree). View
// agreement alone ('stability') moves the weight to the constant expert and loses to doing
// nothing; with the prior-consistency term ('consistent', the default of both searches) the
// search does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { nn, type Tensor } from '../../src/torch/index.js';
import { runTestTime, type TestTimeOptions } from '../../src/longtail/adapt/testtime.js';
import { ExpertBase, MultiExpertModel } from '../../src/longtail/models/multi-expert.js';
import { plainSystem } from '../../src/longtail/systems/system.js';
import { CrossEntropyLoss } from '../../src/longtail/losses/single.js';
import type { ImageDataset } from '../../src/longtail/data/types.js';
import type { ImageTransform } from '../../src/longtail/data/augment.js';

const CLASSES = 3;

class NoisyReader extends ExpertBase {
  readonly classifier: nn.Linear;
  constructor() {
    super();
    this.classifier = this.registerModule('classifier', new nn.Linear(1, CLASSES));
  }
  features(shared: Tensor): Tensor {
    // the label pixel plus a 0.8 of the redrawn pixel's offset
    return torch.tidy(() => shared.select(1, 0).add(shared.select(1, 1).sub(0.5).mul(0.8)).reshape(-1, 1));
  }
  override classify(features: Tensor): Tensor {
    return torch.tidy(() =>
      features
        .sub(torch.tensor([0, 0.5, 1]))
        .square()
        .mul(-8),
    );
  }
}

class AlwaysFirst extends ExpertBase {
  readonly classifier: nn.Linear;
  constructor() {
    super();
    this.classifier = this.registerModule('classifier', new nn.Linear(1, CLASSES));
  }
  features(shared: Tensor): Tensor {
    return torch.tidy(() => shared.select(1, 0).reshape(-1, 1));
  }
  override classify(features: Tensor): Tensor {
    return torch.tidy(() => torch.zeros([features.shape[0]!, CLASSES]).add(torch.tensor([1, 0, 0])));
  }
}

class Pair extends MultiExpertModel {
  readonly options = { classes: CLASSES };
  readonly featureDim = 1;
  readonly experts: nn.ModuleList<ExpertBase>;
  constructor() {
    super();
    this.experts = this.registerModule(
      'experts',
      new nn.ModuleList<ExpertBase>([new NoisyReader(), new AlwaysFirst()]),
    );
  }
  shared(x: Tensor): Tensor {
    return torch.tidy(() => x.flatten(1));
  }
}

function pixelSet(n: number, salt: number): ImageDataset {
  const images = new Uint8Array(n * 2);
  const labels = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    labels[i] = i % CLASSES;
    images[2 * i] = [0, 128, 255][labels[i]!]!;
    images[2 * i + 1] = (i * 97 + salt) % 256;
  }
  return { images, labels, shape: [2, 1, 1], classes: CLASSES };
}

const identity: ImageTransform = (img) => img;
const redraw: ImageTransform = (img, rng) => {
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
  distributions: ['uniform', 'forward5', 'backward5'],
  quiet: true,
};

test('view agreement alone collapses onto the constant expert; the prior-consistent objective does not lose to doing nothing', async () => {
  const model = new Pair();
  const counts = [50, 50, 50];
  const system = plainSystem(model, new CrossEntropyLoss(counts));
  const before = torch.liveTensors();
  try {
    const input = {
      system,
      test: pixelSet(600, 0),
      val: pixelSet(90, 7),
      testTransform: identity,
      viewTransform: redraw,
      trainCounts: counts,
    };
    const stabilityLog: string[] = [];
    const consistentLog: string[] = [];
    const stability = await runTestTime(input, { ...options, aggregationObjective: 'stability' }, (l) =>
      stabilityLog.push(l),
    );
    const consistent = await runTestTime(input, { ...options, aggregationObjective: 'consistent' }, (l) =>
      consistentLog.push(l),
    );
    assert.equal(torch.liveTensors(), before, 'targets, weights and views are freed');
    for (const name of options.distributions) {
      const s = stability.results[name]!;
      const c = consistent.results[name]!;
      assert.ok(
        s.aggregation!.weights[1]! > 0.5,
        `${name}: stability moves to the constant expert ${s.aggregation!.weights}`,
      );
      assert.ok(s.aggregation!.top1! < s.before.top1!, `${name}: and loses to doing nothing`);
      // The published objective is kept as published, but the validation split shows the loss
      // without test labels, and the command says so.
      const check = s.aggregation!.validation!;
      assert.ok(check.searched < check.start - 0.05, `${name}: validation ${JSON.stringify(check)}`);
      assert.ok(
        stabilityLog.some((l) => l.startsWith(`warning: ${name}:`) && l.includes('aggregation_objective')),
        `${name}: a collapse warning is logged`,
      );
      assert.ok(
        c.aggregation!.top1! >= c.before.top1!,
        `${name}: consistent ${c.aggregation!.top1} vs nothing ${c.before.top1} (weights ${c.aggregation!.weights})`,
      );
      assert.ok(!consistentLog.some((l) => l.startsWith('warning:')), 'the guarded search warns of nothing');
    }
  } finally {
    model.dispose();
  }
});
