// The report of an `nmr train` run: its training losses, the validation scores that chose
// best.json, the learning rate, and named errors for a history it cannot read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPage, writeRunReport } from '../../src/report/index.js';

function epoch(n: number, stage: 'A' | 'B', val: { rec: number | null; snr: number | null }) {
  return {
    epoch: n,
    stage,
    lr: 3e-4 / n,
    loss: 0.5 / n,
    rec: 0.3 / n,
    deriv: 0.1,
    curv: 0.05,
    cons: 0.02,
    ratio: stage === 'B' ? 0.4 : 0,
    minLevel: 1,
    val: { rec: val.rec, energySnrDb: val.snr, inputEnergySnrDb: val.snr === null ? null : 10 },
    seconds: 1.5,
  };
}

function writeTrainRun(dir: string, history: unknown, bestEpoch: number): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'history.json'), JSON.stringify(history));
  writeFileSync(join(dir, 'best.json'), JSON.stringify({ format: 'tailor-checkpoint', epoch: bestEpoch }));
}

test('an nmr train run: the losses by stage, the validation that chose best.json, the learning rate', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-nmr-train-report-'));
  try {
    const history = [
      epoch(1, 'A', { rec: 0.2, snr: 14 }),
      epoch(2, 'A', { rec: 0.15, snr: 16.5 }),
      epoch(3, 'B', { rec: 0.16, snr: 16 }),
    ];
    writeTrainRun(dir, history, 1);
    const page = runPage(dir);
    assert.equal(page.kind, 'nmr-train');
    assert.equal(page.subtitle, 'best.json = epoch 2 of 3; stage B from epoch 3');
    assert.deepEqual(Object.keys(page.charts).sort(), ['losses', 'lr', 'validation']);
    const losses = page.charts.losses as { series: { label: string; values: (number | null)[] }[] };
    // the T constraint is drawn only where stage B trains it
    assert.deepEqual(losses.series.find((s) => s.label === 'T constraint')!.values, [null, null, 0.4]);
    const validation = page.charts.validation as { series: { label: string; values: (number | null)[] }[] };
    assert.deepEqual(validation.series.find((s) => s.label === 'best.json')!.values, [null, 16.5, null]);
    const lr = page.charts.lr as { yLabel: string; series: { values: number[] }[] };
    assert.equal(lr.yLabel, 'learning rate (x 1e-4)');
    assert.ok(Math.abs(lr.series[0]!.values[0]! - 3) < 1e-12);
    const html = readFileSync(writeRunReport(dir), 'utf8');
    assert.match(html, /epoch 2, chosen by the highest validation energy SNR/);
    assert.match(html, /16\.50 dB \(input 10\.00 dB\)/);

    // without truth the validation loss chooses; without validation samples the last epoch
    writeTrainRun(
      dir,
      history.map((e) => ({ ...e, val: { ...e.val, energySnrDb: null } })),
      1,
    );
    assert.match(readFileSync(writeRunReport(dir), 'utf8'), /chosen by the lowest validation loss/);
    writeTrainRun(
      dir,
      history.map((e) => ({ ...e, val: { rec: null, energySnrDb: null, inputEnergySnrDb: null } })),
      2,
    );
    const noValidation = runPage(dir);
    assert.deepEqual(Object.keys(noValidation.charts).sort(), ['losses', 'lr']);
    assert.match(
      noValidation.sections.join(''),
      /chosen by the last epoch \(no validation samples to choose with\)/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a history or checkpoint it cannot read is a named error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-nmr-train-report-'));
  try {
    writeTrainRun(dir, [{ ...epoch(1, 'A', { rec: 1, snr: null }), stage: '<b>C</b>' }], 0);
    assert.throws(() => runPage(dir), /history\.json: field '\[0\]\.stage' is '<b>C<\/b>', not A or B/);
    writeTrainRun(dir, { epochs: 3 }, 0);
    assert.throws(() => runPage(dir), /history\.json: .*not an array|history\.json: .*array/);
    writeTrainRun(dir, [epoch(1, 'A', { rec: 1, snr: null })], 4);
    assert.throws(() => runPage(dir), /best\.json: field 'epoch' is 4, above 0/);
    writeFileSync(join(dir, 'history.json'), '[{');
    assert.throws(() => runPage(dir), /history\.json: not valid JSON/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
