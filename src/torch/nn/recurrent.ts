// Recurrent layers: RNN, LSTM and GRU over libtorch's fused kernels (aten::rnn_tanh / rnn_relu,
// aten::lstm, aten::gru; cuDNN on a GPU), with PyTorch's parameter names, order and
// initialisation, so state dicts carry over. A PackedSequence input runs the packed kernels
// (aten::lstm.data, ...), which stop each sequence at its own length. The single-step cells are in
// rnn-cells.ts.
import { Tensor } from '../tensor.js';
import { empty, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { PackedSequence } from './rnn-packing.js';
import { uniform_ } from './init.js';
import { pyFloat } from './module-repr.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/** Options of the recurrent layers (PyTorch's names and defaults, camelCase). */
export interface RNNOptions {
  /** Stacked layers (default 1). */
  numLayers?: number;
  /** Bias terms b_ih and b_hh (default true). */
  bias?: boolean;
  /** Input and output as [batch, time, features] rather than [time, batch, features] (default false). */
  batchFirst?: boolean;
  /** Dropout on the outputs of every layer but the last, in training mode (default 0). */
  dropout?: number;
  /** A second direction per layer, over the reversed sequence (default false). */
  bidirectional?: boolean;
}

/** Options of RNN: those of every recurrent layer and the nonlinearity. */
export interface ElmanRNNOptions extends RNNOptions {
  /** The activation of each step, 'tanh' (default) or 'relu'. */
  nonlinearity?: 'tanh' | 'relu';
}

const MAX_SIZE = 2 ** 31 - 1;

abstract class RNNBase extends Module {
  readonly numLayers: number;
  readonly bias: boolean;
  readonly batchFirst: boolean;
  readonly dropout: number;
  readonly bidirectional: boolean;
  /** The parameters in the order libtorch's kernels take them: per layer and direction w_ih, w_hh, b_ih, b_hh. */
  protected readonly flatWeights: Tensor[] = [];

  constructor(
    gates: number,
    readonly inputSize: number,
    readonly hiddenSize: number,
    options: RNNOptions,
  ) {
    super();
    const c = checksOf(this.constructor.name);
    c.integer(inputSize, 'inputSize', { min: 1, max: MAX_SIZE });
    c.integer(hiddenSize, 'hiddenSize', { min: 1, max: MAX_SIZE });
    c.object(options, 'options');
    this.numLayers = c.integer(options.numLayers ?? 1, 'options.numLayers', { min: 1, max: 1000 });
    this.dropout = c.number(options.dropout ?? 0, 'options.dropout', { min: 0, max: 1 });
    this.bias = flag(c, options.bias, 'bias', true);
    this.batchFirst = flag(c, options.batchFirst, 'batchFirst', false);
    this.bidirectional = flag(c, options.bidirectional, 'bidirectional', false);
    const directions = this.bidirectional ? 2 : 1;
    for (let layer = 0; layer < this.numLayers; layer++)
      for (let d = 0; d < directions; d++) {
        const suffix = `_l${layer}${d === 1 ? '_reverse' : ''}`;
        const inputs = layer === 0 ? inputSize : hiddenSize * directions;
        const add = (name: string, shape: number[]) =>
          this.flatWeights.push(this.registerParameter(`${name}${suffix}`, empty(shape)));
        add('weight_ih', [gates * hiddenSize, inputs]);
        add('weight_hh', [gates * hiddenSize, hiddenSize]);
        if (this.bias) {
          add('bias_ih', [gates * hiddenSize]);
          add('bias_hh', [gates * hiddenSize]);
        }
      }
    // PyTorch's reset_parameters: every parameter U(-1/sqrt(hidden), 1/sqrt(hidden)), in order
    const bound = 1 / Math.sqrt(hiddenSize);
    for (const p of this.flatWeights) uniform_(p, -bound, bound);
  }

