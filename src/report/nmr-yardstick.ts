// Text (Markdown) tables of the NMR yardstick (src/nmr/eval/yardstick.ts): per reference, the raw
// levels the instrument could record instead, then every method with the level it matches and
// the measurement time that saves.
import type { Matched, ReferenceReport, YardstickReport, Metrics } from '../nmr/index.js';

const f = (v: number, digits: number): string => (Number.isFinite(v) ? v.toFixed(digits) : '-');

function matched(m: Matched): string {
  if (!Number.isFinite(m.k)) return '-';
  return `${m.bound}${m.k.toFixed(2)}`;
}

function saving(m: Matched, units: number): string {
  if (!Number.isFinite(m.timeFactor)) return '-';
  const v = m.timeFactor / units;
  return `${m.bound === '>' ? '>' : m.bound === '<' ? '<' : ''}${v >= 10 ? v.toFixed(0) : v.toFixed(2)}x`;
}

function common(m: Metrics): string[] {
  return [
    f(m.peak_recall, 3),
    f(m.recall_by_snr[0] ?? NaN, 3),
    f(m.hallucinated, 1),
    f(m.integral_rel_error, 3),
    f(m.fwhm_rel_error, 3),
  ];
}

export function formatReference(r: ReferenceReport, T: number): string {
  const lines = [
    `against ${r.reference === 'truth' ? 'the true spectrum' : 'a held-out high-SNR measurement (level K, never an input; energy SNR corrected for its noise)'}:`,
    '',
    '| method | time used | energy SNR dB | matched k | time saved | peak F1 | matched k | time saved | recall | recall SNR 3-5 | hallucinated / spectrum | integral err | FWHM err |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  r.ladder.forEach((m, k) => {
    const time = Math.pow(T, 2 * k);
    lines.push(
      `| raw level ${k} | ${f(time, time >= 10 ? 0 : 2)}x | ${f(m.energy_snr_db, 2)} | ${k} | | ${f(m.peak_f1, 3)} | ${k} | | ${common(m).join(' | ')} |`,
    );
  });
  for (const s of r.methods) {
    const name = s.stack ? `${s.name} (levels 0..K)` : `${s.name} (x0)`;
    lines.push(
      `| ${name} | ${f(s.timeUnits, s.timeUnits >= 10 ? 0 : 2)}x | ${f(s.metrics.energy_snr_db, 2)} | ${matched(s.matchedEnergy)} | ${saving(s.matchedEnergy, s.timeUnits)} | ` +
        `${f(s.metrics.peak_f1, 3)} | ${matched(s.matchedF1)} | ${saving(s.matchedF1, s.timeUnits)} | ${common(s.metrics).join(' | ')} |`,
    );
  }
  return lines.join('\n');
}

export function formatYardstick(r: YardstickReport, title = ''): string {
  const t = r.tuned;
  const head = [
    `${title ? `${title}: ` : ''}${r.samples} scored samples (${r.validationSamples} more tuned the baselines), K+1 = ${r.levels}, T = ${f(r.ratio, 3)}; ` +
      `tuned: Savitzky-Golay w${t.savgol.window}/p${t.savgol.order}, TV lambda ${t.tv.factor} sigma, Cadzow rank ${t.cadzow.rank} (window ${t.cadzow.window})`,
    'time used / time saved: measurement time relative to level 0; level k costs T^(2k). matched k: the raw level with the same score (energy SNR extrapolated at 20 log10 T dB per level; F1 bounded by the ladder).',
  ];
  return [...head, ...r.references.map((ref) => '\n' + formatReference(ref, r.ratio))].join('\n') + '\n';
}
