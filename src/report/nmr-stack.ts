// What `tailor nmr stack` reports about one sample's experiments after the multi-SNR preprocessing:
// per level its shift, scale, noise, SNR, fusion weight and scans, as a table or JSON.
import type { RealStack } from '../nmr/index.js';

export interface StackReport {
  sources: string[];
  points: number;
  ppm: [number, number];
  shifts_points: number[];
  scales: number[];
  sigmas: number[];
  snrs: number[];
  t_hat: number;
  /** Each level's scans where the files record them, else null. */
  scans: (number | null)[];
  /** T that the scans imply, (scans_K / scans_0)^(1 / 2K), when every level records them. */
  t_from_scans: number | null;
  weights: number[];
  peak_fraction: number;
}

/** The SNR ratio per level that the scans give (noise averages down as the square root of the scans). */
function tFromScans(scans: (number | undefined)[]): number | null {
  const K = scans.length - 1;
  const first = scans[0];
  const last = scans[K];
  if (K < 1 || scans.some((n) => n === undefined) || first === undefined || last === undefined) return null;
  return Math.pow(last / first, 1 / (2 * K));
}

export function stackReport(stack: RealStack): StackReport {
  const r = stack.result;
  return {
    sources: stack.sources,
    points: stack.spectra[0]!.length,
    ppm: [stack.ppmFirst, stack.ppmLast],
    shifts_points: r.shifts,
    scales: r.scales,
    sigmas: r.sigmas,
    snrs: r.snrs,
    t_hat: r.tHat,
    scans: stack.scans.map((n) => n ?? null),
    t_from_scans: tFromScans(stack.scans),
    weights: r.weights,
    peak_fraction: r.masks.peak.reduce((a, b) => a + b, 0) / r.masks.peak.length,
  };
}

export function formatStackReport(report: StackReport): string {
  const lines = [
    `${report.points} points, ${report.ppm[0].toFixed(3)} .. ${report.ppm[1].toFixed(3)} ppm; T estimate ${report.t_hat.toFixed(3)}${report.t_from_scans === null ? '' : ` (the scans give ${report.t_from_scans.toFixed(3)})`}; peak mask ${(100 * report.peak_fraction).toFixed(1)} % of points`,
    ['level', 'shift pts', 'scale', 'sigma', 'SNR', 'weight', 'scans', 'source']
      .map((h) => h.padStart(10))
      .join(' '),
  ];
  report.sources.forEach((src, k) =>
    lines.push(
      [
        String(k),
        report.shifts_points[k]!.toFixed(3),
        report.scales[k]!.toPrecision(4),
        report.sigmas[k]!.toPrecision(4),
        report.snrs[k]!.toFixed(1),
        report.weights[k]!.toFixed(3),
        report.scans[k] === null || report.scans[k] === undefined ? '-' : String(report.scans[k]),
      ]
        .map((c) => c.padStart(10))
        .join(' ') +
        '  ' +
        src,
    ),
  );
  return lines.join('\n');
}
