// Test-time adaptation on an unlabeled test set, per test distribution:
// - SADE's self-supervised aggregation: learnable expert weights softmax(w) (w = 0, i.e. 1/E),
//   trained to make the aggregated predictions of two augmented views agree (negative cosine),
//   model frozen, up to `epochs` epochs, stopping early when a weight drops below min_weight;
// - PRL preference search: the same objective, optimizing the preference r = softmax(theta) on
//   the simplex through the hypernetwork (which stays frozen);
// - an oracle, reported as such: the logits plus the log of the true test prior.
import * as torch from '../torch/index.js';
import { optim, type Tensor } from '../torch/index.js';
import { epochBatches, type ImageSet } from './data/source.js';
import type { Batch } from './data/batches.js';
import { expertFeaturesOf } from './expert-features.js';
import { TEST_DISTRIBUTIONS, testDistributionSubset } from './data/longtail.js';
import { evaluateLogits } from './metrics.js';
import { selectRows, summarize, type GroupResult, type Predictions } from './evaluate.js';
import { testPredictions } from './results.js';
import type { Session } from './session.js';
import type { PrlSystem } from './prl/system.js';
import {
  aggregateByPreference,
  logitsFromFeatures,
  featuresTensor,
  type ExpertFeatures,
} from './prl/features.js';
import { Progress } from './progress.js';

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
  seed: number;
  methods: ('aggregation' | 'preference')[];
  distributions: readonly string[];
  quiet?: boolean;
}

