// The report of a long-tail run: training curves, per-class accuracy against training class
// size, accuracy over the eleven test distributions, the confusion matrix, and for PRL the
// controllability grid as a ternary heat map with a draggable preference point.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/fs.js';
import {
  FEW_SHOT_BELOW,
  MANY_SHOT_ABOVE,
  shotGroup,
  type EpochRecord,
  type GroupResult,
  type LongtailResults,
} from '../longtail/index.js';
import { chartDiv, markup, note, num, pct, renderPage, section, table, type Cell } from './html.js';
import { Fields } from './validate.js';
import { parseResultsJson, readResultsText } from './read.js';
import { parseControllability, controllabilitySection, liveOnlySection } from './controllability.js';
import type { ChartSpec, ReportPage } from './types.js';
import { testTimeSection } from './testtime.js';
import { DISTRIBUTION_ORDER, distributionLines, orderedDistributions } from './distributions.js';

export { DISTRIBUTION_ORDER };

function className(r: LongtailResults, c: number): string {
  return r.dataset.class_names?.[c] ?? String(c);
}

/**
 * Checks every field the report reads, by type and range, naming the first one that is wrong;
 * returns a copy holding only checked values.
 */
export function validateLongtailResults(value: unknown, source: string): LongtailResults {
  const f = new Fields(source, "results.json written by 'tailor train' or 'tailor test-all'");
  const r = f.object(value, '');
  if (r.kind !== 'longtail') f.fail('kind', `is ${JSON.stringify(r.kind)}, not 'longtail'`);
  const ds = f.object(r.dataset, 'dataset');
  const trainCounts = f.numbers(ds.train_counts, 'dataset.train_counts', { integer: true, min: 0 });
  const classes = trainCounts.length;
  const u = f.object(r.uniform, 'uniform');
  const perClass = f
    .array(u.per_class, 'uniform.per_class', classes)
    .map((v, i) => f.numberOrNull(v, `uniform.per_class[${i}]`, { min: 0, max: 1 }));
  const confusion = f
    .array(u.confusion, 'uniform.confusion', 100_000)
    .map((row, i) =>
      f.numbers(f.array(row, `uniform.confusion[${i}]`, 100_000), `uniform.confusion[${i}]`, { min: 0 }),
    );
  if (confusion.length * confusion.length > 25_000_000) f.fail('uniform.confusion', 'is implausibly large');
  const group = (v: unknown, field: string): GroupResult & { n: number } => {
    const g = f.object(v, field);
    const acc = (k: string) => f.numberOrNull(g[k] ?? null, `${field}.${k}`, { min: 0, max: 1 });
    return {
      n: f.number(g.n, `${field}.n`, { integer: true, min: 0 }),
      top1: acc('top1'),
      many: acc('many'),
      medium: acc('medium'),
      few: acc('few'),
    } as GroupResult & { n: number };
  };
  const distributions: Record<string, GroupResult & { n: number }> = {};
  for (const [name, d] of Object.entries(f.object(r.distributions, 'distributions')))
    distributions[name] = group(d, `distributions.${name}`);
  const history = f.optional(r.history, (v) =>
    f.array(v, 'history').map((h, i) => epochRecord(f, h, `history[${i}]`)),
  );
  const out: LongtailResults = {
    kind: 'longtail',
    name: f.string(r.name, 'name'),
    method: f.string(r.method, 'method'),
    checkpoint: f.string(r.checkpoint ?? '', 'checkpoint'),
    dataset: {
      name: f.string(ds.name, 'dataset.name'),
      classes: f.number(ds.classes, 'dataset.classes', { integer: true, min: 0 }),
      train_counts: trainCounts,
      imbalance: f.number(ds.imbalance, 'dataset.imbalance', { nonFinite: true }),
      profile: f.string(ds.profile, 'dataset.profile'),
      ...(ds.class_names !== undefined
        ? { class_names: f.strings(ds.class_names, 'dataset.class_names') }
        : {}),
    },
    uniform: {
      ...group(u, 'uniform'),
      per_class: perClass,
      ece: f.numberOrNull(u.ece ?? null, 'uniform.ece'),
      confusion,
    },
    distributions,
    mean_top1: f.numberOrNull(r.mean_top1 ?? null, 'mean_top1', { min: 0, max: 1 }) as number,
    ...(r.preference !== undefined ? { preference: f.numbers(r.preference, 'preference') } : {}),
    ...(history ? { history } : {}),
    ...(r.controllability !== undefined
      ? { controllability: parseControllability(r.controllability, `${source} controllability`) }
      : {}),
    ...(r.test_time !== undefined ? { test_time: r.test_time } : {}),
  };
  return out;
}

