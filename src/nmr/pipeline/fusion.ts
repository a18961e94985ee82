// The pseudo ground truth: the other levels of a sample fused with weights rising with their SNR
// (w_k ~ SNR_k^gamma by default, optionally capped); the spectrum a target is for is left out
// (exclude), so an experiment is never fused into its own target. Also the inverse-variance
// fusion of all levels, the classical baseline that uses every measurement.
import { checkSpectra, checksOf } from '../arguments.js';

export interface FusionWeightOptions {
  /** 'snr': w_k ~ SNR_k^gamma (default); 'T': w_k ~ T^k; 'last': only the highest-SNR spectrum. */
  scheme?: 'snr' | 'T' | 'last';
  gamma?: number;
  T?: number;
  /** Cap on a normalized weight (the excess is redistributed; default 1 = no cap). */
  wMax?: number;
  /** Spectra left out (e.g. the one under test, which must never be fused into its own target). */
  exclude?: number[];
}

/** Normalized fusion weights (sum 1) over the spectra k = 0..K. */
export function fusionWeights(snrs: number[], options: FusionWeightOptions = {}): number[] {
  const K1 = snrs.length;
  const excluded = new Set(options.exclude ?? []);
  const scheme = options.scheme ?? 'snr';
  let w = snrs.map((snr, k) => {
    if (excluded.has(k)) return 0;
    if (scheme === 'last') return k === K1 - 1 ? 1 : 0;
    if (scheme === 'T') return Math.pow(options.T ?? 2, k);
    return Math.pow(Math.max(snr, 0), options.gamma ?? 1);
  });
  let sum = w.reduce((a, b) => a + b, 0);
  if (!(sum > 0))
    throw new RangeError('fusionWeights: every weight is zero (all spectra excluded or SNR <= 0)');
  w = w.map((v) => v / sum);
  const cap = options.wMax ?? 1;
  const active = w.filter((v) => v > 0).length;
  if (cap < 1 && cap * active >= 1) {
    // Water-filling: clip at the cap and share what is left among the others in proportion.
    const base = w.slice();
    const capped = new Set<number>();
    for (let iter = 0; iter <= K1; iter++) {
      const remaining = 1 - cap * capped.size;
      const freeSum = base.reduce((a, v, k) => a + (capped.has(k) ? 0 : v), 0);
      w = base.map((v, k) => (capped.has(k) ? cap : freeSum > 0 ? (remaining * v) / freeSum : 0));
      const over = w.map((v, k) => (!capped.has(k) && v > cap ? k : -1)).filter((k) => k >= 0);
      if (over.length === 0) break;
      for (const k of over) capped.add(k);
    }
  }
  sum = w.reduce((a, b) => a + b, 0);
  return w.map((v) => v / sum);
}

/** sum_k w_k x_k with weights summing to one. */
export function weightedFusion(stack: ArrayLike<number>[], weights: number[]): Float64Array {
  const n = stack[0]!.length;
  const out = new Float64Array(n);
  stack.forEach((x, k) => {
    const w = weights[k]!;
    if (w === 0) return;
    for (let i = 0; i < n; i++) out[i]! += w * x[i]!;
  });
  return out;
}

/** Inverse-variance fusion: w_k ~ 1 / sigma_k^2. */
export function inverseVarianceFusion(stack: ArrayLike<number>[], sigmas: number[]): Float64Array {
  const c = checksOf('inverseVarianceFusion');
  checkSpectra(c, stack, 'stack', { sameLength: true });
  c.array(sigmas, 'sigmas');
  if (sigmas.length !== stack.length) c.fail('sigmas', `one per spectrum (${stack.length})`, sigmas);
  sigmas.forEach((s, i) => c.number(s, `sigmas[${i}]`, { above: 0 }));
  const w = sigmas.map((s) => 1 / (s * s));
  const sum = w.reduce((a, b) => a + b, 0);
  return weightedFusion(
    stack,
    w.map((v) => v / sum),
  );
}
