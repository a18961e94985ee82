// The ablations of the NMR training: each variant changes one ingredient of the configured run,
// is trained the same way, and is scored on a held-out data set with the yardstick (x0 in,
// against the truth: energy SNR, peak F1, weak-peak recall, hallucinations, integrals, FWHM, and
// the raw level each matches).
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../../util/fs.js';
import { datasetYardSamples } from '../eval/yard-data.js';
import { runYardstick, type MethodScore } from '../eval/yardstick.js';
import type { Metrics } from '../eval/metrics.js';
import type { OperatingPoints } from '../eval/operating.js';
import { denoiseSpectra, loadDenoiser } from '../model/denoise.js';
import type { NmrTrainConfig, StageConfig } from './config.js';
import { preprocessOptions } from './samples.js';
import { trainNmr } from './trainer.js';
import { ABLATION_SCORES, ablationSpread, formatMeanSd, type AblationScores } from './ablation-spread.js';

/** One ablation variant: what it removes and how it changes the config. */
export interface Ablation {
  description: string;
  /** Changes a copy of the config into this variant. */
  apply: (cfg: NmrTrainConfig) => void;
}

const bothStages = (cfg: NmrTrainConfig, fn: (s: StageConfig) => void): void => {
  fn(cfg.stageA);
  fn(cfg.stageB);
};

/** Sets these loss terms to 0 in both stages; a zeroed lambda_2 also loses its stage-B ramp (curvEnd). */
const withoutTerms =
  (...terms: ('deriv' | 'curv' | 'cons' | 'ratio' | 'recOthers')[]) =>
  (cfg: NmrTrainConfig): void =>
    bothStages(cfg, (s) => {
      for (const term of terms) s.loss[term] = 0;
      if (terms.includes('curv')) s.curvEnd = null;
    });

/**
 * The ablation variants `tailor nmr ablate` runs, by name: 'full' (the configured run) and the runs with one part removed.
 */
export const ABLATIONS: Record<string, Ablation> = {
  full: { description: 'the configured run', apply: () => {} },
  'no-peak-weight': {
    description: 'reconstruction L1 without the peak-mask weighting (peak weight = base weight)',
    apply: (cfg) =>
      bothStages(cfg, (s) => {
        s.loss.peakWeight = s.loss.baseWeight;
        s.peakWeightEnd = null;
      }),
  },
  'peak-ramp': {
    description:
      'the peak-mask weight raised linearly during stage B to 3x its value (x6 -> x18 with the defaults), to keep weak peaks late in training',
    apply: (cfg) => {
      cfg.stageB.peakWeightEnd = 3 * cfg.stageB.loss.peakWeight;
    },
  },
  'no-curv': {
    description: 'without the baseline second-difference term (lambda_2 = 0)',
    apply: withoutTerms('curv'),
  },
  'no-cons-T': {
    description: 'without the multi-SNR consistency and T residual-ratio terms (lambda_3 = lambda_4 = 0)',
    apply: withoutTerms('cons', 'ratio'),
  },
  'rec-input-only': {
    description: 'reconstruction L1 on the level-0 output only (recOthers = 0)',
    apply: withoutTerms('recOthers'),
  },
  'no-stage-B': {
    description:
      'stage A only, for the epochs of both stages (no stage-B consistency, T constraint or curriculum)',
    apply: (cfg) => {
      cfg.stageA.epochs += cfg.stageB.epochs;
      cfg.stageB.epochs = 0;
    },
  },
  'no-deriv-curv': {
    description: 'without the derivative and baseline-curvature terms (lambda_1 = lambda_2 = 0)',
    apply: withoutTerms('deriv', 'curv'),
  },
  'target-last': {
    description: 'pseudo ground truth = the highest-SNR spectrum k = K only (no SNR-weighted fusion)',
    apply: (cfg) => {
      cfg.data.target = 'last';
    },
  },
  'no-rescale': {
    description: 'without rescaling each level onto level K (training and evaluation)',
    apply: (cfg) => {
      cfg.data.rescale = 'none';
    },
  },
};

/**
 * One variant's result in the ablation table: the model's yardstick row against the truth and the
 * raw ladder.
 */
