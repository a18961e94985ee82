// A PRL preference over the experts: one non-negative weight per expert, not all zero, on the
// simplex. Preference.of checks and normalises the weights once; the PRL system takes the value
// (src/longtail/systems/prl.ts: `system.at(r)`, `system.logitsAt(r, ...)`), whatever they came
// from: the command line, the dashboard's query, a grid, a search.
import { InputError } from '../../util/errors.js';

/** Weights that cannot be a preference of this model. */
export class PreferenceError extends InputError {
  override name = 'PreferenceError';
}

/**
 * Weights already summing to 1 this closely are on the simplex at the model's float32 precision
 * and are kept exactly as given (grid points such as 0.6/0.3/0.1, or a softmax read back, whose
 * sums differ from 1 in the last bits); any other sum divides them.
 */
const ON_SIMPLEX = 1e-6;

/**
 * A PRL preference over the experts: one non-negative weight per expert, normalised to sum to 1.
 * Make one with {@link Preference.of} (which checks and normalises) or {@link Preference.uniform}.
 *
 * @example
 * ```ts
 * import { Preference } from 'tailor/longtail';
 * const r = Preference.of([0.6, 0.3, 0.1], 3); // favours the first (head) expert
 * ```
 */
export class Preference {
  private constructor(readonly weights: readonly number[]) {}

  get experts(): number {
    return this.weights.length;
  }

  /** 1/E each: the experts' plain mean. */
  static uniform(experts: number): Preference {
    return new Preference(Object.freeze(new Array<number>(experts).fill(1 / experts)));
  }

  /**
   * The preference of `experts` experts these weights give (a Preference is only checked for its
   * number of weights): PreferenceError unless there is one finite, non-negative weight per expert
   * and they do not all vanish. `experts` null: not known yet (the model checks it when it takes
   * the preference).
   */
  static of(weights: Preference | readonly unknown[], experts: number | null): Preference {
    if (weights instanceof Preference) {
      if (experts !== null && weights.experts !== experts) throw countError(weights.experts, experts);
      return weights;
    }
    if (!weights.every((v): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0)) {
      const text = JSON.stringify(weights);
      throw new PreferenceError(
        `must be non-negative numbers, got ${text.length > 100 ? `${text.slice(0, 100)}…` : text}`,
      );
    }
    if (experts !== null && weights.length !== experts) throw countError(weights.length, experts);
    const sum = weights.reduce((a, b) => a + b, 0);
    if (!(sum > 0)) throw new PreferenceError('has weights that sum to 0');
    return new Preference(
      Object.freeze(Math.abs(sum - 1) <= ON_SIMPLEX ? [...weights] : weights.map((v) => v / sum)),
    );
  }

  /** The weights, so that `JSON.stringify` writes a preference as its array. */
  toJSON(): readonly number[] {
    return this.weights;
  }
}

function countError(given: number, experts: number): PreferenceError {
  return new PreferenceError(`has ${given} weights but the run has ${experts} experts (one per expert)`);
}
