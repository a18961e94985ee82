// Synthetic run directories for the report and server tests (no training, no tensor engine).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../../src/util/rng.js';
import type { LongtailResults } from '../../src/longtail/workflows/results.js';
import type { ControllabilityGrid } from '../../src/report/types.js';
import { TEST_DISTRIBUTIONS } from '../../src/longtail/data/longtail.js';

export const DISTRIBUTIONS = [...TEST_DISTRIBUTIONS];

/** A name that must come out escaped in HTML. */
export const HOSTILE_NAME = '<script>alert("x")</script>&co';

/** Accuracy model of the synthetic PRL run: preference r moves accuracy from head to tail. */
export function syntheticAccuracy(r: number[]): {
  many: number;
  medium: number;
  few: number;
  top1: number;
  distributions: Record<string, number>;
} {
  const [f, u, b] = [r[0] ?? 1 / 3, r[1] ?? 1 / 3, r[2] ?? 1 / 3];
  const many = 0.9 * f + 0.8 * u + 0.6 * b;
  const medium = 0.7 * f + 0.75 * u + 0.7 * b;
  const few = 0.3 * f + 0.55 * u + 0.75 * b;
  const top1 = (many + medium + few) / 3;
  const distributions: Record<string, number> = {};
  DISTRIBUTIONS.forEach((d, i) => {
    const t = i / (DISTRIBUTIONS.length - 1); // 0 = forward50 (head-heavy), 1 = backward50
    distributions[d] = (1 - t) * (0.85 * many + 0.15 * few) + t * (0.15 * many + 0.85 * few);
  });
  return { many, medium, few, top1, distributions };
}

export function syntheticGrid(step = 0.25): ControllabilityGrid {
  const n = Math.round(1 / step);
  const points: ControllabilityGrid['points'] = [];
  for (let i = 0; i <= n; i++)
    for (let j = 0; j <= n - i; j++) {
      const preference = [i / n, j / n, (n - i - j) / n];
      points.push({ preference, ...syntheticAccuracy(preference) });
    }
  return { experts: 3, points };
}

export function syntheticLongtail(
  o: { prl?: boolean; classes?: number; epochs?: number } = {},
): LongtailResults {
  const classes = o.classes ?? 10;
  const rng = new Rng(7);
  const trainCounts = Array.from({ length: classes }, (_, c) =>
    Math.round(500 * Math.pow(0.01, c / (classes - 1))),
  );
  const perClass = trainCounts.map((n) => Math.min(1, 0.35 + 0.1 * Math.log10(n) + 0.05 * rng.uniform()));
  const confusion = perClass.map((acc, c) => {
    const row = new Array<number>(classes).fill(0);
    row[c] = Math.round(100 * acc);
    for (let k = 0; k < 100 - row[c]!; k++) row[(c + 1 + (k % (classes - 1))) % classes]!++;
    return row;
  });
  const acc = syntheticAccuracy([1 / 3, 1 / 3, 1 / 3]);
  const distributions: LongtailResults['distributions'] = {};
  for (const d of DISTRIBUTIONS)
    distributions[d] = {
      n: 1000,
      top1: acc.distributions[d]!,
      many: acc.many,
      medium: acc.medium,
      few: acc.few,
    };
  const epochs = o.epochs ?? 6;
  const history = Array.from({ length: epochs }, (_, e) => ({
    epoch: e + 1,
    lr: 0.1 * (e < epochs - 2 ? 1 : 0.1),
    train_loss: 2.2 * Math.exp(-0.4 * e),
    train_acc: 0.3 + 0.1 * e,
    val: { top1: 0.25 + 0.08 * e, many: 0.4 + 0.08 * e, medium: 0.2 + 0.07 * e, few: 0.05 + 0.06 * e },
    seconds: 10 + e,
  }));
  const names = Array.from({ length: classes }, (_, c) => (c === 3 ? HOSTILE_NAME : `class-${c}`));
  return {
    kind: 'longtail',
    name: o.prl ? 'fmnist_lt_ir100_prl' : 'fmnist_lt_ir100_sade',
    method: o.prl ? 'PRL (paper)' : 'DiverseExpertLoss',
    checkpoint: 'model_best',
    dataset: {
      name: 'fashion-mnist',
      classes,
      class_names: names,
      train_counts: trainCounts,
      imbalance: 100,
      profile: 'exp',
    },
    ...(o.prl ? { preference: [1 / 3, 1 / 3, 1 / 3] } : {}),
    uniform: {
      n: 100 * classes,
      top1: acc.top1,
      many: acc.many,
      medium: acc.medium,
      few: acc.few,
      per_class: perClass,
      ece: 0.05,
      confusion,
    },
    distributions,
    mean_top1: DISTRIBUTIONS.reduce((s, d) => s + acc.distributions[d]!, 0) / DISTRIBUTIONS.length,
    history,
    ...(o.prl ? { controllability: syntheticGrid() } : {}),
  };
}

