// CIFAR ResNet-32 (option-A shortcuts) and its RIDE/SADE multi-expert form: parameter counts
// (computed with the same modules built in PyTorch 1.13), output / logits / feature shapes,
// the 1-channel 28x28 (Fashion-MNIST) variant, gradients, and no leaked tensors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { ResNetCifar, type ResNetCifarOptions } from '../../src/longtail/models/resnet-cifar.js';
import { NormedLinear } from '../../src/longtail/models/heads.js';

function withModel(options: ResNetCifarOptions, fn: (model: ResNetCifar) => void): void {
  const before = torch.liveTensors();
  const model = new ResNetCifar(options);
  try {
    fn(model);
  } finally {
    model.zeroGrad();
    model.dispose();
  }
  assert.equal(torch.liveTensors(), before, 'tensors leaked');
}

// ResNet-32 = 3 stages x 5 basic blocks at 16/32/64 channels, option-A (parameter-free)
// shortcuts. 464,154 on CIFAR-10 is the published count (Idelbayev's resnet_cifar: "0.46M").
const COUNTS: [string, ResNetCifarOptions, number][] = [
  ['plain, CIFAR-100, linear head', { classes: 100, experts: 1, normedClassifier: false }, 470_004],
  ['plain, CIFAR-10, linear head', { classes: 10, experts: 1, normedClassifier: false }, 464_154],
  ['plain, CIFAR-100, cosine head', { classes: 100, experts: 1, normedClassifier: true }, 469_904],
  [
    '3 experts, reduced 24/48, CIFAR-100, cosine head',
    { classes: 100, experts: 3, reduceDimension: true },
    783_856,
  ],
  [
    '1 channel, 3 experts, reduced, 10 classes, cosine',
    { classes: 10, experts: 3, inChannels: 1, reduceDimension: true },
    770_608,
  ],
  [
    '1 channel, plain, 10 classes, linear',
    { classes: 10, experts: 1, inChannels: 1, normedClassifier: false },
    463_866,
  ],
];
for (const [name, options, count] of COUNTS) {
  test(`ResNet-32 parameter count: ${name} = ${count}`, () => {
    withModel(options, (m) => assert.equal(m.numParameters(), count));
  });
}

test('ResNet-32, 3 experts on 4x3x32x32: output [4,100], logits [3,4,100], features [3,4,48]; gradients reach every parameter', () => {
  withModel({ classes: 100, experts: 3, reduceDimension: true }, (m) => {
    assert.equal(m.featureDim, 48);
    assert.equal(m.experts.length, 3);
    assert.ok(m.experts.items.every((e) => e.classifier instanceof NormedLinear));
    torch.manualSeed(3);
    m.train();
    torch.tidy(() => {
      const { output, logits } = m.forward(torch.randn([4, 3, 32, 32]));
      assert.deepEqual(output.shape, [4, 100]);
      assert.deepEqual(logits.shape, [3, 4, 100]);
      assert.ok(output.sub(logits.mean(0)).abs().max().item() < 1e-6);
      assert.ok(logits.abs().max().item() <= 30 + 1e-4, 'cosine logits are bounded by s = 30');
      output
        .mul(torch.randn([4, 100]))
        .sum()
        .backward();
    });
    // p.grad returns a new handle: read it inside tidy.
    torch.tidy(() => {
      for (const [name, p] of m.namedParameters()) assert.ok(p.grad, `${name} got no gradient`);
    });
    torch.noGrad(() =>
      torch.tidy(() => {
        assert.deepEqual(m.shared(torch.randn([4, 3, 32, 32])).shape, [4, 16, 32, 32]);
        assert.deepEqual(m.expertFeatures(torch.randn([4, 3, 32, 32])).shape, [3, 4, 48]);
      }),
    );
  });
});

test('ResNet-32, 1-channel 28x28 variant: forward/backward, features [E,N,64] without reduction', () => {
  withModel(
    { classes: 10, experts: 2, inChannels: 1, reduceDimension: false, normedClassifier: false },
    (m) => {
      assert.deepEqual(m.conv1.weight.shape, [16, 1, 3, 3]);
      torch.tidy(() => {
        const x = torch.randn([3, 1, 28, 28]).requiresGrad_();
        const { output, logits } = m.forward(x);
        assert.deepEqual(output.shape, [3, 10]);
        assert.deepEqual(logits.shape, [2, 3, 10]);
        output.sum().backward();
        assert.deepEqual(x.grad!.shape, [3, 1, 28, 28]);
        assert.deepEqual(torch.noGrad(() => m.expertFeatures(x)).shape, [2, 3, 64]);
      });
    },
  );
});

test('ResNet-32: a wrong input channel count fails instead of running', () => {
  withModel({ classes: 10, experts: 1, inChannels: 1 }, (m) => {
    torch.tidy(() => assert.throws(() => m.forward(torch.randn([1, 3, 28, 28]))));
  });
  assert.throws(() => new ResNetCifar({ classes: 10, experts: 0 }), /experts must be a positive integer/);
});