  /**
   * PyTorch's RNNBase.extra_repr: the sizes, then only the options that differ from their
   * defaults (RNN's nonlinearity is not among them, as in PyTorch).
   */
  override extraRepr(): string {
    const parts = [`${this.inputSize}, ${this.hiddenSize}`];
    if (this.numLayers !== 1) parts.push(`num_layers=${this.numLayers}`);
    if (!this.bias) parts.push('bias=False');
    if (this.batchFirst) parts.push('batch_first=True');
    if (this.dropout !== 0) parts.push(`dropout=${pyFloat(this.dropout)}`);
    if (this.bidirectional) parts.push('bidirectional=True');
    return parts.join(', ');
  }

  /** The input as [time, batch, features] or [batch, time, features] (batched), and its batch size. */
  protected batchOf(x: Tensor): { input: Tensor; batch: number; unbatched: boolean } {
    const name = this.constructor.name;
    if (!(x instanceof Tensor)) checksOf(name).fail('x', 'a Tensor', x);
    if (x.ndim !== 2 && x.ndim !== 3)
      throw new ArgumentError(
        `${name}: x must be a 2-d [time, features] or 3-d (batched) tensor, got shape [${x.shape.join(', ')}]`,
      );
    const features = x.shape[x.ndim - 1];
    if (features !== this.inputSize)
      throw new ArgumentError(
        `${name}: x must have ${this.inputSize} features in its last dimension (inputSize), got shape [${x.shape.join(', ')}]`,
      );
    if (x.ndim === 2) return { input: x.unsqueeze(this.batchFirst ? 0 : 1), batch: 1, unbatched: true };
    return { input: x, batch: x.shape[this.batchFirst ? 0 : 1]!, unbatched: false };
  }

  /** What aten::lstm and aten::gru take after the input and the state, in their order. */
  protected kernelArgs(): [Tensor[], boolean, number, number, boolean, boolean, boolean] {
    const { flatWeights, bias, numLayers, dropout, training, bidirectional, batchFirst } = this;
    return [flatWeights, bias, numLayers, dropout, training, bidirectional, batchFirst];
  }

  /** What aten::lstm.data and aten::gru.data take after the input and the state (no batchFirst). */
  protected packedKernelArgs(): [Tensor[], boolean, number, number, boolean, boolean] {
    const { flatWeights, bias, numLayers, dropout, training, bidirectional } = this;
    return [flatWeights, bias, numLayers, dropout, training, bidirectional];
  }

  /**
   * The initial states of a packed batch, in the packed (longest first) order: zeros, or the
   * given ones (in the caller's batch order) checked and permuted as PyTorch's permute_hidden.
   */
  protected packedStates(x: PackedSequence, given: (Tensor | undefined)[], whats: string[]): Tensor[] {
    const name = this.constructor.name;
    if (x.data.ndim !== 2 || x.data.shape[1] !== this.inputSize)
      throw new ArgumentError(
        `${name}: the packed data must be of shape [steps, ${this.inputSize}] (inputSize), got [${x.data.shape.join(', ')}]`,
      );
    const batch = x.batchSize;
    return given.map((g, i) => {
      const h = this.initialState(g, x.data, batch, false, whats[i]!);
      return g !== undefined && x.sortedIndices ? h.indexSelect(1, x.sortedIndices) : h;
    });
  }

  /** A final state back in the caller's batch order. */
  protected static unsorted(h: Tensor, x: PackedSequence): Tensor {
    return x.unsortedIndices ? h.indexSelect(1, x.unsortedIndices) : h;
  }

  /** A zero initial state, or the given one checked against [layers x directions, batch, hidden]. */
  protected initialState(
    given: Tensor | undefined,
    input: Tensor,
    batch: number,
    unbatched: boolean,
    what: string,
  ): Tensor {
    const shape = [this.numLayers * (this.bidirectional ? 2 : 1), batch, this.hiddenSize];
    if (given === undefined) return zeros(shape, input.dtype, input.device);
    const h = unbatched && given.ndim === 2 ? given.unsqueeze(1) : given;
    if (h.shape.join() !== shape.join())
      throw new ArgumentError(
        `${this.constructor.name}: ${what} must be of shape [${shape.join(', ')}], got [${given.shape.join(', ')}]`,
      );
    return h;
  }
}

