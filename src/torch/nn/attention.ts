// Multi-head attention (torch.nn.MultiheadAttention) in matmul and softmax, with PyTorch's
// parameter names, shapes and initialisation, so state dicts carry over.
import { Tensor } from '../tensor.js';
import { empty } from '../creation.js';
import { tidy } from '../scope.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { Linear } from './layers.js';
import { constant_, xavierUniform_ } from './init.js';
import { isFloatingPoint } from '../dtype.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** Options of MultiheadAttention (PyTorch's names and defaults, camelCase). */
export interface MultiheadAttentionOptions {
  /** Dropout on the attention weights, in training mode (default 0). */
  dropout?: number;
  /** Biases of the input and output projections (default true). */
  bias?: boolean;
  /** Features of the key (default embedDim); with kdim or vdim other than embedDim, separate q/k/v projections. */
  kdim?: number;
  /** Features of the value (default embedDim). */
  vdim?: number;
  /** Inputs and output as [batch, seq, features] rather than [seq, batch, features] (default false). */
  batchFirst?: boolean;
  /** PyTorch's learned key and value biases: not supported here (only false). */
  addBiasKv?: boolean;
  /** PyTorch's zero key and value: not supported here (only false). */
  addZeroAttn?: boolean;
}

/** Options of MultiheadAttention.forward (PyTorch's names and defaults, camelCase). */
export interface MultiheadAttentionForwardOptions {
  /**
   * [batch, S] ([S] unbatched): keys to ignore, per sequence. Boolean (true: ignored, padding) or
   * floating point (added to the scores).
   */
  keyPaddingMask?: Tensor | null;
  /** Return the attention weights as well (default true); null in their place otherwise. */
  needWeights?: boolean;
  /**
   * [L, S], or [batch x numHeads, L, S] per sequence and head: boolean (true: the query may NOT
   * attend to the key) or floating point (added to the scores).
   */
  attnMask?: Tensor | null;
  /** Average the returned weights over the heads (default true); per head otherwise. */
  averageAttnWeights?: boolean;
}

const MAX_SIZE = 2 ** 31 - 1;

/** An optional boolean option, named in its error. */
export function flagOption(c: ArgumentChecks, v: unknown, name: string, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') c.fail(name, 'true or false', v);
  return v as boolean;
}

const shapeOf = (t: Tensor) => `[${t.shape.join(', ')}]`;

/**
 * A boolean mask where true blocks (MultiheadAttention's convention) or a float mask to add, as
 * an additive float mask of `dtype` (-Infinity where blocked); a float mask is returned as it is.
 */
export function additiveMask(
  mask: Tensor,
  dtype: Tensor['dtype'],
  blockWhere: boolean,
  what: string,
): Tensor {
  if (mask.dtype === 'bool') {
    const blocked = blockWhere ? mask : aten.logical_not(mask);
    const zeros = aten.zeros(mask.shape, dtype, null, mask.device.name);
    return aten.masked_fill_Scalar(zeros, blocked, { float: -Infinity });
  }
  if (!isFloatingPoint(mask.dtype))
    throw new ArgumentError(`${what} must be a bool or floating-point tensor, got ${mask.dtype}`);
  return mask;
}

/**
 * The weights softmax(q k^T scale + bias) [..., L, S], with `dropoutP` > 0 dropped out: returns
 * their product with v [..., L, Ev] and the weights. `bias` is an additive mask or null.
 */
export function attentionWeights(
  q: Tensor,
  k: Tensor,
  v: Tensor,
  bias: Tensor | null,
  dropoutP: number,
  scale = 1 / Math.sqrt(q.shape[q.ndim - 1]!),
): [Tensor, Tensor] {
  const scores = aten.matmul(aten.mul_Scalar(q, { float: scale }), aten.transpose_int(k, -2, -1));
  const masked = bias ? aten.add_Tensor(scores, bias) : scores;
  let weights = aten.softmax_int(masked, -1);
  if (dropoutP > 0) weights = aten.dropout(weights, dropoutP, true);
  return [aten.matmul(weights, v), weights];
}

