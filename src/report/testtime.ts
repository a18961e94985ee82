// The test-time section of a long-tail report: top-1 on each test distribution before and after
// each test-time method (SADE aggregation, PRL preference search, prior matching, the EM-adjusted
// scores) and the true-prior oracle, as lines over the distributions and as a table.
import { chartDiv, escapeHtml, note, pct, section, table } from './html.js';
import type { ChartSpec } from './types.js';
import { distributionLines, orderedDistributions } from './distributions.js';

/** The methods of `test-time-train --json`: the key of their group in a distribution's entry. */
const METHODS: readonly { key: string; label: string; weights?: string }[] = [
  { key: 'before', label: 'before' },
  { key: 'aggregation', label: 'SADE aggregation', weights: 'weights' },
  { key: 'preference_search', label: 'preference search', weights: 'preference' },
  { key: 'prior_matching', label: 'prior matching' },
  { key: 'prior_adjusted', label: 'EM-adjusted scores' },
  { key: 'oracle', label: 'oracle prior' },
];

type Entry = Record<string, unknown>;

function top1(entry: Entry, key: string): number | null {
  const group = entry[key] as { top1?: unknown } | undefined;
  return group && typeof group.top1 === 'number' ? group.top1 : null;
}

function vector(value: unknown): string {
  return Array.isArray(value) ? value.map((v) => Number(v).toFixed(2)).join('/') : '';
}

export function testTimeSection(value: unknown, charts: Record<string, ChartSpec>): string {
  const t = value as { distributions?: Record<string, Entry> } | null;
  if (!t || typeof t !== 'object' || !t.distributions || typeof t.distributions !== 'object') {
    return section(
      'Test-time adaptation',
      `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`,
      'test-time',
    );
  }
  const d = t.distributions;
  const names = orderedDistributions(d);
  const methods = METHODS.filter((m) => names.some((n) => top1(d[n]!, m.key) !== null));
  charts.testTime = distributionLines(
    names,
    'top-1',
    methods.map((m) => ({
      label: m.label,
      values: names.map((n) => top1(d[n]!, m.key)),
      points: true,
      ...(m.key === 'oracle' || m.key === 'before' ? { dash: true } : {}),
    })),
  );
  const mean = (key: string) => {
    const v = names.map((n) => top1(d[n]!, key));
    return v.every((x) => x !== null) ? v.reduce((s, x) => s + x!, 0) / v.length : null;
  };
  const rows = names.map((n) => {
    const e = d[n]!;
    const matched = e.prior_matching as Entry | undefined;
    return [
      escapeHtml(n),
      ...methods.map((m) => pct(top1(e, m.key))),
      escapeHtml(vector(e.weights)),
      escapeHtml(vector(e.preference)),
      escapeHtml(vector(matched?.preference ?? matched?.weights)),
    ];
  });
  rows.push(['<b>mean</b>', ...methods.map((m) => `<b>${pct(mean(m.key))}</b>`), '', '', '']);
  return section(
    'Test-time adaptation',
    chartDiv(
      'testTime',
      'Top-1 on each unlabeled test distribution after each test-time method; the oracle knows the true test prior.',
    ) +
      table(
        [
          'distribution',
          ...methods.map((m) => `${escapeHtml(m.label)} %`),
          'aggregation weights',
          'searched preference',
          'prior-matched weights',
        ],
        rows,
        'id="test-time"',
      ) +
      note(
        'Prior matching picks the weights (PRL: the preference) whose log prior makes the unlabeled test set most likely under the balanced scores; the EM-adjusted scores add an unconstrained EM estimate of the prior to them.',
      ),
    'test-time',
  );
}
