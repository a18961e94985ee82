// The test-time methods a benchmark suite can name. Each is one entry: the test-time step it needs
// from runTestTime (none for the plain test-all numbers), whether a model supports it, and where
// its numbers are in the per-distribution result. A new method is one line here.
import type { DistributionTestTime, TestTimeMethod } from '../adapt/testtime.js';
import type { GroupResult } from '../train/evaluate.js';
import type { System } from '../systems/index.js';

/** One method of a benchmark suite (an entry of {@link BENCHMARK_METHODS}). */
export interface BenchmarkMethod {
  /** What the table's caption says about it. */
  describe: string;
  /** The runTestTime step it needs; null: the plain test-all evaluation (no test-time step). */
  step: TestTimeMethod | null;
  /** Uses the true test prior (labelled as an oracle in every table). */
  oracle?: boolean;
  /** Why a model cannot use it, or null when it can. */
  unsupported?: (system: System) => string | null;
  /** Its result on one distribution; undefined when the step declined (for example prior matching on a model it cannot handle). */
  pick: (r: DistributionTestTime) => GroupResult | undefined;
}

const prlOnly = (s: System) => (s.kind === 'prl' ? null : 'needs a PRL model (a hypernetwork)');

const METHODS = {
  plain: { describe: 'no test-time step (test-all)', step: null, pick: (r) => r.before },
  aggregation: {
    describe: 'SADE self-supervised expert aggregation',
    step: 'aggregation',
    pick: (r) => r.aggregation,
  },
  preference: {
    describe: 'PRL preference search',
    step: 'preference',
    unsupported: prlOnly,
    pick: (r) => r.preference,
  },
  prior: { describe: "prior matching (experts' weights / preference)", step: 'prior', pick: (r) => r.prior },
  prior_adjusted: {
    describe: 'prior matching, estimated prior added to the balanced scores',
    step: 'prior',
    pick: (r) => r.prior?.adjusted,
  },
  em: {
    describe: 'EM (MLLS) prior estimate, uncalibrated scores',
    step: 'em',
    pick: (r) => r.label_shift?.em,
  },
  em_ts: {
    describe: 'EM after temperature scaling on the validation split',
    step: 'em_ts',
    pick: (r) => r.label_shift?.em_ts,
  },
  em_bcts: {
    describe: 'EM after bias-corrected temperature scaling on the validation split',
    step: 'em_bcts',
    pick: (r) => r.label_shift?.em_bcts,
  },
  bbse: {
    describe: 'BBSE (validation confusion matrix inverted)',
    step: 'bbse',
    pick: (r) => r.label_shift?.bbse,
  },
  oracle: {
    describe: 'ORACLE: log of the true test prior added (uses test labels)',
    step: null,
    oracle: true,
    pick: (r) => r.oracle,
  },
} satisfies Record<string, BenchmarkMethod>;

/** A name of {@link BENCHMARK_METHODS}. */
export type BenchmarkMethodName = keyof typeof METHODS;
/**
 * The methods a benchmark suite compares, by name: what each is, the test-time step it needs, and how its result is picked from the test-time results.
 */
export const BENCHMARK_METHODS: Readonly<Record<BenchmarkMethodName, BenchmarkMethod>> = METHODS;
/** The names of {@link BENCHMARK_METHODS}. */
export const BENCHMARK_METHOD_NAMES = Object.keys(BENCHMARK_METHODS) as BenchmarkMethodName[];

export function benchmarkMethod(name: string): BenchmarkMethod {
  return (BENCHMARK_METHODS as Record<string, BenchmarkMethod>)[name]!;
}
