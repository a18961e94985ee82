// The lookup-table layers: Embedding and EmbeddingBag (torch.nn), their weight drawn as PyTorch
// draws it (N(0, 1), the padding row zeroed) or given (fromPretrained), their forward
// nn.functional's embedding and embeddingBag.
import type { Tensor } from '../tensor.js';
import { empty } from '../creation.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { size } from './layer-util.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';
import { flag, lossOptions, show, tensorArg } from './loss-checks.js';
import { pyFloat } from './module-repr.js';
import {
  embedding,
  embeddingBag,
  normOptions,
  paddingRow,
  type EmbeddingBagMode,
  type EmbeddingFunctionalOptions,
} from './functional-embedding.js';

/** Options of Embedding: nn.functional.embedding's (padding row, maximum norm, gradient scaling). */
export type EmbeddingOptions = EmbeddingFunctionalOptions;

/** Options of EmbeddingBag: Embedding's, the reduction of each bag (default 'mean') and the offsets' layout. */
export interface EmbeddingBagOptions extends EmbeddingFunctionalOptions {
  /** The reduction over each bag; an empty bag gives zeros. */
  mode?: EmbeddingBagMode;
  /** The offsets end with the input's length (CSR style): one bag fewer than offsets has entries. */
  includeLastOffset?: boolean;
}

/** Options of fromPretrained: the layer's, and whether the weight stays fixed (default true). */
export type PretrainedOptions<O> = O & {
  /** true (default): the weight takes no gradient (requires_grad false); false: it trains. */
  freeze?: boolean;
};

/** The weight fromPretrained hands to the constructor, so that it draws no random numbers (null: draw one). */
let givenWeight: Tensor | null = null;

/** What both layers share: the sizes, the checked options and the weight, drawn or given. */
abstract class LookupTable extends Module {
  readonly weight: Tensor;
  /** The padding row, counted from the start (a negative paddingIdx is converted), or null. */
  readonly paddingIdx: number | null;
  readonly maxNorm: number | null;
  readonly normType: number;
  readonly scaleGradByFreq: boolean;
  /** Whether the weight's gradient is sparse (PyTorch's `sparse=True`). */
  readonly sparse: boolean;

  constructor(
    c: ArgumentChecks,
    readonly numEmbeddings: number,
    readonly embeddingDim: number,
    o: EmbeddingFunctionalOptions,
  ) {
    super();
    size(c, numEmbeddings, 'numEmbeddings');
    size(c, embeddingDim, 'embeddingDim');
    this.paddingIdx = paddingRow(c, o.paddingIdx, numEmbeddings);
    ({ maxNorm: this.maxNorm, normType: this.normType } = normOptions(c, o));
    this.scaleGradByFreq = flag(c, o.scaleGradByFreq, 'options.scaleGradByFreq', false);
    this.sparse = flag(c, o.sparse, 'options.sparse', false);
    if (givenWeight) {
      this.weight = this.registerParameter('weight', givenWeight);
      return;
    }
    this.weight = this.registerParameter('weight', empty([numEmbeddings, embeddingDim]));
    // PyTorch's reset_parameters: N(0, 1), then the padding row zeroed (a fresh table's pad is 0)
    noGrad(() => aten.normal_(this.weight, 0, 1));
    if (this.paddingIdx !== null) {
      const row = this.paddingIdx;
      // void: a tidy keeps what its function returns, and the view is not to outlive it
      tidy(() => noGrad(() => void this.weight.select(0, row).fill_(0)));
    }
  }

  /** PyTorch's options after the sizes, each printed only when not its default. */
  protected optionsRepr(): string {
    return [
      this.maxNorm !== null ? `, max_norm=${pyFloat(this.maxNorm)}` : '',
      this.normType !== 2 ? `, norm_type=${this.normType === Infinity ? 'inf' : pyFloat(this.normType)}` : '',
      this.scaleGradByFreq ? ', scale_grad_by_freq=True' : '',
    ].join('');
  }

  /** PyTorch's `, sparse=True` (Embedding prints it; EmbeddingBag's repr does not). */
  protected sparseRepr(): string {
    return this.sparse ? ', sparse=True' : '';
  }
}

/**
 * Builds a layer around a copy of `embeddings` [numEmbeddings, embeddingDim] (the layer owns the
 * copy and frees it with `dispose()`; the padding row is kept as given, as in PyTorch).
 */
function pretrained<L extends LookupTable, O extends EmbeddingFunctionalOptions>(
  fn: string,
  embeddings: Tensor,
  options: PretrainedOptions<O> | undefined,
  make: (rows: number, cols: number, o: O) => L,
): L {
  const c = checksOf(fn);
  tensorArg(c, embeddings, 'embeddings');
  if (embeddings.ndim !== 2)
    throw new ArgumentError(
      `${fn}: embeddings must be 2-d [numEmbeddings, embeddingDim], got ${show(embeddings.shape)}`,
    );
  const { freeze, ...rest } = lossOptions(c, options);
  const frozen = flag(c, freeze, 'options.freeze', true);
  const [rows, cols] = embeddings.shape as [number, number];
  givenWeight = tidy(() => embeddings.detach().clone());
  try {
    const layer = make(rows, cols, rest as unknown as O);
    layer.weight.requiresGrad_(!frozen);
    return layer;
  } catch (error) {
    givenWeight.dispose();
    throw error;
  } finally {
    givenWeight = null;
  }
}