export interface AblationRow {
  variant: string;
  description: string;
  /** The training seed of this row (the config's, or one of {@link AblationOptions.seeds}). */
  seed: number;
  /** The model's row of the yardstick against the truth (x0 in, matched level, time saved). */
  model: MethodScore;
  /** Raw levels 0..K against the truth, on the same samples. */
  ladder: Metrics[];
  /** Their operating points (peak picking over a sweep of thresholds). */
  ladderOperating: OperatingPoints[];
  trainSeconds: number;
}

/** How {@link runAblation} runs: the variants, the evaluation samples, logging. */
export interface AblationOptions {
  variants?: string[];
  /**
   * Training seeds: each variant is trained once per seed (default: the config's seed only), and
   * ablation.md gains the mean and sample standard deviation over them.
   */
  seeds?: number[];
  /** Held-out data set to score on (with ground truth). */
  data: string;
  maxSamples?: number;
  /** Progress lines (default: standard output). */
  log?: (line: string) => void;
}

/** Trains and scores every variant; writes OUT/ablation/{ablation.json, ablation.md}. */
export function runAblation(base: NmrTrainConfig, options: AblationOptions): AblationRow[] {
  const log = options.log ?? ((l: string) => console.log(l));
  const names = options.variants ?? Object.keys(ABLATIONS);
  for (const n of names)
    if (!ABLATIONS[n])
      throw new Error(`unknown ablation '${n}' (known: ${Object.keys(ABLATIONS).join(', ')})`);
  const dir = join(base.out, 'ablation');
  const rows: AblationRow[] = [];
  const seeds = options.seeds ?? [base.seed];
  const { samples, ratio } = datasetYardSamples(options.data, options.maxSamples);
  // Seed by seed, so that a run stopped early holds whole comparisons (every variant of a seed).
  for (const seed of seeds)
    for (const name of names) {
      const cfg = structuredClone(base);
      cfg.seed = seed;
      cfg.out = options.seeds ? join(dir, `${name}-seed${seed}`) : join(dir, name);
      log(`== ablation ${name}${options.seeds ? ` (seed ${seed})` : ''}: ${ABLATIONS[name]!.description}`);
      const r = trainAndScore(name, cfg, samples, ratio, log);
      rows.push(r);
      log(
        `   ${name}: energy SNR ${r.model.metrics.energy_snr_db.toFixed(2)} dB, peak F1 ${r.model.metrics.peak_f1.toFixed(3)}, ` +
          `integral error ${r.model.metrics.integral_rel_error.toFixed(3)}`,
      );
      writeJsonAtomic(join(dir, 'ablation.json'), { data: options.data, seeds, rows });
      const spread = seeds.length > 1 ? `\n${formatAblationSpread(rows)}` : '';
      writeFileAtomic(join(dir, 'ablation.md'), formatAblationTable(rows) + spread);
    }
  return rows;
}

/** Trains variant `name` of `cfg` (its seed and output set) and scores it against the truth. */
function trainAndScore(
  name: string,
  cfg: NmrTrainConfig,
  samples: ReturnType<typeof datasetYardSamples>['samples'],
  ratio: number,
  log: (line: string) => void,
): AblationRow {
  const ablation = ABLATIONS[name]!;
  ablation.apply(cfg);
  const t0 = Date.now();
  const result = trainNmr(cfg, { log });
  const trainSeconds = (Date.now() - t0) / 1000;
  const model = loadDenoiser(result.bestCheckpoint);
  try {
    const report = runYardstick(samples, {
      baselines: [],
      fusion: false,
      methods: [{ name, stack: false, run: (pre) => denoiseSpectra(model, [pre.spectra[0]!])[0]! }],
      preprocess: preprocessOptions(cfg.data),
      ratio,
      // The first 20 % choose the picking threshold of the tuned F1, as in the yardstick.
      validationFraction: 0.2,
    });
    const truth = report.references.find((r) => r.reference === 'truth')!;
    return {
      variant: name,
      description: ablation.description,
      seed: cfg.seed,
      model: truth.methods[0]!,
      ladder: truth.ladder,
      ladderOperating: truth.ladderOperating,
      trainSeconds,
    };
  } finally {
    model.dispose();
  }
}

