// The ablations of seed section 8: each variant changes one ingredient of the configured run,
// is trained the same way, and is scored on a held-out data set with the evaluation code (energy
// SNR, peak F1, integral error, ...) next to the raw input and the fusion baseline.
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../../torch/fs.js';
import { Dataset } from '../data/dataset.js';
import { evaluateDataset, type MethodMetrics } from '../eval/evaluate.js';
import { loadDenoiser, modelDenoiser } from '../model/denoise.js';
import type { NmrTrainConfig, StageConfig } from './config.js';
import { preprocessOptions } from './data.js';
import { trainNmr } from './trainer.js';

export interface Ablation {
  description: string;
  apply: (cfg: NmrTrainConfig) => void;
}

const bothStages = (cfg: NmrTrainConfig, fn: (s: StageConfig) => void): void => {
  fn(cfg.stageA);
  fn(cfg.stageB);
};

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
  'no-curv': {
    description: 'without the baseline second-difference term (lambda_2 = 0)',
    apply: (cfg) =>
      bothStages(cfg, (s) => {
        s.loss.curv = 0;
        s.curvEnd = null;
      }),
  },
  'no-cons-T': {
    description: 'without the multi-SNR consistency and T residual-ratio terms (lambda_3 = lambda_4 = 0)',
    apply: (cfg) =>
      bothStages(cfg, (s) => {
        s.loss.cons = 0;
        s.loss.ratio = 0;
      }),
  },
  'rec-input-only': {
    description: 'reconstruction L1 on level 0 only (recOthers = 0, the seed section-9 loop)',
    apply: (cfg) =>
      bothStages(cfg, (s) => {
        s.loss.recOthers = 0;
      }),
  },
  'target-last': {
    description: 'pseudo ground truth = the highest-SNR spectrum k = K only (no SNR-weighted fusion)',
    apply: (cfg) => {
      cfg.data.target = 'last';
    },
  },
  'no-rescale': {
    description: 'without the section 2.2 amplitude rescaling (training and evaluation)',
    apply: (cfg) => {
      cfg.data.rescale = 'none';
    },
  },
};

export interface AblationRow {
  variant: string;
  description: string;
  model: MethodMetrics;
  /** Energy SNR (dB) of the model applied to each input level k = 0..K. */
  modelEnergySnrByLevel: number[];
  raw: MethodMetrics;
  fusion: MethodMetrics;
  trainSeconds: number;
}

export interface AblationOptions {
  variants?: string[];
  /** Held-out data set to score on (with ground truth). */
  data: string;
  maxSamples?: number;
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
  for (const name of names) {
    const ablation = ABLATIONS[name]!;
    const cfg = structuredClone(base);
    cfg.out = join(dir, name);
    ablation.apply(cfg);
    log(`== ablation ${name}: ${ablation.description}`);
    const t0 = Date.now();
    const result = trainNmr(cfg, { log });
    const trainSeconds = (Date.now() - t0) / 1000;
    const model = loadDenoiser(result.bestCheckpoint);
    const ds = new Dataset(options.data);
    try {
      const report = evaluateDataset(ds, {
        methods: ['raw', 'fusion'],
        extraMethods: { model: modelDenoiser(model) },
        preprocess: preprocessOptions(cfg.data),
        validationFraction: 0,
        ...(options.maxSamples ? { maxSamples: options.maxSamples } : {}),
      });
      rows.push({
        variant: name,
        description: ablation.description,
        model: report.methods.model!,
        modelEnergySnrByLevel: (report.perLevel.model ?? []).map((m) => m.energy_snr_db),
        raw: report.methods.raw!,
        fusion: report.methods.fusion!,
        trainSeconds,
      });
    } finally {
      ds.close();
      model.dispose();
    }
    const r = rows[rows.length - 1]!;
    log(
      `   ${name}: energy SNR ${r.model.energy_snr_db.toFixed(2)} dB (fusion ${r.fusion.energy_snr_db.toFixed(2)}), ` +
        `peak F1 ${r.model.peak_f1.toFixed(3)}, integral error ${r.model.integral_rel_error.toFixed(3)}`,
    );
    writeJsonAtomic(join(dir, 'ablation.json'), { data: options.data, rows });
    writeFileAtomic(join(dir, 'ablation.md'), formatAblationTable(rows));
  }
  return rows;
}

export function formatAblationTable(rows: AblationRow[]): string {
  const lines = [
    '| variant | energy SNR dB (model) | vs fusion dB | peak F1 | integral rel. error | FWHM rel. error | train s |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.variant} | ${r.model.energy_snr_db.toFixed(2)} | ${(r.model.energy_snr_db - r.fusion.energy_snr_db).toFixed(2)} | ` +
        `${r.model.peak_f1.toFixed(3)} | ${r.model.integral_rel_error.toFixed(3)} | ${r.model.fwhm_rel_error.toFixed(3)} | ${r.trainSeconds.toFixed(0)} |`,
    );
  if (rows[0]) {
    const r = rows[0];
    lines.push(
      `| (raw input, ${r.variant} preprocessing) | ${r.raw.energy_snr_db.toFixed(2)} | ${(r.raw.energy_snr_db - r.fusion.energy_snr_db).toFixed(2)} | ` +
        `${r.raw.peak_f1.toFixed(3)} | ${r.raw.integral_rel_error.toFixed(3)} | ${r.raw.fwhm_rel_error.toFixed(3)} | |`,
    );
  }
  return lines.join('\n') + '\n';
}
