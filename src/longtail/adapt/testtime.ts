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
import type { Tensor } from '../../torch/index.js';
import { Rng } from '../../util/rng.js';
import { UserError } from '../../util/errors.js';
import type { ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import { testDistributionSubset } from '../data/longtail.js';
import { setTraining, type PlainSystem, type PrlSystem } from '../systems/index.js';
import { selectRows, systemPredictions, type Predictions } from '../train/evaluate.js';
import { computeExpertFeatures, type ExpertFeatures } from '../train/features.js';
import { knownPriorOffsets, DEFAULT_PRIOR_FIT, type PriorFit } from './prior.js';
import { computeEpochViews, disposeViews, type EpochViews } from './views.js';
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
  type DistributionTask,
  type DistributionTestTime,
  type ValidationGuard,
} from './score.js';

export type { DistributionTestTime };
import { LABEL_SHIFT_METHODS, type LabelShiftMethod, type TestTimeMethod } from './methods.js';
import { learnerEpoch, simplexLearner } from './simplex-learner.js';

/** What test-time adaptation works on: a trained system, the unlabeled test pool and the training counts. */
export interface AdaptInput {
  /** A plain or PRL system (RIDE-EA's routed models have no test-time methods). */
  system: PlainSystem | PrlSystem;
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

/**
 * How {@link runTestTime} adapts: the optimisation of the searches, the methods to run and the distributions to score; {@link loadTestTimeConfig} reads one from a JSON file.
 */
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
  /**
   * Search steps between read-backs of the weights for the early stop (default 1 on the CPU, 16
   * on a GPU, where each read waits for the device); the result is the same for every value.
   */
  readEvery?: number;
  seed: number;
  methods: TestTimeMethod[];
  distributions: readonly string[];
  quiet?: boolean;
}

/**
 * The distribution name that stands for the whole pool as it is (no resampling): what
 * `tailor predict` adapts to, the user's own unlabeled images. Its images carry label 0, so only
 * the choices made on it (weights, preference, estimated prior) mean anything, not its accuracies.
 */
export const WHOLE_POOL = 'input';

