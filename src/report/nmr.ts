// Reports of NMR denoising evaluations (`tailor nmr evaluate --json > DIR/results.json`): the
// metrics per method and input level, and an input / denoised / reference overlay of one scored
// sample (recomputed from the data set with the same preprocessing and baselines), with zoom.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import {
  Dataset,
  type EvaluationReport,
  preprocessStack,
  inverseVarianceFusion,
  applyBaseline,
  DEFAULT_TUNED,
  isSingleBaseline,
  type Tuned,
} from '../nmr/index.js';
import { chartDiv, escapeHtml, note, num, section, table } from './html.js';
import { Fields } from './validate.js';
import { InputError } from '../util/errors.js';
import type { ChartSpec, LineSeries, ReportPage } from './types.js';

/** Spectra to overlay (an evaluation may store one as `example`; otherwise it is recomputed). */
export interface NmrExample {
  sample: number;
  ppm: number[];
  input: number[];
  reference: number[];
  outputs: Record<string, number[]>;
}

export function isNmrReport(v: unknown): v is EvaluationReport & { example?: NmrExample } {
  const r = v as Partial<EvaluationReport>;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof r.dataset === 'object' &&
    r.dataset !== null &&
    typeof r.methods === 'object' &&
    typeof r.perLevel === 'object'
  );
}

/** Checks the fields the NMR report reads; returns a copy holding only checked values. */
export function validateNmrReport(
  value: unknown,
  source: string,
): EvaluationReport & { example?: NmrExample } {
  const f = new Fields(source, "the output of 'tailor nmr evaluate --json'");
  const r = f.object(value, '');
  const ds = f.object(r.dataset, 'dataset');
  const levels = f.number(ds.levels, 'dataset.levels', { integer: true, min: 0, max: 1000 });
  const metrics = (v: unknown, field: string) => {
    const m = f.object(v, field);
    const out: Record<string, number | null> = {};
    for (const [k] of COLUMNS) out[k] = f.numberOrNull(m[k] ?? null, `${field}.${k}`, { nonFinite: true });
    return out;
  };
  const methods: Record<string, unknown> = {};
  for (const [name, m] of Object.entries(f.object(r.methods, 'methods')))
    methods[name] = metrics(m, `methods.${name}`);
  const perLevel: Record<string, unknown> = {};
  for (const [name, list] of Object.entries(f.object(r.perLevel, 'perLevel')))
    perLevel[name] = f
      .array(list, `perLevel.${name}`, 1000)
      .map((m, k) => metrics(m, `perLevel.${name}[${k}]`));
  const pipeline = r.pipeline === undefined ? undefined : f.object(r.pipeline, 'pipeline');
  const tunedRaw = r.tuned === undefined ? undefined : f.object(r.tuned, 'tuned');
  const tunedList = <T>(key: string, read: (o: Record<string, unknown>, field: string) => T): T[] =>
    tunedRaw?.[key] === undefined
      ? []
      : f
          .array(tunedRaw[key], `tuned.${key}`, 1000)
          .map((x, i) => read(f.object(x, `tuned.${key}[${i}]`), `tuned.${key}[${i}]`));
  const savgol = tunedList('savgol', (o, at) => ({
    window: f.number(o.window, `${at}.window`, { integer: true, min: 1, max: 100_001 }),
    order: f.number(o.order, `${at}.order`, { integer: true, min: 0, max: 20 }),
  }));
  const tv = tunedList('tv', (o, at) => ({ factor: f.number(o.factor, `${at}.factor`, { min: 0 }) }));
  const cadzow = tunedList('cadzow', (o, at) => ({
    rank: f.number(o.rank, `${at}.rank`, { integer: true, min: 1, max: 100_000 }),
    window: f.number(o.window, `${at}.window`, { integer: true, min: 1, max: 100_000 }),
  }));
  let example: NmrExample | undefined;
  if (r.example !== undefined) {
    const e = f.object(r.example, 'example');
    const series = (v: unknown, field: string) => f.numbers(v, field, { nonFinite: true });
    const outputs: Record<string, number[]> = {};
    for (const [name, y] of Object.entries(f.object(e.outputs, 'example.outputs')))
      outputs[name] = series(y, `example.outputs.${name}`);
    example = {
      sample: f.number(e.sample, 'example.sample', { integer: true, min: 0 }),
      ppm: series(e.ppm, 'example.ppm'),
      input: series(e.input, 'example.input'),
      reference: series(e.reference, 'example.reference'),
      outputs,
    };
  }
  return {
    dataset: {
      dir: f.string(ds.dir, 'dataset.dir'),
      samples: f.number(ds.samples, 'dataset.samples', { integer: true, min: 0 }),
      levels,
      points: f.number(ds.points, 'dataset.points', { integer: true, min: 0 }),
      ratio: f.number(ds.ratio, 'dataset.ratio', { nonFinite: true }),
    },
    evaluatedSamples: f.number(r.evaluatedSamples, 'evaluatedSamples', { integer: true, min: 0 }),
    validationSamples: f.number(r.validationSamples, 'validationSamples', { integer: true, min: 0 }),
    methods: methods as EvaluationReport['methods'],
    perLevel: perLevel as EvaluationReport['perLevel'],
    inputPeakSnr: f.numbers(r.inputPeakSnr ?? [], 'inputPeakSnr', { nonFinite: true }),
    tuned: { savgol, tv, cadzow },
    pipeline: {
      t_hat: f.numberOrNull(pipeline?.t_hat ?? null, 'pipeline.t_hat', { nonFinite: true }),
    } as EvaluationReport['pipeline'],
    ...(example ? { example } : {}),
  };
}

