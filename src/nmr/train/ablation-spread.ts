// What decides between ablation variants, over seeds: per variant the mean and sample standard
// deviation of a few figures of its runs (`tailor nmr ablate --seeds`, and its HTML report).

/** The figures compared between ablation variants (NaN where a run lacks one). */
export interface AblationScores {
  energy_snr_db: number;
  /** Peak F1 at the default picking threshold (3 sigma). */
  peak_f1: number;
  /** Recall of the weak peaks (SNR 3-5) at 3 sigma. */
  recall_weak: number;
  integral_rel_error: number;
  /** Area under the precision-recall curve of the threshold sweep. */
  pr_auc: number;
  /** F1 at the threshold tuned on the first 20 % of the samples. */
  tuned_f1: number;
  /** Recall at one false peak per spectrum. */
  recall_at_1: number;
  /** Weak-peak recall at one false peak per spectrum. */
  recall_weak_at_1: number;
}

/** A figure's key, its column label and its decimals. */
export interface AblationScoreColumn {
  key: keyof AblationScores;
  label: string;
  digits: number;
}

/** The figures in table order. */
export const ABLATION_SCORES: readonly AblationScoreColumn[] = [
  { key: 'energy_snr_db', label: 'energy SNR dB', digits: 2 },
  { key: 'peak_f1', label: 'peak F1 at 3 sigma', digits: 3 },
  { key: 'recall_weak', label: 'recall SNR 3-5 at 3 sigma', digits: 3 },
  { key: 'integral_rel_error', label: 'integral err', digits: 3 },
  { key: 'pr_auc', label: 'PR AUC', digits: 3 },
  { key: 'tuned_f1', label: 'tuned F1', digits: 3 },
  { key: 'recall_at_1', label: 'recall at 1 false / spectrum', digits: 3 },
  { key: 'recall_weak_at_1', label: 'recall SNR 3-5 at 1', digits: 3 },
];

/** One variant over its seeds: means, sample standard deviations (NaN under two finite runs). */
export interface AblationSpread {
  variant: string;
  seeds: number[];
  mean: AblationScores;
  sd: AblationScores;
}

/** Mean and sample standard deviation (n - 1) of the finite values; NaN where they are undefined. */
function meanAndSd(values: number[]): [number, number] {
  const v = values.filter(Number.isFinite);
  if (v.length === 0) return [NaN, NaN];
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  if (v.length === 1) return [m, NaN];
  return [m, Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1))];
}

/** Per variant (in order of first appearance), the spread of its runs' scores. */
export function ablationSpread(
  runs: readonly { variant: string; seed: number; scores: AblationScores }[],
): AblationSpread[] {
  const variants = [...new Set(runs.map((r) => r.variant))];
  return variants.map((variant) => {
    const mine = runs.filter((r) => r.variant === variant);
    const mean = {} as AblationScores;
    const sd = {} as AblationScores;
    for (const { key } of ABLATION_SCORES) [mean[key], sd[key]] = meanAndSd(mine.map((r) => r.scores[key]));
    return { variant, seeds: mine.map((r) => r.seed), mean, sd };
  });
}

/** "m ± s" of one figure ("m" alone for one run, "-" for none). */
export function formatMeanSd(v: AblationSpread, column: AblationScoreColumn): string {
  const m = v.mean[column.key];
  const sd = v.sd[column.key];
  if (!Number.isFinite(m)) return '-';
  return Number.isFinite(sd)
    ? `${m.toFixed(column.digits)} ± ${sd.toFixed(column.digits)}`
    : m.toFixed(column.digits);
}
