// Run-time checks of the public long-tail losses (functional.ts, criteria.ts). JavaScript callers
// get no compiler checks, and a mistake here would otherwise surface deep inside libtorch (a
// class count of 0 turns into an infinite margin, a wrong class count into a broadcast error).
import { Tensor, type DType } from '../../torch/index.js';
import { ArgumentError, type ArgumentChecks } from '../../util/arguments.js';
import { ldamMargins } from './priors.js';

export { checksOf } from '../../util/arguments.js';

/** The reductions the public losses take, as F.crossEntropy names them. */
export const REDUCTIONS = ['mean', 'sum', 'none'] as const;

/** The dtypes of logits (and of logitAdjustment's result). */
export const FLOAT_DTYPES: readonly DType[] = ['float32', 'float64', 'float16', 'bfloat16'];

/** The training examples per class: a non-empty array of whole numbers >= 1, copied. */
export function checkClassCounts(c: ArgumentChecks, value: unknown): number[] {
  const counts = c.numbers(value, 'classCounts', { minLength: 1 });
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (!Number.isSafeInteger(n) || n < 1)
      c.fail(`classCounts[${i}]`, 'a whole number >= 1 (the training examples of that class)', n);
  }
  return Array.from(counts);
}

/** An options object, or {} when absent. */
export function checkOptions(c: ArgumentChecks, value: unknown): Record<string, unknown> {
  return value === undefined ? {} : c.object(value, 'options');
}

/**
 * logits: a float Tensor [N, C] with one column per class count (any C when `classes` is null);
 * target: int64 class indices [N]. Returns C.
 */
export function checkBatch(
  c: ArgumentChecks,
  logits: unknown,
  target: unknown,
  classes: number | null,
): number {
  if (!(logits instanceof Tensor) || logits.isDisposed) c.fail('logits', 'a Tensor [N, C]', logits);
  const z = logits as Tensor;
  if (z.ndim !== 2)
    throw new ArgumentError(`${c.fn}: logits must be a Tensor [N, C], got shape [${z.shape.join(', ')}]`);
  if (!FLOAT_DTYPES.includes(z.dtype))
    throw new ArgumentError(`${c.fn}: logits must be a floating-point Tensor, got ${z.dtype}`);
  const [n, C] = z.shape as [number, number];
  if (classes !== null && C !== classes)
    throw new ArgumentError(
      `${c.fn}: logits have ${C} classes (columns) but classCounts has ${classes}; give one count per class`,
    );
  if (!(target instanceof Tensor) || target.isDisposed)
    c.fail('target', 'a Tensor of class indices [N]', target);
  const t = target as Tensor;
  if (t.dtype !== 'int64')
    throw new ArgumentError(
      `${c.fn}: target must hold class indices as int64, got ${t.dtype} (convert with target.to('int64'))`,
    );
  if (t.ndim !== 1 || t.shape[0] !== n)
    throw new ArgumentError(
      `${c.fn}: target must be [${n}] (one class index per row of the logits), got shape [${t.shape.join(', ')}]`,
    );
  return C;
}

/** options.reduction: 'mean' (the default), 'sum' or 'none'. */
export function checkReduction(c: ArgumentChecks, o: Record<string, unknown>): (typeof REDUCTIONS)[number] {
  return o.reduction === undefined ? 'mean' : c.oneOf(o.reduction, 'options.reduction', REDUCTIONS);
}

/** options.weight: absent, or one finite weight >= 0 per class. */
export function checkWeight(c: ArgumentChecks, o: Record<string, unknown>, classes: number): number[] | null {
  if (o.weight === undefined || o.weight === null) return null;
  const w = c.numbers(o.weight, 'options.weight', { length: classes });
  for (let i = 0; i < w.length; i++) if (w[i]! < 0) c.fail(`options.weight[${i}]`, 'a number >= 0', w[i]);
  return Array.from(w);
}

/** A class-balanced beta in [0, 1). */
export function checkBeta(c: ArgumentChecks, value: unknown, name: string): number {
  const beta = c.number(value, name, { min: 0 });
  if (beta >= 1) c.fail(name, 'a finite number >= 0 and < 1', beta);
  return beta;
}

/**
 * Deferred re-weighting: options.reweight (class-balanced weights throughout) or
 * options.reweightEpoch (from the epoch after it; -1 or absent: never), options.beta.
 */
export function checkReweighting(
  c: ArgumentChecks,
  o: Record<string, unknown>,
): { reweight: boolean; reweightEpoch: number; beta: number } {
  if (o.reweight !== undefined && typeof o.reweight !== 'boolean')
    c.fail('options.reweight', 'a boolean', o.reweight);
  const reweight = o.reweight === true;
  const reweightEpoch =
    o.reweightEpoch === undefined ? -1 : c.integer(o.reweightEpoch, 'options.reweightEpoch', { min: -1 });
  if (reweight && reweightEpoch !== -1)
    throw new ArgumentError(
      `${c.fn}: give options.reweight (weights throughout) or options.reweightEpoch (deferred re-weighting), not both`,
    );
  const beta = o.beta === undefined ? 0.9999 : checkBeta(c, o.beta, 'options.beta');
  return { reweight, reweightEpoch, beta };
}

/** LDAM's margins for these counts (options.maxMargin, default 0.5), its scale s (default 30) and options.scaleLogits. */
export function checkLdamMargins(
  c: ArgumentChecks,
  counts: number[],
  o: Record<string, unknown>,
): { margins: number[]; s: number; scaleLogits: boolean } {
  const maxMargin =
    o.maxMargin === undefined ? 0.5 : c.number(o.maxMargin, 'options.maxMargin', { above: 0 });
  const s = o.s === undefined ? 30 : c.number(o.s, 'options.s', { above: 0 });
  if (o.scaleLogits !== undefined && typeof o.scaleLogits !== 'boolean')
    c.fail('options.scaleLogits', 'a boolean', o.scaleLogits);
  return { margins: ldamMargins(counts, maxMargin), s, scaleLogits: o.scaleLogits === true };
}
