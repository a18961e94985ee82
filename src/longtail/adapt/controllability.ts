// Controllability of a PRL model: accuracy of the many/medium/few class groups and on each test
// distribution as a function of the preference, over a grid on the simplex, and for single
// preferences (the dashboard's live query).
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import type { ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import { evaluateLogits } from '../metrics/metrics.js';
import type { PrlSystem } from '../systems/prl.js';
import { Preference } from '../types/preference.js';
import { evaluateDistributions, type Predictions } from '../train/evaluate.js';
import { computeExpertFeatures, featuresTensor, type ExpertFeatures } from '../train/features.js';

/**
 * The accuracy of a PRL model at one preference: top-1 and per shot group on the uniform test set, and on each test distribution (null for an empty group).
 */
export interface PreferenceResult {
  preference: number[];
  top1: number | null;
  many: number | null;
  medium: number | null;
  few: number | null;
  distributions: Record<string, number | null>;
}

/**
 * What {@link controllabilityGrid} returns: the number of experts and one {@link PreferenceResult} per point of the preference grid.
 */
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

  /** Caches the per-expert features of the balanced test set. */
  static async create(
    system: PrlSystem,
    test: ImageSet,
    testTransform: ImageTransform,
    trainCounts: number[],
  ): Promise<PreferenceEvaluator> {
    const f = await computeExpertFeatures(system, test, testTransform);
    return new PreferenceEvaluator(system, f, trainCounts);
  }

  get experts(): number {
    return this.cached.experts;
  }

  /** Predictions on the balanced test set for a preference. */
  predictions(preference: Preference): Predictions {
    return torch.noGrad(() =>
      torch.tidy(() => {
        const [out] = this.system.logitsAt(preference, this.features);
        const { n } = this.cached;
        const classes = out!.logits.shape[2]!;
        return {
          n,
          classes,
          experts: this.cached.experts,
          logits: out!.output.toFloat32Array(),
          expertLogits: out!.logits.toFloat32Array(),
          labels: this.cached.labels,
        };
      }),
    );
  }

  /** The accuracies at a preference (weights are checked and normalised: PreferenceError). */
  evaluate(weights: Preference | readonly number[]): PreferenceResult {
    const preference = Preference.of(weights, this.experts);
    const p = this.predictions(preference);
    const r = evaluateLogits(p.logits, p.labels, p.classes, this.trainCounts);
    const { distributions } = evaluateDistributions(p, this.trainCounts);
    return {
      preference: [...preference.weights],
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