/** Rows of the test predictions and the per-class counts of one distribution. */
function distributionRows(p: Predictions, name: string, trainCounts: number[]) {
  if (name === WHOLE_POOL) {
    const counts = new Array<number>(p.classes).fill(0);
    for (const y of p.labels) counts[y]!++;
    return { rows: Int32Array.from({ length: p.n }, (_, i) => i), counts, predictions: p };
  }
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

/** A test-time method the checkpoint cannot run (the config asks for what the model cannot do). */
export class TestTimeMethodError extends UserError {}

/** What runTestTime does, decided from the methods and the system before any work. */
interface TestTimePlan {
  prl: PrlSystem | null;
  /** The experts' known log-prior offsets (null: the model cannot say), and those prior matching uses. */
  knownOffsets: number[][] | null;
  offsets: number[][] | null;
  labelShift: LabelShiftMethod[];
  aggregationObjective: SearchObjective;
  preferenceObjective: SearchObjective;
  aggregate: boolean;
  searchPreference: boolean;
  /** A search uses the 'consistent' objective (so needs each distribution's estimated prior). */
  consistent: boolean;
}

/** What the labelled validation split gives: the calibration fit and the searches' guard. */
interface ValidationUse {
  calibration: { basis: ScoreBasis; fit: ValidationFit } | null;
  guard: ValidationGuard | null;
}

/** One distribution's searches. */
interface SearchTask extends DistributionTask {
  name: string;
  index: number;
  /** targetPrior as a tensor, for the 'consistent' objective. */
  target: Tensor | null;
}

/**
 * Test-time adaptation of a trained model on each test distribution without its labels: SADE's
 * self-supervised expert aggregation, the PRL preference search, prior estimation (EM, BBSE, with
 * calibration on the validation split), as `o.methods` asks; needs libtorch.
 * @param input The system and data of a session (see {@link adaptInput}).
 * @param o Epochs, batch size, learning rate, methods, distributions, seed ({@link TestTimeOptions}).
 * @param log Progress lines (default: standard error).
 * @returns Per distribution name, its {@link DistributionTestTime}.
 */
export async function runTestTime(
  input: AdaptInput,
  o: TestTimeOptions,
  log: (s: string) => void = (s) => console.error(s),
) {
  const { system } = input;
  setTraining(system, false);
  const plan = planTestTime(input, o, log);
  const { calibration, guard } = await useValidation(input, o, plan, log);
  const all = await systemPredictions(system, input.test, input.testTransform);
  let features: ExpertFeatures | null = null;
  if (plan.searchPreference || (plan.offsets && plan.prl))
    features = await computeExpertFeatures(system, input.test, input.testTransform);

  const learners: SimplexLearner[] = [];
  const targets: Tensor[] = [];
  // Freeze the model: only the aggregation weights / the preference are learned.
  const frozen = Object.values(system.modules).flatMap((m) => m.parameters());
  try {
    const tasks = o.distributions.map((name, index): SearchTask => {
      const { rows, counts, predictions } = distributionRows(all, name, input.trainCounts);
      // Also estimated for the published aggregation's check on the validation split.
      const target =
        plan.consistent || guard?.aggregation
          ? targetPrior(system, input.trainCounts, predictions, calibration?.fit ?? null)
          : null;
      const learner = (kind: 'sgd' | 'adam') => {
        learners.push(simplexLearner(kind, system.experts, o));
        return learners.at(-1)!;
      };
      return {
        name,
        index,
        rows,
        counts,
        predictions,
        // The EM estimate of this distribution's prior (BCTS-calibrated where a validation split
        // exists) that the 'consistent' objective pulls the mean prediction towards.
        target: target ? (targets.push(torch.tensor(target)), targets.at(-1)!) : null,
        targetPrior: target,
        aggregation: plan.aggregate ? learner('sgd') : null,
        preference: plan.searchPreference ? learner('adam') : null,
      };
    });
    frozen.forEach((p) => p.requiresGrad_(false));
    await searchEpochs(input, o, plan, tasks);
    frozen.forEach((p) => p.requiresGrad_(true));
    const results = scoreTasks(tasks, input, o, plan, { features, calibration, guard }, log);
    return {
      experts: system.experts,
      results,
      calibration: calibration?.fit ?? null,
      // The whole pool's predictions and PRL features: what `tailor predict` applies the choices to.
      predictions: all,
      features,
    };
  } finally {
    frozen.forEach((p) => p.requiresGrad_(true));
    for (const t of targets) t.dispose();
    for (const l of learners) {
      l.theta.dispose();
      l.opt.dispose();
    }
  }
}

function planTestTime(input: AdaptInput, o: TestTimeOptions, log: (s: string) => void): TestTimePlan {
  const { system, trainCounts } = input;
  const prl = system.kind === 'prl' ? system : null;
  // Before any work: asking for prior matching alone on a model it cannot handle is an error.
  const known = knownPriorOffsets(system, trainCounts);
  if (o.methods.includes('prior') && 'unknown' in known) {
    if (o.methods.length === 1)
      throw new TestTimeMethodError(`test-time method 'prior': ${known.unknown}; use 'aggregation'`);
    log(`prior matching skipped: ${known.unknown}`);
  }
  const knownOffsets = 'offsets' in known ? known.offsets : null;
  const aggregationObjective = o.aggregationObjective ?? 'consistent';
  const preferenceObjective = o.preferenceObjective ?? 'consistent';
  const aggregate = o.methods.includes('aggregation');
  return {
    prl,
    knownOffsets,
    offsets: o.methods.includes('prior') ? knownOffsets : null,
    labelShift: LABEL_SHIFT_METHODS.filter((m) => o.methods.includes(m)),
    aggregationObjective,
    preferenceObjective,
    aggregate,
    searchPreference: prl !== null && o.methods.includes('preference'),
    consistent:
      (aggregate && aggregationObjective === 'consistent') ||
      (system.kind === 'prl' && o.methods.includes('preference') && preferenceObjective === 'consistent'),
  };
}

/** The calibration fit (label-shift baselines) and the searches' guard, from the validation split. */
async function useValidation(
  input: AdaptInput,
  o: TestTimeOptions,
  plan: TestTimePlan,
  log: (s: string) => void,
): Promise<ValidationUse> {
  const { system } = input;
  const { labelShift, consistent, aggregate } = plan;
  if (labelShift.length > 0 && !input.val) {
    log(`${labelShift.join(', ')} skipped: no validation split`);
    return { calibration: null, guard: null };
  }
  if (!((labelShift.length > 0 || consistent || aggregate) && input.val))
    return { calibration: null, guard: null };
  const basis = scoreBasis(system, input.trainCounts);
  const valPredictions = await systemPredictions(system, input.val, input.testTransform);
  const calibration = { basis, fit: fitOnValidation(basis, valPredictions) };
  if (!(consistent || aggregate)) return { calibration, guard: null };
  const needFeatures =
    plan.prl !== null && o.methods.includes('preference') && plan.preferenceObjective === 'consistent';
  return {
    calibration,
    guard: {
      val: valPredictions,
      features: needFeatures ? await computeExpertFeatures(system, input.val, input.testTransform) : null,
      // The published objective is kept as published, only checked (and warned about).
      aggregation: !aggregate ? false : plan.aggregationObjective === 'consistent' ? 'enforce' : 'check',
      preference: plan.preferenceObjective === 'consistent',
    },
  };
}

/** The searches' epochs: the views of the test pool, then every active learner's epoch on them. */
async function searchEpochs(
  input: AdaptInput,
  o: TestTimeOptions,
  plan: TestTimePlan,
  tasks: SearchTask[],
): Promise<void> {
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
      for (const t of active) searchEpoch(t, views, epoch, o, plan);
    } finally {
      disposeViews(views);
    }
  }
}