/** One epoch of the history (results.json or metrics.jsonl), checked. */
function epochRecord(f: Fields, v: unknown, field: string): EpochRecord {
  const h = f.object(v, field);
  const val = h.val === null || h.val === undefined ? null : f.object(h.val, `${field}.val`);
  const acc = (k: string) =>
    val === null ? null : f.numberOrNull(val[k] ?? null, `${field}.val.${k}`, { min: 0, max: 1 });
  // A missing or null value is shown as a gap (NaN becomes null in the page's JSON).
  const value = (k: string) =>
    h[k] === undefined || h[k] === null ? NaN : f.number(h[k], `${field}.${k}`, { nonFinite: true });
  return {
    epoch: f.number(h.epoch, `${field}.epoch`, { integer: true }),
    lr: value('lr'),
    train_loss: value('train_loss'),
    train_acc: value('train_acc'),
    val:
      val === null
        ? null
        : ({ top1: acc('top1'), many: acc('many'), medium: acc('medium'), few: acc('few') } as GroupResult),
    seconds: value('seconds'),
  };
}

/** Epoch records from metrics.jsonl (used when results.json has no history). */
export function readMetricsJsonl(path: string): EpochRecord[] {
  if (!existsSync(path)) return [];
  const out: EpochRecord[] = [];
  readResultsText(path)
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '') return;
      const f = new Fields(`${path} line ${i + 1}`, "one epoch record per line, as 'tailor train' writes");
      let rec: unknown;
      try {
        rec = JSON.parse(line);
      } catch (error) {
        f.fail('', `is not JSON (${(error as Error).message})`);
      }
      out.push(epochRecord(f, rec, 'record'));
    });
  return out;
}

function summarySection(r: LongtailResults): string {
  const u = r.uniform;
  const info: Cell[][] = [
    ['method', r.method],
    [
      'data set',
      `${r.dataset.name} (${r.dataset.classes} classes, ${r.dataset.profile} profile, imbalance ${r.dataset.imbalance})`,
    ],
    ['checkpoint', r.checkpoint],
    ...(r.preference ? [['preference r', r.preference.map((v) => v.toFixed(3)).join(', ')]] : []),
    [
      'uniform test set',
      `${u.n} images; top-1 ${pct(u.top1)} %, many ${pct(u.many)}, medium ${pct(u.medium)}, few ${pct(u.few)}, ECE ${num(u.ece, 4)}`,
    ],
    ['mean top-1 over the eleven distributions', `${pct(r.mean_top1)} %`],
  ];
  return section('Summary', table(['', ''], info, 'id="summary"'), 'summary');
}

