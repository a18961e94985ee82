// The library half of `npm run bench -- suite-compare` (bench/suite-compare.ts): two suites' stored
// runs read and compared per model and method (also used by its test).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spread, type Spread } from '../../src/longtail/workflows/benchmark-stats.js';

/** Mean top-1 (0..1) per method of one run; methods a model cannot run are left out. */
type RunMethods = Record<string, number>;
/** Per model, per seed, the run's methods. */
type SuiteRuns = Record<string, Record<number, RunMethods>>;

/** Every finished run of a benchmark output directory. */
export function readSuiteRuns(dir: string): SuiteRuns {
  const runs = join(dir, 'runs');
  if (!existsSync(runs))
    throw new Error(`${dir} holds no runs/ directory (a tailor benchmark --out directory)`);
  const out: SuiteRuns = {};
  for (const model of readdirSync(runs).sort()) {
    for (const entry of readdirSync(join(runs, model))) {
      const seed = /^seed-(\d+)$/.exec(entry)?.[1];
      const file = join(runs, model, entry, 'benchmark-methods.json');
      if (seed === undefined || !existsSync(file)) continue;
      const records = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { mean_top1?: number }>;
      const methods: RunMethods = {};
      for (const [method, r] of Object.entries(records))
        if (typeof r.mean_top1 === 'number') methods[method] = r.mean_top1;
      (out[model] ??= {})[Number(seed)] = methods;
    }
  }
  return out;
}

/** One model and method of the comparison; top-1 in percent. */
export interface ComparedRow {
  model: string;
  method: string;
  reference: Spread & { min: number | null; max: number | null };
  other: Spread;
  /** A's mean minus B's, in points. */
  difference: number | null;
  /** The difference in B's standard deviations (null below two B seeds). */
  differenceSd: number | null;
  /** A's mean lies within [min, max] of B's seeds. */
  withinRange: boolean | null;
  /** A - B per seed both have. */
  sameSeed: Record<number, number>;
}

const ORACLE = 'oracle';

/** The rows of the comparison of `other` (A) against `reference` (B). */
export function compareSuites(
  other: SuiteRuns,
  reference: SuiteRuns,
  methods: 'best' | 'all' = 'best',
): ComparedRow[] {
  const rows: ComparedRow[] = [];
  for (const [model, refSeeds] of Object.entries(reference)) {
    const otherSeeds = other[model];
    if (!otherSeeds) continue;
    const names = [...new Set(Object.values(refSeeds).flatMap((m) => Object.keys(m)))];
    const meanOf = (name: string) => spread(Object.values(refSeeds).map((m) => m[name])).mean ?? -Infinity;
    const best = names.filter((n) => n !== ORACLE).sort((x, y) => meanOf(y) - meanOf(x))[0];
    const shown =
      methods === 'all' ? names : [...new Set(['plain', best].filter((n) => n && names.includes(n)))];
    for (const method of shown as string[]) {
      const percent = (seeds: Record<number, RunMethods>) =>
        Object.fromEntries(
          Object.entries(seeds)
            .filter(([, m]) => typeof m[method] === 'number')
            .map(([s, m]) => [Number(s), 100 * m[method]!]),
        ) as Record<number, number>;
      const ref = percent(refSeeds);
      const oth = percent(otherSeeds);
      const refValues = Object.values(ref);
      const r = spread(refValues);
      const o = spread(Object.values(oth));
      const difference = r.mean !== null && o.mean !== null ? o.mean - r.mean : null;
      const min = refValues.length ? Math.min(...refValues) : null;
      const max = refValues.length ? Math.max(...refValues) : null;
      const sameSeed: Record<number, number> = {};
      for (const [s, v] of Object.entries(oth))
        if (ref[Number(s)] !== undefined) sameSeed[Number(s)] = v - ref[Number(s)]!;
      rows.push({
        model,
        method,
        reference: { ...r, min, max },
        other: o,
        difference,
        differenceSd: difference !== null && r.sd ? difference / r.sd : null,
        withinRange: o.mean !== null && min !== null && max !== null ? o.mean >= min && o.mean <= max : null,
        sameSeed,
      });
    }
  }
  return rows;
}

const f2 = (v: number | null) => (v === null ? '-' : v.toFixed(2));
const signed = (v: number) => `${v >= 0 ? '+' : ''}${v.toFixed(2)}`;

/** The comparison as a markdown table. */
export function comparisonTable(rows: ComparedRow[], names: [string, string]): string {
  const [a, b] = names;
  const lines = [
    `| model | method | ${b}: mean +- sd [min, max] (n) | ${a}, per seed | ${a} - ${b} mean | within ${b}'s range | same seed |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const ref = r.reference;
    const refText =
      ref.mean === null
        ? '-'
        : `${f2(ref.mean)} +- ${f2(ref.sd)} [${f2(ref.min)}, ${f2(ref.max)}] (${ref.n})`;
    const perSeed = r.other.values.filter((v): v is number => v !== null).map((v) => v.toFixed(2));
    const diff =
      r.difference === null
        ? '-'
        : `${signed(r.difference)}${r.differenceSd === null ? '' : ` (${r.differenceSd >= 0 ? '+' : ''}${r.differenceSd.toFixed(1)} sd)`}`;
    const same = Object.values(r.sameSeed).map(signed).join(', ') || '-';
    lines.push(
      `| ${r.model} | ${r.method} | ${refText} | ${perSeed.join(' / ') || '-'} | ${diff} | ${r.withinRange === null ? '-' : r.withinRange ? 'yes' : 'no'} | ${same} |`,
    );
  }
  return lines.join('\n');
}
