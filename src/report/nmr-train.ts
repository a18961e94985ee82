// Reports of `nmr train` runs (a directory holding history.json and the best.json checkpoint, no
// results.json): the training losses of every epoch by stage, the validation scores that chose
// best.json, the learning rate, and which epoch best.json holds and why.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chartDiv, note, num, section, table, type Cell } from './html.js';
import { Fields } from './validate.js';
import { parseResultsJson } from './read.js';
import type { ChartSpec, LineSeries, ReportPage } from './types.js';

/** One epoch of history.json, as the report reads it (NaN was written as null). */
interface Epoch {
  epoch: number;
  stage: 'A' | 'B';
  lr: number;
  loss: number | null;
  rec: number | null;
  deriv: number | null;
  curv: number | null;
  cons: number | null;
  ratio: number | null;
  minLevel: number;
  val: { rec: number | null; energySnrDb: number | null; inputEnergySnrDb: number | null };
  seconds: number;
}

/** Whether `runDir` is an `nmr train` run: history.json and best.json, no results.json. */
export function isNmrTrainRun(runDir: string): boolean {
  return (
    !existsSync(join(runDir, 'results.json')) &&
    existsSync(join(runDir, 'history.json')) &&
    existsSync(join(runDir, 'best.json'))
  );
}

const EXPECTED = "the history.json that 'tailor nmr train' writes";

function readHistory(path: string): Epoch[] {
  const f = new Fields(path, EXPECTED);
  const any = { nonFinite: true };
  const records = f.array(parseResultsJson(path), '', 100_000);
  if (records.length === 0)
    f.fail(
      '',
      'holds no epoch yet (the run stopped before its first epoch ended; resume it with nmr train -r)',
    );
  return records.map((raw, i): Epoch => {
    const at = (k: string) => `[${i}].${k}`;
    const r = f.object(raw, `[${i}]`);
    const stage = f.string(r.stage, at('stage'));
    if (stage !== 'A' && stage !== 'B') f.fail(at('stage'), `is '${stage.slice(0, 20)}', not A or B`);
    const val = f.object(r.val, at('val'));
    return {
      epoch: f.number(r.epoch, at('epoch'), { integer: true, min: 1 }),
      stage: stage as 'A' | 'B',
      lr: f.number(r.lr, at('lr'), { min: 0 }),
      loss: f.numberOrNull(r.loss ?? null, at('loss'), any),
      rec: f.numberOrNull(r.rec ?? null, at('rec'), any),
      deriv: f.numberOrNull(r.deriv ?? null, at('deriv'), any),
      curv: f.numberOrNull(r.curv ?? null, at('curv'), any),
      cons: f.numberOrNull(r.cons ?? null, at('cons'), any),
      ratio: f.numberOrNull(r.ratio ?? null, at('ratio'), any),
      minLevel: f.number(r.minLevel ?? 1, at('minLevel'), { integer: true, min: 0 }),
      val: {
        rec: f.numberOrNull(val.rec ?? null, at('val.rec'), any),
        energySnrDb: f.numberOrNull(val.energySnrDb ?? null, at('val.energySnrDb'), any),
        inputEnergySnrDb: f.numberOrNull(val.inputEnergySnrDb ?? null, at('val.inputEnergySnrDb'), any),
      },
      seconds: f.number(r.seconds ?? 0, at('seconds'), { min: 0 }),
    };
  });
}

/** The 1-based epoch best.json holds (its checkpoint sidecar stores it 0-based). */
function bestEpoch(path: string, epochs: number): number {
  const f = new Fields(path, "the best.json checkpoint that 'tailor nmr train' writes");
  const sidecar = f.object(parseResultsJson(path), '');
  return f.number(sidecar.epoch, 'epoch', { integer: true, min: 0, max: Math.max(0, epochs - 1) }) + 1;
}

const finite = (v: number | null): v is number => v !== null && Number.isFinite(v);

