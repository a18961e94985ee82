// Transformer layers (torch.nn.TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer;
// the decoder stack and the whole model are in transformer-model.ts) with PyTorch's submodule
// names, so a state dict's keys are PyTorch's (layers.0.self_attn.in_proj_weight).
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { getRngState, setRngState } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { Dropout, LayerNorm, Linear } from './layers.js';
import { ModuleList } from './activation.js';
import { MultiheadAttention, flagOption } from './attention.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/** Options of TransformerEncoderLayer (PyTorch's names and defaults, camelCase). */
export interface TransformerEncoderLayerOptions {
  /** Features of the feed-forward block's hidden layer (default 2048). */
  dimFeedforward?: number;
  /** Dropout after the attention, inside and after the feed-forward block, in training mode (default 0.1). */
  dropout?: number;
  /** The feed-forward block's activation (default 'relu'). */
  activation?: 'relu' | 'gelu';
  /** The layer norms' eps (default 1e-5). */
  layerNormEps?: number;
  /** Input and output as [batch, seq, dModel] rather than [seq, batch, dModel] (default false). */
  batchFirst?: boolean;
  /** Layer norm before the attention and feed-forward blocks (pre-norm) rather than after the residual sums (default false). */
  normFirst?: boolean;
}

/** Masks of the encoder's self-attention (see MultiheadAttention.forward's attnMask and keyPaddingMask). */
export interface EncoderMasks {
  /** [S, S] or [batch x nhead, S, S]: boolean (true blocks) or floating point (added to the scores). */
  srcMask?: Tensor | null;
  /** [batch, S] ([S] unbatched): boolean (true: padding, ignored) or floating point. */
  srcKeyPaddingMask?: Tensor | null;
}

/** The checked options of an encoder or decoder layer, PyTorch's defaults filled in. */
function layerSettings(name: string, dModel: number, nhead: number, options: TransformerEncoderLayerOptions) {
  const c = checksOf(name);
  c.integer(dModel, 'dModel', { min: 1 });
  c.integer(nhead, 'nhead', { min: 1 });
  c.object(options, 'options');
  const settings = {
    ff: c.integer(options.dimFeedforward ?? 2048, 'options.dimFeedforward', { min: 1 }),
    p: c.number(options.dropout ?? 0.1, 'options.dropout', { min: 0, max: 1 }),
    activation: c.oneOf(options.activation ?? 'relu', 'options.activation', ['relu', 'gelu'] as const),
    eps: c.number(options.layerNormEps ?? 1e-5, 'options.layerNormEps', { above: 0 }),
    batchFirst: flagOption(c, options.batchFirst, 'options.batchFirst', false),
    normFirst: flagOption(c, options.normFirst, 'options.normFirst', false),
  };
  if (dModel % nhead !== 0)
    throw new ArgumentError(`${name}: dModel (${dModel}) must be divisible by nhead (${nhead})`);
  return settings;
}

/** linear2(dropout(activation(linear1(x)))): the feed-forward block before its last dropout. */
function ffBlock(
  layer: { linear1: Linear; linear2: Linear; dropout: Dropout; activation: 'relu' | 'gelu' },
  x: Tensor,
): Tensor {
  const h = layer.linear1.forward(x);
  const a = layer.activation === 'relu' ? aten.relu(h) : aten.gelu(h);
  return layer.linear2.forward(layer.dropout.forward(a));
}

/**
 * One Transformer encoder layer (torch.nn.TransformerEncoderLayer): self-attention and a
 * feed-forward block dModel -> dimFeedforward -> dModel, each with a residual connection and a
 * layer norm (after the sum by default, before the block with normFirst). Input and output
 * [S, batch, dModel] ([batch, S, dModel] with batchFirst, [S, dModel] unbatched). Submodules
 * self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2, as PyTorch names them.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const layer = new torch.nn.TransformerEncoderLayer(32, 4, { dimFeedforward: 64, batchFirst: true });
 * torch.tidy(() => {
 *   const y = layer.forward(torch.randn([8, 10, 32])); // 8 sequences of 10 tokens
 *   console.log(y.shape); // [8, 10, 32]
 * });
 * ```
 */
