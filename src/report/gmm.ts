// Reports of Gaussian mixtures: the data (first two coordinates, or the first two principal
// components) coloured by component with each component's 2-sigma ellipse, the EM trace, and
// the BIC-by-K curves of `tailor gmm select --json`.
import { existsSync } from 'node:fs';
import { isAbsolute, join, basename } from 'node:path';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import {
  readMatrixCsv,
  type CsvMatrix,
  gaussianModelFromJson,
  type GaussianModelJson,
} from '../mixture/index.js';
import { chartDiv, escapeHtml, note, num, section, table, type Cell } from './html.js';
import { parseResultsJson } from './read.js';
import { InputError } from '../util/errors.js';
import type { ChartSpec, Ellipse, ReportPage } from './types.js';
import {
  type GmmSelectionJson,
  isGmmModel,
  isGmmSelection,
  validateGmmModel,
  validateGmmSelection,
} from './gmm-inputs.js';

export {
  type GmmSelectionJson,
  isGmmModel,
  isGmmSelection,
  validateGmmModel,
  validateGmmSelection,
} from './gmm-inputs.js';

/** Covariance matrix of component k in the model's covariance shape. */
export function componentCovariance(
  m: Pick<GaussianModelJson, 'covarianceType' | 'covariances' | 'nFeatures'>,
  k: number,
): number[][] {
  const d = m.nFeatures;
  const c = m.covariances as unknown[];
  const diag = (v: number[]) =>
    Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? v[i]! : 0)));
  switch (m.covarianceType) {
    case 'full':
      return c[k] as number[][];
    case 'tied':
      return c as number[][];
    case 'diag':
      return diag(c[k] as number[]);
    case 'spherical':
      return diag(new Array<number>(d).fill(c[k] as number));
  }
}

/** Two orthonormal directions to draw: the first two axes (d <= 2) or principal components. */
export function projectionBasis(
  x: CsvMatrix | null,
  d: number,
): { basis: number[][]; labels: [string, string]; pca: boolean } {
  const names = x?.columns ?? Array.from({ length: d }, (_, j) => `x${j + 1}`);
  if (d <= 2 || !x || x.rows < 3) {
    const e = (i: number) => Array.from({ length: d }, (_, j) => (j === i ? 1 : 0));
    return {
      basis: [e(0), d > 1 ? e(1) : e(0)],
      labels: [names[0]!, d > 1 ? names[1]! : names[0]!],
      pca: false,
    };
  }
  const mean = new Array<number>(d).fill(0);
  for (let i = 0; i < x.rows; i++) for (let j = 0; j < d; j++) mean[j]! += x.data[i * d + j]! / x.rows;
  const cov = Matrix.zeros(d, d);
  for (let i = 0; i < x.rows; i++)
    for (let a = 0; a < d; a++)
      for (let b = 0; b < d; b++)
        cov.set(
          a,
          b,
          cov.get(a, b) + ((x.data[i * d + a]! - mean[a]!) * (x.data[i * d + b]! - mean[b]!)) / (x.rows - 1),
        );
  const evd = new EigenvalueDecomposition(cov, { assumeSymmetric: true });
  const order = evd.realEigenvalues.map((v, i) => [v, i] as const).sort((p, q) => q[0] - p[0]);
  const vec = (i: number) => evd.eigenvectorMatrix.getColumn(order[i]![1]);
  const total = evd.realEigenvalues.reduce((s, v) => s + Math.max(0, v), 0);
  const share = (i: number) =>
    total > 0 ? ` (${((100 * order[i]![0]) / total).toFixed(1)} % of variance)` : '';
  return { basis: [vec(0), vec(1)], labels: [`PC1${share(0)}`, `PC2${share(1)}`], pca: true };
}

function dot(a: number[], b: ArrayLike<number>, offset = 0): number {
  let s = 0;
  for (let j = 0; j < a.length; j++) s += a[j]! * b[offset + j]!;
  return s;
}