/** One epoch of a distribution's searches: SADE's aggregation weights, PRL's preference. */
function searchEpoch(
  t: SearchTask,
  views: EpochViews,
  epoch: number,
  o: TestTimeOptions,
  plan: TestTimePlan,
): void {
  const { prl } = plan;
  const batches = shuffledBatches(t.rows, o.batchSize, o.seed * 1_000_003 + epoch * 101 + t.index);
  const lambda = o.consistencyWeight ?? DEFAULT_CONSISTENCY_WEIGHT;
  const objective = (kind: SearchObjective, a1: Tensor, a2: Tensor) => {
    const stability = negativeCosine(a1, a2);
    return kind === 'consistent' && t.target
      ? stability.add(priorConsistency(a1, a2, t.target).mul(lambda))
      : stability;
  };
  if (t.aggregation) {
    learnerEpoch(
      t.aggregation,
      batches,
      epoch,
      o.minWeight,
      (index, weights) => {
        const a1 = weightedSum(views.logits[0].indexSelect(1, index), weights);
        const a2 = weightedSum(views.logits[1].indexSelect(1, index), weights);
        return objective(plan.aggregationObjective, a1, a2);
      },
      o.readEvery,
    );
  }
  if (t.preference && prl) {
    learnerEpoch(
      t.preference,
      batches,
      epoch,
      o.minWeight,
      (index, r) => {
        const [f1, f2] = views.features!;
        const [v1, v2] = prl.logitsAt(r, f1.indexSelect(1, index), f2.indexSelect(1, index));
        return objective(plan.preferenceObjective, v1!.output, v2!.output);
      },
      o.readEvery,
    );
  }
}

/** Every distribution scored, before and after each method, each described in the log. */
function scoreTasks(
  tasks: SearchTask[],
  input: AdaptInput,
  o: TestTimeOptions,
  plan: TestTimePlan,
  c: { features: ExpertFeatures | null } & ValidationUse,
  log: (s: string) => void,
): Record<string, DistributionTestTime> {
  const results: Record<string, DistributionTestTime> = {};
  for (const t of tasks) {
    results[t.name] = scoreDistribution(t, {
      system: input.system,
      prl: plan.prl,
      features: c.features,
      knownOffsets: plan.knownOffsets,
      offsets: plan.offsets,
      priorFit: o.priorFit ?? DEFAULT_PRIOR_FIT,
      trainCounts: input.trainCounts,
      calibration: c.calibration,
      labelShift: plan.labelShift,
      guard: c.guard,
    });
    // The whole pool has no labels (its images carry label 0): its accuracies mean nothing.
    if (t.name !== WHOLE_POOL) log(describe(t.name, results[t.name]!, plan.prl !== null));
    const warning = collapseWarning(t.name, results[t.name]!);
    if (warning) log(warning);
  }
  return results;
}