/**
 * Multi-head attention (torch.nn.MultiheadAttention): numHeads heads of embedDim / numHeads
 * features each attend from the query over the key and value, and an output projection merges
 * them. Inputs: query [L, batch, embedDim], key [S, batch, kdim], value [S, batch, vdim] (batch
 * first with batchFirst; unbatched [L, embedDim], [S, kdim], [S, vdim]). Returns the output
 * [L, batch, embedDim] (same layout as the query) and the attention weights [batch, L, S]
 * averaged over the heads ([batch, numHeads, L, S] without averaging, no batch dimension
 * unbatched), or null with needWeights false. Parameters in_proj_weight [3 embedDim, embedDim]
 * (q_proj_weight, k_proj_weight, v_proj_weight when kdim or vdim differ), in_proj_bias
 * [3 embedDim], out_proj.weight and out_proj.bias, initialised as PyTorch does (xavier-uniform
 * projections, zero biases). Masks follow PyTorch's convention: a boolean true blocks.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const mha = new torch.nn.MultiheadAttention(16, 4, { batchFirst: true });
 * torch.tidy(() => {
 *   const x = torch.randn([2, 5, 16]); // 2 sequences of 5 tokens
 *   const padding = torch.tensor([0, 0, 0, 1, 1], { shape: [1, 5] }).bool().expand(2, 5);
 *   const [y, weights] = mha.forward(x, x, x, { keyPaddingMask: padding });
 *   console.log(y.shape, weights!.shape); // [2, 5, 16] [2, 5, 5]
 * });
 * ```
 */
export class MultiheadAttention extends Module {
  readonly kdim: number;
  readonly vdim: number;
  readonly headDim: number;
  readonly dropout: number;
  readonly batchFirst: boolean;
  /** Shape `[3 embedDim, embedDim]`: the query, key and value projections stacked; null with separate ones. */
  readonly inProjWeight: Tensor | null;
  readonly qProjWeight: Tensor | null;
  readonly kProjWeight: Tensor | null;
  readonly vProjWeight: Tensor | null;
  /** [3 embedDim] or null without bias. */
  readonly inProjBias: Tensor | null;
  /** The output projection (PyTorch's `out_proj`). */
  readonly outProj: Linear;

  constructor(
    readonly embedDim: number,
    readonly numHeads: number,
    options: MultiheadAttentionOptions = {},
  ) {
    super();
    const c = checksOf('MultiheadAttention');
    c.integer(embedDim, 'embedDim', { min: 1, max: MAX_SIZE });
    c.integer(numHeads, 'numHeads', { min: 1, max: MAX_SIZE });
    c.object(options, 'options');
    if (embedDim % numHeads !== 0)
      throw new ArgumentError(
        `MultiheadAttention: embedDim (${embedDim}) must be divisible by numHeads (${numHeads})`,
      );
    this.kdim = c.integer(options.kdim ?? embedDim, 'options.kdim', { min: 1, max: MAX_SIZE });
    this.vdim = c.integer(options.vdim ?? embedDim, 'options.vdim', { min: 1, max: MAX_SIZE });
    this.dropout = c.number(options.dropout ?? 0, 'options.dropout', { min: 0, max: 1 });
    const bias = flagOption(c, options.bias, 'options.bias', true);
    this.batchFirst = flagOption(c, options.batchFirst, 'options.batchFirst', false);
    for (const key of ['addBiasKv', 'addZeroAttn'] as const)
      if (flagOption(c, options[key], `options.${key}`, false))
        throw new ArgumentError(`MultiheadAttention: options.${key} is not supported (only false)`);
    this.headDim = embedDim / numHeads;
    const separate = this.kdim !== embedDim || this.vdim !== embedDim;
    const param = (name: string, shape: number[]) => this.registerParameter(name, empty(shape));
    this.qProjWeight = separate ? param('q_proj_weight', [embedDim, embedDim]) : null;
    this.kProjWeight = separate ? param('k_proj_weight', [embedDim, this.kdim]) : null;
    this.vProjWeight = separate ? param('v_proj_weight', [embedDim, this.vdim]) : null;
    this.inProjWeight = separate ? null : param('in_proj_weight', [3 * embedDim, embedDim]);
    this.inProjBias = bias ? param('in_proj_bias', [3 * embedDim]) : null;
    // PyTorch's order of draws: out_proj initialises as a Linear, then _reset_parameters
    this.outProj = this.registerModule('out_proj', new Linear(embedDim, embedDim, { bias }));
    for (const w of [this.inProjWeight, this.qProjWeight, this.kProjWeight, this.vProjWeight])
      if (w) xavierUniform_(w);
    if (this.inProjBias) {
      constant_(this.inProjBias, 0);
      constant_(this.outProj.bias!, 0);
    }
  }

