// The report page of the NMR yardstick (`tailor nmr yardstick --json DIR/results.json`): per
// reference, every candidate's peak-picking operating points (the table of the text report) and
// two charts of its threshold sweep: precision against recall, and recall against false peaks per
// spectrum, so that candidates are compared at the same false-peak rate.
import { join } from 'node:path';
import { chartDiv, num, section, table } from './html.js';
import { Fields, type Json } from './validate.js';
import type { ChartSpec, ReportPage } from './types.js';

/** One candidate's sweep as the page reads it (checked). */
interface Curve {
  name: string;
  energyDb: number | null;
  fixedF1: number | null;
  recall: (number | null)[];
  precision: number[];
  falsePerSpectrum: number[];
  auc: number;
  tunedThreshold: number | null;
  tunedF1: number | null;
  at: { rate: number; recall: number | null; recallWeak: number | null; bound: string }[];
}

interface Reference {
  reference: string;
  curves: Curve[];
}

/** What the page reads from a yardstick report. */
export interface YardstickPageData {
  samples: number;
  validationSamples: number;
  levels: number;
  references: Reference[];
}

/** A yardstick report: references with a raw ladder and methods (as `nmr yardstick --json` writes). */
export function isYardstickReport(v: unknown): boolean {
  const r = v as { references?: unknown };
  return (
    typeof v === 'object' &&
    v !== null &&
    Array.isArray(r.references) &&
    r.references.every(
      (x) => typeof x === 'object' && x !== null && 'ladder' in x && 'methods' in x && 'reference' in x,
    )
  );
}

function readCurve(f: Fields, name: string, metrics: Json, op: Json, at: string): Curve {
  const opt = { nonFinite: true };
  const tuned = op.tuned === null ? null : f.object(op.tuned, `${at}.tuned`);
  return {
    name,
    energyDb: f.numberOrNull(metrics.energy_snr_db ?? null, `${at}.energy_snr_db`, opt),
    fixedF1: f.numberOrNull(metrics.peak_f1 ?? null, `${at}.peak_f1`, opt),
    recall: f.array(op.recall, `${at}.recall`, 10_000).map((v, i) => f.numberOrNull(v, `${at}.recall[${i}]`)),
    precision: f.numbers(op.precision, `${at}.precision`, { min: 0, max: 1 }),
    falsePerSpectrum: f.numbers(op.falsePerSpectrum, `${at}.falsePerSpectrum`, { min: 0 }),
    auc: f.number(op.auc, `${at}.auc`, { min: 0, max: 1 }),
    tunedThreshold: tuned ? f.number(tuned.threshold, `${at}.tuned.threshold`, { min: 0 }) : null,
    tunedF1: tuned ? f.number(tuned.f1, `${at}.tuned.f1`, { min: 0, max: 1 }) : null,
    at: f.array(op.atFalseRate, `${at}.atFalseRate`, 100).map((x, i) => {
      const a = f.object(x, `${at}.atFalseRate[${i}]`);
      return {
        rate: f.number(a.rate, `${at}.atFalseRate[${i}].rate`, { min: 0 }),
        recall: f.numberOrNull(a.recall, `${at}.atFalseRate[${i}].recall`),
        recallWeak: f.numberOrNull(a.recallWeak, `${at}.atFalseRate[${i}].recallWeak`),
        bound: f.string(a.bound, `${at}.atFalseRate[${i}].bound`),
      };
    }),
  };
}

/** Checks the fields the page reads; returns only checked values. */
export function validateYardstickReport(value: unknown, source: string): YardstickPageData {
  const f = new Fields(source, "the output of 'tailor nmr yardstick --json'");
  const r = f.object(value, '');
  const references = f.array(r.references, 'references', 10).map((x, i) => {
    const ref = f.object(x, `references[${i}]`);
    const at = `references[${i}]`;
    const ladder = f.array(ref.ladder, `${at}.ladder`, 100);
    const ops = f.array(ref.ladderOperating, `${at}.ladderOperating`, 100);
    const curves = ladder.map((m, k) =>
      readCurve(
        f,
        `raw level ${k}`,
        f.object(m, `${at}.ladder[${k}]`),
        f.object(ops[k], `${at}.ladderOperating[${k}]`),
        `${at}.ladderOperating[${k}]`,
      ),
    );
    f.array(ref.methods, `${at}.methods`, 1000).forEach((x, j) => {
      const m = f.object(x, `${at}.methods[${j}]`);
      const name = f.string(m.name, `${at}.methods[${j}].name`);
      const stack = f.boolean(m.stack, `${at}.methods[${j}].stack`);
      const mat = `${at}.methods[${j}]`;
      curves.push(
        readCurve(
          f,
          `${name} (${stack ? 'levels 0..K' : 'x0'})`,
          f.object(m.metrics, `${mat}.metrics`),
          f.object(m.operating, `${mat}.operating`),
          `${mat}.operating`,
        ),
      );
    });
    return { reference: f.string(ref.reference, `${at}.reference`), curves };
  });
  return {
    samples: f.number(r.samples, 'samples', { integer: true, min: 0 }),
    validationSamples: f.number(r.validationSamples, 'validationSamples', { integer: true, min: 0 }),
    levels: f.number(r.levels, 'levels', { integer: true, min: 0 }),
    references,
  };
}

