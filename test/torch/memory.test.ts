// Deterministic memory: a training loop leaves no native tensors behind, step after step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import { nn, optim } from '../../src/torch/index.js';

test('training steps keep the number of live tensors constant', () => {
  torch.manualSeed(0);
  const model = new nn.Sequential(
    new nn.Conv2d(1, 4, 3, { padding: 1 }),
    new nn.BatchNorm2d(4),
    new nn.ReLU(),
    new nn.Flatten(),
    new nn.Linear(4 * 8 * 8, 3),
  );
  const opt = new optim.SGD(model.parameters(), {
    lr: 0.1,
    momentum: 0.9,
    nesterov: true,
    weightDecay: 5e-4,
  });
  const x = torch.keep(torch.randn([6, 1, 8, 8]));
  const y = torch.keep(torch.randint(0, 3, [6]));
  const counts: number[] = [];
  for (let step = 0; step < 6; step++) {
    torch.tidy(() => nn.functional.crossEntropy(model.forward(x), y).backward());
    opt.step();
    opt.zeroGrad();
    counts.push(torch.liveTensors());
  }
  // The first step creates the momentum buffers; after that nothing may accumulate.
  assert.deepEqual(counts.slice(1), new Array(5).fill(counts[1]));
  x.dispose();
  y.dispose();
  model.dispose();
});

test('disposing a module frees its parameters and buffers', () => {
  const before = torch.liveTensors();
  const m = new nn.BatchNorm2d(3);
  assert.equal(torch.liveTensors(), before + 5);
  m.dispose();
  assert.equal(torch.liveTensors(), before);
});
