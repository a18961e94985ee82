// The single-step recurrent cells (torch.nn.RNNCell, LSTMCell, GRUCell) over libtorch's cell
// kernels (aten::rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell), with PyTorch's parameter
// names, shapes and initialisation, so state dicts carry over and a seeded cell draws PyTorch's
// weights. A cell takes one step of a batch [batch, inputSize] or, as PyTorch 1.13 allows, of one
// unbatched sample [inputSize]; the whole-sequence layers are in recurrent.ts.
import { Tensor } from '../tensor.js';
import { empty, zeros } from '../creation.js';
import * as aten from '../generated/aten.js';
import { Module } from './module.js';
import { checkOptions, size } from './layer-util.js';
import { uniform_ } from './init.js';
import { ArgumentError, checksOf } from '../../util/arguments.js';

/** Options of the recurrent cells (PyTorch's names and defaults). */
export interface RNNCellOptions {
  /** Bias terms bias_ih and bias_hh (default true). */
  bias?: boolean;
}

/** Options of RNNCell: the bias and the nonlinearity. */
export interface RNNCellLayerOptions extends RNNCellOptions {
  /** The activation, 'tanh' (default) or 'relu'. */
  nonlinearity?: 'tanh' | 'relu';
}

const shapeOf = (t: Tensor) => `[${t.shape.join(', ')}]`;

abstract class RNNCellBase extends Module {
  readonly weightIh: Tensor;
  readonly weightHh: Tensor;
  readonly biasIh: Tensor | null;
  readonly biasHh: Tensor | null;
  readonly bias: boolean;

  constructor(
    gates: number,
    readonly inputSize: number,
    readonly hiddenSize: number,
    options: RNNCellOptions,
  ) {
    super();
    const c = checksOf(new.target.name);
    size(c, inputSize, 'inputSize');
    size(c, hiddenSize, 'hiddenSize');
    checkOptions(c, options, {});
    this.bias = options.bias ?? true;
    this.weightIh = this.registerParameter('weight_ih', empty([gates * hiddenSize, inputSize]));
    this.weightHh = this.registerParameter('weight_hh', empty([gates * hiddenSize, hiddenSize]));
    this.biasIh = this.bias ? this.registerParameter('bias_ih', empty([gates * hiddenSize])) : null;
    this.biasHh = this.bias ? this.registerParameter('bias_hh', empty([gates * hiddenSize])) : null;
    // PyTorch's reset_parameters: every parameter U(-1/sqrt(hidden), 1/sqrt(hidden)), in order
    const bound = 1 / Math.sqrt(hiddenSize);
    for (const p of this.parameters()) uniform_(p, -bound, bound);
  }

  /** The input checked as [batch, inputSize] or unbatched [inputSize], made batched. */
  protected batchOf(x: Tensor): { input: Tensor; unbatched: boolean } {
    const name = this.constructor.name;
    if (!(x instanceof Tensor)) checksOf(name).fail('x', 'a Tensor', x);
    if (x.ndim !== 1 && x.ndim !== 2)
      throw new ArgumentError(
        `${name}: x must be 1-d [inputSize] (unbatched) or 2-d [batch, inputSize], got shape ${shapeOf(x)}`,
      );
    if (x.shape[x.ndim - 1] !== this.inputSize)
      throw new ArgumentError(
        `${name}: x must have ${this.inputSize} features in its last dimension (inputSize), got shape ${shapeOf(x)}`,
      );
    return x.ndim === 1 ? { input: x.unsqueeze(0), unbatched: true } : { input: x, unbatched: false };
  }

  /** A zero state [batch, hiddenSize], or the given one checked against it ([hiddenSize] for an unbatched `x`), batched. */
  protected stateOf(given: Tensor | undefined, x: Tensor, input: Tensor, what: string): Tensor {
    const batch = input.shape[0]!;
    const unbatched = x.ndim === 1;
    if (given === undefined) return zeros([batch, this.hiddenSize], input.dtype, input.device);
    const expected = unbatched ? [this.hiddenSize] : [batch, this.hiddenSize];
    if (!(given instanceof Tensor)) checksOf(this.constructor.name).fail(what, 'a Tensor', given);
    if (given.shape.join() !== expected.join())
      throw new ArgumentError(
        `${this.constructor.name}: ${what} must be of shape [${expected.join(', ')}] for an input of shape ${shapeOf(x)}, got ${shapeOf(given)}`,
      );
    return unbatched ? given.unsqueeze(0) : given;
  }

