// Test-time adaptation on an unlabeled test set, per test distribution:
// - SADE's self-supervised aggregation: learnable expert weights softmax(w) (w = 0, i.e. 1/E),
//   trained to make the aggregated predictions of two augmented views agree (negative cosine),
//   model frozen, up to `epochs` epochs, stopping early when a weight drops below min_weight;
// - PRL preference search: the same objective, optimizing the preference r = softmax(theta) on
//   the simplex through the hypernetwork (which stays frozen);
// - prior matching: the test prior the experts' weights can express that fits the experts'
//   balanced scores best, and the weights / preference giving it (prior-shift.ts);
// - an oracle, reported as such: the balanced scores (the logits where the experts' log prior is
//   unknown) plus the log of the true test prior.
import * as torch from '../../torch/index.js';
import { optim, type Tensor } from '../../torch/index.js';
import { Rng } from '../../torch/rng.js';
import type { ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import { testDistributionSubset } from '../data/longtail.js';
import { evaluateLogits } from '../core/metrics.js';
import {
  aggregateByPreference,
  logitsFromFeatures,
  setTraining,
  type PrlSystem,
  type System,
} from '../systems/index.js';
import {
  selectRows,
  summarize,
  systemPredictions,
  type GroupResult,
  type Predictions,
} from '../train/evaluate.js';
import { computeExpertFeatures, featuresTensor, type ExpertFeatures } from '../train/features.js';
import {
  knownPriorOffsets,
  oracle,
  priorMatched,
  DEFAULT_PRIOR_FIT,
  type PriorFit,
  type PriorMatched,
} from './prior.js';
import { balancedScores } from './prior-shift.js';
import { computeEpochViews, disposeViews } from './views.js';

/** What test-time adaptation works on: a trained system, the unlabeled test pool and the training counts. */
export interface AdaptInput {
  system: System;
  /** The balanced test pool; every test distribution is a subset of it. */
  test: ImageSet;
  testTransform: ImageTransform;
  /** The two-view augmentation of the self-supervised searches. */
  viewTransform: ImageTransform;
  /** Training images per class (the training prior). */
  trainCounts: number[];
}

export type TestTimeMethod = 'aggregation' | 'preference' | 'prior';

export interface TestTimeOptions {
  epochs: number;
  batchSize: number;
  lr: number;
  momentum: number;
  weightDecay: number;
  nesterov: boolean;
  minWeight: number;
  /** Adam step size of the preference logits (the stability gradient wrt r is tiny, ~1e-7). */
  preferenceLr: number;
  /** How prior matching fits the experts' family to the test set (prior.ts). */
  priorFit?: PriorFit;
  seed: number;
  methods: TestTimeMethod[];
  distributions: readonly string[];
  quiet?: boolean;
}

export interface DistributionTestTime {
  n: number;
  before: GroupResult;
  aggregation?: GroupResult & { weights: number[]; epochs: number; stopped_early: boolean };
  preference?: GroupResult & { preference: number[]; epochs: number; stopped_early: boolean };
  /** Prior matching: `weights`, or for PRL `preference`, fitted to the test prior (`priorFit`). */
  prior?: PriorMatched;
  oracle: GroupResult;
}

/** Rows of the test predictions and the per-class counts of one distribution. */
function distributionRows(p: Predictions, name: string, trainCounts: number[]) {
  const subset = testDistributionSubset(p.labels, name, { trainCounts });
  return { rows: subset.indices, counts: subset.counts, predictions: selectRows(p, subset.indices) };
}

function negativeCosine(agg1: Tensor, agg2: Tensor): Tensor {
  return nnCos(agg1.softmax(1), agg2.softmax(1)).mean().neg();
}

function nnCos(a: Tensor, b: Tensor): Tensor {
  return torch.nn.functional.cosineSimilarity(a, b, 1);
}

function weightedSum(expertLogits: Tensor, weights: Tensor): Tensor {
  // expertLogits [E, N, C], weights [E]
  return expertLogits.mul(weights.reshape(-1, 1, 1)).sum(0);
}

/** One learner per distribution and method: the parameter on the simplex and its optimizer. */
interface SimplexLearner {
  theta: Tensor;
  opt: optim.SGD | optim.AdamW;
  epochs: number;
  stopped: boolean;
}

/** Rows of one distribution in a seeded order, in batches. */
function shuffledBatches(rows: Int32Array, batchSize: number, seed: number): Int32Array[] {
  const order = new Rng(seed).permutation(rows.length);
  const batches: Int32Array[] = [];
  for (let b = 0; b < order.length; b += batchSize)
    batches.push(Int32Array.from(order.slice(b, b + batchSize), (k) => rows[k]!));
  return batches;
}

/** Runs one epoch of a learner over the distribution's batches; stops early below min weight. */
function learnerEpoch(
  learner: SimplexLearner,
  batches: Int32Array[],
  epoch: number,
  minWeight: number,
  objective: (index: Tensor, weights: Tensor) => Tensor,
): void {
  if (learner.stopped) return;
  learner.epochs = epoch;
  for (const rows of batches) {
    torch.tidy(() => objective(torch.tensor(rows).long(), learner.theta.softmax(0)).backward());
    learner.opt.step();
    learner.opt.zeroGrad();
    const current = torch.tidy(() => learner.theta.softmax(0).toNumbers());
    if (Math.min(...current) < minWeight) {
      learner.stopped = true;
      return;
    }
  }
}

export async function runTestTime(
  input: AdaptInput,
  o: TestTimeOptions,
  log: (s: string) => void = (s) => console.error(s),
) {
  const { system, trainCounts } = input;
  const prl = system.kind === 'prl' ? system : null;
  const experts = system.experts;
  setTraining(system, false);
  // Before any work: asking for prior matching alone on a model it cannot handle is an error.
  const known = knownPriorOffsets(system, trainCounts);
  if (o.methods.includes('prior') && 'unknown' in known) {
    if (o.methods.length === 1)
      throw new Error(`test-time method 'prior': ${known.unknown}; use 'aggregation'`);
    log(`prior matching skipped: ${known.unknown}`);
  }
  const knownOffsets = 'offsets' in known ? known.offsets : null;
  const offsets = o.methods.includes('prior') ? knownOffsets : null;
  const all = await systemPredictions(system, input.test, input.testTransform);
  const searchPreference = prl !== null && o.methods.includes('preference');
  const aggregate = o.methods.includes('aggregation');
  let features: ExpertFeatures | null = null;
  if (searchPreference || (offsets && prl))
    features = await computeExpertFeatures(system, input.test, input.testTransform);

  const learners: SimplexLearner[] = [];
  const learner = (opt: 'sgd' | 'adam'): SimplexLearner => {
    const theta = torch.keep(torch.zeros([experts]).requiresGrad_());
    const l: SimplexLearner = {
      theta,
      // Adam for the preference: scale-free steps, because the stability objective is nearly flat in r.
      opt:
        opt === 'sgd'
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
    learners.push(l);
    return l;
  };
  // Freeze the model: only the aggregation weights / the preference are learned.
  const frozen = Object.values(system.modules).flatMap((m) => m.parameters());
  try {
    const tasks = o.distributions.map((name, index) => {
      const { rows, counts, predictions } = distributionRows(all, name, trainCounts);
      return {
        name,
        index,
        rows,
        counts,
        predictions,
        aggregation: aggregate ? learner('sgd') : null,
        preference: searchPreference ? learner('adam') : null,
      };
    });

    frozen.forEach((p) => p.requiresGrad_(false));
    for (let epoch = 1; epoch <= o.epochs; epoch++) {
      const active = tasks.filter(
        (t) => (t.aggregation && !t.aggregation.stopped) || (t.preference && !t.preference.stopped),
      );
      if (active.length === 0) break;
      const views = await computeEpochViews(input.system, input.test, input.viewTransform, {
        epoch,
        seed: o.seed,
        quiet: o.quiet ?? false,
      });
      try {
        for (const t of active) {
          const batches = shuffledBatches(t.rows, o.batchSize, o.seed * 1_000_003 + epoch * 101 + t.index);
          if (t.aggregation) {
            learnerEpoch(t.aggregation, batches, epoch, o.minWeight, (index, weights) =>
              negativeCosine(
                weightedSum(views.logits[0].indexSelect(1, index), weights),
                weightedSum(views.logits[1].indexSelect(1, index), weights),
              ),
            );
          }
          if (t.preference && prl) {
            learnerEpoch(t.preference, batches, epoch, o.minWeight, (index, r) => {
              const generated = prl.generate(r);
              const [f1, f2] = views.features!;
              return negativeCosine(
                aggregateByPreference(logitsFromFeatures(prl.model, f1.indexSelect(1, index), generated), r),
                aggregateByPreference(logitsFromFeatures(prl.model, f2.indexSelect(1, index), generated), r),
              );
            });
          }
        }
      } finally {
        disposeViews(views);
      }
    }
    frozen.forEach((p) => p.requiresGrad_(true));

    const results: Record<string, DistributionTestTime> = {};
    for (const t of tasks) {
      results[t.name] = scoreDistribution(t, {
        system,
        prl,
        features,
        knownOffsets,
        offsets,
        o,
        trainCounts,
      });
      log(describe(t.name, results[t.name]!, prl !== null));
    }
    return { experts, results };
  } finally {
    frozen.forEach((p) => p.requiresGrad_(true));
    for (const l of learners) {
      l.theta.dispose();
      l.opt.dispose();
    }
  }
}

/** The experts' logits [E, N, C] of some predictions weighted by w (SADE's aggregation). */
function weightedExperts(w: number[], p: Predictions): Float32Array {
  return torch.tidy(() =>
    weightedSum(
      torch.tensor(p.expertLogits, { shape: [p.experts, p.n, p.classes] }),
      torch.tensor(w),
    ).toFloat32Array(),
  );
}

/** PRL's output for preference r on some rows of the test set: the experts generated for r. */
function preferenceLogits(prl: PrlSystem, f: ExpertFeatures, r: number[], rows: Int32Array): Float32Array {
  return torch.noGrad(() =>
    torch.tidy(() => {
      const sub = featuresTensor(f).indexSelect(1, torch.tensor(rows).long());
      return aggregateByPreference(logitsFromFeatures(prl.model, sub, prl.generate(r)), r).toFloat32Array();
    }),
  );
}

interface DistributionTask {
  rows: Int32Array;
  counts: number[];
  predictions: Predictions;
  aggregation: SimplexLearner | null;
  preference: SimplexLearner | null;
}

/** Before, after each method, and the oracle, on one distribution. */
function scoreDistribution(
  t: DistributionTask,
  c: {
    system: System;
    prl: PrlSystem | null;
    features: ExpertFeatures | null;
    knownOffsets: number[][] | null;
    offsets: number[][] | null;
    o: TestTimeOptions;
    trainCounts: number[];
  },
): DistributionTestTime {
  const { predictions } = t;
  const { prl, features } = c;
  const score = (logits: ArrayLike<number>) =>
    summarize(evaluateLogits(logits, predictions.labels, predictions.classes, c.trainCounts));
  const before = score(predictions.logits);
  // The experts' scores without the log prior each carries: for the oracle and prior matching.
  const balanced = c.knownOffsets
    ? balancedScores(predictions.expertLogits, predictions, c.knownOffsets)
    : null;
  const entry: DistributionTestTime = {
    n: predictions.n,
    before,
    oracle: oracle(predictions, t.counts, score, balanced),
  };
  if (t.aggregation) {
    const weights = torch.tidy(() => t.aggregation!.theta.softmax(0).toNumbers());
    entry.aggregation = {
      ...score(weightedExperts(weights, predictions)),
      weights,
      epochs: t.aggregation.epochs,
      stopped_early: t.aggregation.stopped,
    };
  }
  if (c.offsets && balanced) {
    entry.prior = priorMatched(
      predictions,
      c.offsets,
      balanced,
      score,
      (w) => (prl && features ? preferenceLogits(prl, features, w, t.rows) : weightedExperts(w, predictions)),
      prl !== null,
      c.o.priorFit ?? DEFAULT_PRIOR_FIT,
    );
  }
  if (t.preference && prl && features) {
    const preference = torch.tidy(() => t.preference!.theta.softmax(0).toNumbers());
    entry.preference = {
      ...score(preferenceLogits(prl, features, preference, t.rows)),
      preference,
      epochs: t.preference.epochs,
      stopped_early: t.preference.stopped,
    };
  }
  return entry;
}

function describe(name: string, entry: DistributionTestTime, isPrl: boolean): string {
  const pct = (v: number | null | undefined) => (v === null || v === undefined ? '-' : (100 * v).toFixed(2));
  return (
    `${name}: before ${pct(entry.before.top1)}` +
    (entry.aggregation
      ? ` | aggregation ${pct(entry.aggregation.top1)} weights ${entry.aggregation.weights.map((v) => v.toFixed(3)).join('/')}`
      : '') +
    (entry.preference
      ? ` | preference ${pct(entry.preference.top1)} r ${entry.preference.preference.map((v) => v.toFixed(3)).join('/')}`
      : '') +
    (entry.prior
      ? ` | prior ${pct(entry.prior.top1)} ${isPrl ? 'r' : 'weights'} ${(entry.prior.preference ?? entry.prior.weights ?? []).map((v) => v.toFixed(3)).join('/')} (adjusted ${pct(entry.prior.adjusted.top1)})`
      : '') +
    ` | oracle prior ${pct(entry.oracle.top1)}`
  );
}