/** The report page of an `nmr train` run directory. */
export function nmrTrainPage(runDir: string): ReportPage {
  const history = readHistory(join(runDir, 'history.json'));
  const n = history.length;
  const best = bestEpoch(join(runDir, 'best.json'), n);
  const byStage = (s: 'A' | 'B') => history.filter((e) => e.stage === s).length;
  const withTruth = history.some((e) => finite(e.val.energySnrDb));
  const withValidation = history.some((e) => finite(e.val.rec));
  const criterion = withTruth
    ? 'the highest validation energy SNR (the simulator gives a truth)'
    : withValidation
      ? 'the lowest validation loss (no ground truth: peak-weighted L1 against the fused pseudo ground truth)'
      : 'the last epoch (no validation samples to choose with)';
  const x = history.map((e) => e.epoch);
  const stageB = history.find((e) => e.stage === 'B')?.epoch;
  const stageNote = stageB === undefined ? 'stage A only' : `stage B from epoch ${stageB}`;
  const charts: Record<string, ChartSpec> = {};
  const last = history[n - 1];
  const atBest = history.find((e) => e.epoch === best);
  const seconds = history.reduce((s, e) => s + e.seconds, 0);
  const rows: Cell[][] = [
    ['epochs', `${n} (stage A ${byStage('A')}, stage B ${byStage('B')})`],
    ['best.json', `epoch ${best}, chosen by ${criterion}`],
    ['training time', `${num(seconds, 1)} s`],
  ];
  if (last) rows.push(['last training loss', num(last.loss, 4)]);
  if (atBest && withValidation) rows.push(['validation loss at best.json', num(atBest.val.rec, 4)]);
  if (atBest && withTruth)
    rows.push([
      'validation energy SNR at best.json',
      `${num(atBest.val.energySnrDb, 2)} dB (input ${num(atBest.val.inputEnergySnrDb, 2)} dB)`,
    ]);
  const sections = [section('Training', table(['', ''], rows), 'summary')];

  const series = (label: string, pick: (e: Epoch) => number | null, extra: Partial<LineSeries> = {}) => ({
    label,
    values: history.map((e) => {
      const v = pick(e);
      return finite(v) ? v : null;
    }),
    ...extra,
  });
  charts.losses = {
    type: 'lines',
    x,
    xLabel: 'epoch',
    integerX: true,
    yLabel: 'training loss (epoch mean)',
    series: [
      series('total', (e) => e.loss),
      series('reconstruction', (e) => e.rec),
      series('derivative', (e) => e.deriv),
      series('curvature', (e) => e.curv),
      series('consistency', (e) => e.cons),
      // stage A has no T constraint (0): drawn only where it is trained
      series('T constraint', (e) => (e.stage === 'B' ? e.ratio : null), { dash: true }),
    ],
  };
  sections.push(
    section(
      'Training losses',
      chartDiv(
        'losses',
        `The training loss and its terms per epoch (${stageNote}; stage B weighs the terms differently and adds the T constraint and noisier levels, so its totals are not comparable with stage A's).`,
      ),
      'losses',
    ),
  );
  if (withValidation) {
    const marker = (pick: (e: Epoch) => number | null) =>
      series('best.json', (e) => (e.epoch === best ? pick(e) : null), { points: true, color: '#000' });
    charts.validation = {
      type: 'lines',
      x,
      xLabel: 'epoch',
      integerX: true,
      yLabel: 'validation loss',
      ...(withTruth ? { y2Label: 'energy SNR (dB)' } : {}),
      series: [
        series('validation loss', (e) => e.val.rec),
        ...(withTruth
          ? [
              series('denoised SNR', (e) => e.val.energySnrDb, { axis: 'y2' as const }),
              series('input SNR', (e) => e.val.inputEnergySnrDb, { axis: 'y2' as const, dash: true }),
              { ...marker((e) => e.val.energySnrDb), axis: 'y2' as const },
            ]
          : [marker((e) => e.val.rec)]),
      ],
    };
    sections.push(
      section(
        'Validation',
        chartDiv(
          'validation',
          `Validation scores per epoch; the marked point is the epoch best.json holds (${criterion}).`,
        ),
        'validation',
      ),
    );
  } else
    sections.push(
      section(
        'Validation',
        note(
          'The run had no validation samples (one training sample, or data.valFraction 0): best.json follows the schedule to its last epoch. Score the model with tailor nmr yardstick or nmr evaluate.',
        ),
        'validation',
      ),
    );
  // in units of a power of ten, so that the axis shows digits rather than 0.0003 rounded to 0
  const maxLr = Math.max(...history.map((e) => e.lr));
  const exponent = maxLr > 0 ? Math.floor(Math.log10(maxLr)) : 0;
  charts.lr = {
    type: 'lines',
    x,
    xLabel: 'epoch',
    integerX: true,
    yLabel: exponent === 0 ? 'learning rate' : `learning rate (x 1e${exponent})`,
    series: [series('learning rate', (e) => e.lr / 10 ** exponent)],
    height: 200,
  };
  sections.push(section('Learning rate', chartDiv('lr', 'The learning rate of each epoch.'), 'lr'));
  return {
    title: `NMR denoiser training: ${n} epochs`,
    subtitle: `best.json = epoch ${best} of ${n}; ${stageNote}`,
    kind: 'nmr-train',
    sections,
    charts,
  };
}
