// A method's score stated as the raw level it matches: where on the raw ladder (levels 0..M of
// one sample, each T^2 times the measurement time of the one before) the same score lies.

/** A score stated as a raw level: the fractional level k whose raw spectrum scores the same. */
export interface Matched {
  /** Fractional level; with bound '<' or '>' the value lies beyond the ladder. */
  k: number;
  bound: '' | '<' | '>';
  /** Measurement time of that raw level relative to level 0, T^(2k). */
  timeFactor: number;
}

/**
 * The fractional level k* at which the raw ladder reaches value v (linear between levels).
 * Beyond the ladder, energy SNR is extrapolated with the raw slope 20 log10(T) dB per level
 * (noise energy falls by T^2 per level); peak F1 saturates, so it only reports a bound.
 */
export function matchLevel(v: number, ladder: number[], T: number, kind: 'energy' | 'f1'): Matched {
  const M = ladder.length - 1;
  const time = (k: number): number => Math.pow(T, 2 * k);
  if (!Number.isFinite(v) || ladder.some((x) => !Number.isFinite(x)))
    return { k: NaN, bound: '', timeFactor: NaN };
  for (let k = 0; k < M; k++) {
    const a = ladder[k]!;
    const b = ladder[k + 1]!;
    if (v >= a && v <= b && b > a) {
      const kk = k + (v - a) / (b - a);
      return { k: kk, bound: '', timeFactor: time(kk) };
    }
  }
  const slope = 20 * Math.log10(T);
  if (v < ladder[0]!) {
    if (kind === 'energy') {
      const kk = (v - ladder[0]!) / slope;
      return { k: kk, bound: '', timeFactor: time(kk) };
    }
    return { k: 0, bound: '<', timeFactor: 1 };
  }
  if (kind === 'energy') {
    const kk = M + (v - ladder[M]!) / slope;
    return { k: kk, bound: '', timeFactor: time(kk) };
  }
  return { k: M, bound: v > ladder[M]! ? '>' : '', timeFactor: time(M) };
}