export class TransformerEncoderLayer extends Module {
  readonly selfAttn: MultiheadAttention;
  readonly linear1: Linear;
  readonly dropout: Dropout;
  readonly linear2: Linear;
  readonly norm1: LayerNorm;
  readonly norm2: LayerNorm;
  readonly dropout1: Dropout;
  readonly dropout2: Dropout;
  readonly activation: 'relu' | 'gelu';
  readonly normFirst: boolean;
  /** The options as given (for clone). */
  private readonly options: TransformerEncoderLayerOptions;

  constructor(
    readonly dModel: number,
    readonly nhead: number,
    options: TransformerEncoderLayerOptions = {},
  ) {
    super();
    this.options = { ...options };
    const { ff, p, eps, batchFirst, activation, normFirst } = layerSettings(
      'TransformerEncoderLayer',
      dModel,
      nhead,
      options,
    );
    this.activation = activation;
    this.normFirst = normFirst;
    // PyTorch's construction order, which is also its order of random draws and state dict keys
    this.selfAttn = this.registerModule(
      'self_attn',
      new MultiheadAttention(dModel, nhead, { dropout: p, batchFirst }),
    );
    this.linear1 = this.registerModule('linear1', new Linear(dModel, ff));
    this.dropout = this.registerModule('dropout', new Dropout(p));
    this.linear2 = this.registerModule('linear2', new Linear(ff, dModel));
    this.norm1 = this.registerModule('norm1', new LayerNorm([dModel], { eps }));
    this.norm2 = this.registerModule('norm2', new LayerNorm([dModel], { eps }));
    this.dropout1 = this.registerModule('dropout1', new Dropout(p));
    this.dropout2 = this.registerModule('dropout2', new Dropout(p));
  }

  /** Applies the layer to `src` (shapes: see the class), with the optional masks of the self-attention. */
  forward(src: Tensor, masks: EncoderMasks = {}): Tensor {
    const c = checksOf('TransformerEncoderLayer');
    if (!(src instanceof Tensor)) c.fail('src', 'a Tensor', src);
    c.object(masks, 'masks');
    const attnOptions = {
      attnMask: masks.srcMask ?? null,
      keyPaddingMask: masks.srcKeyPaddingMask ?? null,
      needWeights: false,
    };
    const attention = (x: Tensor) => this.dropout1.forward(this.selfAttn.forward(x, x, x, attnOptions)[0]);
    const feedForward = (x: Tensor) => this.dropout2.forward(ffBlock(this, x));
    return tidy(() => {
      if (this.normFirst) {
        const x = src.add(attention(this.norm1.forward(src)));
        return x.add(feedForward(this.norm2.forward(x)));
      }
      const x = this.norm1.forward(src.add(attention(src)));
      return this.norm2.forward(x.add(feedForward(x)));
    });
  }

  /**
   * A new layer with the same options and a copy of this one's parameters (PyTorch's
   * copy.deepcopy): it draws nothing from the random generator, on the device of this layer.
   */
  clone(): TransformerEncoderLayer {
    const state = getRngState();
    const copy = new TransformerEncoderLayer(this.dModel, this.nhead, this.options);
    setRngState(state);
    copy.to(this.device).loadStateDict(this.stateDict());
    copy.train(this.training);
    return copy;
  }
}

/**
 * The layers of an encoder or decoder stack: `layer` itself first (the stack owns it from then
 * on), then copies of it made without drawing random numbers (PyTorch's deep copies), and the
 * optional final norm; the arguments checked for `owner`.
 * @internal
 */
