// What `tailor nmr stack` reports about one sample's experiments after the multi-SNR preprocessing:
// per level its shift, scale, noise, SNR and fusion weight, as a table or JSON.
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
  weights: number[];
  peak_fraction: number;
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
    weights: r.weights,
    peak_fraction: r.masks.peak.reduce((a, b) => a + b, 0) / r.masks.peak.length,
  };
}

export function formatStackReport(report: StackReport): string {
  const lines = [
    `${report.points} points, ${report.ppm[0].toFixed(3)} .. ${report.ppm[1].toFixed(3)} ppm; T estimate ${report.t_hat.toFixed(3)}; peak mask ${(100 * report.peak_fraction).toFixed(1)} % of points`,
    ['level', 'shift pts', 'scale', 'sigma', 'SNR', 'weight', 'source'].map((h) => h.padStart(10)).join(' '),
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
      ]
        .map((c) => c.padStart(10))
        .join(' ') +
        '  ' +
        src,
    ),
  );
  return lines.join('\n');
}
