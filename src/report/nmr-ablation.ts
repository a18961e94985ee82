// Reports of `tailor nmr ablate` (a directory holding ablation.json, no results.json): per variant
// the mean and spread over its seeds of the figures that decide between variants, each run as a
// point beside its variant's mean, and every run's row.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ABLATION_SCORES, ablationSpread, formatMeanSd, type AblationScores } from '../nmr/index.js';
import { chartDiv, note, num, section, table, type Cell } from './html.js';
import { Fields, type Json } from './validate.js';
import { parseResultsJson } from './read.js';
import type { ChartSpec, ReportPage, ScatterChart } from './types.js';

/** One trained and scored variant as the report reads it. */
interface AblationRun {
  variant: string;
  description: string;
  seed: number;
  scores: AblationScores;
  trainSeconds: number;
}

/** Whether `dir` holds `tailor nmr ablate` output: ablation.json, no results.json. */
export function isNmrAblationDir(dir: string): boolean {
  return !existsSync(join(dir, 'results.json')) && existsSync(join(dir, 'ablation.json'));
}

const EXPECTED = "the ablation.json that 'tailor nmr ablate' writes into OUT/ablation";
/** More runs than any ablation (10 variants x 100 seeds). */
const MAX_RUNS = 1000;

function readAblation(path: string): { data: string; runs: AblationRun[] } {
  const f = new Fields(path, EXPECTED);
  const root = f.object(parseResultsJson(path), '');
  const rows = f.array(root.rows, 'rows', MAX_RUNS);
  if (rows.length === 0) f.fail('rows', 'is empty (no variant finished training yet)');
  const any = { nonFinite: true };
  // JSON has no NaN: a figure the yardstick could not compute was written as null.
  const figure = (v: unknown, field: string): number => f.numberOrNull(v ?? null, field, any) ?? NaN;
  const runs = rows.map((raw, i): AblationRun => {
    const at = (k: string) => `rows[${i}].${k}`;
    const r = f.object(raw, `rows[${i}]`);
    const model = f.object(r.model, at('model'));
    const m = f.object(model.metrics, at('model.metrics'));
    const o: Json | undefined =
      model.operating === undefined ? undefined : f.object(model.operating, at('model.operating'));
    const tuned =
      o?.tuned === undefined || o.tuned === null ? undefined : f.object(o.tuned, at('model.operating.tuned'));
    const rates = o === undefined ? [] : f.array(o.atFalseRate, at('model.operating.atFalseRate'), 100);
    const atOne = rates
      .map((a, j) => f.object(a, at(`model.operating.atFalseRate[${j}]`)))
      .find((a) => a.rate === 1);
    const bySnr = f.array(m.recall_by_snr, at('model.metrics.recall_by_snr'), 100);
    const variant = f.string(r.variant, at('variant'));
    if (variant.length > 100) f.fail(at('variant'), 'is longer than 100 characters');
    return {
      variant,
      description: f.string(r.description ?? '', at('description')).slice(0, 300),
      // files from before --seeds hold one run per variant, trained with the config's seed
      seed: f.number(r.seed ?? 0, at('seed'), { integer: true, min: 0 }),
      scores: {
        energy_snr_db: figure(m.energy_snr_db, at('model.metrics.energy_snr_db')),
        peak_f1: figure(m.peak_f1, at('model.metrics.peak_f1')),
        recall_weak: figure(bySnr[0], at('model.metrics.recall_by_snr[0]')),
        integral_rel_error: figure(m.integral_rel_error, at('model.metrics.integral_rel_error')),
        pr_auc: figure(o?.auc, at('model.operating.auc')),
        tuned_f1: figure(tuned?.f1, at('model.operating.tuned.f1')),
        recall_at_1: figure(atOne?.recall, at('model.operating.atFalseRate.recall')),
        recall_weak_at_1: figure(atOne?.recallWeak, at('model.operating.atFalseRate.recallWeak')),
      },
      trainSeconds: f.number(r.trainSeconds ?? 0, at('trainSeconds'), { min: 0 }),
    };
  });
  return { data: typeof root.data === 'string' ? root.data : '', runs };
}