export function layerStack<L extends Module & { clone(): L }>(
  owner: string,
  kind: abstract new (...args: never[]) => L,
  layer: L,
  numLayers: number,
  options: { norm?: LayerNorm | null },
): { layers: ModuleList<L>; norm: LayerNorm | null } {
  const c = checksOf(owner);
  if (!(layer instanceof kind)) c.fail('layer', `a ${kind.name}`, layer);
  c.integer(numLayers, 'numLayers', { min: 1, max: 10000 });
  c.object(options, 'options');
  const norm = options.norm ?? null;
  if (norm !== null && !(norm instanceof LayerNorm)) c.fail('options.norm', 'a LayerNorm or null', norm);
  const layers = [layer];
  for (let i = 1; i < numLayers; i++) layers.push(layer.clone());
  return { layers: new ModuleList(layers), norm };
}

/**
 * A stack of numLayers Transformer encoder layers and an optional final norm
 * (torch.nn.TransformerEncoder). As PyTorch deep-copies its layer, every layer starts with the
 * given layer's parameters: the encoder takes `layer` itself as layers.0 (it owns it now and
 * frees it with dispose()) and clones it for the others. State dict keys layers.0.self_attn.
 * in_proj_weight, ..., norm.weight, as PyTorch's.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const layer = new torch.nn.TransformerEncoderLayer(32, 4, { dimFeedforward: 64 });
 * const encoder = new torch.nn.TransformerEncoder(layer, 2, { norm: new torch.nn.LayerNorm([32]) });
 * torch.tidy(() => {
 *   const causal = torch.aten.triu(torch.ones([10, 10]), 1).bool(); // true: may not attend
 *   console.log(encoder.forward(torch.randn([10, 8, 32]), { mask: causal }).shape); // [10, 8, 32]
 * });
 * ```
 */
export class TransformerEncoder extends Module {
  readonly layers: ModuleList<TransformerEncoderLayer>;
  readonly norm: LayerNorm | null;

  constructor(
    layer: TransformerEncoderLayer,
    readonly numLayers: number,
    options: { norm?: LayerNorm | null } = {},
  ) {
    super();
    const stack = layerStack('TransformerEncoder', TransformerEncoderLayer, layer, numLayers, options);
    this.layers = this.registerModule('layers', stack.layers);
    this.norm = stack.norm ? this.registerModule('norm', stack.norm) : null;
  }

  /**
   * Applies the layers in turn to `src`, then the norm; `mask` and `srcKeyPaddingMask` go to every
   * layer's self-attention (see TransformerEncoderLayer.forward).
   */
  forward(src: Tensor, masks: { mask?: Tensor | null; srcKeyPaddingMask?: Tensor | null } = {}): Tensor {
    checksOf('TransformerEncoder').object(masks, 'masks');
    const layerMasks = { srcMask: masks.mask ?? null, srcKeyPaddingMask: masks.srcKeyPaddingMask ?? null };
    return tidy(() => {
      let x = src;
      for (const layer of this.layers.items) x = layer.forward(x, layerMasks);
      return this.norm ? this.norm.forward(x) : x;
    });
  }
}

/** Masks of the decoder layer's self-attention (tgt) and attention over the memory (see MultiheadAttention.forward). */
export interface DecoderMasks {
  /** [T, T] or [batch x nhead, T, T]: boolean (true blocks) or floating point, on the self-attention. */
  tgtMask?: Tensor | null;
  /** [T, S] or [batch x nhead, T, S], on the attention over the memory. */
  memoryMask?: Tensor | null;
  /** [batch, T] ([T] unbatched): the target's padding. */
  tgtKeyPaddingMask?: Tensor | null;
  /** [batch, S] ([S] unbatched): the memory's padding. */
  memoryKeyPaddingMask?: Tensor | null;
}

/**
 * One Transformer decoder layer (torch.nn.TransformerDecoderLayer): self-attention over the
 * target, attention from the target over the encoder's output (the memory) and a feed-forward
 * block, each with a residual connection and a layer norm (after the sum, or before the block
 * with normFirst). Target and output [T, batch, dModel], memory [S, batch, dModel] (batch first
 * with batchFirst; unbatched [T, dModel], [S, dModel]). Options and submodules as
 * {@link TransformerEncoderLayer}'s, plus multihead_attn, norm3 and dropout3, as PyTorch names them.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const layer = new torch.nn.TransformerDecoderLayer(32, 4, { dimFeedforward: 64 });
 * torch.tidy(() => {
 *   const causal = torch.aten.triu(torch.ones([6, 6]), 1).bool(); // true: may not attend
 *   const y = layer.forward(torch.randn([6, 2, 32]), torch.randn([10, 2, 32]), { tgtMask: causal });
 *   console.log(y.shape); // [6, 2, 32]
 * });
 * ```
 */
