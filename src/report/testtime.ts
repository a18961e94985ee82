// The test-time section of a long-tail report: top-1 on each test distribution before and after
// each test-time method (SADE aggregation, PRL preference search, prior matching, the EM-adjusted
// scores) and the true-prior oracle, as lines over the distributions and as a table.
import { chartDiv, escapeHtml, markup, note, pct, section, table, type Cell } from './html.js';
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
  const group = entry[key] as { top1?: unknown } | null | undefined;
  return group && typeof group === 'object' && typeof group.top1 === 'number' && Number.isFinite(group.top1)
    ? group.top1
    : null;
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
  // Entries that are not objects (a hand-edited or corrupt file) are left out.
  const d = Object.fromEntries(
    Object.entries(t.distributions).filter(
      ([, e]) => typeof e === 'object' && e !== null && !Array.isArray(e),
    ),
  ) as Record<string, Entry>;
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
  const rows: Cell[][] = names.map((n) => {
    const e = d[n]!;
    const matched = (typeof e.prior_matching === 'object' ? e.prior_matching : null) as Entry | null;
    return [
      n,
      ...methods.map((m) => pct(top1(e, m.key))),
      vector(e.weights),
      vector(e.preference),
      vector(matched?.preference ?? matched?.weights),
    ];
  });
  rows.push([markup('<b>mean</b>'), ...methods.map((m) => markup(`<b>${pct(mean(m.key))}</b>`)), '', '', '']);
  return section(
    'Test-time adaptation',
    chartDiv(
      'testTime',
      'Top-1 on each unlabeled test distribution after each test-time method; the oracle knows the true test prior.',
    ) +
      table(
        [
          'distribution',
          ...methods.map((m) => `${m.label} %`),
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
