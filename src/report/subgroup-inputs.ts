// The inputs of the latent-subgroup report, recognised and checked by type and shape: the JSON of
// `tailor subgroup fit --out` and `subgroup select --out`, and the posterior CSV of --posterior.
// Apart from subgroup.ts, which draws the page from them once they are known to be well formed.
import type { SubgroupSelectionRow } from '../mixture/index.js';
import { Fields } from './validate.js';
import { InputError } from '../util/errors.js';

export interface SubgroupFitJson {
  model: string;
  K: number;
  nSubjects: number;
  nObservations: number;
  fixed: string[];
  membership: string[];
  alpha: number[];
  mu: number[];
  sigmaB2: number;
  sigmaEps2: number;
  phi: number;
  gamma: number[][];
  logLik: number;
  bic: number;
  aic: number;
  nIter: number;
  converged: boolean;
  classSizes: number[];
  meanPosterior: number[];
  trace?: number[];
  warnings?: string[];
  data?: string;
}

export interface SubgroupSelectionJson {
  bicN: number;
  bestK: number;
  /** The rows of the selection table (as `tailor subgroup select --out` writes them), the fields checked. */
  table: Pick<SubgroupSelectionRow, 'K' | 'logLik' | 'npm' | 'bic' | 'aic' | 'converged' | 'classSizes'>[];
  fits: SubgroupFitJson[];
}

export const SUBGROUP_MODEL = 'latent-subgroup linear mixed model';

export function isSubgroupFit(v: unknown): v is SubgroupFitJson {
  return typeof v === 'object' && v !== null && (v as { model?: unknown }).model === SUBGROUP_MODEL;
}

export function isSubgroupSelection(v: unknown): v is SubgroupSelectionJson {
  const s = v as Partial<SubgroupSelectionJson>;
  return (
    typeof v === 'object' &&
    v !== null &&
    Array.isArray(s.table) &&
    Array.isArray(s.fits) &&
    typeof s.bestK === 'number'
  );
}

const FIT_EXPECTED = "the output of 'tailor subgroup fit --out'";
/** More classes than any latent-subgroup fit uses; bounds loops over K. */
const MAX_CLASSES = 1000;

/** Checks a fit by type and shape, naming the first wrong field; returns only checked values. */
export function validateSubgroupFit(value: unknown, source: string, where = ''): SubgroupFitJson {
  const f = new Fields(source, FIT_EXPECTED);
  const v = f.object(value, where);
  const at = (k: string) => (where ? `${where}.${k}` : k);
  const K = f.number(v.K, at('K'), { integer: true, min: 1, max: MAX_CLASSES });
  const perClass = (k: string) => {
    const a = f.numbers(v[k], at(k), { nonFinite: true });
    if (a.length !== K) f.fail(at(k), `has ${a.length} entries for K = ${K}`);
    return a;
  };
  const stat = (k: string) => f.numberOrNull(v[k] ?? null, at(k), { nonFinite: true }) as number;
  const fixed = f.strings(v.fixed, at('fixed'));
  return {
    model: f.string(v.model, at('model')),
    K,
    nSubjects: f.number(v.nSubjects, at('nSubjects'), { integer: true, min: 0 }),
    nObservations: f.number(v.nObservations, at('nObservations'), { integer: true, min: 0 }),
    fixed,
    membership: f.strings(v.membership, at('membership')),
    alpha: f.numbers(v.alpha, at('alpha'), { nonFinite: true }),
    mu: perClass('mu'),
    sigmaB2: stat('sigmaB2'),
    sigmaEps2: stat('sigmaEps2'),
    phi: stat('phi'),
    gamma: f
      .array(v.gamma, at('gamma'), MAX_CLASSES)
      .map((g, k) => f.numbers(g, at(`gamma[${k}]`), { nonFinite: true })),
    logLik: stat('logLik'),
    bic: stat('bic'),
    aic: stat('aic'),
    nIter: f.number(v.nIter ?? 0, at('nIter'), { integer: true, min: 0 }),
    converged: f.boolean(v.converged ?? false, at('converged')),
    classSizes: perClass('classSizes'),
    meanPosterior: perClass('meanPosterior'),
    ...(v.warnings !== undefined ? { warnings: f.strings(v.warnings, at('warnings')) } : {}),
    ...(v.data !== undefined ? { data: f.string(v.data, at('data')) } : {}),
  };
}

export function validateSubgroupSelection(value: unknown, source: string): SubgroupSelectionJson {
  const f = new Fields(source, "the output of 'tailor subgroup select --out'");
  const v = f.object(value, '');
  return {
    bicN: f.number(v.bicN, 'bicN', { min: 0 }),
    bestK: f.number(v.bestK, 'bestK', { integer: true }),
    table: f.array(v.table, 'table', MAX_CLASSES).map((x, i) => {
      const r = f.object(x, `table[${i}]`);
      const at = (k: string) => `table[${i}].${k}`;
      return {
        K: f.number(r.K, at('K'), { integer: true, min: 1, max: MAX_CLASSES }),
        logLik: f.numberOrNull(r.logLik ?? null, at('logLik'), { nonFinite: true }) as number,
        npm: f.number(r.npm, at('npm'), { integer: true, min: 0 }),
        bic: f.numberOrNull(r.bic ?? null, at('bic'), { nonFinite: true }) as number,
        aic: f.numberOrNull(r.aic ?? null, at('aic'), { nonFinite: true }) as number,
        converged: f.boolean(r.converged ?? false, at('converged')),
        classSizes: f.numbers(r.classSizes ?? [], at('classSizes')),
      };
    }),
    fits: f
      .array(v.fits, 'fits', MAX_CLASSES)
      .map((fit, i) => validateSubgroupFit(fit, source, `fits[${i}]`)),
  };
}

/** Posterior CSV: id, class (1-based), prob1..probK. */
export function parsePosteriorCsv(
  text: string,
  file: string,
): { ids: string[]; cls: number[]; probs: number[][] } {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0]?.split(',') ?? [];
  if (header[0] !== 'id' || header[1] !== 'class')
    throw new InputError(`${file} line 1: expected the header id,class,prob1,... written by --posterior`);
  const K = header.length - 2;
  if (K < 1 || K > MAX_CLASSES) throw new InputError(`${file} line 1: ${K} probability columns`);
  const ids: string[] = [];
  const cls: number[] = [];
  const probs: number[][] = [];
  lines.slice(1).forEach((line, i) => {
    // Ids may be quoted; the numeric cells are the last K + 1.
    const cells = line.split(',');
    const tail = cells.slice(cells.length - K - 1).map(Number);
    if (tail.some((v) => !Number.isFinite(v)))
      throw new InputError(`${file} line ${i + 2}: expected numbers in the class and probability columns`);
    if (cells.length < K + 2)
      throw new InputError(`${file} line ${i + 2}: expected an id, a class and ${K} probabilities`);
    ids.push(
      cells
        .slice(0, cells.length - K - 1)
        .join(',')
        .replace(/^"|"$/g, '')
        .replace(/""/g, '"'),
    );
    cls.push(tail[0]! - 1);
    probs.push(tail.slice(1));
  });
  return { ids, cls, probs };
}
