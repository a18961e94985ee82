// The chi-square upper tail for likelihood-ratio tests: P(X > x) = Q(df/2, x/2), the regularized
// upper incomplete gamma function. Q is computed directly (series for P when x < a + 1, a Lentz
// continued fraction for Q otherwise), never as 1 - P, so tiny p-values (1e-27 and below) keep
// their relative accuracy.
import { logGamma } from '../special.js';

const EPS = 1e-16;
const TINY = 1e-300;

function lowerSeries(a: number, x: number): number {
  let sum = 1 / a;
  let term = sum;
  for (let n = 1; n < 10000; n++) {
    term *= x / (a + n);
    sum += term;
    if (Math.abs(term) < Math.abs(sum) * EPS) break;
  }
  return sum * Math.exp(-x + a * Math.log(x) - logGamma(a));
}

function upperFraction(a: number, x: number): number {
  let b = x + 1 - a;
  let c = 1 / TINY;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 10000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < TINY) d = TINY;
    c = b + an / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h;
}

/** Regularized upper incomplete gamma Q(a, x). */
export function gammaQ(a: number, x: number): number {
  if (!(a > 0)) throw new RangeError(`gammaQ needs a > 0, got ${a}`);
  if (Number.isNaN(x)) return NaN;
  if (x <= 0) return 1;
  if (x === Infinity) return 0;
  return x < a + 1 ? 1 - lowerSeries(a, x) : upperFraction(a, x);
}

/** P(chi^2_df > x). */
export function chiSquareSurvival(x: number, df: number): number {
  if (!(df > 0)) throw new RangeError(`chi-square degrees of freedom must be positive, got ${df}`);
  return gammaQ(df / 2, x / 2);
}
