// Text (Markdown) tables of the NMR yardstick (src/nmr/eval/yardstick.ts): per reference, the raw
// levels the instrument could record instead, then every method with the level it matches and
// the measurement time that saves.
import type {
  Matched,
  MethodScore,
  ReferenceReport,
  YardstickReport,
  Metrics,
  OperatingPoints,
} from '../nmr/index.js';

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

function atRate(o: OperatingPoints, rate: number): string[] {
  const a = o.atFalseRate.find((x) => x.rate === rate);
  if (!a) return ['-', '-'];
  // A bound means the sweep never reached that false-peak rate: the recall shown is at its end.
  const b = a.bound === '>' ? '>=' : a.bound === '<' ? '<=' : '';
  return [`${b}${f(a.recall, 3)}`, `${b}${f(a.recallWeak, 3)}`];
}

function operatingRow(name: string, o: OperatingPoints): string {
  const t = o.tuned;
  return `| ${name} | ${f(o.auc, 3)} | ${t ? f(t.threshold, 2) : '-'} | ${t ? f(t.f1, 3) : '-'} | ${t ? f(t.recallWeak, 3) : '-'} | ${atRate(o, 1).join(' | ')} | ${atRate(o, 0.2).join(' | ')} |`;
}

/**
 * The operating points of one reference: each candidate's picks swept over thresholds (sigma of
 * x0), pooled over the scored spectra.
 */
export function formatOperating(r: ReferenceReport): string {
  const lines = [
    'operating points (picks swept over thresholds in sigma of x0, pooled over the scored spectra; the threshold of "tuned F1" is chosen on the tuning samples):',
    '',
    '| method | PR AUC | tuned threshold (sigma) | tuned F1 | tuned recall SNR 3-5 | recall at 1 false / spectrum | recall SNR 3-5 at 1 | recall at 0.2 false / spectrum | recall SNR 3-5 at 0.2 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  r.ladderOperating.forEach((o, k) => lines.push(operatingRow(`raw level ${k}`, o)));
  for (const s of r.methods)
    lines.push(operatingRow(s.stack ? `${s.name} (levels 0..K)` : `${s.name} (x0)`, s.operating));
  const calibrated = r.methods.filter((s) => s.coverage90);
  if (calibrated.length)
    lines.push(
      '',
      'uncertainty (scale head): how often the truth lies in the central 90 % interval, +- scale x ln 10 (calibrated: 0.90):',
      '',
      '| method | coverage, all points | coverage, peak mask | mean scale (sigma of x0) | factor for 90 % on the tuning samples | coverage with it | stored factor | coverage with it |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...calibrated.map((s) => {
        const c = s.coverage90!;
        return `| ${s.name} (x0) | ${f(c.all, 3)} | ${f(c.peak, 3)} | ${f(c.meanScaleSigma, 3)} | ${f(c.factor, 3)} | ${f(c.calibrated, 3)} | ${f(c.storedFactor, 3)} | ${f(c.stored, 3)} |`;
      }),
      ...confidenceLines(calibrated),
    );
  return lines.join('\n');
}

/** Each scale method's peak confidence rules, scored on the scored samples' picked peaks. */
function confidenceLines(methods: MethodScore[]): string[] {
  const rows = methods.flatMap((s) =>
    (s.coverage90!.confidence?.scores ?? []).map((c) => {
      const inUse = c.definition === s.coverage90!.confidence!.rule.definition ? ' (in use)' : '';
      return `| ${s.name} (x0) | ${c.definition}${inUse} | ${f(c.cut, 3)} | ${c.peaks} | ${c.falsePeaks} | ${f(c.rocAuc, 3)} | ${f(c.prAuc, 3)} | ${f(c.falseFlagged, 3)} | ${f(c.realFlagged, 3)} |`;
    }),
  );
  if (!rows.length) return [];
  return [
    '',
    "peak confidence (the model's peaks above 3 sigma of x0, matched to the true peaks; 'interval': height / (factor x scale x ln 10), 'snr': height / (3 sigma of x0); in use: the stored rule, else the one chosen on the tuning samples):",
    '',
    '| method | definition | cut | peaks | false | ROC AUC | PR AUC (true peaks) | false flagged low | true flagged low |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ];
}

export function formatYardstick(r: YardstickReport, title = ''): string {
  const t = r.tuned;
  const head = [
    `${title ? `${title}: ` : ''}${r.samples} scored samples (${r.validationSamples} more tuned the baselines), K+1 = ${r.levels}, T = ${f(r.ratio, 3)}; ` +
      `tuned: Savitzky-Golay w${t.savgol.window}/p${t.savgol.order}, TV lambda ${t.tv.factor} sigma, Cadzow rank ${t.cadzow.rank} (window ${t.cadzow.window})`,
    'time used / time saved: measurement time relative to level 0; level k costs T^(2k). matched k: the raw level with the same score (energy SNR extrapolated at 20 log10 T dB per level; F1 bounded by the ladder).',
  ];
  const refs = r.references.map((ref) => `\n${formatReference(ref, r.ratio)}\n\n${formatOperating(ref)}`);
  return [...head, ...refs].join('\n') + '\n';
}
