// A test-time search's learner: a point softmax(theta) of the experts' simplex with its optimizer,
// stepped over one epoch of a distribution's batches until a weight drops below min_weight. On a
// GPU the weights are read back every few steps rather than every step, with the steps past a
// stop undone, so that the stop is the same as with a read after each step.
import * as torch from '../../torch/index.js';
import { optim, type Tensor } from '../../torch/index.js';
import type { SimplexLearner } from './score.js';

/** A learnable point softmax(theta) of the simplex, from the uniform start, with its optimizer. */
export function simplexLearner(
  kind: 'sgd' | 'adam',
  experts: number,
  o: { lr: number; momentum: number; weightDecay: number; nesterov: boolean; preferenceLr: number },
): SimplexLearner {
  const theta = torch.keep(torch.zeros([experts]).requiresGrad_());
  return {
    theta,
    // Adam for the preference: scale-free steps, because the stability objective is nearly flat in r.
    opt:
      kind === 'sgd'
        ? new optim.SGD([theta], {
            lr: o.lr,
            momentum: o.momentum,
            weightDecay: o.weightDecay,
            nesterov: o.nesterov,
          })
        : new optim.AdamW([theta], { lr: o.preferenceLr, weightDecay: 0 }),
    epochs: 0,
    stopped: false,
  };
}

/**
 * Steps between read-backs of a search's weights on a GPU. Each read-back waits for the GPU, and
 * with other processes sharing it that wait is long; the early stop stays exact, because the
 * steps taken past a stop are undone (learnerSteps). On the CPU a read costs nothing: every step.
 */
const GPU_STEPS_PER_READ = 16;

/** Runs one epoch of a learner over the distribution's batches; stops early below min weight. */
export function learnerEpoch(
  learner: SimplexLearner,
  batches: Int32Array[],
  epoch: number,
  minWeight: number,
  objective: (index: Tensor, weights: Tensor) => Tensor,
  readEvery?: number,
): void {
  if (readEvery !== undefined && !(Number.isInteger(readEvery) && readEvery >= 1))
    throw new RangeError(`readEvery must be a positive integer, got ${readEvery}`);
  if (learner.stopped) return;
  learner.epochs = epoch;
  const step = (rows: Int32Array) => {
    torch.tidy(() => objective(torch.tensor(rows).long(), learner.theta.softmax(0)).backward());
    learner.opt.step();
    learner.opt.zeroGrad();
  };
  const chunk = readEvery ?? (learner.theta.device.type === 'cpu' ? 1 : GPU_STEPS_PER_READ);
  for (let start = 0; start < batches.length && !learner.stopped; start += chunk)
    learnerSteps(learner, batches.slice(start, start + chunk), minWeight, step);
}

/**
 * Steps through `part`, reading the smallest weight after each step back once at the end: the
 * learner stops after the first step that takes a weight below minWeight, and its state (the
 * weights and the optimizer's) is the state right after that step, as if it had been read each
 * step.
 */
function learnerSteps(
  learner: SimplexLearner,
  part: Int32Array[],
  minWeight: number,
  step: (rows: Int32Array) => void,
): void {
  const smallest: Tensor[] = [];
  const after: LearnerState[] = [];
  try {
    for (const rows of part) {
      step(rows);
      smallest.push(torch.keep(torch.tidy(() => learner.theta.softmax(0).min())));
      // the state to return to if this step is the one that stops (none for a lone step)
      if (part.length > 1) after.push(saveLearner(learner));
    }
    const values = torch.tidy(() => torch.stack(smallest).toNumbers());
    const stop = values.findIndex((v) => v < minWeight);
    if (stop < 0) return;
    if (stop < part.length - 1) restoreLearner(learner, after[stop]!);
    learner.stopped = true;
  } finally {
    smallest.forEach((t) => t.dispose());
    after.forEach(disposeLearnerState);
  }
}

/** A copy of a learner's weights and its optimizer's state. */
interface LearnerState {
  theta: Tensor;
  optimizer: optim.OptimizerStateDict;
}

function saveLearner(learner: SimplexLearner): LearnerState {
  const dict = learner.opt.stateDict();
  const state: optim.OptimizerStateDict['state'] = {};
  for (const [id, entries] of Object.entries(dict.state)) {
    state[id] = Object.fromEntries(
      Object.entries(entries).map(([key, v]) => [key, v instanceof torch.Tensor ? torch.keep(v.clone()) : v]),
    );
  }
  const theta = torch.keep(torch.tidy(() => learner.theta.detach().clone()));
  return { theta, optimizer: { ...dict, state } };
}

function restoreLearner(learner: SimplexLearner, saved: LearnerState): void {
  torch.noGrad(() => learner.theta.copy_(saved.theta));
  learner.opt.loadStateDict(saved.optimizer);
}

function disposeLearnerState(saved: LearnerState): void {
  saved.theta.dispose();
  for (const entries of Object.values(saved.optimizer.state))
    for (const v of Object.values(entries)) if (v instanceof torch.Tensor) v.dispose();
}
