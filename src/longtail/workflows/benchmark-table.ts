// The benchmark table: for every model and method, each test distribution's top-1 and
// many/medium/few, and the mean top-1 over the distributions, each as its spread over seeds.
import { TEST_DISTRIBUTIONS } from '../data/longtail.js';
import type { GroupResult } from '../train/evaluate.js';
import { benchmarkMethod } from './benchmark-methods.js';
import { spread, type Spread } from './benchmark-stats.js';

/** One method's result on one run (model and seed): per distribution, or why the model cannot use it. */
export type MethodRecord =
  { distributions: Record<string, GroupResult>; mean_top1: number | null } | { unsupported: string };

/** The spread over seeds of top-1 and of each shot group for one cell of a benchmark table. */
export interface CellSpread {
  top1: Spread;
  many: Spread;
  medium: Spread;
  few: Spread;
}

/**
 * One row of a benchmark table: a model and a method, with the spread over seeds per test distribution.
 */
export interface BenchmarkRow {
  model: string;
  method: string;
  oracle: boolean;
  /** Seeds with a result for this row. */
  seeds: number[];
  /** Why the model cannot use the method (the row then has no numbers). */
  unsupported?: string;
  distributions: Record<string, CellSpread>;
  mean_top1: Spread;
}

/** What a benchmark writes: one {@link BenchmarkRow} per model and method. */
export interface BenchmarkTable {
  kind: 'benchmark';
  name: string;
  description?: string;
  suite: string;
  seeds: number[];
  methods: { name: string; describe: string; oracle: boolean }[];
  distributions: string[];
  /** False while some runs or methods are still missing (an interrupted or partial benchmark). */
  complete: boolean;
  rows: BenchmarkRow[];
}

/** The mean of the per-distribution top-1 values; null when one is missing. */
export function meanTop1(
  distributions: Record<string, GroupResult>,
  names: readonly string[] = TEST_DISTRIBUTIONS,
): number | null {
  let sum = 0;
  for (const d of names) {
    const v = distributions[d]?.top1;
    if (typeof v !== 'number') return null;
    sum += v;
  }
  return sum / names.length;
}

/** Tabulates the per-seed method records of a suite into a {@link BenchmarkTable}. */
export function benchmarkTable(o: {
  name: string;
  description?: string;
  suite: string;
  seeds: number[];
  models: string[];
  methods: string[];
  /** records[model][seed][method] */
  records: Record<string, Record<number, Record<string, MethodRecord>>>;
}): BenchmarkTable {
  const rows: BenchmarkRow[] = [];
  let complete = true;
  for (const model of o.models) {
    for (const method of o.methods) {
      const perSeed = o.seeds.map((s) => o.records[model]?.[s]?.[method]);
      if (perSeed.some((r) => r === undefined)) complete = false;
      const unsupported = perSeed.find(
        (r): r is { unsupported: string } => r !== undefined && 'unsupported' in r,
      );
      const seeds: number[] = [];
      const results: (Record<string, GroupResult> | undefined)[] = perSeed.map((r, i) => {
        if (r === undefined || 'unsupported' in r) return undefined;
        seeds.push(o.seeds[i]!);
        return r.distributions;
      });
      const kept = results.filter((r): r is Record<string, GroupResult> => r !== undefined);
      const distributions: Record<string, CellSpread> = {};
      for (const d of TEST_DISTRIBUTIONS) {
        const pick = (k: keyof GroupResult) => spread(kept.map((r) => r[d]?.[k]));
        distributions[d] = {
          top1: pick('top1'),
          many: pick('many'),
          medium: pick('medium'),
          few: pick('few'),
        };
      }
      rows.push({
        model,
        method,
        oracle: benchmarkMethod(method).oracle ?? false,
        seeds,
        ...(unsupported && kept.length === 0 ? { unsupported: unsupported.unsupported } : {}),
        distributions,
        mean_top1: spread(kept.map((r) => meanTop1(r))),
      });
    }
  }
  return {
    kind: 'benchmark',
    name: o.name,
    ...(o.description !== undefined ? { description: o.description } : {}),
    suite: o.suite,
    seeds: o.seeds,
    methods: o.methods.map((m) => ({
      name: m,
      describe: benchmarkMethod(m).describe,
      oracle: benchmarkMethod(m).oracle ?? false,
    })),
    distributions: [...TEST_DISTRIBUTIONS],
    complete,
    rows,
  };
}
