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
import { Rng } from '../../util/rng.js';
import type { ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import { testDistributionSubset } from '../data/longtail.js';
import { setTraining, type System } from '../systems/index.js';
import { selectRows, systemPredictions, type Predictions } from '../train/evaluate.js';
import { computeExpertFeatures, type ExpertFeatures } from '../train/features.js';
import { knownPriorOffsets, DEFAULT_PRIOR_FIT, type PriorFit } from './prior.js';
import { computeEpochViews, disposeViews } from './views.js';
import { fitOnValidation, scoreBasis, type ScoreBasis, type ValidationFit } from './baselines.js';
import {
  DEFAULT_CONSISTENCY_WEIGHT,
  priorConsistency,
  targetPrior,
  type SearchObjective,
} from './search-objective.js';
import {
  collapseWarning,
  describe,
  scoreDistribution,
  weightedSum,
  type SimplexLearner,
  type DistributionTestTime,
  type ValidationGuard,
} from './score.js';

export type { DistributionTestTime };
import { LABEL_SHIFT_METHODS, type TestTimeMethod } from './methods.js';

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
  /** The labelled validation split (never the test set): calibration and BBSE's confusion matrix. */
  val?: ImageSet;
}

export type { TestTimeMethod };

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
  /**
   * SADE's aggregation objective: 'consistent' by default (chosen on the validation split, see
   * BENCHMARKS.md); 'stability' is the objective as published.
   */
  aggregationObjective?: SearchObjective;
  /** PRL's preference search objective: 'consistent' by default (search-objective.ts). */
  preferenceObjective?: SearchObjective;
  /** Weight of the prior-consistency term of the 'consistent' objective (default 3). */
  consistencyWeight?: number;
  seed: number;
  methods: TestTimeMethod[];
  distributions: readonly string[];
  quiet?: boolean;
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
  const labelShift = LABEL_SHIFT_METHODS.filter((m) => o.methods.includes(m));
  const aggregationObjective = o.aggregationObjective ?? 'consistent';
  const preferenceObjective = o.preferenceObjective ?? 'consistent';
  const aggregate = o.methods.includes('aggregation');
  const consistent =
    (aggregate && aggregationObjective === 'consistent') ||
    (system.kind === 'prl' && o.methods.includes('preference') && preferenceObjective === 'consistent');
  let calibration: { basis: ScoreBasis; fit: ValidationFit } | null = null;
  let guard: ValidationGuard | null = null;
  if (labelShift.length > 0 && !input.val) {
    log(`${labelShift.join(', ')} skipped: no validation split`);
  } else if ((labelShift.length > 0 || consistent || aggregate) && input.val) {
    const basis = scoreBasis(system, trainCounts);
    const valPredictions = await systemPredictions(system, input.val, input.testTransform);
    calibration = { basis, fit: fitOnValidation(basis, valPredictions) };
    if (consistent || aggregate) {
      const needFeatures =
        prl !== null && o.methods.includes('preference') && preferenceObjective === 'consistent';
      guard = {
        val: valPredictions,
        features: needFeatures ? await computeExpertFeatures(system, input.val, input.testTransform) : null,
        // The published objective is kept as published, only checked (and warned about).
        aggregation: !aggregate ? false : aggregationObjective === 'consistent' ? 'enforce' : 'check',
        preference: preferenceObjective === 'consistent',
      };
    }
  }
  const all = await systemPredictions(system, input.test, input.testTransform);
  const searchPreference = prl !== null && o.methods.includes('preference');
  let features: ExpertFeatures | null = null;
  if (searchPreference || (offsets && prl))
    features = await computeExpertFeatures(system, input.test, input.testTransform);

  const learners: SimplexLearner[] = [];
  const targets: Tensor[] = [];
  const track = (t: Tensor) => (targets.push(t), t);
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
      // Also estimated for the published aggregation's check on the validation split.
      const target =
        consistent || guard?.aggregation
          ? targetPrior(system, trainCounts, predictions, calibration?.fit ?? null)
          : null;
      return {
        name,
        index,
        rows,
        counts,
        predictions,
        // The EM estimate of this distribution's prior (BCTS-calibrated where a validation split
        // exists) that the 'consistent' objective pulls the mean prediction towards.
        target: target ? track(torch.tensor(target)) : null,
        targetPrior: target,
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
          const lambda = o.consistencyWeight ?? DEFAULT_CONSISTENCY_WEIGHT;
          if (t.aggregation) {
            learnerEpoch(t.aggregation, batches, epoch, o.minWeight, (index, weights) => {
              const a1 = weightedSum(views.logits[0].indexSelect(1, index), weights);
              const a2 = weightedSum(views.logits[1].indexSelect(1, index), weights);
              const stability = negativeCosine(a1, a2);
              return aggregationObjective === 'consistent' && t.target
                ? stability.add(priorConsistency(a1, a2, t.target).mul(lambda))
                : stability;
            });
          }
          if (t.preference && prl) {
            learnerEpoch(t.preference, batches, epoch, o.minWeight, (index, r) => {
              const [f1, f2] = views.features!;
              const [v1, v2] = prl.logitsAt(r, f1.indexSelect(1, index), f2.indexSelect(1, index));
              const a1 = v1!.output;
              const a2 = v2!.output;
              const stability = negativeCosine(a1, a2);
              return preferenceObjective === 'consistent' && t.target
                ? stability.add(priorConsistency(a1, a2, t.target).mul(lambda))
                : stability;
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
        priorFit: o.priorFit ?? DEFAULT_PRIOR_FIT,
        trainCounts,
        calibration,
        labelShift,
        guard,
      });
      log(describe(t.name, results[t.name]!, prl !== null));
      const warning = collapseWarning(t.name, results[t.name]!);
      if (warning) log(warning);
    }
    return { experts, results, calibration: calibration?.fit ?? null };
  } finally {
    frozen.forEach((p) => p.requiresGrad_(true));
    for (const t of targets) t.dispose();
    for (const l of learners) {
      l.theta.dispose();
      l.opt.dispose();
    }
  }
}