function curvesSection(history: EpochRecord[], charts: Record<string, ChartSpec>): string {
  if (history.length === 0)
    return section('Training curves', note('No epoch history in results.json or metrics.jsonl.'), 'curves');
  const x = history.map((h) => h.epoch);
  const val = (k: 'top1' | 'many' | 'medium' | 'few') => history.map((h) => h.val?.[k] ?? null);
  charts.loss = {
    type: 'lines',
    x,
    xLabel: 'epoch',
    integerX: true,
    yLabel: 'training loss',
    series: [
      {
        label: 'train loss',
        values: history.map((h) => (Number.isFinite(h.train_loss) ? h.train_loss : null)),
      },
    ],
  };
  charts.accuracy = {
    type: 'lines',
    x,
    xLabel: 'epoch',
    integerX: true,
    yLabel: 'accuracy',
    yRange: [0, 1],
    series: [
      { label: 'train acc', values: history.map((h) => h.train_acc), dash: true },
      { label: 'test top-1', values: val('top1') },
      { label: 'many', values: val('many') },
      { label: 'medium', values: val('medium') },
      { label: 'few', values: val('few') },
    ],
  };
  charts.lr = {
    type: 'lines',
    x,
    xLabel: 'epoch',
    integerX: true,
    yLabel: 'learning rate',
    series: [{ label: 'lr', values: history.map((h) => h.lr) }],
    height: 200,
  };
  return section(
    'Training curves',
    chartDiv('loss', 'Training loss per epoch.') +
      chartDiv(
        'accuracy',
        'Training accuracy and uniform test accuracy (top-1 and shot groups) per epoch; drag to zoom, double-click to reset.',
      ) +
      chartDiv('lr', 'Learning rate schedule.'),
    'curves',
  );
}

function perClassSection(r: LongtailResults, charts: Record<string, ChartSpec>): string {
  const counts = r.dataset.train_counts;
  const groups = {
    many: { x: [] as number[], y: [] as number[] },
    medium: { x: [] as number[], y: [] as number[] },
    few: { x: [] as number[], y: [] as number[] },
  };
  const rows: Cell[][] = [];
  counts.forEach((n, c) => {
    const acc = r.uniform.per_class[c] ?? null;
    const g = shotGroup(n);
    if (acc !== null && n > 0) {
      groups[g].x.push(n);
      groups[g].y.push(acc);
    }
    rows.push([className(r, c), n, g, pct(acc)]);
  });
  charts.perClass = {
    type: 'scatter',
    xLabel: 'training images of the class (log scale)',
    yLabel: 'test accuracy',
    logX: true,
    yRange: [0, 1],
    series: [
      { label: `many (> ${MANY_SHOT_ABOVE})`, ...groups.many },
      { label: `medium (${FEW_SHOT_BELOW}..${MANY_SHOT_ABOVE})`, ...groups.medium },
      { label: `few (< ${FEW_SHOT_BELOW})`, ...groups.few },
    ].filter((s) => s.x.length > 0),
  };
  const byCount = rows
    .map((row, c) => ({ row, n: counts[c]! }))
    .sort((a, b) => b.n - a.n)
    .map((e) => e.row);
  return section(
    'Per-class accuracy against training class size',
    chartDiv('perClass', 'Uniform test accuracy of each class against its number of training images.') +
      `<details><summary>Table (${counts.length} classes, largest first)</summary>${table(['class', 'train images', 'group', 'accuracy %'], byCount, 'id="per-class"')}</details>`,
    'per-class',
  );
}

function distributionsSection(r: LongtailResults, charts: Record<string, ChartSpec>): string {
  const names = orderedDistributions(r.distributions);
  const get = (k: 'top1' | 'many' | 'medium' | 'few') => names.map((d) => r.distributions[d]![k] ?? null);
  charts.distributions = distributionLines(
    names,
    'accuracy',
    [
      { label: 'top-1', values: get('top1'), points: true },
      { label: 'many', values: get('many'), points: true, dash: true },
      { label: 'medium', values: get('medium'), points: true, dash: true },
      { label: 'few', values: get('few'), points: true, dash: true },
    ],
    [0, 1],
  );
  const rows: Cell[][] = names.map((d) => {
    const e = r.distributions[d]!;
    return [d, e.n, pct(e.top1), pct(e.many), pct(e.medium), pct(e.few)];
  });
  rows.push([markup('<b>mean top-1</b>'), '', markup(`<b>${pct(r.mean_top1)}</b>`), '', '', '']);
  return section(
    'Accuracy over the test distributions',
    chartDiv(
      'distributions',
      'Forward-N: head classes N times as frequent as tail classes; backward-N: the reverse.',
    ) +
      table(['distribution', 'images', 'top-1 %', 'many %', 'medium %', 'few %'], rows, 'id="distributions"'),
    'distributions',
  );
}

