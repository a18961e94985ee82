// HTML building blocks of the reports: escaping, JSON safe inside <script>, tables, and the
// self-contained page shell (uPlot, its CSS and the client code inlined, so a report opens
// offline from disk).
import type { ReportPage } from './types.js';
import { reportAssets, reportCsp } from './assets.js';

export function escapeHtml(text: unknown): string {
  return String(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON that cannot close the <script> element or start a comment inside it. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Percent with two decimals; a dash for a missing value. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined || !Number.isFinite(v) ? '–' : (100 * v).toFixed(2);
}

export function num(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Math.abs(v) >= 1e5 || (Math.abs(v) < 1e-3 && v !== 0) ? v.toExponential(digits) : v.toFixed(digits);
}

/** Markup the report builds itself (never text from a file): table() inserts it as is. */
export class Html {
  constructor(readonly html: string) {}
}

export function markup(html: string): Html {
  return new Html(html);
}

/** A table cell: text and numbers are escaped, Html is inserted as it is. */
export type Cell = string | number | Html;

export function table(header: string[], rows: Cell[][], attrs = ''): string {
  const head = header.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const cell = (c: Cell): string => (c instanceof Html ? c.html : escapeHtml(c));
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${cell(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table class="numbers"${attrs ? ' ' + attrs : ''}><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

export function chartDiv(id: string, caption: string): string {
  return `<figure><div class="chart" data-chart="${escapeHtml(id)}" id="chart-${escapeHtml(id)}"></div><figcaption>${escapeHtml(caption)}</figcaption></figure>`;
}

export function section(title: string, body: string, id?: string): string {
  return `<section${id ? ` id="${escapeHtml(id)}"` : ''}><h2>${escapeHtml(title)}</h2>\n${body}\n</section>`;
}

export function note(text: string): string {
  return `<p class="note">${escapeHtml(text)}</p>`;
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1150px; padding: 12px 24px; color: #222; }
h1 { font-size: 22px; margin: 8px 0 2px; } h2 { font-size: 18px; border-bottom: 1px solid #ddd; padding-bottom: 3px; margin-top: 28px; }
.subtitle { color: #555; margin: 0 0 12px; }
table.numbers { border-collapse: collapse; margin: 8px 0; font-variant-numeric: tabular-nums; }
table.numbers td, table.numbers th { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
table.numbers th { background: #f4f4f4; } table.numbers td:first-child { text-align: left; }
figure { margin: 10px 0 18px; } figcaption { color: #555; font-size: 13px; }
.chart { min-height: 60px; } .note { color: #666; font-style: italic; }
.ternary-wrap { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.ternary-controls { width: 100%; } .ternary-canvas { cursor: crosshair; touch-action: none; }
.simplex-panel { min-width: 260px; } nav a { margin-right: 12px; }
`;

export function renderPage(page: ReportPage, extraHead = ''): string {
  const assets = reportAssets();
  const data = { kind: page.kind, charts: page.charts, ...(page.live ? { live: page.live } : {}) };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(reportCsp())}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tailor report">
<title>${escapeHtml(page.title)}</title>
<style>${assets.uplotCss}</style>
<style>${STYLE}</style>${extraHead}
</head><body data-kind="${escapeHtml(page.kind)}">
<h1>${escapeHtml(page.title)}</h1>
${page.subtitle ? `<p class="subtitle">${escapeHtml(page.subtitle)}</p>` : ''}
${page.sections.join('\n')}
<script id="report-data" type="application/json">${jsonForScript(data)}</script>
<script>${assets.uplotJs}</script>
<script>${assets.clientJs}</script>
</body></html>
`;
}