/** Recall and weak-peak recall at one false peak per spectrum, with the sweep's bound. */
function atOneFalse(o: OperatingPoints): string {
  const a = o.atFalseRate.find((x) => x.rate === 1);
  if (!a) return '- | -';
  const b = a.bound === '>' ? '>=' : a.bound === '<' ? '<=' : '';
  const f = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : '-');
  return `${b}${f(a.recall)} | ${b}${f(a.recallWeak)}`;
}

/** The ablation rows as a Markdown table (one row per variant). */
export function formatAblationTable(rows: AblationRow[]): string {
  const f = (v: number, d: number): string => (Number.isFinite(v) ? v.toFixed(d) : '-');
  const lines = [
    '| variant | energy SNR dB | matched k (energy) | peak F1 | matched k (F1) | recall | recall SNR 3-5 | hallucinated / spectrum | integral err | FWHM err | PR AUC | tuned F1 | recall at 1 false / spectrum | recall SNR 3-5 at 1 | train s |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const row = (
    name: string,
    m: Metrics,
    o: OperatingPoints | undefined,
    ke: string,
    kf: string,
    secs: string,
  ): string =>
    `| ${name} | ${f(m.energy_snr_db, 2)} | ${ke} | ${f(m.peak_f1, 3)} | ${kf} | ${f(m.peak_recall, 3)} | ${f(m.recall_by_snr[0] ?? NaN, 3)} | ` +
    `${f(m.hallucinated, 1)} | ${f(m.integral_rel_error, 3)} | ${f(m.fwhm_rel_error, 3)} | ` +
    `${o ? f(o.auc, 3) : '-'} | ${o?.tuned ? f(o.tuned.f1, 3) : '-'} | ${o ? atOneFalse(o) : '- | -'} | ${secs} |`;
  const seeded = new Set(rows.map((r) => r.seed)).size > 1;
  for (const r of rows)
    lines.push(
      row(
        seeded ? `${r.variant} (seed ${r.seed})` : r.variant,
        r.model.metrics,
        r.model.operating,
        `${r.model.matchedEnergy.bound}${f(r.model.matchedEnergy.k, 2)}`,
        `${r.model.matchedF1.bound}${f(r.model.matchedF1.k, 2)}`,
        r.trainSeconds.toFixed(0),
      ),
    );
  rows[0]?.ladder.forEach((m, k) =>
    lines.push(row(`(raw level ${k})`, m, rows[0]!.ladderOperating?.[k], String(k), String(k), '')),
  );
  return lines.join('\n') + '\n';
}

/**
 * Per variant, the mean and sample standard deviation over its seeds of the figures that decide
 * between variants, as a Markdown table (`seeds` lists the runs each row averages).
 */
export function formatAblationSpread(rows: AblationRow[]): string {
  const lines = [
    `| variant | seeds | ${ABLATION_SCORES.map((c) => c.label).join(' | ')} |`,
    `|---|---:|${ABLATION_SCORES.map(() => '---:').join('|')}|`,
  ];
  for (const v of ablationSpread(
    rows.map((r) => ({ variant: r.variant, seed: r.seed, scores: ablationScores(r) })),
  ))
    lines.push(
      `| ${v.variant} | ${v.seeds.join(', ')} | ${ABLATION_SCORES.map((c) => formatMeanSd(v, c)).join(' | ')} |`,
    );
  return lines.join('\n') + '\n';
}

/** The figures of {@link ABLATION_SCORES} read off a row (NaN where the row lacks one). */
export function ablationScores(r: AblationRow): AblationScores {
  const m = r.model.metrics;
  const o = r.model.operating;
  const atOne = o?.atFalseRate.find((a) => a.rate === 1);
  return {
    energy_snr_db: m.energy_snr_db,
    peak_f1: m.peak_f1,
    recall_weak: m.recall_by_snr[0] ?? NaN,
    integral_rel_error: m.integral_rel_error,
    pr_auc: o?.auc ?? NaN,
    tuned_f1: o?.tuned?.f1 ?? NaN,
    recall_at_1: atOne?.recall ?? NaN,
    recall_weak_at_1: atOne?.recallWeak ?? NaN,
  };
}