function recallCell(c: Curve, rate: number, weak: boolean): string {
  const a = c.at.find((x) => x.rate === rate);
  if (!a) return '–';
  const b = a.bound === '>' ? '≥' : a.bound === '<' ? '≤' : '';
  return `${b}${num(weak ? a.recallWeak : a.recall, 3)}`;
}

function referenceSection(ref: Reference, index: number, charts: Record<string, ChartSpec>): string {
  const rows = ref.curves.map((c) => [
    c.name,
    num(c.energyDb, 2),
    num(c.fixedF1, 3),
    num(c.auc, 3),
    num(c.tunedThreshold, 2),
    num(c.tunedF1, 3),
    recallCell(c, 1, false),
    recallCell(c, 1, true),
    recallCell(c, 0.2, false),
    recallCell(c, 0.2, true),
  ]);
  const pick = (c: Curve, xs: (number | null)[], ys: (number | null)[]) => {
    const x: number[] = [];
    const y: number[] = [];
    xs.forEach((v, i) => {
      const w = ys[i];
      if (v !== null && w !== null && w !== undefined && Number.isFinite(v) && Number.isFinite(w)) {
        x.push(v);
        y.push(w);
      }
    });
    return { label: c.name, x, y };
  };
  charts[`pr${index}`] = {
    type: 'scatter',
    xLabel: 'recall',
    yLabel: 'precision',
    yRange: [0, 1],
    pointSize: 5,
    series: ref.curves.map((c) => pick(c, c.recall, c.precision)),
  };
  // The log axis cannot show 0 false peaks: those thresholds are left out of this chart.
  charts[`fr${index}`] = {
    type: 'scatter',
    xLabel: 'false peaks per spectrum (log scale)',
    yLabel: 'recall',
    logX: true,
    yRange: [0, 1],
    pointSize: 5,
    series: ref.curves.map((c) =>
      pick(
        c,
        c.falsePerSpectrum.map((v) => (v > 0 ? v : null)),
        c.recall,
      ),
    ),
  };
  const title = ref.reference === 'truth' ? 'against the true spectrum' : 'against the held-out level K';
  return section(
    `Peak picking ${title}`,
    table(
      [
        'candidate',
        'energy SNR dB',
        'F1 at 3 sigma',
        'PR AUC',
        'tuned threshold (sigma)',
        'tuned F1',
        'recall at 1 false / spectrum',
        'SNR 3-5 at 1',
        'recall at 0.2 false / spectrum',
        'SNR 3-5 at 0.2',
      ],
      rows,
      `id="nmr-operating-${index}"`,
    ) +
      chartDiv(
        `pr${index}`,
        'Precision against recall as the picking threshold falls (one point per threshold, in sigma of x0).',
      ) +
      chartDiv(
        `fr${index}`,
        'Recall against false peaks per spectrum: at one false-peak rate, the higher curve finds more true peaks.',
      ),
    `operating-${index}`,
  );
}

/** The page of a yardstick report found in runDir/results.json. */
export function yardstickPage(runDir: string, raw: unknown): ReportPage {
  const data = validateYardstickReport(raw, join(runDir, 'results.json'));
  const charts: Record<string, ChartSpec> = {};
  return {
    title: 'NMR single-scan yardstick: operating points',
    subtitle: `${data.samples} scored samples (${data.validationSamples} more tuned the baselines and each candidate's threshold), ${data.levels} levels`,
    kind: 'nmr-yardstick',
    sections: data.references.map((ref, i) => referenceSection(ref, i, charts)),
    charts,
  };
}
