// The lookup tables of torch.nn.functional: embedding and embeddingBag, over libtorch's
// aten::embedding, aten::embedding_bag and aten::embedding_renorm_ as PyTorch 1.13 calls them,
// with PyTorch's argument checks in front (named here, before libtorch's messages).
import { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { noGrad } from '../autograd.js';
import { arange } from '../creation.js';
import { tidy } from '../scope.js';
import { isFloatingPoint } from '../dtype.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { flag, lossOptions, optionalTensor, show, tensorArg } from './loss-checks.js';

/** Options of embedding (PyTorch's defaults: no padding index, no maximum norm, normType 2). */
export interface EmbeddingFunctionalOptions {
  /**
   * The row whose gradient is always 0, so training never changes it (negative: counted from the
   * end). The row is looked up as it is: a new Embedding zeroes it, `fromPretrained` keeps it.
   */
  paddingIdx?: number | null;
  /**
   * Rows looked up whose normType-norm exceeds maxNorm are rescaled to norm maxNorm, in place in
   * the weight and without a gradient path, before the lookup (PyTorch's embedding_renorm_).
   */
  maxNorm?: number | null;
  /** The p of the norm maxNorm bounds: a number > 0 or Infinity (default 2). */
  normType?: number;
  /** Divide each row's gradient by how often its index occurs in the input. */
  scaleGradByFreq?: boolean;
  /**
   * The weight's gradient is a sparse COO tensor holding only the rows looked up (one entry per
   * index, duplicates uncoalesced), as PyTorch's `sparse=True`: for SparseAdam, SGD or Adagrad.
   */
  sparse?: boolean;
}

/** How embeddingBag reduces each bag: PyTorch's mode names and their ATen codes. */
export type EmbeddingBagMode = 'sum' | 'mean' | 'max';
const MODES: Record<EmbeddingBagMode, number> = { sum: 0, mean: 1, max: 2 };

/** Options of embeddingBag: embedding's, the bags and their reduction (PyTorch's default mode 'mean'). */
export interface EmbeddingBagFunctionalOptions extends EmbeddingFunctionalOptions {
  /** With a 1-d input, where each bag starts in it (1-d, the input's integer dtype); none with a 2-d input. */
  offsets?: Tensor | null;
  /** The reduction over each bag; an empty bag gives zeros. */
  mode?: EmbeddingBagMode;
  /** With mode 'sum', one weight per index (the input's shape) that multiplies its row. */
  perSampleWeights?: Tensor | null;
  /** offsets ends with the input's length (CSR style): one bag fewer than offsets has entries. */
  includeLastOffset?: boolean;
}

/** An index tensor: int64 or int32. */
function indexTensor(c: ArgumentChecks, value: unknown, name: string): Tensor {
  const t = tensorArg(c, value, name);
  if (t.dtype !== 'int64' && t.dtype !== 'int32')
    throw new ArgumentError(
      `${c.fn}: ${name} must hold int64 (or int32) indices, got ${t.dtype}: convert it with .long()`,
    );
  return t;
}

/** The weight: a 2-d floating-point [numEmbeddings, embeddingDim] tensor. */
function weightArg(c: ArgumentChecks, value: unknown): Tensor {
  const w = tensorArg(c, value, 'weight');
  if (w.ndim !== 2 || !isFloatingPoint(w.dtype))
    throw new ArgumentError(
      `${c.fn}: weight must be a 2-d floating-point tensor [numEmbeddings, embeddingDim], got ${w.dtype} ${show(w.shape)}`,
    );
  return w;
}

/**
 * A padding index in [-numEmbeddings, numEmbeddings) as a row (negatives counted from the end),
 * or null for none. Shared with the Embedding layers, which check it when they are built.
 */
export function paddingRow(c: ArgumentChecks, value: unknown, numEmbeddings: number): number | null {
  if (value === undefined || value === null) return null;
  const p = c.integer(value, 'options.paddingIdx', { min: -numEmbeddings, max: numEmbeddings - 1 });
  return p < 0 ? numEmbeddings + p : p;
}

/** The checked maxNorm (> 0, or null) and normType (> 0 or Infinity) of the options. */
export function normOptions(
  c: ArgumentChecks,
  o: EmbeddingFunctionalOptions,
): { maxNorm: number | null; normType: number } {
  const maxNorm = o.maxNorm == null ? null : c.number(o.maxNorm, 'options.maxNorm', { above: 0 });
  const normType =
    o.normType === undefined || o.normType === Infinity
      ? (o.normType ?? 2)
      : c.number(o.normType, 'options.normType', { above: 0 });
  return { maxNorm, normType };
}

/** Rescales the rows of `weight` that `indices` looks up to norm at most maxNorm, in place, without a gradient path. */
function renormRows(weight: Tensor, indices: Tensor, maxNorm: number | null, normType: number): void {
  if (maxNorm === null) return;
  tidy(() => noGrad(() => void aten.embedding_renorm_(weight, indices.contiguous(), maxNorm, normType)));
}

/**
 * libtorch's lookup, with its message about an index out of range named (on the CPU it throws
 * here; a CUDA kernel reports it asynchronously, as in PyTorch).
 */
function lookup<T>(c: ArgumentChecks, weight: Tensor, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (
      error instanceof Error &&
      /index out of range|out of range for tensor|out of bounds/i.test(error.message)
    )
      throw new ArgumentError(
        `${c.fn}: an index of input is outside [0, ${weight.shape[0]}), the weight's rows: give smaller indices or a larger table (${error.message.split('\n')[0]})`,
      );
    throw error;
  }
}