const COLUMNS: [string, string, number][] = [
  ['energy_snr_db', 'E-SNR dB', 2],
  ['snr_gain_db', 'gain dB', 2],
  ['peak_f1', 'peak F1', 3],
  ['peak_precision', 'precision', 3],
  ['peak_recall', 'recall', 3],
  ['hallucinated', 'hallucinated', 1],
  ['position_error_hz', 'position Hz', 3],
  ['fwhm_rel_error', 'FWHM error', 3],
  ['integral_rel_error', 'integral error', 3],
  ['nrmse', 'NRMSE', 3],
];

function datasetDir(runDir: string, dir: string): string | null {
  for (const d of [isAbsolute(dir) ? dir : join(runDir, dir), resolve(dir), join(runDir, 'data')])
    if (existsSync(join(d, 'manifest.json'))) return d;
  return null;
}

/** Input level 0, the classical outputs and the truth of the first scored sample, in truth units. */
export function recomputeExample(report: EvaluationReport, dir: string): NmrExample {
  const ds = new Dataset(dir);
  try {
    const index = Math.min(report.validationSamples, ds.size - 1);
    const record = ds.sample(index);
    const pre = preprocessStack(record.spectra);
    const K = record.spectra.length - 1;
    const toTruth = 1 / record.meta.levels[K]!.scale;
    const scale = (x: Float64Array) => Array.from(x, (v) => v * toTruth);
    const tuned: Tuned = {
      savgol: report.tuned?.savgol?.[0] ?? DEFAULT_TUNED.savgol,
      tv: report.tuned?.tv?.[0] ?? DEFAULT_TUNED.tv,
      cadzow: report.tuned?.cadzow?.[0] ?? DEFAULT_TUNED.cadzow,
    };
    const input = pre.spectra[0]!;
    const stack: Record<string, () => Float64Array> = {
      fusion: () => inverseVarianceFusion(pre.spectra, pre.sigmas),
      pseudo_gt: () => pre.pseudoTruth,
    };
    const outputs: Record<string, number[]> = {};
    for (const name of Object.keys(report.methods)) {
      if (name === 'raw') continue;
      const single = isSingleBaseline(name)
        ? applyBaseline(name, input, pre.sigmas[0]!, tuned)
        : stack[name]?.();
      if (single) outputs[name] = scale(single);
    }
    const m = ds.manifest;
    const ppm = Array.from(
      { length: m.points },
      (_, i) => m.axis.ppmFirst + ((m.axis.ppmLast - m.axis.ppmFirst) * i) / (m.points - 1),
    );
    return { sample: index, ppm, input: scale(input), reference: Array.from(record.truth), outputs };
  } finally {
    ds.close();
  }
}

