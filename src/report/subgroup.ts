// Reports of the latent-subgroup mixed model (`tailor subgroup fit --out results.json
// --posterior posterior.csv`, or `subgroup select --out results.json`): class mean trajectories
// (observed and model-implied), the subjects' posterior class probabilities, BIC by K.
import { existsSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { readSubgroupCsv, type SubgroupData } from '../mixture/index.js';
import { chartDiv, escapeHtml, note, num, section, table, type Cell } from './html.js';
import { readResultsText } from './read.js';
import { InputError } from '../util/errors.js';
import type { ChartSpec, LineSeries, ReportPage } from './types.js';
import {
  isSubgroupFit,
  isSubgroupSelection,
  parsePosteriorCsv,
  type SubgroupFitJson,
  validateSubgroupFit,
  validateSubgroupSelection,
} from './subgroup-inputs.js';

export {
  isSubgroupFit,
  isSubgroupSelection,
  parsePosteriorCsv,
  SUBGROUP_MODEL,
  type SubgroupFitJson,
  type SubgroupSelectionJson,
  validateSubgroupFit,
  validateSubgroupSelection,
} from './subgroup-inputs.js';

function findData(runDir: string, fit: SubgroupFitJson): SubgroupData | null {
  const candidates = [
    ...(fit.data
      ? [isAbsolute(fit.data) ? fit.data : join(runDir, fit.data), join(runDir, basename(fit.data)), fit.data]
      : []),
    join(runDir, 'data.csv'),
  ];
  for (const file of candidates) {
    if (!existsSync(file)) continue;
    try {
      return readSubgroupCsv(file, {
        id: 'id',
        time: 'time',
        y: 'y',
        fixed: fit.fixed,
        membership: fit.membership.filter((m) => m !== '(intercept)'),
      });
    } catch {
      // Other column names or another file: try the next candidate.
    }
  }
  return null;
}

/** Time points to average over: the distinct times, or 20 quantile bins when there are many. */
function timeBins(times: Float64Array): { centers: number[]; binOf: (t: number) => number } {
  const distinct = [...new Set(times)].sort((a, b) => a - b);
  if (distinct.length <= 30) {
    const index = new Map(distinct.map((t, i) => [t, i]));
    return { centers: distinct, binOf: (t) => index.get(t)! };
  }
  const sorted = Float64Array.from(times).sort();
  const edges = Array.from(
    { length: 21 },
    (_, b) => sorted[Math.min(sorted.length - 1, Math.floor((b / 20) * sorted.length))]!,
  );
  const centers = Array.from({ length: 20 }, (_, b) => (edges[b]! + edges[b + 1]!) / 2);
  const binOf = (t: number): number => {
    let b = 0;
    while (b < 19 && t >= edges[b + 1]!) b++;
    return b;
  };
  return { centers, binOf };
}

function trajectorySection(
  fit: SubgroupFitJson,
  data: SubgroupData,
  classOf: Map<string, number>,
  charts: Record<string, ChartSpec>,
): string {
  const K = fit.K;
  const { centers, binOf } = timeBins(data.time);
  const sumY = Array.from({ length: K }, () => new Array<number>(centers.length).fill(0));
  const sumModel = Array.from({ length: K }, () => new Array<number>(centers.length).fill(0));
  const count = Array.from({ length: K }, () => new Array<number>(centers.length).fill(0));
  for (let i = 0; i < data.nSubjects; i++) {
    const k = classOf.get(data.ids[i]!);
    if (k === undefined || k < 0 || k >= K) continue;
    for (let o = data.offsets[i]!; o < data.offsets[i + 1]!; o++) {
      const b = binOf(data.time[o]!);
      let wa = 0;
      for (let j = 0; j < data.p; j++) wa += data.W[o * data.p + j]! * (fit.alpha[j] ?? 0);
      sumY[k]![b]! += data.y[o]!;
      sumModel[k]![b]! += fit.mu[k]! + wa;
      count[k]![b]!++;
    }
  }
  const series: LineSeries[] = [];
  const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
  for (let k = 0; k < K; k++) {
    const mean = (s: number[]) => s.map((v, b) => (count[k]![b]! > 0 ? v / count[k]![b]! : null));
    const color = palette[k % palette.length]!;
    series.push({ label: `class ${k + 1} observed`, values: mean(sumY[k]!), color, points: true });
    series.push({
      label: `class ${k + 1} model`,
      values: mean(sumModel[k]!),
      color,
      dash: true,
      points: false,
    });
  }
  charts.trajectories = { type: 'lines', x: centers, xLabel: 'time', yLabel: 'y', series };
  return section(
    'Class trajectories',
    chartDiv(
      'trajectories',
      'Mean outcome over time of the subjects assigned to each class (most probable class): observed (solid) and model-implied mu_k + W alpha (dashed).',
    ),
    'trajectories',
  );
}

function posteriorSection(
  post: { cls: number[]; probs: number[][] },
  K: number,
  charts: Record<string, ChartSpec>,
): string {
  const order = post.cls
    .map((c, i) => i)
    .sort(
      (a, b) => post.cls[a]! - post.cls[b]! || post.probs[b]![post.cls[b]!]! - post.probs[a]![post.cls[a]!]!,
    );
  const series = Array.from({ length: K }, (_, k) => ({
    label: `P(class ${k + 1})`,
    x: [] as number[],
    y: [] as number[],
  }));
  order.forEach((i, rank) => {
    for (let k = 0; k < K; k++) {
      series[k]!.x.push(rank + 1);
      series[k]!.y.push(post.probs[i]![k]!);
    }
  });
  charts.posterior = {
    type: 'scatter',
    xLabel: 'subject (sorted by assigned class, then certainty)',
    yLabel: 'posterior probability',
    series,
    yRange: [0, 1],
    pointSize: 4,
  };
  const certain = post.probs.filter((p) => Math.max(...p) >= 0.9).length;
  return section(
    'Posterior class probabilities',
    chartDiv(
      'posterior',
      `Each subject's posterior probability of every class; ${certain} of ${post.probs.length} subjects are assigned with probability >= 0.9.`,
    ),
    'posterior',
  );
}

function parameterSection(fit: SubgroupFitJson): string {
  const rows: Cell[][] = fit.mu.map((m, k) => [
    k + 1,
    num(m, 4),
    num(fit.classSizes[k], 0),
    num(fit.meanPosterior[k], 4),
    (fit.gamma[k] ?? []).map((g) => num(g, 3)).join(', '),
  ]);
  return section(
    'Fit',
    table(
      ['', ''],
      [
        ['K, subjects, visits', `${fit.K}, ${fit.nSubjects}, ${fit.nObservations}`],
        ['log-likelihood, BIC, AIC', `${num(fit.logLik, 4)}, ${num(fit.bic, 3)}, ${num(fit.aic, 3)}`],
        ['sigmaB2, sigmaEps2, phi', `${num(fit.sigmaB2, 4)}, ${num(fit.sigmaEps2, 4)}, ${num(fit.phi, 4)}`],
        ['fixed effects', fit.fixed.map((n, j) => `${n} = ${num(fit.alpha[j], 4)}`).join(', ') || '(none)'],
        ['EM', `${fit.nIter} iterations, ${fit.converged ? 'converged' : 'not converged'}`],
      ],
    ) +
      table(
        ['class', 'mu', 'size', 'mean posterior', `gamma (${fit.membership.join(', ')})`],
        rows,
        'id="classes"',
      ) +
      (fit.warnings && fit.warnings.length
        ? `<ul>${fit.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>`
        : ''),
    'fit',
  );
}

function fitSections(runDir: string, fit: SubgroupFitJson, charts: Record<string, ChartSpec>): string[] {
  const out = [parameterSection(fit)];
  const postPath = join(runDir, 'posterior.csv');
  const post = existsSync(postPath) ? parsePosteriorCsv(readResultsText(postPath), postPath) : null;
  if (post && post.probs[0]?.length === fit.K) {
    out.push(posteriorSection(post, fit.K, charts));
    const data = findData(runDir, fit);
    if (data)
      out.push(trajectorySection(fit, data, new Map(post.ids.map((id, i) => [id, post.cls[i]!])), charts));
    else
      out.push(
        section(
          'Class trajectories',
          note(
            'The data CSV (with columns id, time, y) was not found beside results.json (data.csv) or at the path recorded in it.',
          ),
          'trajectories',
        ),
      );
  } else {
    out.push(
      section(
        'Posterior class probabilities',
        note(
          `No posterior.csv with ${fit.K} classes beside results.json; write it with 'tailor subgroup fit --posterior DIR/posterior.csv'.`,
        ),
        'posterior',
      ),
    );
  }
  return out;
}

export function subgroupPage(runDir: string, results: unknown): ReportPage {
  const charts: Record<string, ChartSpec> = {};
  const source = join(runDir, 'results.json');
  if (isSubgroupFit(results)) {
    const fit = validateSubgroupFit(results, source);
    return {
      title: `Latent-subgroup model: K = ${fit.K}`,
      subtitle: `${fit.nSubjects} subjects, BIC ${num(fit.bic, 2)}`,
      kind: 'subgroup',
      sections: fitSections(runDir, fit, charts),
      charts,
    };
  }
  if (isSubgroupSelection(results)) {
    const sel = validateSubgroupSelection(results, source);
    const rows = [...sel.table].sort((a, b) => a.K - b.K);
    charts.bic = {
      type: 'lines',
      x: rows.map((r) => r.K),
      xLabel: 'K (classes)',
      integerX: true,
      yLabel: 'BIC (lower is better)',
      zoom: false,
      series: [
        { label: 'BIC', values: rows.map((r) => r.bic), points: true },
        { label: 'AIC', values: rows.map((r) => r.aic), points: true, dash: true },
      ],
    };
    const sections = [
      section(
        'BIC by K',
        chartDiv('bic', `BIC with n = ${sel.bicN} subjects.`) +
          table(
            ['K', 'log-likelihood', 'parameters', 'BIC', 'AIC', 'converged', 'class sizes'],
            rows.map((r): Cell[] => [
              String(r.K) + (r.K === sel.bestK ? ' *' : ''),
              num(r.logLik, 4),
              r.npm,
              num(r.bic, 3),
              num(r.aic, 3),
              r.converged ? 'yes' : 'no',
              r.classSizes.join('/'),
            ]),
            'id="bic"',
          ),
        'bic',
      ),
    ];
    const best = sel.fits.find((f) => f.K === sel.bestK);
    if (best) sections.push(parameterSection(best));
    return {
      title: 'Latent-subgroup model selection',
      subtitle: `smallest BIC at K = ${sel.bestK}`,
      kind: 'subgroup-select',
      sections,
      charts,
    };
  }
  throw new InputError(`${source}: not a 'tailor subgroup fit' or 'subgroup select' output`);
}