function confusionSection(r: LongtailResults, charts: Record<string, ChartSpec>): string {
  const k = r.uniform.confusion.length;
  const names = Array.from({ length: k }, (_, c) => className(r, c));
  charts.confusion = {
    type: 'heatmap',
    matrix: r.uniform.confusion,
    rows: names,
    cols: names,
    xLabel: 'predicted',
    yLabel: 'true',
    normalizeRows: true,
  };
  return section(
    'Confusion matrix (uniform test set)',
    chartDiv(
      'confusion',
      'Rows: true class; columns: predicted class; colour: fraction of the row. Hover for counts.',
    ),
    'confusion',
  );
}

/** A PRL run: its model takes a preference (method PRL, a preference or a controllability grid). */
export function isPrlResults(r: unknown): boolean {
  const v = r as Partial<LongtailResults> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.kind === 'longtail' &&
    (String(v.method ?? '').startsWith('PRL') ||
      v.controllability !== undefined ||
      Array.isArray(v.preference))
  );
}

/** Number of experts of a PRL run, from its grid or its preference; null when unknown. */
export function prlExperts(r: Partial<LongtailResults>): number | null {
  const grid = r.controllability as { experts?: unknown } | undefined;
  if (grid && typeof grid.experts === 'number') return grid.experts;
  return Array.isArray(r.preference) ? r.preference.length : null;
}

export interface LongtailPageOptions {
  /** Served with a live preference endpoint: show the control even without a grid. */
  liveControl?: boolean;
}

export function longtailPage(
  results: LongtailResults,
  extraHistory?: EpochRecord[],
  options: LongtailPageOptions = {},
): ReportPage {
  const charts: Record<string, ChartSpec> = {};
  const history = results.history && results.history.length > 0 ? results.history : (extraHistory ?? []);
  const sections = [
    summarySection(results),
    curvesSection(history, charts),
    perClassSection(results, charts),
    distributionsSection(results, charts),
    confusionSection(results, charts),
  ];
  if (results.controllability !== undefined) {
    const grid = parseControllability(results.controllability, 'results.json controllability');
    sections.push(controllabilitySection(grid, charts));
  } else if (options.liveControl && isPrlResults(results) && prlExperts(results) === 3) {
    sections.push(liveOnlySection(Object.keys(results.distributions), charts));
  }
  if (results.test_time !== undefined) sections.push(testTimeSection(results.test_time, charts));
  return {
    title: `${results.name} — ${results.method}`,
    subtitle: `long-tail run on ${results.dataset.name}: uniform top-1 ${pct(results.uniform.top1)} %, mean over the test distributions ${pct(results.mean_top1)} %`,
    kind: 'longtail',
    sections,
    charts,
  };
}

/** A self-contained HTML page (opens offline) for one long-tail run's results. */
export function renderLongtailReport(results: LongtailResults): string {
  return renderPage(longtailPage(validateLongtailResults(results, 'results')));
}

export function loadLongtailRun(runDir: string): { results: LongtailResults; history: EpochRecord[] } {
  const path = join(runDir, 'results.json');
  const results = validateLongtailResults(parseResultsJson(path), path);
  const history = results.history?.length ? [] : readMetricsJsonl(join(runDir, 'metrics.jsonl'));
  return { results, history };
}

/** Reads DIR/results.json (and metrics.jsonl) and writes DIR/report.html; returns its path. */
export function writeLongtailReport(runDir: string): string {
  const { results, history } = loadLongtailRun(runDir);
  const out = join(runDir, 'report.html');
  writeFileAtomic(out, renderPage(longtailPage(results, history)));
  return out;
}
