// PRL controllability: the grid of preferences on the simplex (results.json `controllability`),
// validated, drawn as a ternary heat map with a draggable point, and tabulated.
import { InputError } from '../util/errors.js';
import { chartDiv, note, pct, section, table } from './html.js';
import type { ChartSpec, ControllabilityGrid } from './types.js';

const GROUPS = ['top1', 'many', 'medium', 'few'] as const;

/** Validates the grid; errors name the field (source says where it came from). */
export function parseControllability(value: unknown, source: string): ControllabilityGrid {
  const fail = (what: string): never => {
    throw new InputError(
      `${source}: ${what} (expected { experts, points: [{ preference, many, medium, few, top1, distributions }] })`,
    );
  };
  if (typeof value !== 'object' || value === null) fail('not an object');
  const g = value as Partial<ControllabilityGrid>;
  if (!Number.isInteger(g.experts) || g.experts! < 1 || g.experts! > 64)
    fail("field 'experts' is not an integer in 1..64");
  if (!Array.isArray(g.points)) fail("field 'points' is not an array");
  const isNum = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));
  g.points!.forEach((p, i) => {
    if (!p || typeof p !== 'object') fail(`points[${i}] is not an object`);
    if (
      !Array.isArray(p.preference) ||
      p.preference.length !== g.experts ||
      !p.preference.every((v) => typeof v === 'number' && Number.isFinite(v))
    ) {
      fail(`points[${i}].preference is not ${g.experts} numbers`);
    }
    for (const k of GROUPS) if (!isNum(p[k])) fail(`points[${i}].${k} is not a number or null`);
    if (typeof p.distributions !== 'object' || p.distributions === null)
      fail(`points[${i}].distributions is missing`);
    for (const [d, v] of Object.entries(p.distributions))
      if (!isNum(v)) fail(`points[${i}].distributions.${d} is not a number or null`);
  });
  return g as ControllabilityGrid;
}

/** Corner names: PRL's experts are forward (head), uniform and backward (tail) in that order. */
export function expertNames(experts: number): string[] {
  if (experts === 3) return ['forward expert', 'uniform expert', 'backward expert'];
  return Array.from({ length: experts }, (_, e) => `expert ${e + 1}`);
}

export function controllabilitySection(grid: ControllabilityGrid, charts: Record<string, ChartSpec>): string {
  const dists = [...new Set(grid.points.flatMap((p) => Object.keys(p.distributions)))];
  const metrics = [...GROUPS, ...dists];
  const valuesOf = (p: ControllabilityGrid['points'][number]): Record<string, number | null> => ({
    top1: p.top1,
    many: p.many,
    medium: p.medium,
    few: p.few,
    ...Object.fromEntries(dists.map((d) => [d, p.distributions[d] ?? null])),
  });
  const names = expertNames(grid.experts);
  let figure: string;
  if (grid.experts === 3 && grid.points.length > 0) {
    charts.simplex = {
      type: 'ternary',
      corners: [names[0]!, names[1]!, names[2]!],
      metrics,
      points: grid.points.map((p) => ({ preference: p.preference, values: valuesOf(p) })),
    };
    figure = chartDiv(
      'simplex',
      'Accuracy over the preference simplex (colour: the chosen metric). Drag the point: the panel shows the values for that preference.',
    );
  } else if (grid.experts === 2 && grid.points.length > 0) {
    const pts = [...grid.points].sort((a, b) => a.preference[0]! - b.preference[0]!);
    charts.simplex = {
      type: 'lines',
      x: pts.map((p) => p.preference[0]!),
      xLabel: `weight of ${names[0]}`,
      yLabel: 'accuracy',
      yRange: [0, 1],
      series: GROUPS.map((k) => ({ label: k, values: pts.map((p) => p[k]) })),
    };
    figure = chartDiv('simplex', 'Accuracy against the preference of the first expert.');
  } else {
    figure = note(`A ternary map needs three experts; this grid has ${grid.experts}.`);
  }
  const header = [...names.map((n) => `r ${n}`), 'top-1 %', 'many %', 'medium %', 'few %', ...dists];
  const rows = grid.points.map((p) => [
    ...p.preference.map((v) => v.toFixed(3)),
    ...GROUPS.map((k) => pct(p[k])),
    ...dists.map((d) => pct(p.distributions[d])),
  ]);
  return section(
    'Controllability (preference grid)',
    figure +
      `<details${grid.points.length <= 30 ? ' open' : ''}><summary>Table (${grid.points.length} preferences)</summary>${table(
        header.map((h) => h),
        rows,
        'id="controllability"',
      )}</details>`,
    'controllability',
  );
}

/**
 * The preference control of a served PRL run whose results.json has no grid yet: an uncoloured
 * triangle whose point queries the server.
 */
export function liveOnlySection(distributions: string[], charts: Record<string, ChartSpec>): string {
  const names = expertNames(3);
  charts.simplex = {
    type: 'ternary',
    corners: [names[0]!, names[1]!, names[2]!],
    metrics: [...GROUPS, ...distributions],
    points: [],
  };
  return section(
    'Controllability (live)',
    chartDiv('simplex', 'Drag the point: the server evaluates the model at that preference.') +
      note(
        'results.json has no controllability grid, so the triangle is not coloured; compute the grid to add the heat map.',
      ),
    'controllability',
  );
}