  /**
   * Attends from `query` over `key` and `value` (pass the same tensor three times for
   * self-attention); returns [output, weights or null]. Shapes: see the class.
   */
  forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    options: MultiheadAttentionForwardOptions = {},
  ): [Tensor, Tensor | null] {
    const c = checksOf('MultiheadAttention');
    c.object(options, 'options');
    const needWeights = flagOption(c, options.needWeights, 'options.needWeights', true);
    const average = flagOption(c, options.averageAttnWeights, 'options.averageAttnWeights', true);
    const { batched, N, L, S } = this.checkInputs(c, query, key, value);
    const kpm = this.checkMask(c, options.keyPaddingMask, 'options.keyPaddingMask', [batched ? [N, S] : [S]]);
    const mask = this.checkMask(c, options.attnMask, 'options.attnMask', [
      [L, S],
      [N * this.numHeads, L, S],
    ]);
    const { numHeads: H, headDim: D, embedDim: E } = this;
    return tidy(() => {
      // internally [batch, seq, features], the heads as [batch, heads, seq, headDim]
      const inner = (t: Tensor) => (!batched ? t.unsqueeze(0) : this.batchFirst ? t : t.transpose(0, 1));
      const heads = (t: Tensor, len: number) => t.reshape(N, len, H, D).transpose(1, 2);
      const [q, k, v] = this.project(query, key, value, inner);
      let bias: Tensor | null = null;
      if (mask) {
        bias = additiveMask(mask, q.dtype, true, 'MultiheadAttention: options.attnMask');
        if (mask.ndim === 3) bias = bias.reshape(N, H, L, S);
      }
      if (kpm) {
        const m = additiveMask(kpm, q.dtype, true, 'MultiheadAttention: options.keyPaddingMask');
        bias = bias ? bias.add(m.reshape(N, 1, 1, S)) : m.reshape(N, 1, 1, S);
      }
      const p = this.training ? this.dropout : 0;
      const [out, weights] = attentionWeights(heads(q, L), heads(k, S), heads(v, S), bias, p);
      const y = this.outProj.forward(out.transpose(1, 2).reshape(N, L, E));
      const output = !batched ? y.squeeze(0) : this.batchFirst ? y : y.transpose(0, 1).contiguous();
      if (!needWeights) return [output, null];
      const w = average ? weights.mean(1) : weights;
      return [output, batched ? w : w.squeeze(0)];
    });
  }

  /** q, k and v projected, each [batch, seq, embedDim] (`inner` puts an input in that layout). */
  private project(query: Tensor, key: Tensor, value: Tensor, inner: (t: Tensor) => Tensor): Tensor[] {
    const b = this.inProjBias ? this.inProjBias.chunk(3) : [null, null, null];
    if (this.inProjWeight && query === key && key === value)
      return aten.linear(inner(query), this.inProjWeight, this.inProjBias).chunk(3, -1);
    const w = this.inProjWeight
      ? this.inProjWeight.chunk(3)
      : [this.qProjWeight!, this.kProjWeight!, this.vProjWeight!];
    return [query, key, value].map((t, i) => aten.linear(inner(t), w[i]!, b[i]));
  }

  private checkInputs(c: ArgumentChecks, query: Tensor, key: Tensor, value: Tensor) {
    for (const [t, name] of [
      [query, 'query'],
      [key, 'key'],
      [value, 'value'],
    ] as const)
      if (!(t instanceof Tensor)) c.fail(name, 'a Tensor', t);
    const fail = (what: string) =>
      new ArgumentError(
        `MultiheadAttention: ${what}; got query ${shapeOf(query)}, key ${shapeOf(key)}, value ${shapeOf(value)}`,
      );
    const batched = query.ndim === 3;
    if (query.ndim !== 2 && !batched)
      throw fail('query must be 2-d [L, embedDim] (unbatched) or 3-d (batched)');
    if (key.ndim !== query.ndim || value.ndim !== query.ndim)
      throw fail('query, key and value must all be batched (3-d) or all unbatched (2-d)');
    const last = (t: Tensor) => t.shape[t.ndim - 1];
    if (last(query) !== this.embedDim || last(key) !== this.kdim || last(value) !== this.vdim)
      throw fail(
        `the last dimensions must be embedDim (${this.embedDim}), kdim (${this.kdim}) and vdim (${this.vdim})`,
      );
    const seq = batched && this.batchFirst ? 1 : 0;
    const L = query.shape[seq]!;
    const S = key.shape[seq]!;
    if (value.shape[seq] !== S) throw fail('key and value must have the same sequence length');
    const N = batched ? query.shape[1 - seq]! : 1;
    if (batched && (key.shape[1 - seq] !== N || value.shape[1 - seq] !== N))
      throw fail('query, key and value must have the same batch size');
    return { batched, N, L, S };
  }

  private checkMask(c: ArgumentChecks, mask: unknown, name: string, shapes: number[][]): Tensor | null {
    if (mask === undefined || mask === null) return null;
    if (!(mask instanceof Tensor)) c.fail(name, 'a Tensor or null', mask);
    const m = mask as Tensor;
    if (!shapes.some((s) => s.join() === m.shape.join()))
      throw new ArgumentError(
        `MultiheadAttention: ${name} must be of shape ${shapes.map((s) => `[${s.join(', ')}]`).join(' or ')}, got ${shapeOf(m)}`,
      );
    return m;
  }
}