/** The 2-sigma ellipse of N(mean, cov) projected on the basis. */
export function projectedEllipse(mean: number[], cov: number[][], basis: number[][]): Ellipse {
  const [u, v] = basis as [number[], number[]];
  const cu = cov.map((row) => dot(u, row));
  const cv = cov.map((row) => dot(v, row));
  const a = dot(u, cu);
  const b = dot(u, cv);
  const c = dot(v, cv);
  // Eigen-decomposition of the symmetric 2x2 [[a, b], [b, c]].
  const tr = (a + c) / 2;
  const disc = Math.sqrt(((a - c) / 2) ** 2 + b * b);
  const l1 = tr + disc;
  const l2 = Math.max(0, tr - disc);
  const angle = 0.5 * Math.atan2(2 * b, a - c);
  return {
    cx: dot(u, mean),
    cy: dot(v, mean),
    rx: 2 * Math.sqrt(Math.max(0, l1)),
    ry: 2 * Math.sqrt(l2),
    angle,
  };
}

/** The training data named by the model (options.data), looked up beside the run as well. */
function findData(runDir: string, model: GaussianModelJson): CsvMatrix | null {
  const named = typeof model.options?.data === 'string' ? (model.options.data as string) : undefined;
  const candidates = [
    ...(named ? [isAbsolute(named) ? named : join(runDir, named), join(runDir, basename(named)), named] : []),
    join(runDir, 'data.csv'),
  ];
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    try {
      const all = readMatrixCsv(file);
      const cols =
        model.columns && model.columns.every((c) => all.columns.includes(c)) ? model.columns : undefined;
      const x = cols ? readMatrixCsv(file, cols) : all;
      if (x.cols === model.nFeatures) return x;
    } catch {
      // Not the right file; try the next candidate.
    }
  }
  return null;
}

const MAX_POINTS = 5000;

export function gmmModelSections(
  model: GaussianModelJson,
  x: CsvMatrix | null,
  charts: Record<string, ChartSpec>,
): string[] {
  const out: string[] = [];
  const d = model.nFeatures;
  const K = model.nComponents;
  const { basis, labels, pca } = projectionBasis(x, d);
  const ellipses = model.means.map((mu, k) => ({
    ...projectedEllipse(mu, componentCovariance(model, k), basis),
    label: `component ${k + 1}`,
  }));
  const series: { label: string; x: number[]; y: number[] }[] = Array.from({ length: K }, (_, k) => ({
    label: `component ${k + 1} (weight ${model.weights[k]!.toFixed(3)})`,
    x: [],
    y: [],
  }));
  let caption = 'Component means (squares) and 2-sigma ellipses';
  if (x) {
    const { model: gm } = gaussianModelFromJson(model, 'results.json');
    const labelsOf = gm.predict(x);
    const step = Math.max(1, Math.ceil(x.rows / MAX_POINTS));
    for (let i = 0; i < x.rows; i += step) {
      const s = series[labelsOf[i]!]!;
      s.x.push(dot(basis[0]!, x.data, i * d));
      s.y.push(dot(basis[1]!, x.data, i * d));
    }
    caption = `Data (${x.file}${step > 1 ? `, every ${step}th of ${x.rows} points` : ''}) coloured by the most probable component, ${pca ? 'on the first two principal components' : 'first two coordinates'}, with component means and 2-sigma ellipses. Drag to zoom.`;
  } else {
    // Without the data, the means alone place the components.
    series.forEach((s, k) => {
      s.x.push(ellipses[k]!.cx);
      s.y.push(ellipses[k]!.cy);
    });
  }
  charts.scatter = {
    type: 'scatter',
    xLabel: labels[0],
    yLabel: labels[1],
    series,
    ellipses,
    pointSize: x ? 5 : 9,
  };
  out.push(
    section(
      'Data and components',
      chartDiv('scatter', caption) +
        (x
          ? ''
          : note(
              `The training data (${String(model.options?.data ?? 'not recorded')}) was not found; put it beside results.json as data.csv to draw it.`,
            )),
      'scatter',
    ),
  );
  const rows: Cell[][] = model.means.map((mu, k) => [
    k + 1,
    num(model.weights[k], 4),
    mu.map((v) => num(v, 3)).join(', '),
  ]);
  out.push(
    section(
      'Fit',
      table(
        ['', ''],
        [
          ['covariance', model.covarianceType],
          ['K, d, n', `${K}, ${d}, ${model.nSamples}`],
          ['mean log-likelihood', num(model.score, 5)],
          model.bayesian
            ? [
                'prior',
                `${model.bayesian.weightConcentrationPriorType.replace('_', ' ')} on the weights; ` +
                  `no BIC / AIC (variational fit), lower bound ${num(model.lowerBound, 3)}`,
              ]
            : ['BIC / AIC', `${num(model.bic, 3)} / ${num(model.aic, 3)}`],
          [
            model.bayesian ? 'variational iterations' : 'EM iterations',
            `${model.nIter} (${model.converged ? 'converged' : 'not converged'})`,
          ],
        ],
      ) + table(['component', 'weight', 'mean'], rows, 'id="components"'),
      'fit',
    ),
  );
  if (model.trace && model.trace.length > 1) {
    charts.trace = {
      type: 'lines',
      x: model.trace.map((_, i) => i + 1),
      xLabel: model.bayesian ? 'iteration' : 'EM iteration',
      integerX: true,
      yLabel: model.bayesian ? 'evidence lower bound' : 'mean log-likelihood (lower bound)',
      series: [{ label: 'lower bound', values: model.trace }],
      height: 220,
    };
    out.push(
      section(
        model.bayesian ? 'Variational trace' : 'EM trace',
        chartDiv('trace', `Lower bound per ${model.bayesian ? 'iteration' : 'EM iteration'} (best start).`),
        'trace',
      ),
    );
  }
  return out;
}