export class TransformerDecoderLayer extends Module {
  readonly selfAttn: MultiheadAttention;
  readonly multiheadAttn: MultiheadAttention;
  readonly linear1: Linear;
  readonly dropout: Dropout;
  readonly linear2: Linear;
  readonly norms: [LayerNorm, LayerNorm, LayerNorm];
  readonly dropouts: [Dropout, Dropout, Dropout];
  readonly activation: 'relu' | 'gelu';
  readonly normFirst: boolean;
  /** The options as given (for clone). */
  private readonly options: TransformerEncoderLayerOptions;

  constructor(
    readonly dModel: number,
    readonly nhead: number,
    options: TransformerEncoderLayerOptions = {},
  ) {
    super();
    this.options = { ...options };
    const { ff, p, eps, batchFirst, activation, normFirst } = layerSettings(
      'TransformerDecoderLayer',
      dModel,
      nhead,
      options,
    );
    this.activation = activation;
    this.normFirst = normFirst;
    const attention = () => new MultiheadAttention(dModel, nhead, { dropout: p, batchFirst });
    // PyTorch's construction order, which is also its order of random draws and state dict keys
    this.selfAttn = this.registerModule('self_attn', attention());
    this.multiheadAttn = this.registerModule('multihead_attn', attention());
    this.linear1 = this.registerModule('linear1', new Linear(dModel, ff));
    this.dropout = this.registerModule('dropout', new Dropout(p));
    this.linear2 = this.registerModule('linear2', new Linear(ff, dModel));
    const norm = (i: number) => this.registerModule(`norm${i}`, new LayerNorm([dModel], { eps }));
    this.norms = [norm(1), norm(2), norm(3)];
    const drop = (i: number) => this.registerModule(`dropout${i}`, new Dropout(p));
    this.dropouts = [drop(1), drop(2), drop(3)];
  }

  /** Applies the layer to the target `tgt` attending over `memory` (shapes: see the class), with the optional masks. */
  forward(tgt: Tensor, memory: Tensor, masks: DecoderMasks = {}): Tensor {
    checksOf('TransformerDecoderLayer').object(masks, 'masks');
    const [d1, d2, d3] = this.dropouts;
    const blocks = [
      (x: Tensor) =>
        d1.forward(
          this.selfAttn.forward(x, x, x, {
            attnMask: masks.tgtMask ?? null,
            keyPaddingMask: masks.tgtKeyPaddingMask ?? null,
            needWeights: false,
          })[0],
        ),
      (x: Tensor) =>
        d2.forward(
          this.multiheadAttn.forward(x, memory, memory, {
            attnMask: masks.memoryMask ?? null,
            keyPaddingMask: masks.memoryKeyPaddingMask ?? null,
            needWeights: false,
          })[0],
        ),
      (x: Tensor) => d3.forward(ffBlock(this, x)),
    ];
    return tidy(() =>
      blocks.reduce(
        (x, block, i) =>
          this.normFirst ? x.add(block(this.norms[i]!.forward(x))) : this.norms[i]!.forward(x.add(block(x))),
        tgt,
      ),
    );
  }

  /**
   * A new layer with the same options and a copy of this one's parameters (PyTorch's
   * copy.deepcopy): it draws nothing from the random generator, on the device of this layer.
   */
  clone(): TransformerDecoderLayer {
    const state = getRngState();
    const copy = new TransformerDecoderLayer(this.dModel, this.nhead, this.options);
    setRngState(state);
    copy.to(this.device).loadStateDict(this.stateDict());
    copy.train(this.training);
    return copy;
  }
}
