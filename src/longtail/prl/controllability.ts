// Controllability of a PRL model: accuracy of the many/medium/few class groups and on each test
// distribution as a function of the preference, over a grid on the simplex, and for single
// preferences (the dashboard's live query).
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import { evaluateLogits } from '../metrics.js';
import { evaluateDistributions, type Predictions } from '../evaluate.js';
import type { PrlSystem } from './system.js';
import {
  aggregateByPreference,
  computeExpertFeatures,
  featuresTensor,
  logitsFromFeatures,
  type ExpertFeatures,
} from './features.js';
import type { Session } from '../session.js';

export interface PreferenceResult {
  preference: number[];
  top1: number | null;
  many: number | null;
  medium: number | null;
  few: number | null;
  distributions: Record<string, number | null>;
}

export interface ControllabilityGrid {
  experts: number;
  points: PreferenceResult[];
}

/** All points of the simplex with coordinates multiples of 1/steps. */
export function simplexGrid(experts: number, steps: number): number[][] {
  const out: number[][] = [];
  const rec = (prefix: number[], left: number) => {
    if (prefix.length === experts - 1) {
      out.push([...prefix, left].map((v) => v / steps));
      return;
    }
    for (let k = 0; k <= left; k++) rec([...prefix, k], left - k);
  };
  rec([], steps);
  return out;
}

export class PreferenceEvaluator {
  private readonly features: Tensor;

  constructor(
    private readonly system: PrlSystem,
    private readonly cached: ExpertFeatures,
    private readonly trainCounts: number[],
  ) {
    this.features = torch.keep(featuresTensor(cached));
  }

  static async fromSession(session: Session): Promise<PreferenceEvaluator> {
    const system = session.system as PrlSystem;
    if (!('hyper' in system))
      throw new Error('this run is not a PRL model (no hypernetwork): preferences do not apply');
    const f = await computeExpertFeatures(system, session.data.test, session.testTransform);
    return new PreferenceEvaluator(system, f, session.data.trainCounts);
  }

  /** Predictions on the balanced test set for a preference. */
  predictions(preference: number[]): Predictions {
    return torch.noGrad(() =>
      torch.tidy(() => {
        const logits = logitsFromFeatures(this.system, this.features, this.system.generate(preference));
        const { n } = this.cached;
        const classes = logits.shape[2]!;
        return {
          n,
          classes,
          experts: this.cached.experts,
          logits: aggregateByPreference(logits, preference).toFloat32Array(),
          expertLogits: logits.toFloat32Array(),
          labels: this.cached.labels,
        };
      }),
    );
  }

  evaluate(preference: number[]): PreferenceResult {
    const p = this.predictions(preference);
    const r = evaluateLogits(p.logits, p.labels, p.classes, this.trainCounts);
    const { distributions } = evaluateDistributions(p, this.trainCounts);
    return {
      preference,
      top1: r.top1,
      many: r.groups.many,
      medium: r.groups.medium,
      few: r.groups.few,
      distributions: Object.fromEntries(Object.entries(distributions).map(([k, v]) => [k, v.top1])),
    };
  }

  grid(steps = 10): ControllabilityGrid {
    return {
      experts: this.cached.experts,
      points: simplexGrid(this.cached.experts, steps).map((r) => this.evaluate(r)),
    };
  }

  dispose(): void {
    this.features.dispose();
  }
}

const evaluators = new Map<string, Promise<PreferenceEvaluator>>();

/** For `tailor serve`: the accuracy of a run's PRL model at a preference (features cached per run). */
export async function evaluatePreference(
  runDir: string,
  preference: number[],
): Promise<Omit<PreferenceResult, 'preference'>> {
  let evaluator = evaluators.get(runDir);
  if (!evaluator) {
    evaluator = (async () => {
      const { loadRun } = await import('../runs.js');
      const loaded = loadRun(runDir);
      return PreferenceEvaluator.fromSession(loaded.session);
    })();
    evaluators.set(runDir, evaluator);
    evaluator.catch(() => evaluators.delete(runDir));
  }
  const e = await evaluator;
  const sum = preference.reduce((a, b) => a + b, 0);
  if (preference.length !== e['cached'].experts || preference.some((v) => !(v >= 0)) || !(sum > 0)) {
    throw new Error(`the preference needs ${e['cached'].experts} non-negative weights, not all zero`);
  }
  const { preference: _p, ...rest } = e.evaluate(preference.map((v) => v / sum));
  return rest;
}
