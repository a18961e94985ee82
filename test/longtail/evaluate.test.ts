// predict() and computeExpertFeatures() keep the outputs of up to 16 batches on the device before
// reading them back: many small batches (several reads) give the same values, in the same places,
// as one large batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { predict } from '../../src/longtail/train/evaluate.js';
import { testTransform } from '../../src/longtail/data/pipelines.js';
import type { ImageDataset } from '../../src/longtail/data/types.js';
import { computeExpertFeatures } from '../../src/longtail/train/features.js';
import type { PlainSystem } from '../../src/longtail/systems/system.js';

test('predict gives the same logits whether it reads back once or every 16 batches', async () => {
  const n = 70;
  const images = Uint8Array.from({ length: n * 4 * 4 }, (_, i) => (i * 37) % 251);
  const ds: ImageDataset = {
    images,
    labels: Int32Array.from({ length: n }, (_, i) => i % 3),
    shape: [1, 4, 4],
    classes: 3,
  };
  const weight = torch.keep(
    torch.tensor(
      Float32Array.from({ length: 16 * 3 }, (_, i) => Math.sin(i)),
      { shape: [16, 3] },
    ),
  );
  const forward = (x: torch.Tensor) => {
    const output = x.flatten(1).matmul(weight);
    return { output, logits: torch.stack([output, output.mul(2)]) };
  };
  const transform = testTransform('fmnist');
  try {
    const live = torch.liveTensors();
    const small = await predict(forward, ds, transform, 3); // 24 batches: reads after 16 and at the end
    assert.equal(torch.liveTensors(), live, 'no tensor is left behind');
    const large = await predict(forward, ds, transform, 256);
    assert.deepEqual([small.n, small.classes, small.experts], [n, 3, 2]);
    assert.deepEqual(small.labels, large.labels);
    small.logits.forEach((v, i) => assert.ok(Math.abs(v - large.logits[i]!) < 1e-5, `logit ${i}`));
    small.expertLogits.forEach((v, i) =>
      assert.ok(Math.abs(v - large.expertLogits[i]!) < 1e-5, `expert logit ${i}`),
    );
    // the second expert is twice the first, image by image
    for (let i = 0; i < n * 3; i++)
      assert.ok(Math.abs(small.expertLogits[n * 3 + i]! - 2 * small.expertLogits[i]!) < 1e-5);
  } finally {
    weight.dispose();
  }
});

test('computeExpertFeatures reads back every 16 batches and places each expert and image as one batch does', async () => {
  const n = 70;
  const ds: ImageDataset = {
    images: Uint8Array.from({ length: n * 4 * 4 }, (_, i) => (i * 53) % 251),
    labels: Int32Array.from({ length: n }, (_, i) => i % 3),
    shape: [1, 4, 4],
    classes: 3,
  };
  // two "experts": the flattened image and its square, [E, N, 16]
  const system = {
    experts: 2,
    modules: {},
    model: {
      featureDim: 16,
      expertFeatures: (x: torch.Tensor) => torch.stack([x.flatten(1), x.flatten(1).square()]),
    },
  } as unknown as PlainSystem;
  const transform = testTransform('fmnist');
  const live = torch.liveTensors();
  const small = await computeExpertFeatures(system, ds, transform, 3); // 24 batches
  assert.equal(torch.liveTensors(), live, 'no tensor is left behind');
  const large = await computeExpertFeatures(system, ds, transform, 256);
  assert.deepEqual([small.experts, small.n, small.dim], [2, n, 16]);
  assert.deepEqual(small.labels, large.labels);
  assert.deepEqual(small.data, large.data);
  for (let i = 0; i < n * 16; i++) assert.ok(Math.abs(small.data[n * 16 + i]! - small.data[i]! ** 2) < 1e-5);
});
