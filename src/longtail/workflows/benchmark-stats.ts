// The spread of a benchmark number over seeds: mean, sample standard deviation and the 95 %
// Student-t interval of the mean (the usual report for a handful of seeds; with 2 seeds it is
// wide, as it should be).

/** Two-sided 95 % quantiles t(0.975, df) for df = 1..30 (standard tables). */
const T975 = [
  12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.306, 2.2622, 2.2281, 2.201, 2.1788, 2.1604,
  2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.093, 2.086, 2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555,
  2.0518, 2.0484, 2.0452, 2.0423,
];

/** t(0.975, df): the table up to 30, then the Cornish-Fisher expansion around the normal quantile (error < 1e-4). */
export function tQuantile975(df: number): number {
  if (!(Number.isInteger(df) && df >= 1))
    throw new RangeError(`degrees of freedom must be a positive integer, got ${df}`);
  if (df <= T975.length) return T975[df - 1]!;
  const z = 1.959963984540054;
  const z3 = z ** 3;
  const z5 = z ** 5;
  const z7 = z ** 7;
  return (
    z +
    (z3 + z) / (4 * df) +
    (5 * z5 + 16 * z3 + 3 * z) / (96 * df ** 2) +
    (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df ** 3)
  );
}

/**
 * The spread of one result over the seeds of a benchmark: count, mean, standard deviation, 95% confidence half-width, and the values.
 */
export interface Spread {
  /** Seeds that gave a value (a shot group can be empty on a small test set). */
  n: number;
  mean: number | null;
  /** Sample standard deviation (n - 1); null below 2 values. */
  sd: number | null;
  /** 95 % t-interval of the mean; null below 2 values. */
  ci95: [number, number] | null;
  values: (number | null)[];
}

/**
 * The {@link Spread} of values (null, undefined and non-finite values are left out of the statistics).
 */
export function spread(values: (number | null | undefined)[]): Spread {
  const kept = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  const n = kept.length;
  const all = values.map((v) => (typeof v === 'number' && Number.isFinite(v) ? v : null));
  if (n === 0) return { n, mean: null, sd: null, ci95: null, values: all };
  const mean = kept.reduce((s, v) => s + v, 0) / n;
  if (n < 2) return { n, mean, sd: null, ci95: null, values: all };
  const sd = Math.sqrt(kept.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1));
  const half = (tQuantile975(n - 1) * sd) / Math.sqrt(n);
  return { n, mean, sd, ci95: [mean - half, mean + half], values: all };
}