export function bicSection(sel: GmmSelectionJson, charts: Record<string, ChartSpec>): string {
  const ks = [...new Set(sel.rows.map((r) => r.k))].sort((a, b) => a - b);
  const types = [...new Set(sel.rows.map((r) => r.covarianceType))];
  charts.bic = {
    type: 'lines',
    x: ks,
    xLabel: 'K (components)',
    integerX: true,
    yLabel: 'BIC (lower is better)',
    zoom: false,
    series: types.map((t) => ({
      label: t,
      points: true,
      values: ks.map((k) => {
        const r = sel.rows.find((row) => row.k === k && row.covarianceType === t);
        return r && Number.isFinite(r.bic) && !r.error ? r.bic : null;
      }),
    })),
  };
  const rows: Cell[][] = sel.rows.map((r) => [
    String(r.k) +
      (sel.best && sel.best.k === r.k && sel.best.covarianceType === r.covarianceType ? ' *' : ''),
    r.covarianceType,
    num(r.bic, 3),
    num(r.aic, 3),
    num(r.logLik, 3),
    r.nParameters,
    r.error ? r.error : r.converged ? 'yes' : 'no',
  ]);
  return section(
    'BIC by K',
    chartDiv('bic', `BIC of each K and covariance type (n = ${sel.n}, d = ${sel.d}).`) +
      table(
        ['K', 'covariance', 'BIC', 'AIC', 'log-likelihood', 'parameters', 'converged'],
        rows,
        'id="bic"',
      ) +
      (sel.best
        ? `<p>Smallest BIC: K = ${escapeHtml(sel.best.k)}, ${escapeHtml(sel.best.covarianceType)}.</p>`
        : ''),
    'bic',
  );
}

/** The selection table beside a model, if `gmm select --json` output was saved there. */
function findSelection(runDir: string): GmmSelectionJson | null {
  for (const name of ['select.json', 'bic.json', 'selection.json']) {
    const p = join(runDir, name);
    if (existsSync(p)) {
      const v = parseResultsJson(p);
      if (isGmmSelection(v)) return validateGmmSelection(v, p);
    }
  }
  return null;
}

export function gmmPage(runDir: string, results: unknown): ReportPage {
  const charts: Record<string, ChartSpec> = {};
  const source = join(runDir, 'results.json');
  if (isGmmModel(results)) {
    const model = validateGmmModel(results, source);
    const sections = gmmModelSections(model, findData(runDir, model), charts);
    const sel = findSelection(runDir);
    if (sel) sections.push(bicSection(sel, charts));
    return {
      title: `${model.bayesian ? 'Variational Gaussian mixture' : 'Gaussian mixture'}: K = ${model.nComponents}, ${model.covarianceType} covariance`,
      subtitle:
        `${model.nSamples} samples, ${model.nFeatures} features; ` +
        (model.bic === null ? `lower bound ${num(model.lowerBound, 2)}` : `BIC ${num(model.bic, 2)}`),
      kind: 'gmm',
      sections,
      charts,
    };
  }
  if (isGmmSelection(results)) {
    const sel = validateGmmSelection(results, source);
    return {
      title: 'Gaussian mixture model selection',
      subtitle: `n = ${sel.n}, d = ${sel.d}`,
      kind: 'gmm-select',
      sections: [bicSection(sel, charts)],
      charts,
    };
  }
  throw new InputError(
    `${join(runDir, 'results.json')}: not a 'tailor gmm fit' model or 'tailor gmm select --json' table`,
  );
}