/**
 * A lookup table of numEmbeddings vectors of size embeddingDim (torch.nn.Embedding): int64
 * indices [...] give [..., embeddingDim]. The weight is drawn from N(0, 1) as PyTorch draws it
 * (same seed, same table), with the row paddingIdx zeroed.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const emb = new torch.nn.Embedding(1000, 64, { paddingIdx: 0, maxNorm: 1 });
 * const tokens = torch.tensor([[5, 9, 0]], { dtype: 'int64' });
 * const vectors = emb.forward(tokens); // [1, 3, 64]; row 0 is zeros and never trained
 * ```
 */
export class Embedding extends LookupTable {
  constructor(numEmbeddings: number, embeddingDim: number, options: EmbeddingOptions = {}) {
    const c = checksOf('Embedding');
    super(c, numEmbeddings, embeddingDim, lossOptions(c, options));
  }

  /**
   * A table holding a copy of `embeddings` [numEmbeddings, embeddingDim] (PyTorch's
   * from_pretrained; frozen unless `freeze: false`). No random number is drawn.
   */
  static fromPretrained(embeddings: Tensor, options?: PretrainedOptions<EmbeddingOptions>): Embedding {
    return pretrained('Embedding.fromPretrained', embeddings, options, (r, c, o) => new Embedding(r, c, o));
  }

  /** The rows at `indices` (of any shape S), of shape S + [embeddingDim]; maxNorm renormalises them in the weight first. */
  forward(indices: Tensor): Tensor {
    const { paddingIdx, maxNorm, normType, scaleGradByFreq, sparse } = this;
    return embedding(indices, this.weight, { paddingIdx, maxNorm, normType, scaleGradByFreq, sparse });
  }

  /** PyTorch's `num, dim, padding_idx=..., max_norm=...`. */
  override extraRepr(): string {
    const padding = this.paddingIdx !== null ? `, padding_idx=${this.paddingIdx}` : '';
    return `${this.numEmbeddings}, ${this.embeddingDim}${padding}${this.optionsRepr()}${this.sparseRepr()}`;
  }
}

/**
 * Bags of rows of a lookup table, each reduced by sum, mean (default) or max
 * (torch.nn.EmbeddingBag), without the per-index vectors in between: `forward(input, offsets?,
 * perSampleWeights?)` reads a 2-d input [B, N] as B bags of N indices, a 1-d one with offsets
 * (where each bag starts) as bags of any length, and gives [B, embeddingDim]. The weight is drawn
 * as Embedding's; paddingIdx is left out of its bag.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const bag = new torch.nn.EmbeddingBag(10, 3, { mode: 'sum' });
 * const input = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9], { dtype: 'int64' });
 * const offsets = torch.tensor([0, 4], { dtype: 'int64' });
 * const sums = bag.forward(input, offsets); // [2, 3]
 * ```
 */
export class EmbeddingBag extends LookupTable {
  readonly mode: EmbeddingBagMode;
  readonly includeLastOffset: boolean;

  constructor(numEmbeddings: number, embeddingDim: number, options: EmbeddingBagOptions = {}) {
    // checked before the weight exists, so that a refused layer leaves no tensor behind
    const c = checksOf('EmbeddingBag');
    const o = lossOptions(c, options);
    const mode = c.oneOf(o.mode ?? 'mean', 'options.mode', ['sum', 'mean', 'max'] as const);
    const includeLastOffset = flag(c, o.includeLastOffset, 'options.includeLastOffset', false);
    if (mode === 'max' && o.scaleGradByFreq === true)
      throw new ArgumentError(
        "EmbeddingBag: mode 'max' cannot scale the gradient by frequency: leave options.scaleGradByFreq false",
      );
    if (mode === 'max' && o.sparse === true)
      throw new ArgumentError(
        "EmbeddingBag: mode 'max' does not support sparse gradients (as in PyTorch): use mode 'sum' or 'mean', or leave options.sparse false",
      );
    super(c, numEmbeddings, embeddingDim, o);
    this.mode = mode;
    this.includeLastOffset = includeLastOffset;
  }

  /**
   * A table of bags holding a copy of `embeddings` [numEmbeddings, embeddingDim] (PyTorch's
   * from_pretrained; frozen unless `freeze: false`). No random number is drawn.
   */
  static fromPretrained(embeddings: Tensor, options?: PretrainedOptions<EmbeddingBagOptions>): EmbeddingBag {
    return pretrained(
      'EmbeddingBag.fromPretrained',
      embeddings,
      options,
      (r, c, o) => new EmbeddingBag(r, c, o),
    );
  }

  /**
   * The reduced bags [B, embeddingDim] of `input` (2-d [B, N], or 1-d with `offsets`);
   * `perSampleWeights` (the input's shape, mode 'sum') weights each index's row.
   */
  forward(input: Tensor, offsets?: Tensor | null, perSampleWeights?: Tensor | null): Tensor {
    const { paddingIdx, maxNorm, normType, scaleGradByFreq, mode, includeLastOffset, sparse } = this;
    return embeddingBag(input, this.weight, {
      sparse,
      offsets,
      perSampleWeights,
      paddingIdx,
      maxNorm,
      normType,
      scaleGradByFreq,
      mode,
      includeLastOffset,
    });
  }

  /** PyTorch's `num, dim, max_norm=..., mode=..., padding_idx=...`. */
  override extraRepr(): string {
    const padding = this.paddingIdx !== null ? `, padding_idx=${this.paddingIdx}` : '';
    return `${this.numEmbeddings}, ${this.embeddingDim}${this.optionsRepr()}, mode=${this.mode}${padding}`;
  }
}
