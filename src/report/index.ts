// Static HTML reports of run directories: detects what a run's results.json holds and renders
// the matching report (long-tail training, Gaussian mixture, subgroup model, NMR evaluation, NMR
// yardstick; NMR training runs and ablations by their own files).
import { join } from 'node:path';
import { writeFileAtomic } from '../util/fs.js';
import { renderPage } from './html.js';
import { longtailPage, loadLongtailRun, type LongtailPageOptions } from './longtail.js';
import { gmmPage, isGmmModel, isGmmSelection } from './gmm.js';
import { isSubgroupFit, isSubgroupSelection, subgroupPage } from './subgroup.js';
import { isNmrReport, nmrPage } from './nmr.js';
import { isYardstickReport, yardstickPage } from './nmr-yardstick-page.js';
import { isNmrTrainRun, nmrTrainPage } from './nmr-train.js';
import { isNmrAblationDir, nmrAblationPage } from './nmr-ablation.js';
import type { ReportPage, RunKind } from './types.js';
import { parseResultsJson } from './read.js';
import { InputError } from '../util/errors.js';

export { renderLongtailReport, writeLongtailReport } from './longtail.js';
export type { ControllabilityGrid, PreferenceAnswer, ReportPage, RunKind } from './types.js';

export function detectRunKind(results: unknown): RunKind | null {
  if (typeof results !== 'object' || results === null) return null;
  if ((results as { kind?: unknown }).kind === 'longtail') return 'longtail';
  if (isGmmModel(results)) return 'gmm';
  if (isGmmSelection(results)) return 'gmm-select';
  if (isSubgroupFit(results)) return 'subgroup';
  if (isSubgroupSelection(results)) return 'subgroup-select';
  if (isNmrReport(results)) return 'nmr';
  if (isYardstickReport(results)) return 'nmr-yardstick';
  return null;
}

export function readResults(runDir: string): unknown {
  return parseResultsJson(join(runDir, 'results.json'));
}

/** The report page of any run directory (errors name results.json and what it should be). */
export function runPage(runDir: string, options: LongtailPageOptions = {}): ReportPage {
  // An `nmr train` run writes checkpoints and history.json, no results: its training curves.
  if (isNmrTrainRun(runDir)) return nmrTrainPage(runDir);
  // `nmr ablate` writes ablation.json into OUT/ablation: the variants compared over seeds.
  if (isNmrAblationDir(runDir)) return nmrAblationPage(runDir);
  const results = readResults(runDir);
  const kind = detectRunKind(results);
  switch (kind) {
    case 'longtail': {
      const { results: r, history } = loadLongtailRun(runDir);
      return longtailPage(r, history, options);
    }
    case 'gmm':
    case 'gmm-select':
      return gmmPage(runDir, results);
    case 'subgroup':
    case 'subgroup-select':
      return subgroupPage(runDir, results);
    case 'nmr':
      return nmrPage(runDir, results);
    case 'nmr-yardstick':
      return yardstickPage(runDir, results);
    default:
      throw new InputError(
        `${join(runDir, 'results.json')}: unknown kind of results (expected a long-tail run with "kind": "longtail", ` +
          `'tailor gmm fit' / 'gmm select --json' output, 'tailor subgroup fit/select' output 'tailor nmr evaluate --json' or 'tailor nmr yardstick --json' output)`,
      );
  }
}

export function renderRunReport(runDir: string, live?: { endpoint: string }): string {
  const page = runPage(runDir, { liveControl: live !== undefined });
  return renderPage(live ? { ...page, live } : page);
}

/** Writes DIR/report.html for any kind of run; returns its path. */
export function writeRunReport(runDir: string): string {
  const out = join(runDir, 'report.html');
  writeFileAtomic(out, renderRunReport(runDir));
  return out;
}
export { predictionsPage, readPredictionSummary, predictionSummaryPath } from './predictions.js';
export { benchmarkHtml, benchmarkMarkdown, writeBenchmarkReport } from './benchmark.js';
