// The stacked Transformer decoder and the whole model (torch.nn.TransformerDecoder, Transformer),
// built from the layers of transformer.ts with PyTorch's submodule names, construction order
// (its order of random draws) and initialisation, so weights move between the two.
import { Tensor } from '../tensor.js';
import { tidy } from '../scope.js';
import { full } from '../creation.js';
import type { DeviceLike } from '../device.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { LayerNorm } from './layers.js';
import { ModuleList } from './activation.js';
import { xavierUniform_ } from './init.js';
import { noGrad } from '../autograd.js';
import {
  TransformerDecoderLayer,
  TransformerEncoder,
  TransformerEncoderLayer,
  layerStack,
  type DecoderMasks,
  type TransformerEncoderLayerOptions,
} from './transformer.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';
import { checkTensor } from './layer-util.js';

/**
 * A stack of numLayers Transformer decoder layers and an optional final norm
 * (torch.nn.TransformerDecoder). As PyTorch deep-copies its layer, every layer starts with the
 * given layer's parameters: the decoder takes `layer` itself as layers.0 (it owns it now and
 * frees it with dispose()) and clones it for the others without drawing random numbers. Target
 * and output [T, batch, dModel], memory [S, batch, dModel] (batch first or unbatched as the
 * layer). State dict keys layers.0.self_attn.in_proj_weight, ..., norm.weight, as PyTorch's.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const layer = new torch.nn.TransformerDecoderLayer(32, 4, { dimFeedforward: 64 });
 * const decoder = new torch.nn.TransformerDecoder(layer, 2, { norm: new torch.nn.LayerNorm([32]) });
 * torch.tidy(() => {
 *   const causal = torch.nn.Transformer.generateSquareSubsequentMask(6);
 *   const y = decoder.forward(torch.randn([6, 2, 32]), torch.randn([10, 2, 32]), { tgtMask: causal });
 *   console.log(y.shape); // [6, 2, 32]
 * });
 * ```
 */
export class TransformerDecoder extends Module {
  readonly layers: ModuleList<TransformerDecoderLayer>;
  readonly norm: LayerNorm | null;

  constructor(
    layer: TransformerDecoderLayer,
    readonly numLayers: number,
    options: { norm?: LayerNorm | null } = {},
  ) {
    super();
    const stack = layerStack('TransformerDecoder', TransformerDecoderLayer, layer, numLayers, options);
    this.layers = this.registerModule('layers', stack.layers);
    this.norm = stack.norm ? this.registerModule('norm', stack.norm) : null;
  }

  /**
   * Applies the layers in turn to `tgt`, each attending over `memory`, then the norm; the masks go
   * to every layer (see TransformerDecoderLayer.forward).
   */
  forward(tgt: Tensor, memory: Tensor, masks: DecoderMasks = {}): Tensor {
    checksOf('TransformerDecoder').object(masks, 'masks');
    return tidy(() => {
      let x = tgt;
      for (const layer of this.layers.items) x = layer.forward(x, memory, masks);
      return this.norm ? this.norm.forward(x) : x;
    });
  }
}

/** Options of Transformer (PyTorch's names and defaults, camelCase): the layers' options and the stacks' sizes. */
export interface TransformerOptions extends TransformerEncoderLayerOptions {
  /** Features of the inputs and outputs (default 512). */
  dModel?: number;
  /** Attention heads (default 8). */
  nhead?: number;
  /** Encoder layers (default 6). */
  numEncoderLayers?: number;
  /** Decoder layers (default 6). */
  numDecoderLayers?: number;
  /** An encoder to use instead of the built one (its parameters are re-initialised too, as in PyTorch). */
  customEncoder?: TransformerEncoder | null;
  /** A decoder to use instead of the built one (its parameters are re-initialised too, as in PyTorch). */
  customDecoder?: TransformerDecoder | null;
}

/** The masks of Transformer.forward: the encoder's, the decoder's and those of the attention over the memory. */
export interface TransformerMasks extends DecoderMasks {
  /** [S, S] or [batch x nhead, S, S], on the encoder's self-attention. */
  srcMask?: Tensor | null;
  /** [batch, S] ([S] unbatched): the source's padding, in the encoder. */
  srcKeyPaddingMask?: Tensor | null;
}

/**
 * The whole Transformer (torch.nn.Transformer): an encoder of numEncoderLayers layers and a
 * decoder of numDecoderLayers layers, each stack ending in a LayerNorm. As PyTorch does, every
 * parameter with more than one dimension is re-initialised with xavierUniform_ after
 * construction, in the order of parameters(), so a model built after the same manualSeed has
 * PyTorch's weights. Source [S, batch, dModel], target and output [T, batch, dModel] ([batch, S,
 * dModel] with batchFirst; unbatched [S, dModel], [T, dModel]). Submodules encoder and decoder.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const model = new torch.nn.Transformer({ dModel: 32, nhead: 4, numEncoderLayers: 2, numDecoderLayers: 2, dimFeedforward: 64 });
 * torch.tidy(() => {
 *   const tgtMask = torch.nn.Transformer.generateSquareSubsequentMask(6);
 *   const y = model.forward(torch.randn([10, 2, 32]), torch.randn([6, 2, 32]), { tgtMask });
 *   console.log(y.shape); // [6, 2, 32]
 * });
 * ```
 */
