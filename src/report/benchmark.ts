// The benchmark table as markdown and as an HTML page: mean top-1 over seeds with the standard
// deviation and the 95 % t-interval, per distribution and over all eleven, many/medium/few per
// distribution, and a chart of each row's top-1 across the distributions. Oracle rows are marked.
import { join } from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../util/fs.js';
import type { BenchmarkRow, BenchmarkTable, Spread } from '../longtail/index.js';
import { chartDiv, escapeHtml, note, pct, renderPage, section, table } from './html.js';
import { distributionLines } from './distributions.js';
import type { ChartSpec } from './types.js';

const p = (v: number | null) => (v === null ? '–' : (100 * v).toFixed(2));

/** "81.20 ± 0.53" (mean ± standard deviation over seeds, percent). */
export function meanSd(s: Spread): string {
  if (s.mean === null) return '–';
  return s.sd === null ? p(s.mean) : `${p(s.mean)} ± ${p(s.sd)}`;
}

export function interval(s: Spread): string {
  return s.ci95 ? `[${p(s.ci95[0])}, ${p(s.ci95[1])}]` : '–';
}

/** Short column names (forward50 -> F50, uniform -> U, backward2 -> B2) so the table fits a page. */
export function shortName(d: string): string {
  const m = /^(forward|backward)(\d+)$/.exec(d);
  if (m) return `${m[1] === 'forward' ? 'F' : 'B'}${m[2]}`;
  return d === 'uniform' ? 'U' : d;
}

function label(r: BenchmarkRow): string {
  return `${r.model} / ${r.method}${r.oracle ? ' (ORACLE)' : ''}`;
}

function mdCell(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\|/g, '\\|')
    .replace(/[\r\n]+/g, ' ');
}

function header(t: BenchmarkTable): string {
  return (
    `Suite ${t.name}: ${t.rows.length} rows (model / method), seeds ${t.seeds.join(', ')}. ` +
    'Top-1 in percent: mean ± standard deviation over seeds; the interval is the 95 % Student-t interval of the mean. ' +
    'F = forward, B = backward long-tailed test set with that imbalance, U = uniform. ' +
    'ORACLE rows add the log of the true test prior (they use test labels) and are not a test-time method.' +
    (t.complete
      ? ''
      : ' INCOMPLETE: some runs or methods are missing; rerun the same command to finish them.')
  );
}

export function benchmarkMarkdown(t: BenchmarkTable): string {
  const lines = [`# Benchmark ${mdCell(t.name)}`, '', mdCell(header(t)), ''];
  const columns = t.distributions.map(shortName).join(' | ');
  lines.push(`| model / method | seeds | ${columns} | mean | 95 % interval |`);
  lines.push(`|${' --- |'.repeat(t.distributions.length + 4)}`);
  for (const r of t.rows) {
    const cells = r.unsupported
      ? [...t.distributions.map(() => '–'), `n/a: ${r.unsupported}`, '–']
      : [
          ...t.distributions.map((d) => meanSd(r.distributions[d]!.top1)),
          meanSd(r.mean_top1),
          interval(r.mean_top1),
        ];
    lines.push(`| ${mdCell(label(r))} | ${r.seeds.length} | ${cells.map(mdCell).join(' | ')} |`);
  }
  lines.push('', '## Many / medium / few (mean over seeds, percent)', '');
  lines.push(`| model / method | ${columns} |`);
  lines.push(`|${' --- |'.repeat(t.distributions.length + 1)}`);
  for (const r of t.rows) {
    if (r.unsupported) continue;
    const cells = t.distributions.map((d) => {
      const c = r.distributions[d]!;
      return `${p(c.many.mean)} / ${p(c.medium.mean)} / ${p(c.few.mean)}`;
    });
    lines.push(`| ${mdCell(label(r))} | ${cells.map(mdCell).join(' | ')} |`);
  }
  lines.push('', 'Methods:', '');
  for (const m of t.methods) lines.push(`- ${mdCell(m.name)}: ${mdCell(m.describe)}`);
  return lines.join('\n') + '\n';
}

export function benchmarkHtml(t: BenchmarkTable): string {
  const rows = t.rows.filter((r) => !r.unsupported);
  const top = table(
    ['model / method', 'seeds', ...t.distributions.map(shortName), 'mean', '95 % interval'],
    t.rows.map((r) => [
      escapeHtml(label(r)),
      String(r.seeds.length),
      ...(r.unsupported
        ? [...t.distributions.map(() => '–'), escapeHtml(`n/a: ${r.unsupported}`), '–']
        : [
            ...t.distributions.map((d) => escapeHtml(meanSd(r.distributions[d]!.top1))),
            escapeHtml(meanSd(r.mean_top1)),
            escapeHtml(interval(r.mean_top1)),
          ]),
    ]),
  );
  const groups = table(
    ['model / method', ...t.distributions.map(shortName)],
    rows.map((r) => [
      escapeHtml(label(r)),
      ...t.distributions.map((d) => {
        const c = r.distributions[d]!;
        return escapeHtml(`${pct(c.many.mean)} / ${pct(c.medium.mean)} / ${pct(c.few.mean)}`);
      }),
    ]),
  );
  const charts: Record<string, ChartSpec> = {
    top1: distributionLines(
      t.distributions.map(shortName),
      'top-1 (%, mean over seeds)',
      rows.map((r) => ({
        label: label(r),
        values: t.distributions.map((d) => {
          const m = r.distributions[d]!.top1.mean;
          return m === null ? null : 100 * m;
        }),
        dash: r.oracle,
      })),
    ),
  };
  const methods = `<ul>${t.methods.map((m) => `<li><b>${escapeHtml(m.name)}</b>: ${escapeHtml(m.describe)}</li>`).join('')}</ul>`;
  return renderPage({
    title: `Benchmark ${t.name}`,
    kind: 'benchmark',
    subtitle: t.description ?? t.suite,
    sections: [
      section('Top-1 over the test distributions', `${note(header(t))}\n${top}`, 'top1'),
      section(
        'Chart',
        chartDiv('top1', 'Top-1 per distribution, mean over seeds (dashed: oracle).'),
        'chart',
      ),
      section('Many / medium / few', groups, 'groups'),
      section('Methods', methods, 'methods'),
    ],
    charts,
  });
}

/** Writes benchmark.json, benchmark.md and benchmark.html into dir; returns their paths. */
export function writeBenchmarkReport(
  dir: string,
  t: BenchmarkTable,
): { json: string; markdown: string; html: string } {
  const json = join(dir, 'benchmark.json');
  const markdown = join(dir, 'benchmark.md');
  const html = join(dir, 'benchmark.html');
  writeJsonAtomic(json, t);
  writeFileAtomic(markdown, benchmarkMarkdown(t));
  writeFileAtomic(html, benchmarkHtml(t));
  return { json, markdown, html };
}