/** The packed output of `x`'s batch: new handles on its batch sizes and indices, so each object frees its own. */
function packedLike(data: Tensor, x: PackedSequence): PackedSequence {
  return new PackedSequence(
    data,
    x.batchSizes.detach(),
    x.sortedIndices?.detach() ?? null,
    x.unsortedIndices?.detach() ?? null,
  );
}

function flag(c: ArgumentChecks, v: unknown, name: string, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') c.fail(`options.${name}`, 'true or false', v);
  return v as boolean;
}

/**
 * An Elman recurrent layer (torch.nn.RNN): h_t = act(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh),
 * act tanh (default) or relu. Shapes as {@link LSTM}'s, one state h; parameters weight_ih_l0,
 * weight_hh_l0, bias_ih_l0, bias_hh_l0 as PyTorch names them. Returns [output, h_n].
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const rnn = new torch.nn.RNN(8, 16, { nonlinearity: 'relu', bidirectional: true });
 * torch.tidy(() => {
 *   const [output, h] = rnn.forward(torch.randn([10, 4, 8])); // 10 steps of a batch of 4
 *   console.log(output.shape, h.shape); // [10, 4, 32] [2, 4, 16]
 * });
 * ```
 */
export class RNN extends RNNBase {
  readonly nonlinearity: 'tanh' | 'relu';
  constructor(inputSize: number, hiddenSize: number, options: ElmanRNNOptions = {}) {
    // checked before the parameters exist, so that a bad option leaves nothing to free
    const nonlinearity = (options as { nonlinearity?: unknown } | null)?.nonlinearity ?? 'tanh';
    if (nonlinearity !== 'tanh' && nonlinearity !== 'relu')
      checksOf('RNN').fail('options.nonlinearity', "'tanh' or 'relu'", nonlinearity);
    super(1, inputSize, hiddenSize, options);
    this.nonlinearity = nonlinearity as 'tanh' | 'relu';
  }

  /** Runs the sequence from the state `h0` (default zeros); returns [output, h_n]. Takes a PackedSequence as {@link LSTM.forward}. */
  forward(x: Tensor, h0?: Tensor): [Tensor, Tensor];
  forward(x: PackedSequence, h0?: Tensor): [PackedSequence, Tensor];
  forward(x: Tensor | PackedSequence, h0?: Tensor): [Tensor | PackedSequence, Tensor] {
    const relu = this.nonlinearity === 'relu';
    if (x instanceof PackedSequence) {
      const [h] = this.packedStates(x, [h0], ['h0']);
      const kernel = relu ? aten.rnn_relu_data : aten.rnn_tanh_data;
      const [out, hn] = kernel(x.data, x.batchSizes, h!, ...this.packedKernelArgs());
      return [packedLike(out, x), RNNBase.unsorted(hn, x)];
    }
    const { input, batch, unbatched } = this.batchOf(x);
    const h = this.initialState(h0, input, batch, unbatched, 'h0');
    const kernel = relu ? aten.rnn_relu_input : aten.rnn_tanh_input;
    const [out, hn] = kernel(input, h, ...this.kernelArgs());
    if (!unbatched) return [out, hn];
    return [out.squeeze(this.batchFirst ? 0 : 1), hn.squeeze(1)];
  }
}