  /** PyTorch's `input_size, hidden_size` and a bias=False. */
  override extraRepr(): string {
    return `${this.inputSize}, ${this.hiddenSize}${this.bias ? '' : ', bias=False'}`;
  }

  /** The weights as the cell kernels take them after the input and the state. */
  protected weights(): [Tensor, Tensor, Tensor | null, Tensor | null] {
    return [this.weightIh, this.weightHh, this.biasIh, this.biasHh];
  }
}

/**
 * An Elman recurrent cell (torch.nn.RNNCell): h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act
 * tanh (default) or relu. Input [batch, inputSize] or [inputSize], state and output [batch,
 * hiddenSize] (or [hiddenSize]); parameters weight_ih, weight_hh, bias_ih, bias_hh.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const cell = new torch.nn.RNNCell(8, 16);
 * torch.tidy(() => {
 *   let h = cell.forward(torch.randn([4, 8])); // the first step starts from zeros
 *   h = cell.forward(torch.randn([4, 8]), h);
 *   console.log(h.shape); // [4, 16]
 * });
 * ```
 */
export class RNNCell extends RNNCellBase {
  readonly nonlinearity: 'tanh' | 'relu';
  constructor(inputSize: number, hiddenSize: number, options: RNNCellLayerOptions = {}) {
    // checked before the parameters exist, so that a bad option leaves nothing to free
    const nonlinearity = (options as { nonlinearity?: unknown } | null)?.nonlinearity ?? 'tanh';
    if (nonlinearity !== 'tanh' && nonlinearity !== 'relu')
      checksOf('RNNCell').fail('options.nonlinearity', "'tanh' or 'relu'", nonlinearity);
    super(1, inputSize, hiddenSize, options);
    this.nonlinearity = nonlinearity as 'tanh' | 'relu';
  }

  /** PyTorch's repr: the sizes, a bias=False and a nonlinearity other than tanh. */
  override extraRepr(): string {
    return `${super.extraRepr()}${this.nonlinearity === 'tanh' ? '' : `, nonlinearity=${this.nonlinearity}`}`;
  }

  /** One step from the state `h` (default zeros); returns the next state. */
  forward(x: Tensor, h?: Tensor): Tensor {
    const { input, unbatched } = this.batchOf(x);
    const hx = this.stateOf(h, x, input, 'h');
    const kernel = this.nonlinearity === 'relu' ? aten.rnn_relu_cell : aten.rnn_tanh_cell;
    const out = kernel(input, hx, ...this.weights());
    return unbatched ? out.squeeze(0) : out;
  }
}

/**
 * A long short-term memory cell (torch.nn.LSTMCell): one step of {@link LSTM} (gates i, f, g, o),
 * shapes as {@link RNNCell}'s with two states, h and c.
 */
export class LSTMCell extends RNNCellBase {
  constructor(inputSize: number, hiddenSize: number, options: RNNCellOptions = {}) {
    super(4, inputSize, hiddenSize, options);
  }

  /** One step from the states `state` ([h, c], default zeros); returns the next [h, c]. */
  forward(x: Tensor, state?: [Tensor, Tensor]): [Tensor, Tensor] {
    const { input, unbatched } = this.batchOf(x);
    if (state !== undefined && (!Array.isArray(state) || state.length !== 2))
      checksOf('LSTMCell').fail('state', 'an array [h, c] of two Tensors', state);
    const h = this.stateOf(state?.[0], x, input, 'state[0] (h)');
    const c = this.stateOf(state?.[1], x, input, 'state[1] (c)');
    const [h1, c1] = aten.lstm_cell(input, [h, c], ...this.weights());
    return unbatched ? [h1.squeeze(0), c1.squeeze(0)] : [h1, c1];
  }
}

/**
 * A gated recurrent unit cell (torch.nn.GRUCell): one step of {@link GRU} (gates r, z, n), shapes
 * as {@link RNNCell}'s.
 */
export class GRUCell extends RNNCellBase {
  constructor(inputSize: number, hiddenSize: number, options: RNNCellOptions = {}) {
    super(3, inputSize, hiddenSize, options);
  }

  /** One step from the state `h` (default zeros); returns the next state. */
  forward(x: Tensor, h?: Tensor): Tensor {
    const { input, unbatched } = this.batchOf(x);
    const hx = this.stateOf(h, x, input, 'h');
    const out = aten.gru_cell(input, hx, ...this.weights());
    return unbatched ? out.squeeze(0) : out;
  }
}
