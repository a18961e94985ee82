// The eleven test distributions in reading order (forward-50 ... uniform ... backward-50), and the
// line chart over them that the distribution and test-time sections share.
import type { LineSeries, LinesChart } from './types.js';
import { TEST_DISTRIBUTIONS } from '../longtail/index.js';

export const DISTRIBUTION_ORDER: readonly string[] = TEST_DISTRIBUTIONS;

/** The names of a per-distribution record: the known ones in reading order, then any others. */
export function orderedDistributions(record: Record<string, unknown>): string[] {
  return [
    ...DISTRIBUTION_ORDER.filter((d) => d in record),
    ...Object.keys(record).filter((d) => !DISTRIBUTION_ORDER.includes(d)),
  ];
}

/** A line chart with one point per distribution. */
export function distributionLines(
  names: string[],
  yLabel: string,
  series: LineSeries[],
  yRange?: [number, number],
): LinesChart {
  return {
    type: 'lines',
    x: names.map((_, i) => i),
    xTicks: names,
    xLabel: 'test distribution',
    yLabel,
    ...(yRange ? { yRange } : {}),
    zoom: false,
    series,
  };
}