/**
 * A long short-term memory layer (torch.nn.LSTM): input [time, batch, inputSize] ([batch, time,
 * ...] with batchFirst, or unbatched [time, inputSize]); returns the output [time, batch,
 * directions x hiddenSize] and the final hidden and cell states [layers x directions, batch,
 * hiddenSize]. Parameters weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0 (gates i, f, g, o),
 * as PyTorch names them. A batch of sequences of different lengths goes in as a
 * {@link nn.utils.rnn.PackedSequence} (`nn.utils.rnn.packPaddedSequence`).
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const lstm = new torch.nn.LSTM(8, 16, { numLayers: 2, batchFirst: true });
 * torch.tidy(() => {
 *   const [output, [h, c]] = lstm.forward(torch.randn([4, 10, 8])); // 4 sequences of 10 steps
 *   console.log(output.shape, h.shape, c.shape); // [4, 10, 16] [2, 4, 16] [2, 4, 16]
 * });
 * ```
 */
export class LSTM extends RNNBase {
  constructor(inputSize: number, hiddenSize: number, options: RNNOptions = {}) {
    super(4, inputSize, hiddenSize, options);
  }

  /**
   * Runs the sequence from the states `state` ([h0, c0], default zeros); returns [output, [h_n,
   * c_n]]. A {@link nn.utils.rnn.PackedSequence} input gives a packed output (sharing none of the
   * input's tensors) and the states of each sequence's own last step, in the batch's order.
   */
  forward(x: Tensor, state?: [Tensor, Tensor]): [Tensor, [Tensor, Tensor]];
  forward(x: PackedSequence, state?: [Tensor, Tensor]): [PackedSequence, [Tensor, Tensor]];
  forward(x: Tensor | PackedSequence, state?: [Tensor, Tensor]): [Tensor | PackedSequence, [Tensor, Tensor]] {
    if (x instanceof PackedSequence) {
      const hx = this.packedStates(x, [state?.[0], state?.[1]], ['state[0] (h0)', 'state[1] (c0)']);
      const [out, h, c] = aten.lstm_data(x.data, x.batchSizes, hx, ...this.packedKernelArgs());
      return [packedLike(out, x), [RNNBase.unsorted(h, x), RNNBase.unsorted(c, x)]];
    }
    const { input, batch, unbatched } = this.batchOf(x);
    const h0 = this.initialState(state?.[0], input, batch, unbatched, 'state[0] (h0)');
    const c0 = this.initialState(state?.[1], input, batch, unbatched, 'state[1] (c0)');
    const [out, h, c] = aten.lstm_input(input, [h0, c0], ...this.kernelArgs());
    if (!unbatched) return [out, [h, c]];
    return [out.squeeze(this.batchFirst ? 0 : 1), [h.squeeze(1), c.squeeze(1)]];
  }
}

/**
 * A gated recurrent unit layer (torch.nn.GRU): shapes as {@link LSTM}'s, one state h (gates r, z,
 * n). Returns [output, h_n].
 */
export class GRU extends RNNBase {
  constructor(inputSize: number, hiddenSize: number, options: RNNOptions = {}) {
    super(3, inputSize, hiddenSize, options);
  }

  /** Runs the sequence from the state `h0` (default zeros); returns [output, h_n]. Takes a PackedSequence as {@link LSTM.forward}. */
  forward(x: Tensor, h0?: Tensor): [Tensor, Tensor];
  forward(x: PackedSequence, h0?: Tensor): [PackedSequence, Tensor];
  forward(x: Tensor | PackedSequence, h0?: Tensor): [Tensor | PackedSequence, Tensor] {
    if (x instanceof PackedSequence) {
      const [h] = this.packedStates(x, [h0], ['h0']);
      const [out, hn] = aten.gru_data(x.data, x.batchSizes, h!, ...this.packedKernelArgs());
      return [packedLike(out, x), RNNBase.unsorted(hn, x)];
    }
    const { input, batch, unbatched } = this.batchOf(x);
    const h = this.initialState(h0, input, batch, unbatched, 'h0');
    const [out, hn] = aten.gru_input(input, h, ...this.kernelArgs());
    if (!unbatched) return [out, hn];
    return [out.squeeze(this.batchFirst ? 0 : 1), hn.squeeze(1)];
  }
}