export interface DistributionTestTime {
  n: number;
  before: GroupResult;
  aggregation?: GroupResult & { weights: number[]; epochs: number; stopped_early: boolean };
  preference?: GroupResult & { preference: number[]; epochs: number; stopped_early: boolean };
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

export async function runTestTime(
  session: Session,
  o: TestTimeOptions,
  log: (s: string) => void = (s) => console.error(s),
) {
  const system = session.system;
  const prl = 'hyper' in system ? (system as PrlSystem) : null;
  const experts = session.model.experts.length;
  for (const m of Object.values(system.modules)) m.eval();
  const test: ImageSet = session.data.test;
  const trainCounts = session.data.trainCounts;
  const all = await testPredictions(session);
  const viewTransform = session.viewTransform;
  let features: ExpertFeatures | null = null;
  if (prl && o.methods.includes('preference'))
    features = await expertFeaturesOf(prl, test, session.testTransform);
  const frozen = Object.values(system.modules).flatMap((m) => m.parameters());
  const results: Record<string, DistributionTestTime> = {};

  for (const name of o.distributions) {
    const { rows, counts, predictions } = distributionRows(all, name, trainCounts);
    const score = (logits: ArrayLike<number>) =>
      summarize(evaluateLogits(logits, predictions.labels, predictions.classes, trainCounts));
    const before = score(predictions.logits);
    const entry: DistributionTestTime = {
      n: predictions.n,
      before,
      oracle: oracle(predictions, counts, score),
    };
    const viewBatches = (epoch: number) =>
      epochBatches(test, {
        batchSize: o.batchSize,
        sampler: 'shuffle',
        seed: o.seed,
        epoch,
        views: 2,
        transform: viewTransform,
        indices: rows,
      });

    // Freeze the model: only the aggregation weights / the preference are learned.
    frozen.forEach((p) => p.requiresGrad_(false));
    try {
      if (o.methods.includes('aggregation')) {
        const w = torch.keep(torch.zeros([experts]).requiresGrad_());
        const opt = new optim.SGD([w], {
          lr: o.lr,
          momentum: o.momentum,
          weightDecay: o.weightDecay,
          nesterov: o.nesterov,
        });
        let stopped = false;
        let epochsRun = 0;
        for (let epoch = 1; epoch <= o.epochs && !stopped; epoch++) {
          epochsRun = epoch;
          const progress = new Progress({
            label: `${name} aggregation epoch ${epoch}`,
            total: predictions.n,
            unit: 'img',
            quiet: o.quiet ?? false,
          });
          for await (const batch of viewBatches(epoch)) {
            torch.tidy(() => {
              const shape = [batch.n, ...batch.shape];
              const z1 = torch.noGrad(() => system.evalForward(torch.tensor(batch.x, { shape })).logits);
              const z2 = torch.noGrad(() => system.evalForward(torch.tensor(batch.x2!, { shape })).logits);
              const weights = w.softmax(0);
              negativeCosine(weightedSum(z1, weights), weightedSum(z2, weights)).backward();
            });
            opt.step();
            opt.zeroGrad();
            progress.tick(batch.n);
            const current = torch.tidy(() => w.softmax(0).toNumbers());
            if (Math.min(...current) < o.minWeight) {
              stopped = true;
              break;
            }
          }
          progress.finish();
        }
        const weights = torch.tidy(() => w.softmax(0).toNumbers());
        w.dispose();
        const agg = torch.tidy(() =>
          weightedSum(
            torch.tensor(predictions.expertLogits, { shape: [experts, predictions.n, predictions.classes] }),
            torch.tensor(weights),
          ).toFloat32Array(),
        );
        entry.aggregation = { ...score(agg), weights, epochs: epochsRun, stopped_early: stopped };
      }
      if (prl && features && o.methods.includes('preference')) {
        entry.preference = await searchPreference(prl, features, rows, viewBatches, o, score, name, session);
      }
    } finally {
      frozen.forEach((p) => p.requiresGrad_(true));
    }
    results[name] = entry;
    const pct = (v: number | null | undefined) =>
      v === null || v === undefined ? '-' : (100 * v).toFixed(2);
    log(
      `${name}: before ${pct(before.top1)}` +
        (entry.aggregation
          ? ` | aggregation ${pct(entry.aggregation.top1)} weights ${entry.aggregation.weights.map((v) => v.toFixed(3)).join('/')}`
          : '') +
        (entry.preference
          ? ` | preference ${pct(entry.preference.top1)} r ${entry.preference.preference.map((v) => v.toFixed(3)).join('/')}`
          : '') +
        ` | oracle prior ${pct(entry.oracle.top1)}`,
    );
  }
  return { experts, results };
}

function oracle(p: Predictions, counts: number[], score: (l: ArrayLike<number>) => GroupResult): GroupResult {
  const total = counts.reduce((a, b) => a + b, 0);
  const logPrior = counts.map((c) => Math.log(Math.max(c, 1e-12) / total));
  const adjusted = new Float32Array(p.logits.length);
  for (let i = 0; i < p.n; i++)
    for (let c = 0; c < p.classes; c++)
      adjusted[i * p.classes + c] = p.logits[i * p.classes + c]! + logPrior[c]!;
  return score(adjusted);
}

async function searchPreference(
  prl: PrlSystem,
  features: ExpertFeatures,
  rows: Int32Array,
  viewBatches: (epoch: number) => Iterable<Batch> | AsyncIterable<Batch>,
  o: TestTimeOptions,
  score: (l: ArrayLike<number>) => GroupResult,
  name: string,
  _session: Session,
): Promise<GroupResult & { preference: number[]; epochs: number; stopped_early: boolean }> {
  const theta = torch.keep(torch.zeros([prl.experts]).requiresGrad_());
  // Adam: scale-free steps, because the stability objective is nearly flat in r.
  const opt = new optim.AdamW([theta], { lr: o.preferenceLr, weightDecay: 0 });
  let stopped = false;
  let epochsRun = 0;
  for (let epoch = 1; epoch <= o.epochs && !stopped; epoch++) {
    epochsRun = epoch;
    const progress = new Progress({
      label: `${name} preference epoch ${epoch}`,
      total: rows.length,
      unit: 'img',
      quiet: o.quiet ?? false,
    });
    for await (const batch of viewBatches(epoch)) {
      torch.tidy(() => {
        const shape = [batch.n, ...batch.shape];
        const f1 = torch.noGrad(() => prl.model.expertFeatures(torch.tensor(batch.x, { shape })));
        const f2 = torch.noGrad(() => prl.model.expertFeatures(torch.tensor(batch.x2!, { shape })));
        const r = theta.softmax(0);
        const generated = prl.generate(r);
        const a1 = aggregateByPreference(logitsFromFeatures(prl, f1, generated), r);
        const a2 = aggregateByPreference(logitsFromFeatures(prl, f2, generated), r);
        negativeCosine(a1, a2).backward();
      });
      opt.step();
      opt.zeroGrad();
      progress.tick(batch.n);
      const r = torch.tidy(() => theta.softmax(0).toNumbers());
      if (Math.min(...r) < o.minWeight) {
        stopped = true;
        break;
      }
    }
    progress.finish();
  }
  const preference = torch.tidy(() => theta.softmax(0).toNumbers());
  theta.dispose();
  const logits = torch.noGrad(() =>
    torch.tidy(() => {
      const all = featuresTensor(features);
      const sub = all.indexSelect(1, torch.tensor(rows).long());
      return aggregateByPreference(
        logitsFromFeatures(prl, sub, prl.generate(preference)),
        preference,
      ).toFloat32Array();
    }),
  );
  return { ...score(logits), preference, epochs: epochsRun, stopped_early: stopped };
}

export const ALL_DISTRIBUTIONS = TEST_DISTRIBUTIONS;