export class Transformer extends Module {
  readonly encoder: TransformerEncoder;
  readonly decoder: TransformerDecoder;
  readonly dModel: number;
  readonly nhead: number;
  readonly batchFirst: boolean;

  constructor(options: TransformerOptions = {}) {
    super();
    const c = checksOf('Transformer');
    c.object(options, 'options');
    const {
      dModel = 512,
      nhead = 8,
      numEncoderLayers = 6,
      numDecoderLayers = 6,
      customEncoder = null,
      customDecoder = null,
      ...layerOptions
    } = options;
    c.integer(dModel, 'options.dModel', { min: 1 });
    c.integer(nhead, 'options.nhead', { min: 1 });
    if (dModel % nhead !== 0)
      throw new ArgumentError(
        `Transformer: options.dModel (${dModel}) must be divisible by options.nhead (${nhead})`,
      );
    c.integer(numEncoderLayers, 'options.numEncoderLayers', { min: 1, max: 10000 });
    c.integer(numDecoderLayers, 'options.numDecoderLayers', { min: 1, max: 10000 });
    if (customEncoder !== null && !(customEncoder instanceof TransformerEncoder))
      c.fail('options.customEncoder', 'a TransformerEncoder or null', customEncoder);
    if (customDecoder !== null && !(customDecoder instanceof TransformerDecoder))
      c.fail('options.customDecoder', 'a TransformerDecoder or null', customDecoder);
    const settings = { dimFeedforward: 2048, dropout: 0.1, ...layerOptions };
    const eps = settings.layerNormEps ?? 1e-5;
    // PyTorch's construction order: encoder layer, its norm, decoder layer, its norm
    this.encoder = this.registerModule(
      'encoder',
      customEncoder ??
        new TransformerEncoder(new TransformerEncoderLayer(dModel, nhead, settings), numEncoderLayers, {
          norm: new LayerNorm([dModel], { eps }),
        }),
    );
    this.decoder = this.registerModule(
      'decoder',
      customDecoder ??
        new TransformerDecoder(new TransformerDecoderLayer(dModel, nhead, settings), numDecoderLayers, {
          norm: new LayerNorm([dModel], { eps }),
        }),
    );
    this.dModel = dModel;
    this.nhead = nhead;
    this.batchFirst = settings.batchFirst ?? false;
    this.resetParameters();
  }

  /** PyTorch's _reset_parameters: xavierUniform_ on every parameter with more than one dimension, in order. */
  resetParameters(): void {
    noGrad(() => {
      for (const p of this.parameters()) if (p.shape.length > 1) xavierUniform_(p);
    });
  }

  /**
   * Encodes `src`, then decodes `tgt` attending over the encoding (shapes: see the class), with
   * the optional masks; returns the decoder's output.
   */
  forward(src: Tensor, tgt: Tensor, masks: TransformerMasks = {}): Tensor {
    const c = checksOf('Transformer');
    c.object(masks, 'masks');
    checkTensor('Transformer', src, 'src');
    checkTensor('Transformer', tgt, 'tgt');
    const batched = src.shape.length === 3;
    const batchDim = this.batchFirst ? 0 : 1;
    if (batched && src.shape[batchDim] !== tgt.shape[batchDim]) {
      throw new ArgumentError(
        `Transformer: src [${src.shape}] and tgt [${tgt.shape}] must have the same batch size (dimension ${batchDim}${this.batchFirst ? ', batchFirst' : ''})`,
      );
    }
    if (src.shape.at(-1) !== this.dModel || tgt.shape.at(-1) !== this.dModel) {
      throw new ArgumentError(
        `Transformer: the last dimension of src [${src.shape}] and tgt [${tgt.shape}] must be dModel (${this.dModel})`,
      );
    }
    const { srcMask, srcKeyPaddingMask, ...decoderMasks } = masks;
    return tidy(() => {
      const memory = this.encoder.forward(src, {
        mask: srcMask ?? null,
        srcKeyPaddingMask: srcKeyPaddingMask ?? null,
      });
      return this.decoder.forward(tgt, memory, decoderMasks);
    });
  }

  /**
   * The causal mask of a sequence of `size` (Transformer.generate_square_subsequent_mask): a float
   * [size, size] tensor, -Infinity above the diagonal (a position may not attend to later ones),
   * 0 elsewhere.
   */
  static generateSquareSubsequentMask(size: number, device?: DeviceLike): Tensor {
    checksOf('Transformer.generateSquareSubsequentMask').integer(size, 'size', { min: 0 });
    return tidy(() => aten.triu(full([size, size], -Infinity, 'float32', device), 1));
  }
}
