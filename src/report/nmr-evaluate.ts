// The text table of `tailor nmr evaluate`: metrics per method and input level.
import type { EvaluationReport } from '../nmr/index.js';

const COLUMNS: [string, string, number][] = [
  ['energy_snr_db', 'E-SNR dB', 2],
  ['snr_gain_db', 'gain dB', 2],
  ['peak_f1', 'F1', 3],
  ['peak_precision', 'prec', 3],
  ['peak_recall', 'recall', 3],
  ['hallucinated', 'halluc', 1],
  ['position_error_hz', 'pos Hz', 3],
  ['fwhm_rel_error', 'FWHM err', 3],
  ['integral_rel_error', 'int err', 3],
  ['nrmse', 'NRMSE', 3],
];

export function formatReport(r: EvaluationReport): string {
  const lines: string[] = [];
  lines.push(
    `data set ${r.dataset.dir}: ${r.dataset.samples} samples x ${r.dataset.levels} levels x ${r.dataset.points} points, T = ${r.dataset.ratio}; ` +
      `${r.validationSamples} used to tune Savitzky-Golay, TV and Cadzow, ${r.evaluatedSamples} scored`,
  );
  lines.push(
    `pipeline: T estimate ${r.pipeline.t_hat.toFixed(3)} (mean |error| ${r.pipeline.t_abs_error.toFixed(3)}); alignment error (points) per level ${r.pipeline.alignment_error_points.map((v) => v.toFixed(3)).join(' ')}; scale error ${r.pipeline.scale_rel_error.map((v) => (100 * v).toFixed(2) + '%').join(' ')}`,
  );
  lines.push(
    `input peak SNR per level: ${r.inputPeakSnr.map((v) => v.toFixed(1)).join(' ')}; tuned per level: Savitzky-Golay ${r.tuned.savgol.map((g) => `w${g.window}/p${g.order}`).join(' ')}, TV lambda ${r.tuned.tv.map((t) => `${t.factor} sigma`).join(' ')}, Cadzow rank ${r.tuned.cadzow.map((c) => c.rank).join(' ')}`,
  );
  const levels = r.dataset.levels;
  for (let k = 0; k < levels; k++) {
    lines.push(
      '',
      `input level ${k}${k === 0 ? ' (lowest SNR)' : k === levels - 1 ? ' (highest SNR)' : ''}; stack methods (fusion, pseudo_gt) use all levels`,
    );
    lines.push(['method'.padEnd(10), ...COLUMNS.map(([, h]) => h.padStart(9))].join(' '));
    for (const [name, per] of Object.entries(r.perLevel)) {
      const m = per[Math.min(k, per.length - 1)];
      if (!m) continue;
      const cells = COLUMNS.map(([key, , digits]) => {
        const v = (m as unknown as Record<string, number>)[key]!;
        return (Number.isFinite(v) ? v.toFixed(digits) : '-').padStart(9);
      });
      lines.push([name.padEnd(10), ...cells].join(' '));
    }
  }
  lines.push('', `(${r.pipeline.seconds.toFixed(1)} s)`);
  return lines.join('\n');
}