export function writeRun(dir: string, results: unknown, extra: Record<string, string> = {}): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'results.json'), JSON.stringify(results, null, 2));
  for (const [name, text] of Object.entries(extra)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Two well separated 2-D clusters as CSV, and the K = 2 full-covariance model fitted to them. */
export function syntheticGmm(): {
  csv: string;
  model: Record<string, unknown>;
  selection: Record<string, unknown>;
} {
  const rng = new Rng(3);
  const lines = ['a,b,c'];
  for (let i = 0; i < 200; i++) {
    const k = i % 2;
    lines.push(
      [rng.normal() + (k ? 5 : 0), 0.5 * rng.normal() + (k ? 3 : 0), rng.normal()]
        .map((v) => v.toFixed(5))
        .join(','),
    );
  }
  const model = {
    format: 'tailor-gmm',
    version: 1,
    covarianceType: 'full',
    nComponents: 2,
    nFeatures: 3,
    columns: ['a', 'b', 'c'],
    regCovar: 1e-6,
    weights: [0.5, 0.5],
    means: [
      [0, 0, 0],
      [5, 3, 0],
    ],
    covariances: [
      [
        [1, 0, 0],
        [0, 0.25, 0],
        [0, 0, 1],
      ],
      [
        [1, 0.2, 0],
        [0.2, 0.25, 0],
        [0, 0, 1],
      ],
    ],
    precisionsCholesky: [
      [
        [1, 0, 0],
        [0, 2, 0],
        [0, 0, 1],
      ],
      [
        [1, 0, 0],
        [0, 2, 0],
        [0, 0, 1],
      ],
    ],
    score: -3.9,
    lowerBound: -3.9,
    logLik: -780,
    nSamples: 200,
    nParameters: 19,
    bic: 1660.7,
    aic: 1598,
    nIter: 4,
    converged: true,
    trace: [-5, -4.2, -3.95, -3.9],
    starts: [],
    warnings: [],
    options: { data: 'data.csv', k: 2 },
  };
  const selection = {
    n: 200,
    d: 3,
    rows: [1, 2, 3].flatMap((k) =>
      ['full', 'diag'].map((t) => ({
        k,
        covarianceType: t,
        bic: 1700 - (k === 2 ? 60 : 0) + k * 5 + (t === 'diag' ? 3 : 0),
        aic: 1650,
        logLik: -800,
        nParameters: 10 * k,
        nIter: 5,
        converged: true,
      })),
    ),
    best: { k: 2, covarianceType: 'full', bic: 1650 },
  };
  return { csv: lines.join('\n') + '\n', model, selection };
}

/** An ablation.json row as runAblation writes it (the fields the report reads). */
export function ablationRow(variant: string, seed: number, snr: number, f1: number | null) {
  return {
    variant,
    description: `what ${variant} changes`,
    seed,
    model: {
      name: variant,
      metrics: { energy_snr_db: snr, peak_f1: f1, recall_by_snr: [0.2, 0.6, 0.9], integral_rel_error: 0.25 },
      operating: {
        auc: 0.88,
        tuned: { threshold: 3, f1: 0.83, precision: 0.9, recall: 0.8, recallWeak: 0.4 },
        atFalseRate: [
          { rate: 0.5, recall: 0.7, recallWeak: 0.3, bound: '' },
          { rate: 1, recall: 0.78 + seed / 100, recallWeak: 0.47, bound: '' },
        ],
      },
    },
    ladder: [],
    ladderOperating: [],
    trainSeconds: 25,
  };
}

/** Writes an ablation.json of two variants over seeds 0 and 1 into `dir` (created). */
export function writeAblationDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const rows = [
    ablationRow('full', 0, 7, 0.75),
    ablationRow('<b>odd</b>', 0, 6, 0.7),
    ablationRow('full', 1, 8, 0.77),
    ablationRow('<b>odd</b>', 1, 6.5, null),
  ];
  writeFileSync(join(dir, 'ablation.json'), JSON.stringify({ data: 'runs/nmr/y-test', seeds: [0, 1], rows }));
  return dir;
}