/** The figures drawn, one chart each: every run a point at its variant, the mean beside them. */
const CHARTED: { key: keyof AblationScores; id: string; label: string }[] = [
  { key: 'energy_snr_db', id: 'energy', label: 'energy SNR (dB)' },
  { key: 'peak_f1', id: 'f1', label: 'peak F1 at 3 sigma' },
  { key: 'recall_weak_at_1', id: 'weak', label: 'weak-peak recall at 1 false peak / spectrum' },
];

/** The report page of an `nmr ablate` output directory. */
export function nmrAblationPage(dir: string): ReportPage {
  const { data, runs } = readAblation(join(dir, 'ablation.json'));
  const spread = ablationSpread(runs);
  const seeds = [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b);
  const variants = spread.map((v) => v.variant);
  const charts: Record<string, ChartSpec> = {};
  for (const c of CHARTED) {
    // The mean sits at its variant and the runs to its right, one place per seed, so that no run
    // hides behind the mean or behind another run of equal value.
    const offset = (s: number) =>
      seeds.length > 1 ? 0.1 + (0.25 * seeds.indexOf(s)) / (seeds.length - 1) : 0;
    const series: ScatterChart['series'] = seeds.map((s) => {
      const mine = runs.filter((r) => r.seed === s && Number.isFinite(r.scores[c.key]));
      return {
        label: `seed ${s}`,
        x: mine.map((r) => variants.indexOf(r.variant) + offset(s)),
        y: mine.map((r) => r.scores[c.key]),
      };
    });
    if (seeds.length > 1) {
      const means = spread.map((v, i) => [i, v.mean[c.key]] as const).filter(([, m]) => Number.isFinite(m));
      series.push({ label: 'mean', x: means.map(([i]) => i), y: means.map(([, m]) => m), color: '#000' });
    }
    charts[c.id] = {
      type: 'scatter',
      xLabel: 'variant',
      yLabel: c.label,
      xTicks: variants,
      series,
      pointSize: 8,
    };
  }
  const spreadRows: Cell[][] = spread.map((v) => [
    v.variant,
    v.seeds.join(', '),
    ...ABLATION_SCORES.map((c) => formatMeanSd(v, c)),
  ]);
  const runRows: Cell[][] = runs.map((r) => [
    r.variant,
    r.seed,
    ...ABLATION_SCORES.map((c) => num(r.scores[c.key], c.digits)),
    r.trainSeconds.toFixed(0),
  ]);
  const descriptions: Cell[][] = spread.map((v) => [
    v.variant,
    runs.find((r) => r.variant === v.variant)!.description,
  ]);
  const sections = [
    section(
      seeds.length > 1 ? 'Mean ± sample standard deviation over the seeds' : 'Variants',
      (seeds.length > 1
        ? ''
        : note(
            'One seed per variant: differences of a few tenths are within what another seed changes; rerun with --seeds 0,1,2.',
          )) + table(['variant', 'seeds', ...ABLATION_SCORES.map((c) => c.label)], spreadRows),
      'spread',
    ),
    section(
      'Each run beside its variant',
      CHARTED.map((c) =>
        chartDiv(c.id, `${c.label}: one point per run${seeds.length > 1 ? ', the mean in black' : ''}`),
      ).join('\n'),
      'charts',
    ),
    section(
      'Runs',
      table(['variant', 'seed', ...ABLATION_SCORES.map((c) => c.label), 'train s'], runRows),
      'runs',
    ),
    section('What each variant changes', table(['variant', 'change'], descriptions), 'variants'),
  ];
  return {
    title: 'NMR training ablations',
    kind: 'nmr-ablation',
    subtitle: `${variants.length} variant${variants.length === 1 ? '' : 's'} x ${seeds.length} seed${seeds.length === 1 ? '' : 's'}${data ? `, scored on ${data}` : ''}`,
    sections,
    charts,
  };
}
