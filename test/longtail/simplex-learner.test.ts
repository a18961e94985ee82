// The test-time searches' learner reads its weights back every few steps on a GPU: the early stop
// must land on the same step, with the same weights and optimizer state, as reading after every
// step (the CPU's way), for SGD with Nesterov momentum (SADE's aggregation) and AdamW (PRL's
// preference), whether the stop falls inside a group of steps, at its end, or not at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import type { Tensor } from '../../src/torch/index.js';
import { learnerEpoch, simplexLearner } from '../../src/longtail/adapt/simplex-learner.js';
import type { SimplexLearner } from '../../src/longtail/adapt/score.js';

const settings = { lr: 0.4, momentum: 0.9, weightDecay: 5e-4, nesterov: true, preferenceLr: 0.05 };
/** Ten batches of row indices; the objective below pushes expert 0's weight down, faster for larger rows. */
const batches = Array.from({ length: 10 }, (_, b) => Int32Array.from([b, b + 1, b + 2]));
const objective = (index: Tensor, weights: Tensor) =>
  torch.tidy(() => weights.select(0, 0).mul(index.float().add(1).mean()));

interface Outcome {
  theta: number[];
  state: Record<string, number[] | number>;
  epochs: number;
  stopped: boolean;
}

function outcome(l: SimplexLearner): Outcome {
  const state: Record<string, number[] | number> = {};
  for (const [id, entries] of Object.entries(l.opt.stateDict().state))
    for (const [key, v] of Object.entries(entries))
      state[`${id}.${key}`] = v instanceof torch.Tensor ? v.toNumbers() : (v as number);
  return { theta: l.theta.toNumbers(), state, epochs: l.epochs, stopped: l.stopped };
}

function run(kind: 'sgd' | 'adam', minWeight: number, readEvery: number): Outcome {
  const learner = simplexLearner(kind, 3, settings);
  try {
    for (let epoch = 1; epoch <= 3; epoch++)
      learnerEpoch(learner, batches, epoch, minWeight, objective, readEvery);
    return outcome(learner);
  } finally {
    learner.theta.dispose();
    learner.opt.dispose();
  }
}

for (const kind of ['sgd', 'adam'] as const) {
  test(`${kind}: reading the weights back every k steps stops on the same step, in the same state`, () => {
    const before = torch.liveTensors();
    const free = run(kind, 0, 1);
    assert.equal(free.stopped, false);
    const lowest = Math.min(...torch.tidy(() => torch.tensor(free.theta).softmax(0).toNumbers()));
    // a threshold that the weight crosses part-way through the run
    const minWeight = (lowest + 1 / 3) / 2;
    const everyStep = run(kind, minWeight, 1);
    assert.equal(everyStep.stopped, true, 'the threshold is crossed');
    for (const k of [2, 3, 4, 7, 10, 64])
      assert.deepEqual(run(kind, minWeight, k), everyStep, `every ${k} steps`);
    // no stop: every reading interval trains the same three epochs
    for (const k of [3, 16]) assert.deepEqual(run(kind, 0, k), free, `no stop, every ${k} steps`);
    assert.equal(torch.liveTensors(), before, 'saved states and read-backs are freed');
  });
}

test('readEvery must be a positive integer', () => {
  const learner = simplexLearner('sgd', 3, settings);
  try {
    assert.throws(
      () => learnerEpoch(learner, batches, 1, 0, objective, 0),
      /readEvery must be a positive integer, got 0/,
    );
    assert.throws(() => learnerEpoch(learner, batches, 1, 0, objective, 1.5), /got 1.5/);
  } finally {
    learner.theta.dispose();
    learner.opt.dispose();
  }
});
