// The two JSON inputs of the Gaussian-mixture report, recognised and checked by type and shape: a
// model written by `tailor gmm fit --out` and the output of `tailor gmm select --json`. Apart from
// gmm.ts, which draws the page from them once they are known to be well formed.
import { gaussianModelFromJson, type GaussianModelJson } from '../mixture/index.js';
import { Fields } from './validate.js';

export interface GmmSelectionJson {
  n: number;
  d: number;
  rows: {
    k: number;
    covarianceType: string;
    bic: number;
    aic: number;
    logLik: number;
    nParameters: number;
    converged: boolean;
    error?: string;
  }[];
  best: { k: number; covarianceType: string; bic: number } | null;
}

export function isGmmModel(v: unknown): v is GaussianModelJson {
  return typeof v === 'object' && v !== null && (v as { format?: unknown }).format === 'tailor-gmm';
}

export function isGmmSelection(v: unknown): v is GmmSelectionJson {
  const r = (v as { rows?: unknown })?.rows;
  return (
    Array.isArray(r) &&
    r.length > 0 &&
    typeof r[0] === 'object' &&
    r[0] !== null &&
    'covarianceType' in r[0] &&
    'bic' in r[0]
  );
}

const MODEL_EXPECTED = "a model written by 'tailor gmm fit --out'";

/** Checks a model file by type and shape (through the model's own loader) for the report. */
export function validateGmmModel(value: unknown, source: string): GaussianModelJson {
  gaussianModelFromJson(value, source);
  const f = new Fields(source, MODEL_EXPECTED);
  const m = f.object(value, '');
  const K = m.nComponents as number;
  const d = m.nFeatures as number;
  const vector = (v: unknown, field: string, n: number): number[] => {
    const out = f.numbers(v, field);
    if (out.length !== n) f.fail(field, `has ${out.length} entries, not ${n}`);
    return out;
  };
  const matrix = (v: unknown, field: string, rows: number, cols: number): number[][] => {
    const a = f.array(v, field);
    if (a.length !== rows) f.fail(field, `has ${a.length} rows, not ${rows}`);
    return a.map((row, i) => vector(row, `${field}[${i}]`, cols));
  };
  const type = m.covarianceType as GaussianModelJson['covarianceType'];
  const covariances =
    type === 'full'
      ? f.array(m.covariances, 'covariances').map((c, k) => matrix(c, `covariances[${k}]`, d, d))
      : type === 'tied'
        ? matrix(m.covariances, 'covariances', d, d)
        : type === 'diag'
          ? matrix(m.covariances, 'covariances', K, d)
          : vector(m.covariances, 'covariances', K);
  if (type === 'full' && (covariances as unknown[]).length !== K)
    f.fail('covariances', `has not ${K} matrices`);
  const options = m.options === undefined ? {} : f.object(m.options, 'options');
  return {
    ...(m as unknown as GaussianModelJson),
    covarianceType: type,
    nComponents: K,
    nFeatures: d,
    weights: vector(m.weights, 'weights', K),
    means: matrix(m.means, 'means', K, d),
    covariances: covariances as GaussianModelJson['covariances'],
    ...(m.columns !== undefined ? { columns: f.strings(m.columns, 'columns') } : { columns: undefined }),
    score: f.number(m.score, 'score', { nonFinite: true }),
    nSamples: f.number(m.nSamples, 'nSamples', { integer: true, min: 0 }),
    // null for a variational fit (no parameter count)
    bic: f.numberOrNull(m.bic, 'bic', { nonFinite: true }),
    aic: f.numberOrNull(m.aic, 'aic', { nonFinite: true }),
    lowerBound: f.number(m.lowerBound ?? NaN, 'lowerBound', { nonFinite: true }),
    nIter: f.number(m.nIter ?? 0, 'nIter', { integer: true, min: 0 }),
    converged: f.boolean(m.converged ?? false, 'converged'),
    trace: f.numbers(m.trace ?? [], 'trace', { nonFinite: true }),
    options: { ...(typeof options.data === 'string' ? { data: options.data } : {}) },
  } as GaussianModelJson;
}

/** Checks `gmm select --json` output for the report. */
export function validateGmmSelection(value: unknown, source: string): GmmSelectionJson {
  const f = new Fields(source, "the output of 'tailor gmm select --json'");
  const v = f.object(value, '');
  const rows = f.array(v.rows, 'rows', 100_000).map((x, i) => {
    const r = f.object(x, `rows[${i}]`);
    const field = (k: string) => `rows[${i}].${k}`;
    return {
      k: f.number(r.k, field('k'), { integer: true, min: 1, max: 100_000 }),
      covarianceType: f.string(r.covarianceType, field('covarianceType')),
      bic: f.numberOrNull(r.bic ?? null, field('bic'), { nonFinite: true }) as number,
      aic: f.numberOrNull(r.aic ?? null, field('aic'), { nonFinite: true }) as number,
      logLik: f.numberOrNull(r.logLik ?? null, field('logLik'), { nonFinite: true }) as number,
      nParameters: f.number(r.nParameters ?? 0, field('nParameters'), { integer: true, min: 0 }),
      converged: f.boolean(r.converged ?? false, field('converged')),
      ...(r.error !== undefined ? { error: f.string(r.error, field('error')) } : {}),
    };
  });
  const best =
    v.best === null || v.best === undefined
      ? null
      : (() => {
          const b = f.object(v.best, 'best');
          return {
            k: f.number(b.k, 'best.k', { integer: true }),
            covarianceType: f.string(b.covarianceType, 'best.covarianceType'),
            bic: f.number(b.bic, 'best.bic', { nonFinite: true }),
          };
        })();
  return {
    n: f.number(v.n, 'n', { integer: true, min: 0 }),
    d: f.number(v.d, 'd', { integer: true, min: 0 }),
    rows,
    best,
  };
}