/**
 * The rows of `weight` [numEmbeddings, embeddingDim] at the indices `input` (F.embedding): an
 * input of shape S gives S + [embeddingDim]. With maxNorm, the rows looked up are first renormalised in the weight
 * itself (a tensor computed from the weight before this call needs a clone, as in PyTorch).
 */
export function embedding(input: Tensor, weight: Tensor, options?: EmbeddingFunctionalOptions): Tensor {
  const c = checksOf('embedding');
  const o = lossOptions(c, options);
  indexTensor(c, input, 'input');
  weightArg(c, weight);
  const padding = paddingRow(c, o.paddingIdx, weight.shape[0]!);
  const { maxNorm, normType } = normOptions(c, o);
  const scale = flag(c, o.scaleGradByFreq, 'options.scaleGradByFreq', false);
  const sparse = flag(c, o.sparse, 'options.sparse', false);
  return lookup(c, weight, () => {
    renormRows(weight, input, maxNorm, normType);
    return aten.embedding(weight, input, padding ?? -1, scale, sparse);
  });
}

/**
 * Bags of rows of `weight` reduced by sum, mean or max (F.embedding_bag), without the [..., N,
 * embeddingDim] tensor in between: a 2-d input [B, N] is B bags of N indices; a 1-d input needs
 * options.offsets, where each bag starts. Returns [B, embeddingDim]; an empty bag gives zeros.
 * With paddingIdx, that index is left out of its bag (and of a mean's count).
 */
export function embeddingBag(input: Tensor, weight: Tensor, options?: EmbeddingBagFunctionalOptions): Tensor {
  const c = checksOf('embeddingBag');
  const o = lossOptions(c, options);
  indexTensor(c, input, 'input');
  weightArg(c, weight);
  const padding = paddingRow(c, o.paddingIdx, weight.shape[0]!);
  const { maxNorm, normType } = normOptions(c, o);
  const scale = flag(c, o.scaleGradByFreq, 'options.scaleGradByFreq', false);
  const includeLast = flag(c, o.includeLastOffset, 'options.includeLastOffset', false);
  const mode = c.oneOf(o.mode ?? 'mean', 'options.mode', Object.keys(MODES) as EmbeddingBagMode[]);
  const sparse = flag(c, o.sparse, 'options.sparse', false);
  if (mode === 'max' && sparse)
    throw new ArgumentError(
      "embeddingBag: mode 'max' does not support sparse gradients (as in PyTorch): use mode 'sum' or 'mean', or leave options.sparse false",
    );
  let offsets = optionalTensor(c, o.offsets, 'options.offsets');
  const weights = optionalTensor(c, o.perSampleWeights, 'options.perSampleWeights');
  if (weights) {
    const same = weights.ndim === input.ndim && weights.shape.every((v, i) => v === input.shape[i]);
    if (!same)
      throw new ArgumentError(
        `embeddingBag: options.perSampleWeights ${show(weights.shape)} must have the input's shape ${show(input.shape)}`,
      );
    if (mode !== 'sum')
      throw new ArgumentError(
        `embeddingBag: options.perSampleWeights needs mode 'sum', got '${mode}' (weight the rows yourself for a weighted mean)`,
      );
  }
  if (mode === 'max' && scale)
    throw new ArgumentError(
      "embeddingBag: mode 'max' cannot scale the gradient by frequency: leave options.scaleGradByFreq false",
    );
  if (input.ndim === 2 && offsets)
    throw new ArgumentError(
      'embeddingBag: a 2-d input is a batch of bags of one length: give no options.offsets (or a 1-d input with offsets)',
    );
  if (input.ndim === 1) {
    if (!offsets)
      throw new ArgumentError(
        'embeddingBag: a 1-d input needs options.offsets, where each bag starts (or give a 2-d input [bags, length])',
      );
    if (offsets.ndim !== 1)
      throw new ArgumentError(`embeddingBag: options.offsets must be 1-d, got ${show(offsets.shape)}`);
    indexTensor(c, offsets, 'options.offsets');
    if (offsets.dtype !== input.dtype)
      throw new ArgumentError(
        `embeddingBag: options.offsets (${offsets.dtype}) must have the input's dtype (${input.dtype})`,
      );
  } else if (input.ndim !== 2)
    throw new ArgumentError(
      `embeddingBag: input must be 1-d (with options.offsets) or 2-d [bags, length], got ${show(input.shape)}`,
    );
  return tidy(() => {
    let indices = input;
    let perSample = weights;
    if (input.ndim === 2) {
      // PyTorch's reading of a 2-d input: one bag per row, starting every `length` indices
      const length = input.shape[1]!;
      offsets = arange(0, input.numel, length, input.dtype, input.device);
      indices = input.reshape(-1);
      perSample = weights?.reshape(-1) ?? null;
    }
    const [out] = lookup(c, weight, () => {
      renormRows(weight, indices, maxNorm, normType);
      return aten.embedding_bag_padding_idx(
        weight,
        indices,
        offsets!,
        scale,
        MODES[mode],
        sparse,
        perSample,
        includeLast,
        padding,
      );
    });
    return out;
  });
}
