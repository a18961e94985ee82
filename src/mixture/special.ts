// Special functions of the mixture models: log Gamma (the chi-square tail of the likelihood-ratio
// test, the Wishart and Dirichlet normalisers of the variational mixture) and digamma (its
// expected log weights and log determinants), in double precision.

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** log Gamma(x) for x > 0 (Lanczos, g = 7; about 1e-15 relative). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = LANCZOS[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** log B(a, b) = log Gamma(a) + log Gamma(b) - log Gamma(a + b), for a, b > 0 (scipy's betaln). */
export function logBeta(a: number, b: number): number {
  return logGamma(a) + logGamma(b) - logGamma(a + b);
}

/**
 * The digamma function psi(x) = d/dx log Gamma(x) (scipy's digamma): the recurrence
 * psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic series to x^-14 (error below
 * 1e-16 there); reflection for negative x. NaN at 0 and the negative integers (poles).
 */
export function digamma(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x <= 0 && Number.isInteger(x)) return NaN;
  if (x < 0) return digamma(1 - x) - Math.PI / Math.tan(Math.PI * x);
  let shift = 0;
  while (x < 10) {
    shift -= 1 / x;
    x += 1;
  }
  const f = 1 / (x * x);
  // Bernoulli numbers: -B_2n / (2n) for n = 1..7
  const series =
    f *
    (-1 / 12 +
      f * (1 / 120 + f * (-1 / 252 + f * (1 / 240 + f * (-1 / 132 + f * (691 / 32760 + f * (-1 / 12)))))));
  return shift + Math.log(x) - 0.5 / x + series;
}