const round = (v: number) => (Number.isFinite(v) ? Number(v.toPrecision(5)) : null);

function overlaySection(example: NmrExample, charts: Record<string, ChartSpec>): string {
  // uPlot wants x ascending; NMR draws ppm decreasing to the right, so the scale is reversed.
  const ascending = example.ppm[0]! <= example.ppm[example.ppm.length - 1]!;
  const order = (a: number[]) => (ascending ? a : [...a].reverse());
  const series: LineSeries[] = [
    { label: 'input (level 0)', values: order(example.input).map(round), color: '#bbbbbb', points: false },
    { label: 'reference', values: order(example.reference).map(round), color: '#000000', points: false },
    ...Object.entries(example.outputs).map(([name, y]) => ({
      label: name,
      values: order(y).map(round),
      points: false,
    })),
  ];
  charts.overlay = {
    type: 'lines',
    x: order(example.ppm).map((v) => Number(v.toFixed(5))),
    xLabel: 'ppm',
    yLabel: 'intensity (truth units)',
    series,
    reverseX: true,
    height: 380,
  };
  return section(
    'Input, denoised and reference',
    chartDiv(
      'overlay',
      `Sample ${example.sample}: the lowest-SNR input, each method's output and the reference. Drag across to zoom, double-click to reset; click a legend entry to hide a series.`,
    ),
    'overlay',
  );
}

function metricsSections(r: EvaluationReport, charts: Record<string, ChartSpec>): string[] {
  const names = Object.keys(r.methods);
  const rows = names.map((n) => {
    const m = r.methods[n] as unknown as Record<string, number>;
    return [n, ...COLUMNS.map(([k, , d]) => num(m[k], d))];
  });
  const levels = r.dataset.levels;
  charts.levels = {
    type: 'lines',
    x: Array.from({ length: levels }, (_, k) => k),
    xLabel: 'input level (0 = lowest SNR)',
    integerX: true,
    yLabel: 'energy SNR dB',
    zoom: false,
    series: names.map((n) => ({
      label: n,
      points: true,
      values: Array.from(
        { length: levels },
        (_, k) =>
          (r.perLevel[n]?.[k] as unknown as Record<string, number> | undefined)?.energy_snr_db ?? null,
      ),
    })),
  };
  return [
    section(
      'Metrics per method (input level 0)',
      table(['method', ...COLUMNS.map(([, h]) => h)], rows, 'id="nmr-metrics"') +
        `<p>${r.evaluatedSamples} samples scored, ${r.validationSamples} used to tune Savitzky-Golay; T estimate ${num(r.pipeline?.t_hat, 3)}; input peak SNR per level ${escapeHtml((r.inputPeakSnr ?? []).map((v) => num(v, 1)).join(', '))}.</p>`,
      'metrics',
    ),
    section(
      'Energy SNR by input level',
      chartDiv('levels', 'Stack methods (fusion, pseudo_gt) use every level and have one point.'),
      'levels',
    ),
  ];
}

export function nmrPage(runDir: string, raw: unknown): ReportPage {
  const source = join(runDir, 'results.json');
  if (!isNmrReport(raw)) throw new InputError(`${source}: not a 'tailor nmr evaluate --json' report`);
  const results = validateNmrReport(raw, source);
  const charts: Record<string, ChartSpec> = {};
  const sections = metricsSections(results, charts);
  let example = results.example;
  let why = '';
  if (!example) {
    const dir = datasetDir(runDir, results.dataset.dir);
    if (dir) {
      try {
        example = recomputeExample(results, dir);
      } catch (error) {
        why = `the overlay could not be recomputed: ${(error as Error).message}`;
      }
    } else {
      why = `the data set ${results.dataset.dir} was not found (nor ${join(runDir, 'data')}), so there is no overlay`;
    }
  }
  sections.unshift(
    example
      ? overlaySection(example, charts)
      : section('Input, denoised and reference', note(why), 'overlay'),
  );
  return {
    title: 'NMR denoising evaluation',
    subtitle: `${results.dataset.samples} samples x ${results.dataset.levels} levels x ${results.dataset.points} points, T = ${results.dataset.ratio}`,
    kind: 'nmr',
    sections,
    charts,
  };
}
