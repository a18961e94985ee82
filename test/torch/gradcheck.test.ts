// Autograd of the functional ops against central finite differences in float64.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { aten, nn } from '../../src/torch/index.js';

const F = nn.functional;
const r = (...shape: number[]) => torch.randn(shape, 'float64');

const cases: [string, () => [(...x: torch.Tensor[]) => torch.Tensor, torch.Tensor[]]][] = [
  ['logSoftmax', () => [(x) => F.logSoftmax(x, 1), [r(3, 4)]]],
  ['softmax', () => [(x) => F.softmax(x, 0), [r(3, 4)]]],
  [
    'crossEntropy (weights, smoothing)',
    () => {
      const y = torch.tensor(new BigInt64Array([0n, 3n, 1n]), { shape: [3] });
      const w = torch.tensor([1, 2, 0.5, 1.5], { dtype: 'float64' });
      return [(x) => F.crossEntropy(x, y, { weight: w, labelSmoothing: 0.1 }), [r(3, 4)]];
    },
  ],
  [
    'crossEntropy (soft targets)',
    () => {
      const t = F.softmax(r(3, 4), 1);
      return [(x) => F.crossEntropy(x, t), [r(3, 4)]];
    },
  ],
  ['normalize', () => [(x) => F.normalize(x, 2, 1), [r(3, 5)]]],
  ['cosineSimilarity', () => [(a, b) => F.cosineSimilarity(a!, b!, 1), [r(3, 5), r(3, 5)]]],
  ['linear', () => [(x, w, b) => F.linear(x!, w!, b!), [r(2, 4), r(3, 4), r(3)]]],
  [
    'conv2d (stride, padding, dilation, groups)',
    () => [(x, w) => aten.conv2d(x!, w!, null, 2, 1, 2, 2), [r(1, 4, 6, 6), r(2, 2, 3, 3)]],
  ],
  [
    'conv1d (dilated)',
    () => [(x, w, b) => aten.conv1d(x!, w!, b!, 1, 4, 2, 1), [r(1, 2, 12), r(3, 2, 5), r(3)]],
  ],
  [
    'batch_norm (training)',
    () => [
      (x, g, b) => aten.batch_norm(x!, g!, b!, null, null, true, 0.1, 1e-5, false),
      [r(4, 3, 2, 2), r(3), r(3)],
    ],
  ],
  ['group_norm', () => [(x, g, b) => aten.group_norm(x!, 2, g!, b!, 1e-5, false), [r(2, 4, 5), r(4), r(4)]]],
  ['layer_norm', () => [(x, g, b) => aten.layer_norm(x!, [5], g!, b!, 1e-5, false), [r(3, 5), r(5), r(5)]]],
  ['gelu', () => [(x) => F.gelu(x), [r(3, 4)]]],
  [
    'adaptive_avg_pool2d + max_pool2d',
    () => [(x) => aten.adaptive_avg_pool2d(aten.max_pool2d(x, 2), 1), [r(1, 2, 4, 4)]],
  ],
  ['interpolate linear', () => [(x) => F.interpolate(x, { size: [9], mode: 'linear' }), [r(1, 2, 5)]]],
  ['pad reflect', () => [(x) => F.pad(x, [2, 1], 'reflect'), [r(1, 2, 5)]]],
  [
    'logsumexp (smooth Tchebycheff form)',
    () => [
      (l) =>
        l
          .mul(torch.tensor([0.2, 0.5, 0.3], { dtype: 'float64' }))
          .div(0.1)
          .logsumexp(0)
          .mul(0.1),
      [r(3)],
    ],
  ],
  [
    'mse / l1 / smooth_l1',
    () => [(a, b) => F.mseLoss(a!, b!).add(F.smoothL1Loss(a!, b!, 0.5)), [r(4, 3), r(4, 3)]],
  ],
];

for (const [name, make] of cases) {
  test(`gradcheck: ${name}`, () => {
    torch.tidy(() => {
      torch.manualSeed(1);
      const [f, inputs] = make();
      const worst = torch.gradcheck(f, inputs);
      assert.ok(worst < 1e-5);
    });
  });
}

test('gradcheck detects a wrong gradient', () => {
  torch.tidy(() => {
    // detach() in the middle hides part of the dependence from autograd
    const f = (x: torch.Tensor) => x.mul(x.detach());
    assert.throws(() => torch.gradcheck(f, [r(3)]), /gradcheck: input 0/);
  });
});
